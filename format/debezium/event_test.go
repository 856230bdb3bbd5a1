package debezium

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// decodeGeneral decodes rec the general way alone: the field table's
// loop (readEnvelope), never readBoundaryAt or readEventAt.
func decodeGeneral(d *Decoder, rec []byte) ([]changelog.Change, error) {
	s := d.env.Scanner(nil, rec)
	if err := d.env.Object(&s); err != nil {
		return nil, err
	}
	var rs jsonscan.Rows
	var top envelope
	top.readOrder = d.orders.Load()
	if err := d.readEnvelope(&s, &rs, &top, topFields); err != nil {
		return nil, err
	}
	return d.change(nil, rec, &s, &rs, &top)
}

// decodeEventBoth decodes rec with decode and the general way, and fails
// t when the changes or the errors differ; it returns what readEventAt
// made of the record.
func decodeEventBoth(t *testing.T, d *Decoder, rec string) int {
	t.Helper()
	data := []byte(rec)
	read := -1
	if s := d.env.Scanner(nil, data); d.env.Object(&s) == nil {
		var rs jsonscan.Rows
		var e envelope
		at := s.Pos()
		read, _ = d.readEventAt(&s, &rs, &e)
		if read == eventNot && s.Pos() != at {
			t.Errorf("%s: readEventAt read nothing but moved the scanner to %d", rec, s.Pos())
		}
	}
	var top envelope
	top.readOrder = d.orders.Load()
	fast, errFast := d.decode(nil, data, &top)
	general, errGeneral := decodeGeneral(d, data)
	if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) || !reflect.DeepEqual(fast, general) {
		t.Errorf("%s: decode %+v (%v); the general way %+v (%v)", rec, fast, errFast, general, errGeneral)
	}
	return read
}

