package reduce

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// BenchmarkAddKeyClass measures adding changes to the buffer by the class
// of the key: an integer, a text under a binary collation, a decimal (hot
// keys, ten changes per key): what a key's comparison form costs.
func BenchmarkAddKeyClass(b *testing.B) {
	for _, bc := range []struct {
		name string
		col  schema.Column
		val  func(i int) changelog.Value
	}{
		{"int", schema.Column{Name: "k", Class: schema.Int, Bits: 64}, func(i int) changelog.Value { return changelog.Number(fmt.Sprint(i)) }},
		{"binary-text", schema.Column{Name: "k", Class: schema.String, Length: 32}, func(i int) changelog.Value { return fmt.Sprintf("SKU-%08d", i) }},
		{"decimal", schema.Column{Name: "k", Class: schema.Decimal, Precision: 12, Scale: 2}, func(i int) changelog.Value { return changelog.Number(fmt.Sprintf("%d.50", i)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := &schema.Table{Name: "t", PrimaryKey: []string{"k"}, Columns: []schema.Column{bc.col, {Name: "v", Class: schema.String, Length: 16, Nullable: true}}}
			tbl, err := NewTable(st, nil, false)
			if err != nil {
				b.Fatal(err)
			}
			changes := make([]changelog.Change, 10000)
			for i := range changes {
				changes[i] = changelog.Change{Kind: changelog.UpdateAfter, Size: 100,
					After: row("k", bc.val(i%1000), "v", "PAID"),
					Pos:   changelog.Position{Partition: "p", Offset: int64(i), Seq: int64(i)}}
			}
			benchAdd(b, tbl, changes)
		})
	}
}

// BenchmarkAppendKey measures encoding one key alone, by class.
func BenchmarkAppendKey(b *testing.B) {
	for _, bc := range []struct {
		name string
		col  schema.Column
		val  any
	}{
		{"int", schema.Column{Name: "k", Class: schema.Int, Bits: 64}, int64(123456789)},
		{"binary-text", schema.Column{Name: "k", Class: schema.String, Length: 32}, "SKU-00012345"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := &schema.Table{Name: "t", PrimaryKey: []string{"k"}, Columns: []schema.Column{bc.col}}
			tbl, err := NewTable(st, nil, false)
			if err != nil {
				b.Fatal(err)
			}
			var dst []byte
			vals := []any{bc.val}
			b.ReportAllocs()
			for b.Loop() {
				dst = appendKey(dst[:0], tbl, vals, nil)
			}
		})
	}
}
