package debezium

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// decodeBoth decodes rec with decode, which reads a boundary event in
// place when it can, and with decodeEnvelope alone, the general way, and
// fails t when the changes or the errors differ. It returns whether
// readBoundaryAt took the record.
func decodeBoth(t *testing.T, d *Decoder, rec string) bool {
	t.Helper()
	data := []byte(rec)
	s := d.env.Scanner(nil, data)
	took := false
	if d.env.Object(&s) == nil {
		var e envelope
		at := s.Pos()
		took = readBoundaryAt(&s, &e)
		if !took && s.Pos() != at {
			t.Errorf("%s: readBoundaryAt failed but moved the scanner to %d", rec, s.Pos())
		}
	}
	var top envelope
	fast, errFast := d.decode(nil, data, &top)
	var general []changelog.Change
	var errGeneral error
	s = d.env.Scanner(nil, data)
	var top2 envelope
	if errGeneral = d.env.Object(&s); errGeneral == nil {
		general, errGeneral = d.decodeEnvelope(nil, data, &s, &top2)
	}
	if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) || !reflect.DeepEqual(fast, general) {
		t.Errorf("%s: decode %+v (%v); the general way %+v (%v)", rec, fast, errFast, general, errGeneral)
	}
	return took
}

// TestReadBoundaryAt checks that transaction boundary events as Debezium
// writes them are read in place, to what the general way reads, and
// that every other shape, and every refused one, is left to it.
func TestReadBoundaryAt(t *testing.T) {
	d := newDecoder(t, nil)
	const (
		begin = `{"status":"BEGIN","id":"571:53195829","ts_ms":1486500577125,"event_count":null,"data_collections":null}`
		end   = `{"status":"END","id":"571:53195832","ts_ms":1486500577691,"event_count":2,"data_collections":[{"data_collection":"s1.a","event_count":1},{"data_collection":"s1.b","event_count":1}]}`
		bench = `{"status":"END","id":"t1","event_count":4,"data_collections":null,"ts_ms":1767225600000}`
	)
	for _, tc := range []struct {
		name, rec string
		fast      bool
	}{
		{"begin", begin, true},
		{"end", end, true},
		{"ts_ms last", bench, true},
		{"begin, ts_ms last", strings.Replace(bench, `"END","id":"t1","event_count":4`, `"BEGIN","id":"t1","event_count":null`, 1), true},
		{"no ts_ms", strings.Replace(end, `"ts_ms":1486500577691,`, ``, 1), true},
		{"gtid id", strings.Replace(begin, `"571:53195829"`, `"0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10"`, 1), true},
		{"white space after", bench + "\n", true},
		{"empty data_collections", strings.Replace(end, `[{"data_collection":"s1.a","event_count":1},{"data_collection":"s1.b","event_count":1}]`, `[]`, 1), true},
		{"event_count too large", strings.Replace(bench, `:4,`, `:99999999999999999999,`, 1), true},
		{"empty id", strings.Replace(bench, `"t1"`, `""`, 1), true}, // refused, as the general way does
		{"something after the record", bench + `x`, true},           // refused by s.End, as the general way does

		{"white space", strings.Replace(bench, `,"id"`, `, "id"`, 1), false},
		{"pretty", "{\n  \"status\": \"BEGIN\"\n}", false},
		{"another status", strings.Replace(bench, `"END"`, `"COMMIT"`, 1), false},
		{"status null", strings.Replace(bench, `"END"`, `null`, 1), false},
		{"no id", strings.Replace(bench, `"id":"t1",`, ``, 1), false},
		{"id null", strings.Replace(bench, `"t1"`, `null`, 1), false},
		{"id a number", strings.Replace(bench, `"t1"`, `7`, 1), false},
		{"escaped id", strings.Replace(bench, `"t1"`, `"t\u0031"`, 1), false},
		{"event_count a string", strings.Replace(bench, `:4,`, `:"4",`, 1), false},
		{"event_count negative", strings.Replace(bench, `:4,`, `:-1,`, 1), false},
		{"event_count a fraction", strings.Replace(bench, `:4,`, `:4.5,`, 1), false},
		{"no event_count", strings.Replace(bench, `"event_count":4,`, ``, 1), false},
		{"no data_collections", `{"status":"END","id":"y","event_count":1,"ts_ms":1767225600000}`, false},
		{"data_collections an object", strings.Replace(bench, `"data_collections":null`, `"data_collections":{}`, 1), false},
		{"data_collections malformed", strings.Replace(end, `"event_count":1}]`, `"event_count":1]]`, 1), false},
		{"data_collections unterminated", strings.TrimSuffix(end, "]}"), false},
		{"ts_ms twice", strings.Replace(end, `}]}`, `}],"ts_ms":1}`, 1), false},
		{"ts_ms negative", strings.Replace(bench, `1767225600000`, `-1`, 1), false},
		{"a member more", strings.Replace(bench, `}`, `,"x":1}`, 1), false},
		{"a row event's field", strings.Replace(bench, `}`, `,"op":"c"}`, 1), false},
		{"short ts_ms at the end", strings.Replace(bench, `1767225600000`, `1`, 1), true},
		{"a row event", `{"before":null,"after":{"id":1},"source":{"db":"d","table":"t"},"op":"c"}`, false},
		{"connect envelope", `{"schema":null,"payload":` + bench + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeBoth(t, d, tc.rec); got != tc.fast {
				t.Errorf("readBoundaryAt took the record: %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzReadBoundaryAt checks that whatever record readBoundaryAt takes
// decodes as it does the general way.
func FuzzReadBoundaryAt(f *testing.F) {
	f.Add(`{"status":"BEGIN","id":"571:53195829","ts_ms":1486500577125,"event_count":null,"data_collections":null}`)
	f.Add(`{"status":"END","id":"t1","event_count":4,"data_collections":[{"data_collection":"s1.a","event_count":1}],"ts_ms":1767225600000}`)
	d, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		decodeBoth(t, d, rec)
	})
}