// TestReadEventAt checks that row events whose members come in the order
// Debezium writes them are read without the field table's loop, to what
// the loop reads, refusals included, and that the others are read again
// the general way, or by it alone when nothing was read.
func TestReadEventAt(t *testing.T) {
	const (
		insert = `{"before":null,"after":{"id":1,"note":"a"},"source":` + sourceMySQL +
			`,"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`
		update = `{"before":{"id":1,"note":"a"},"after":{"id":1,"note":"b"},"source":` + sourcePostgres +
			`,"transaction":null,"op":"u","ts_ms":1733220000700,"ts_us":1733220000700000,"ts_ns":1733220000700000000}`
	)
	r := strings.Replace
	for _, tc := range []struct {
		name, rec string
		read      int
	}{
		{"insert", insert, eventRead},
		{"update, transaction first, ts_us and ts_ns", update, eventRead},
		{"delete", r(r(insert, `"before":null,"after":{"id":1,"note":"a"}`, `"before":{"id":1},"after":null`, 1), `"op":"c"`, `"op":"d"`, 1), eventRead},
		{"snapshot", r(insert, `"op":"c"`, `"op":"r"`, 1), eventRead},
		{"message", r(insert, `"op":"c"`, `"op":"m"`, 1), eventRead},
		{"truncate", r(insert, `"op":"c"`, `"op":"t"`, 1), eventRead},
		{"unknown op", r(insert, `"op":"c"`, `"op":"x"`, 1), eventRead},
		{"long op", r(insert, `"op":"c"`, `"op":"create"`, 1), eventRead},
		{"op null", r(insert, `"op":"c"`, `"op":null`, 1), eventRead},
		{"op a number", r(insert, `"op":"c"`, `"op":1`, 1), eventRead},
		{"no transaction", r(insert, `,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}`, ``, 1), eventRead},
		{"transaction null at the end", r(insert, `{"id":"t1","total_order":1,"data_collection_order":1}`, `null`, 1), eventRead},
		{"transaction in another shape", r(insert, `"total_order":1,`, `"total_order":1, `, 1), eventRead},
		{"ts_ms a string", r(insert, `"ts_ms":1767225600000,"transaction"`, `"ts_ms":"x","transaction"`, 1), eventRead},
		{"ts_ms malformed", r(insert, `"ts_ms":1767225600000,"transaction"`, `"ts_ms":-,"transaction"`, 1), eventRead},
		{"source in another shape", r(insert, `"db":"shop"`, `"db" : "shop"`, 1), eventRead},
		{"no table", r(insert, `"table":"orders"`, `"table":null`, 1), eventRead},
		{"update without before", r(update, `"before":{"id":1,"note":"a"}`, `"before":null`, 1), eventRead},
		{"before malformed", r(insert, `"before":null`, `"before":nul`, 1), eventRead},
		{"after duplicate column", r(insert, `{"id":1,"note":"a"}`, `{"id":1,"id":2}`, 1), eventRead},
		{"after a string", r(insert, `{"id":1,"note":"a"}`, `"x"`, 1), eventRead},
		{"source refused", r(insert, `"table":"orders"`, `"table":7`, 1), eventRead},
		{"source a number", r(insert, sourceMySQL, `1`, 1), eventRead},
		{"transaction refused", r(insert, `{"id":"t1","total_order":1,"data_collection_order":1}`, `[]`, 1), eventRead},
		{"something after the record", insert + "x", eventRead},
		{"white space after the record", insert + "\n", eventRead},

		{"white space", "{ " + insert[1:], eventNot},
		{"white space before the record", "\n " + insert, eventRead},
		{"a tombstone", "null", -1},
		{"an array", `[1,2]`, -1},
		{"after first", `{"after":{"id":1},"before":null,"source":` + sourceMySQL + `,"op":"c"}`, eventNot},
		{"connect envelope", `{"schema":null,"payload":` + insert + `}`, eventNot},
		{"a member between", r(insert, `,"source"`, `,"x":1,"source"`, 1), eventAgain},
		{"a member more", r(insert, `}}`, `},"x":1}`, 1), eventAgain},
		{"before twice", r(insert, `"op":"c",`, `"op":"c","before":null,`, 1), eventAgain},
		{"transaction twice", r(update, `,"ts_us"`, `,"transaction":null,"ts_us"`, 1), eventAgain},
		{"ts_us a string", r(update, `"ts_us":1733220000700000`, `"ts_us":"x"`, 1), eventAgain},
		{"no op", r(insert, `"op":"c",`, ``, 1), eventAgain},
		{"no ts_ms", r(insert, `"ts_ms":1767225600000,"transaction"`, `"transaction"`, 1), eventAgain},
		{"no source", r(insert, `"source":`+sourceMySQL+`,`, ``, 1), eventAgain},
		{"op last", r(r(insert, `"op":"c",`, ``, 1), `}}`, `},"op":"c"}`, 1), eventAgain},
		{"not closed", r(insert, `}}`, `}]`, 1), eventAgain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"plain", "orders", "narrowed"} {
				d := newDecoder(t, nil)
				switch v {
				case "orders":
					d.ReadOrders()
				case "narrowed":
					d.NarrowBefore(changelog.Table{Namespace: "shop", Name: "orders"}, []string{"id"})
					d.NarrowBefore(changelog.Table{Namespace: "public", Name: "customers"}, []string{"id"})
				}
				if got := decodeEventBoth(t, d, tc.rec); got != tc.read {
					t.Errorf("readEventAt: %d, want %d", got, tc.read)
				}
			}
		})
	}
}

// FuzzReadEventAt checks that whatever readEventAt makes of a record, it
// decodes as it does the general way.
func FuzzReadEventAt(f *testing.F) {
	f.Add(`{"before":null,"after":{"id":1,"note":"a"},"source":` + sourceMySQL +
		`,"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`)
	f.Add(`{"before":{"id":1},"after":{"id":1,"n":2},"source":` + sourcePostgres + `,"transaction":null,"op":"u","ts_ms":1,"ts_us":2,"ts_ns":3}`)
	d, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		decodeEventBoth(t, d, rec)
	})
}
