package formats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

func TestNew(t *testing.T) {
	want := []string{"debezium-json", "canal-json", "maxwell-json", "ogg-json", "flink-changelog-json", "txsink-json"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	records := map[string]string{
		"debezium-json":        `{"op":"c","after":{"id":1},"source":{"db":"d","table":"t"}}`,
		"canal-json":           `{"data":[{"id":"1"}],"database":"d","table":"t","type":"INSERT","isDdl":false}`,
		"maxwell-json":         `{"database":"d","table":"t","type":"insert","data":{"id":1}}`,
		"ogg-json":             `{"table":"d.t","op_type":"I","after":{"id":1}}`,
		"flink-changelog-json": `{"data":{"id":1},"op":"+I"}`,
		"txsink-json":          `{"op":"+I","table":"d.t","row":{"id":1}}`,
	}
	// Options a format requires.
	opts := map[string]format.Options{
		"flink-changelog-json": {"flink-changelog-json.table": "d.t"},
	}
	for _, name := range Names() {
		d, err := New(name, opts[name])
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		cs, err := d.Decode([]byte(records[name]), changelog.Position{Partition: "p", Seq: 1})
		if err != nil || len(cs) != 1 || cs[0].Kind != changelog.Insert || cs[0].Table.String() != "d.t" {
			t.Errorf("%s decoder: %v, %v", name, cs, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	_, err := New("kafka-json", nil)
	if err == nil || !strings.Contains(err.Error(), `"kafka-json"`) ||
		!strings.Contains(err.Error(), "debezium-json, canal-json, maxwell-json, ogg-json, flink-changelog-json, txsink-json") {
		t.Errorf("unknown format: %v", err)
	}
	for _, name := range Names() {
		d, err := New(name, format.Options{"no.such-option": "1"})
		if err == nil || !strings.Contains(err.Error(), `"no.such-option"`) {
			t.Errorf("%s with an unknown option: %v", name, err)
		}
		if d != nil {
			t.Errorf("%s: New returned a non-nil decoder %#v with its error", name, d)
		}
	}
}

// TestDecodeInIsDecode: every format decodes into an arena exactly what
// it decodes on the heap (format.ArenaDecoder), errors included, for the
// records of the conformance fixtures, with the arena reset between some
// records and not others.
func TestDecodeInIsDecode(t *testing.T) {
	dirs := map[string]string{
		"debezium-json":        "debezium",
		"canal-json":           "canal",
		"maxwell-json":         "maxwell",
		"ogg-json":             "ogg",
		"flink-changelog-json": "changelog-json",
	}
	opts := map[string]format.Options{
		"flink-changelog-json": {"flink-changelog-json.table": "d.t"},
	}
	inline := map[string][]string{
		"debezium-json":        {`{"op":"u","before":{"id":1,"s":"a\"b"},"after":{"id":1,"s":"é"},"source":{"db":"d","table":"t"}}`, `{"status":"END","id":"x","event_count":2}`},
		"canal-json":           {`{"data":[{"id":"1","s":"x"},{"id":"2","s":null}],"old":[{"s":"y"},{"s":"z"}],"database":"d","table":"t","type":"UPDATE","isDdl":false}`},
		"maxwell-json":         {`{"database":"d","table":"t","type":"update","data":{"id":1,"s":"new"},"old":{"s":"old"}}`},
		"ogg-json":             {`{"table":"d.t","op_type":"U","before":{"id":1,"s":"a"},"after":{"id":1,"s":"b"}}`},
		"flink-changelog-json": {`{"data":{"id":1,"s":"x"},"op":"-U"}`, `{"data":{"id":1,"s":"y"},"op":"+U"}`},
		"txsink-json":          {`{"op":"+U","table":"d.t","before":{"id":1},"row":{"id":1,"s":"x"}}`, `{"op":"-D","table":"d.t","row":{"id":1}}`},
		"":                     {`{"id":`, `[]`, `null`},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			d, err := New(name, opts[name])
			if err != nil {
				t.Fatal(err)
			}
			ad, ok := d.(format.ArenaDecoder)
			if !ok {
				t.Fatalf("%T is not a format.ArenaDecoder", d)
			}
			recs := append(append([]string(nil), inline[name]...), inline[""]...)
			if dir, ok := dirs[name]; ok {
				recs = append(recs, fixtureRecords(t, filepath.Join("..", "..", "..", "shared", "conformance", dir))...)
			}
			if name == "txsink-json" {
				recs = append(recs, fixtureRecords(t, filepath.Join("..", "native", "testdata"))...)
			}
			t.Logf("%d records", len(recs))
			var mem changelog.Arena
			for i, rec := range recs {
				pos := changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)}
				want, wantErr := d.Decode([]byte(rec), pos)
				if i%3 == 0 {
					mem.Reset()
				}
				got, gotErr := ad.DecodeIn(&mem, []byte(rec), pos)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("record %d %s: DecodeIn error %v, Decode error %v", i, rec, gotErr, wantErr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("record %d %s: DecodeIn\n%+v\nDecode\n%+v", i, rec, got, want)
				}
			}
		})
	}
}

