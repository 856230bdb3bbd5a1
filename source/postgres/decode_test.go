package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/txsink/txsink/changelog"
)

// kv2Relation is relation 2, public.kv2, shaped as kv.
func kv2Relation() []byte {
	return (&pgout{}).u8('R').u32(2).str("public").str("kv2").u8('d').u16(2).
		u8(1).str("id").u32(23).u32(0xffffffff).
		u8(0).str("v").u32(25).u32(0xffffffff).b
}

// truncate is a TRUNCATE of relations ids with option bits opts (1
// CASCADE, 2 RESTART IDENTITY).
func truncate(opts byte, ids ...uint32) []byte {
	p := (&pgout{}).u8('T').u32(uint32(len(ids))).u8(opts)
	for _, id := range ids {
		p.u32(id)
	}
	return p.b
}

// TestDecodeTruncate decodes a transaction with a TRUNCATE of two tables
// between two inserts: under source.truncate: delete-all one TRUNCATE
// record per table in the message's order, at the transaction's
// position, the last record of the transaction still the one marked
// txn_end; under refuse, and inside the window of a resumed snapshot, a
// refusal naming both tables and what to do.
func TestDecodeTruncate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		truncate bool
		window   bool
		want     []string // the records, or the refusal's parts
		refused  bool
	}{
		{"delete-all", true, false, []string{
			`{"op":"+I","table":"public.kv","row":{"id":1,"v":"a"},"txn":"7","types":{"dialect":"postgres","columns":{"id":"integer","v":"text"},"key":["id"]}}`,
			`{"op":"TRUNCATE","table":"public.kv","txn":"7"}`,
			`{"op":"TRUNCATE","table":"public.kv2","txn":"7"}`,
			`{"op":"+I","table":"public.kv","row":{"id":2,"v":"b"},"txn":"7","txn_end":true,"types":{"dialect":"postgres","columns":{"id":"integer","v":"text"},"key":["id"]}}`,
		}, false},
		{"refuse", false, false, []string{"at 0/1F4: TRUNCATE of public.kv, public.kv2", "source.truncate: refuse (the default)", "Set source.truncate: delete-all"}, true},
		{"inside a resumed snapshot's window", true, true, []string{"TRUNCATE of public.kv, public.kv2 committed while a resumed initial snapshot was copying", "txsink drop-slot"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDecoder("p")
			d.truncate, d.ctx = tc.truncate, context.Background()
			if tc.window {
				d.win = &window{segs: []segment{{Until: 1000, Bounds: map[string]tableState{"public.kv": {Done: true}}}}}
			}
			msgs := [][]byte{kvRelation(), kv2Relation(), begin(500),
				(&pgout{}).u8('I').u32(1).u8('N').tuple("1", "a").b,
				truncate(1|2, 1, 2),
				(&pgout{}).u8('I').u32(1).u8('N').tuple("2", "b").b,
				commit(500)}
			var got []string
			var err error
			for _, m := range msgs {
				var recs []sourceRecord
				if recs, err = decodeRecords(d, m); err != nil {
					break
				}
				for _, r := range recs {
					if r.pos != (changelog.Position{Partition: "p", Offset: 501, Seq: r.pos.Seq}) {
						t.Errorf("record %s at %+v, want the transaction's position", r.data, r.pos)
					}
					got = append(got, r.data)
				}
			}
			if tc.refused {
				if err == nil {
					t.Fatalf("decoded %v, want a refusal", got)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

type sourceRecord struct {
	data string
	pos  changelog.Position
}

// decodeRecords decodes one message at LSN 500.
func decodeRecords(d *decoder, m []byte) ([]sourceRecord, error) {
	recs, err := d.decode(pglogrepl.LSN(500), m)
	out := make([]sourceRecord, len(recs))
	for i, r := range recs {
		out[i] = sourceRecord{string(r.Data), r.Pos}
	}
	return out, err
}
