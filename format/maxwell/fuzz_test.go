package maxwell

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/decodetest"
)

// fuzzSeeds returns records to start fuzzing from: a few edge cases and
// every record of the conformance fixtures when present.
func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		rec("insert", `,"xid":7,"xoffset":0,"data":{"id":1,"doc":{"a":[1,{"b":null}]},"s":"\u00e9\ud83d\ude00"}`),
		rec("update", `,"xid":7,"commit":true,"data":{"id":2},"old":{"id":1,"x":null}`),
		rec("delete", `,"data":{"id":1}`),
		rec("bootstrap-start", `,"data":{}`),
		[]byte(`{"type":"table-alter","database":"test","table":"t","old":{},"def":{}}`),
		[]byte("null"),
		[]byte(`{"id":1004}`),
	}
	// The DDL records of testdata (a .jsonl, which FixtureSeeds passes
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
	if len(cs) > 1 {
		t.Fatalf("%d changes from one Maxwell record", len(cs))
	}
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

// BenchmarkDecode measures realistic records: an insert and an update of
// the Flink fixture's product row, and Maxwell's own update of a wider row.
func BenchmarkDecode(b *testing.B) {
	b.Run("small-insert", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"database":"test","table":"product","type":"insert","ts":1596684883,"xid":7125,"xoffset":0,"data":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"primary_key_columns": ["id"]}`))
	})
	b.Run("small-update", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"database":"test","table":"product","type":"update","ts":1596684893,"xid":7152,"commit":true,"data":{"id":106,"name":"hammer","description":"18oz carpenter hammer","weight":1.0},"old":{"description":"16oz carpenter's hammer"},"primary_key_columns": ["id"]}`))
	})
	b.Run("wide-update", func(b *testing.B) {
		benchmarkDecode(b, []byte(`{"database":"MyDatabase","table":"User","type":"update","ts":1486439516,"xid":5694,"commit":true,"data":{"UserID":20,"FirstName":"Fiz","MiddleName":null,"LastName":"Buz","Version":1486703131000},"old":{"backup_date":"2017-02-08 02:00:05","FirstName":"Foo","DoubleField":4500000001.512456777,"LastName":"Bar"}}`))
	})
}