// fixtureRecords returns the lines of the files under dir that hold a
// JSON object; none when dir is absent (the conformance fixtures live
// beside the repository).
func fixtureRecords(t *testing.T, dir string) []string {
	t.Helper()
	var recs []string
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "{") {
				recs = append(recs, line)
			}
		}
		return nil
	})
	return recs
}

// TestLoneSurrogates: in every format, a string holding half a UTF-16
// surrogate pair without its other half, lone or reversed, is bad input:
// a *format.Error naming the record's position, its table (also when the
// image comes before the table in the text), the image and the column,
// and the byte offset, never a value with U+FFFD in its place. A pair
// escaped whole is a character like any other.
func TestLoneSurrogates(t *testing.T) {
	// records writes a record of each format whose row holds column doc
	// with the JSON string text s; key gives the value of column k.
	records := func(s string) map[string]string {
		return map[string]string{
			"debezium-json":        `{"op":"c","after":{"id":1,"doc":"` + s + `"},"source":{"db":"d","table":"t"}}`,
			"canal-json":           `{"data":[{"id":"1","doc":"` + s + `"}],"database":"d","table":"t","type":"INSERT","isDdl":false}`,
			"maxwell-json":         `{"data":{"id":1,"doc":"` + s + `"},"database":"d","table":"t","type":"insert"}`,
			"ogg-json":             `{"after":{"id":1,"doc":"` + s + `"},"table":"d.t","op_type":"I"}`,
			"flink-changelog-json": `{"data":{"id":1,"doc":"` + s + `"},"op":"+I"}`,
			"txsink-json":          `{"op":"+I","row":{"id":1,"doc":"` + s + `"},"table":"d.t"}`,
		}
	}
	image := map[string]string{
		"debezium-json": `"after" image`, "canal-json": `"data"[0] image`, "maxwell-json": `"data" image`,
		"ogg-json": `"after" image`, "flink-changelog-json": `"data" image`, "txsink-json": `"row" image`,
	}
	opts := map[string]format.Options{"flink-changelog-json": {"flink-changelog-json.table": "d.t"}}
	pos := changelog.Position{Partition: "p.jsonl", Offset: 10, Seq: 4}
	for _, tc := range []struct{ text, esc string }{
		{`a\ud800b`, `\ud800`}, {`a\ud800`, `\ud800`}, {`a\udbff`, `\udbff`}, {`a\udfff`, `\udfff`},
		{`\udc00\ud800`, `\udc00`}, {`\ud83d\u0041`, `\ud83d`}, {`x\uDBFF\n`, `\uDBFF`},
	} {
		for _, name := range Names() {
			d, err := New(name, opts[name])
			if err != nil {
				t.Fatal(err)
			}
			rec := records(tc.text)[name]
			cs, err := d.Decode([]byte(rec), pos)
			var fe *format.Error
			if !errors.As(err, &fe) || cs != nil {
				t.Errorf("%s %s: %v, %v; want a *format.Error", name, rec, cs, err)
				continue
			}
			at := strings.Index(rec, tc.esc)
			for _, w := range []string{"p.jsonl:4", "table d.t", image[name] + ` column "doc"`, "lone surrogate " + tc.esc,
				fmt.Sprintf("at byte %d", at), "never puts U+FFFD"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s %s: error lacks %q:\n%v", name, rec, w, err)
				}
			}
		}
	}
	for _, name := range Names() {
		d, _ := New(name, opts[name])
		rec := records(`\ud83d\ude00 \uFFFD`)[name]
		cs, err := d.Decode([]byte(rec), pos)
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s %s: %v, %v", name, rec, cs, err)
		}
		if v, _ := cs[0].After.Get("doc"); v != "😀 \uFFFD" {
			t.Errorf("%s: doc = %q, want the pair's character and the U+FFFD the record wrote", name, v)
		}
	}
}
