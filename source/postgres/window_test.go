package postgres

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/testdb"
)

// pgout builds pgoutput (protocol 1) messages, as the server sends them.
type pgout struct{ b []byte }

func (p *pgout) u8(v byte) *pgout    { p.b = append(p.b, v); return p }
func (p *pgout) u16(v uint16) *pgout { p.b = binary.BigEndian.AppendUint16(p.b, v); return p }
func (p *pgout) u32(v uint32) *pgout { p.b = binary.BigEndian.AppendUint32(p.b, v); return p }
func (p *pgout) u64(v uint64) *pgout { p.b = binary.BigEndian.AppendUint64(p.b, v); return p }
func (p *pgout) str(s string) *pgout { p.b = append(append(p.b, s...), 0); return p }

// tuple appends a tuple of text values ("" is NULL).
func (p *pgout) tuple(vals ...string) *pgout {
	p.u16(uint16(len(vals)))
	for _, v := range vals {
		if v == "" {
			p.u8('n')
			continue
		}
		p.u8('t').u32(uint32(len(v)))
		p.b = append(p.b, v...)
	}
	return p
}

func begin(lsn uint64) []byte { return (&pgout{}).u8('B').u64(lsn).u64(0).u32(7).b }
func commit(lsn uint64) []byte {
	return (&pgout{}).u8('C').u8(0).u64(lsn).u64(lsn + 8).u64(0).b
}

// kvRelation is relation 1, public.kv (id int4 key, v text).
func kvRelation() []byte {
	return (&pgout{}).u8('R').u32(1).str("public").str("kv").u8('d').u16(2).
		u8(1).str("id").u32(23).u32(0xffffffff).
		u8(0).str("v").u32(25).u32(0xffffffff).b
}

// TestWindow checks which changes of a window's transactions the decoder
// keeps: a table copied in full before the window applies all, one not
// copied yet none, one copied up to a key the changes of keys up to it;
// an update that moves a row across the bound becomes the half on the
// bound's side (a delete of the old key, or an upsert of the new one
// without it); past the window every change applies.
func TestWindow(t *testing.T) {
	bounds := func(kv tableState) map[string]tableState { return map[string]tableState{"public.kv": kv} }
	mid := tableState{After: []string{"10"}}
	cases := []struct {
		name  string
		bound tableState
		until uint64
		msgs  [][]byte
		want  []string // "kind key" of each record; a move "kind old>new"
	}{
		{"copied in full", tableState{Done: true}, 1000, [][]byte{
			(&pgout{}).u8('I').u32(1).u8('N').tuple("50", "a").b,
		}, []string{"+I 50"}},
		{"not copied yet", tableState{}, 1000, [][]byte{
			(&pgout{}).u8('I').u32(1).u8('N').tuple("5", "a").b,
			(&pgout{}).u8('D').u32(1).u8('K').tuple("6", "").b,
		}, nil},
		{"copied up to 10", mid, 1000, [][]byte{
			(&pgout{}).u8('I').u32(1).u8('N').tuple("10", "a").b,
			(&pgout{}).u8('I').u32(1).u8('N').tuple("11", "a").b,
			(&pgout{}).u8('U').u32(1).u8('N').tuple("3", "b").b,
			(&pgout{}).u8('D').u32(1).u8('K').tuple("12", "").b,
			(&pgout{}).u8('D').u32(1).u8('K').tuple("4", "").b,
		}, []string{"+I 10", "+U 3", "-D 4"}},
		{"moved out of the copied keys", mid, 1000, [][]byte{
			(&pgout{}).u8('U').u32(1).u8('K').tuple("5", "").u8('N').tuple("20", "b").b,
		}, []string{"-D 5"}},
		{"moved into the copied keys", mid, 1000, [][]byte{
			(&pgout{}).u8('U').u32(1).u8('K').tuple("20", "").u8('N').tuple("5", "b").b,
		}, []string{"+U 5"}},
		{"moved among the copied keys", mid, 1000, [][]byte{
			(&pgout{}).u8('U').u32(1).u8('K').tuple("2", "").u8('N').tuple("5", "b").b,
		}, []string{"+U 2>5"}},
		{"past the window", tableState{}, 100, [][]byte{
			(&pgout{}).u8('I').u32(1).u8('N').tuple("50", "a").b,
		}, []string{"+I 50"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDecoder("p")
			d.ctx = context.Background()
			d.win = &window{segs: []segment{{Until: c.until, Bounds: bounds(c.bound)}},
				keys: map[string]*tableInfo{"public.kv": {table: changelog.Table{Namespace: "public", Name: "kv"}, pk: []keyCol{{name: "id", typ: "integer", oid: 23}}}}}
			msgs := append([][]byte{kvRelation(), begin(500)}, c.msgs...)
			msgs = append(msgs, commit(500))
			var got []string
			for _, m := range msgs {
				recs, err := d.decode(pglogrepl.LSN(500), m)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					got = append(got, describe(t, r.Data))
				}
			}
			if strings.Join(got, ", ") != strings.Join(c.want, ", ") {
				t.Errorf("kept %v, want %v", got, c.want)
			}
		})
	}
}

// describe renders a txsink-json record as "kind key" (see TestWindow):
// a delete's key is its "row", the image of its kind.
func describe(t *testing.T, data []byte) string {
	t.Helper()
	s := string(data)
	kind := s[strings.Index(s, `"op":"`)+6:][:2]
	key := func(field string) string {
		i := strings.Index(s, `"`+field+`":{"id":`)
		if i < 0 {
			return ""
		}
		rest := s[i+len(field)+9:]
		return rest[:strings.IndexAny(rest, ",}")]
	}
	after, before := key("row"), key("before")
	if before != "" {
		return kind + " " + before + ">" + after
	}
	return kind + " " + after
}

// TestWindowCompare checks the comparison of keys with a bound the
// server's way, for keys Go does not compare: text under a collation
// and composite keys, against PostgreSQL.
func TestWindowCompare(t *testing.T) {
	db := testdb.Open(t, "postgres")
	ctx := context.Background()
	c, err := connect(ctx, db.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	w := &window{cmp: c}
	text := &tableInfo{pk: []keyCol{{name: "k", typ: "text", coll: `pg_catalog."C"`, oid: 25}, {name: "n", typ: "integer", oid: 23}}}
	ints := &tableInfo{pk: []keyCol{{name: "a", typ: "bigint", oid: 20}, {name: "b", typ: "integer", oid: 23}}}
	cases := []struct {
		ti         *tableInfo
		key, bound []string
		want       bool
	}{
		{text, []string{"B", "1"}, []string{"a", "0"}, true}, // "B" < "a" in C
		{text, []string{"a", "1"}, []string{"a", "0"}, false},
		{text, []string{"a", "0"}, []string{"a", "0"}, true},
		{ints, []string{"9", "5"}, []string{"10", "0"}, true}, // numbers, not text
		{ints, []string{"10", "1"}, []string{"10", "0"}, false},
		{ints, []string{"-3", "1"}, []string{"-3", "1"}, true},
	}
	for _, cs := range cases {
		got, err := w.atMost(ctx, cs.ti, cs.key, cs.bound)
		if err != nil {
			t.Fatal(err)
		}
		if got != cs.want {
			t.Errorf("%v <= %v: %v, want %v", cs.key, cs.bound, got, cs.want)
		}
	}
}
