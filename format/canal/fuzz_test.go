package canal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/decodetest"
)

// fuzzSeeds returns records to start fuzzing from: a few edge cases, the
// DDL messages of testdata, and every record of the conformance fixtures
// when present.
func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		msg("INSERT", `,"data":[{"id":"1","doc":"{\"a\":[1]}","s":"\u00e9\ud83d\ude00","n":null},{"id":"2"}],"old":null`),
		msg("UPDATE", `,"data":[{"id":"2"},{"id":"3"}],"old":[{"id":"1","x":null},null]`),
		msg("DELETE", `,"data":[{"id":"1"}]`),
		msg("TRUNCATE", `,"data":null`),
		[]byte(`{"data":null,"database":"d","isDdl":true,"sql":"CREATE TABLE t (id INT)","table":"t","type":"CREATE"}`),
		[]byte("null"),
		[]byte(`{"id":1004}`),
	}
	// The DDL messages of testdata (a .jsonl, which FixtureSeeds passes
	// over).
	if ddl, err := os.ReadFile(filepath.Join("testdata", "ddl.jsonl")); err == nil {
		seeds = append(seeds, bytes.Split(bytes.TrimSpace(ddl), []byte("\n"))...)
	}
	return append(seeds, decodetest.FixtureSeeds(conformanceDir, false)...)
}

// FuzzDecode: Decode never panics and never modifies its input; it returns
// valid changes or a complete *format.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	d := newDecoder(f, nil)
	pos := changelog.Position{Partition: "fuzz", Offset: 7, Seq: 3}
	var mem changelog.Arena
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, ok := decodetest.FuzzDecode(t, d, &mem, Name, data, pos)
		if !ok {
			return
		}
		checkChanges(t, cs, pos)
	})
}

// checkChanges checks the invariants every decoded change holds.
func checkChanges(t *testing.T, cs []changelog.Change, pos changelog.Position) {
	t.Helper()
	for _, c := range cs {
		switch c.Kind {
		case changelog.Insert, changelog.UpdateAfter, changelog.Delete:
		case changelog.SchemaChange:
			decodetest.SkippedChange(t, c, pos)
			continue
		default:
			t.Fatalf("invalid kind %v", c.Kind)
		}
		if c.Table.Name == "" || c.Pos != pos {
			t.Fatalf("table %#v, pos %v", c.Table, c.Pos)
		}
		if c.Image().IsZero() || (c.Kind == changelog.UpdateAfter && c.Before.IsZero()) {
			t.Fatalf("%v change without its images: %+v", c.Kind, c)
		}
		decodetest.Rows(t, c, false)
	}
}

func benchmarkDecode(b *testing.B, r []byte) {
	decodetest.BenchmarkDecode(b, newDecoder(b, nil), r)
}

// BenchmarkDecode measures realistic messages: the Flink fixture's
// nine-row insert and two-row update of the product table, and a one-row
// update of a wider table.
func BenchmarkDecode(b *testing.B) {
	b.Run("insert-9-rows", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"data":[{"id":"101","name":"scooter","description":"Small 2-wheel scooter","weight":"3.14"},{"id":"102","name":"car battery","description":"12V car battery","weight":"8.1"},{"id":"103","name":"12-pack drill bits","description":"12-pack of drill bits with sizes ranging from #40 to #3","weight":"0.8"},{"id":"104","name":"hammer","description":"12oz carpenter's hammer","weight":"0.75"},{"id":"105","name":"hammer","description":"14oz carpenter's hammer","weight":"0.875"},{"id":"106","name":"hammer","description":null,"weight":"1.0"},{"id":"107","name":"rocks","description":"box of assorted rocks","weight":"5.3"},{"id":"108","name":"jacket","description":"water resistent black wind breaker","weight":"0.1"},{"id":"109","name":"spare tire","description":"24 inch spare tire","weight":"22.2"}],"database":"inventory","es":1589373515000,"id":3,"isDdl":false,"mysqlType":{"id":"INTEGER","name":"VARCHAR(255)","description":"VARCHAR(512)","weight":"FLOAT"},"old":null,"pkNames":["id"],"sql":"","sqlType":{"id":4,"name":12,"description":12,"weight":7},"table":"products2","ts":1589373515477,"type":"INSERT"}`))
	})
	b.Run("update-2-rows", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"data":[{"id":"101","name":"scooter","description":"Small 2-wheel scooter","weight":"5.17"},{"id":"102","name":"car battery","description":"12V car battery","weight":"5.17"}],"database":"inventory","es":1589373560000,"id":9,"isDdl":false,"mysqlType":{"id":"INTEGER","name":"VARCHAR(255)","description":"VARCHAR(512)","weight":"FLOAT"},"old":[{"weight":"3.14"},{"weight":"8.1"}],"pkNames":["id"],"sql":"","sqlType":{"id":4,"name":12,"description":12,"weight":7},"table":"products2","ts":1589373560798,"type":"UPDATE"}`))
	})
	b.Run("update-wide", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"data":[{"id":"1001","customer_id":"42","status":"shipped","amount":"129.99","currency":"EUR","created_at":"2024-02-29 12:00:00","updated_at":"2024-03-01 08:15:02","note":null,"address":"12 Rue de la Paix","city":"Paris","zip":"75002","country":"FR"}],"database":"shop","es":1709280902000,"id":77,"isDdl":false,"mysqlType":{"id":"bigint","customer_id":"bigint","status":"varchar(16)","amount":"decimal(10,2)","currency":"char(3)","created_at":"datetime","updated_at":"datetime","note":"text","address":"varchar(255)","city":"varchar(64)","zip":"varchar(16)","country":"char(2)"},"old":[{"status":"paid","updated_at":"2024-02-29 12:00:00"}],"pkNames":["id"],"sql":"","sqlType":{"id":-5,"customer_id":-5,"status":12,"amount":3,"currency":1,"created_at":93,"updated_at":93,"note":2005,"address":12,"city":12,"zip":12,"country":1},"table":"orders","ts":1709280902123,"type":"UPDATE"}`))
	})
}
