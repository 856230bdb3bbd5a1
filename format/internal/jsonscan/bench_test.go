package jsonscan

import "testing"

// benchRecord is a Debezium insert as txsink bench writes it: the shape
// whose keys, short strings and numbers dominate the scanner's time.
var benchRecord = []byte(`{"before":null,"after":{"id":1,"customer":"Linus","status":"NEW","amount":969.60,"created_at":"2026-11-01 08:00:00.000","note":null},"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`)

// BenchmarkSkip measures the scanner passing over a whole record, every
// key and value checked, nothing kept: the floor under every decoder.
func BenchmarkSkip(b *testing.B) {
	b.SetBytes(int64(len(benchRecord)))
	b.ReportAllocs()
	for b.Loop() {
		s := New(benchRecord)
		if _, err := s.Value(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextKeyIn measures passing over the members of the record's
// "source" block but the three a decoder wants, as the Debezium decoder
// reads it.
func BenchmarkNextKeyIn(b *testing.B) {
	keys := []string{"db", "schema", "table"}
	benchmarkSource(b, func(s *Scanner, first bool) (bool, error) {
		_, ok, err := s.NextKeyIn(first, keys)
		return ok, err
	})
}

// sourceBenchKeys are the keys the Debezium decoder looks up in a
// "source" block.
var sourceBenchKeys = NewKeys("db", "schema", "table")

// BenchmarkNextKeyOf is BenchmarkNextKeyIn with the keys made once, as
// the Debezium decoder reads its "source" block: the members it does not
// want are passed over by NextKeyOf's own loop.
func BenchmarkNextKeyOf(b *testing.B) {
	benchmarkSource(b, func(s *Scanner, first bool) (bool, error) {
		_, ok, err := s.NextKeyOf(first, &sourceBenchKeys)
		return ok, err
	})
}

// benchmarkSource walks benchRecord's "source" block with next, which
// stops at each member wanted, and reads those members' values.
func benchmarkSource(b *testing.B, next func(s *Scanner, first bool) (bool, error)) {
	data := benchRecord
	start := 0
	for i := range data {
		if string(data[i:min(i+10, len(data))]) == `"source":{` {
			start = i + len(`"source":`)
			break
		}
	}
	b.SetBytes(int64(len(data) - start))
	for b.Loop() {
		s := New(data)
		s.Skip(start)
		if err := s.BeginObject(); err != nil {
			b.Fatal(err)
		}
		for first := true; ; first = false {
			ok, err := next(&s, first)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			if _, err := s.Value(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
