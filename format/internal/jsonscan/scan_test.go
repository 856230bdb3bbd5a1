package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
)

// scanAll reads one value and the end of input, as a decoder reads a record.
func scanAll(data []byte) (Token, error) {
	s := New(data)
	tok, err := s.Value()
	if err != nil {
		return tok, err
	}
	return tok, s.End()
}

func TestValueMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`0`, `-0`, `1.5e+10`, `-1E-2`, `123456789012345678901234567890`, `true`, `false`, `null`,
		`""`, `"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"`, `{}`, `[]`, ` { "a" : [ 1 , {"b":null} ] } `,
		`[1,2,3]`, `{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`,
		// invalid
		``, ` `, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `"abc`, `"\x"`, `"\u12"`,
		"\"a\x01\"", `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `[1,]`, `[,1]`, `{1:2}`, `[1 2]`, `{"a":1 "b":2}`,
		`{}}`, `[]]`, `1 2`, `{"a":1`, `[`, `]`, `NaN`, `'a'`,
	} {
		_, err := scanAll([]byte(in))
		if valid := validStrict([]byte(in)); (err == nil) != valid {
			t.Errorf("%q: scanner error %v, json.Valid and utf8.Valid %v", in, err, valid)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(in) {
				t.Errorf("%q: error %#v is not a SyntaxError with an offset in the input", in, err)
			}
		}
	}
}

// validStrict is json.Valid, except that invalid UTF-8, which encoding/json
// accepts and replaces with U+FFFD, is refused: txsink never changes a
// value silently.
func validStrict(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func TestInvalidUTF8IsRefused(t *testing.T) {
	for _, in := range []string{"\"bad \xff utf8\"", "\"cut \xe2\x82\"", "{\"a\":\"\xc0\xaf\"}"} {
		if _, err := scanAll([]byte(in)); err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Errorf("%q: err = %v, want an invalid UTF-8 error", in, err)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := scanAll([]byte(deep)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	deeper := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	if _, err := scanAll([]byte(deeper)); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Errorf("depth %d: %v, want a nesting error", MaxDepth+1, err)
	}
}

func TestStringDecoding(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"caf\u00e9"`, `"tab\there"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
		`"\/\\\""`, `"é€😀"`, `""`,
	} {
		tok, err := scanAll([]byte(in))
		if err != nil || tok.Kind != String {
			t.Fatalf("%q: %v, %v", in, tok, err)
		}
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		s := New([]byte(in))
		if got := s.Text(tok); got != want {
			t.Errorf("%q: Text = %q, want %q (encoding/json)", in, got, want)
		}
		if wantPlain := !strings.ContainsAny(in, `\`) && want == in[1:len(in)-1]; tok.Plain != wantPlain {
			t.Errorf("%q: Plain = %v, want %v", in, tok.Plain, wantPlain)
		}
		if !s.Equal(tok, want) || string(s.Bytes(tok)) != want {
			t.Errorf("%q: Equal/Bytes disagree with Text", in)
		}
	}
}

func TestRow(t *testing.T) {
	in := `{ "z" : 1, "a\u0062":"x\ny", "n":null, "t":true, "f":false, "o":{"k":[1,2]}, "l":[], "e":"", "d":-1.50e3 }`
	s := New([]byte(in))
	row, err := s.Row()
	if err != nil {
		t.Fatal(err)
	}
	want := changelog.Row{
		Names:  []string{"z", "ab", "n", "t", "f", "o", "l", "e", "d"},
		Values: []changelog.Value{changelog.Number("1"), "x\ny", nil, true, false, changelog.JSON(`{"k":[1,2]}`), changelog.JSON(`[]`), "", changelog.Number("-1.50e3")},
	}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("Row =\n%#v\nwant\n%#v", row, want)
	}
	if err := s.End(); err != nil {
		t.Error(err)
	}

	for _, tc := range []struct{ in, err string }{
		{`{"a":1,"a":2}`, `duplicate column "a"`},
		{`{"a":1,"\u0061":2}`, `duplicate column "a"`},
		{`{"a":1`, "invalid JSON"},
		{`[1]`, "want '{'"},
	} {
		s := New([]byte(tc.in))
		if _, err := s.Row(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Row(%s) = %v, want error containing %q", tc.in, err, tc.err)
		}
	}
	wide := make([]string, 40)
	for i := range wide {
		wide[i] = `"c` + strconv.Itoa(i) + `":1`
	}
	s = New([]byte("{" + strings.Join(append(wide, wide[7]), ",") + "}"))
	if _, err := s.Row(); !errors.Is(err, ErrDuplicateColumn) {
		t.Errorf("wide row with a duplicate: %v", err)
	}
}

func TestIsNumber(t *testing.T) {
	for _, in := range []string{"0", "-0", "12", "1.5", "-1.5e-3", "1E+2", "123456789012345678901234567890.5"} {
		if !IsNumber(in) {
			t.Errorf("IsNumber(%q) = false", in)
		}
	}
	for _, in := range []string{"", "-", "01", "1.", ".1", "1e", "0x1", "1 ", " 1", "NaN", "+1", "Infinity", "1e5x"} {
		if IsNumber(in) {
			t.Errorf("IsNumber(%q) = true", in)
		}
	}
}

// FuzzScan holds the scanner to encoding/json: the same inputs are valid,
// strings decode the same, and an object's row has the values
// encoding/json finds (with UseNumber).
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x","c":[1,{"d":null}],"e":true}`, `"\ud83d\ude00\u00e9"`, `[1,2.5e3,-0]`, "\"\xff\"",
		`{"before":null,"after":{"id":101,"weight":3.140000104904175},"op":"c"}`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		tok, err := scanAll(data)
		if !bytes.Equal(in, data) {
			t.Fatal("scanner modified its input")
		}
		if valid := validStrict(data); (err == nil) != valid {
			t.Fatalf("scanner error %v, json.Valid and utf8.Valid %v", err, valid)
		}
		for _, keys := range nextKeyInKeys {
			checkNextKeyIn(t, data, keys)
		}
		if err != nil {
			return
		}
		s := New(data)
		switch tok.Kind {
		case String:
			var want string
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if got := s.Text(tok); got != want {
				t.Fatalf("Text = %q, want %q", got, want)
			}
		case Object:
			row, err := s.Row()
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var m map[string]any
			if derr := dec.Decode(&m); derr != nil {
				t.Fatal(derr)
			}
			if errors.Is(err, ErrDuplicateColumn) {
				return
			}
			if err != nil {
				t.Fatalf("Row: %v", err)
			}
			if row.Len() != len(m) {
				t.Fatalf("Row has %d columns, encoding/json %d", row.Len(), len(m))
			}
			for i, name := range row.Names {
				got, want := row.Values[i], m[name]
				if raw, ok := got.(changelog.JSON); ok {
					d := json.NewDecoder(bytes.NewReader(raw))
					d.UseNumber()
					if err := d.Decode(&got); err != nil {
						t.Fatal(err)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("column %q = %#v, encoding/json %#v", name, got, want)
				}
			}
		}
	})
}

// TestStringEveryByteAtEveryOffset holds the eight-bytes-at-a-time string
// scan to encoding/json: each byte value, at each offset of a string long
// enough to span several words, is accepted or refused as json.Valid and
// utf8.Valid say, and ends the string where it should.
func TestStringEveryByteAtEveryOffset(t *testing.T) {
	for off := 0; off < 19; off++ {
		for c := 0; c < 256; c++ {
			b := []byte(`"abcdefghijklmnopqrs"`)
			b[1+off] = byte(c)
			_, err := scanAll(b)
			if valid := validStrict(b); (err == nil) != valid {
				t.Fatalf("%q: scanner error %v, json.Valid and utf8.Valid %v", b, err, valid)
			}
		}
	}
}

func TestRowNames(t *testing.T) {
	var names Names
	row := func(in string) changelog.Row {
		t.Helper()
		s := New([]byte(in))
		s.UseNames(&names)
		r, err := s.Row()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := row(`{"id":1,"name":"x"}`), row(`{"id":2,"name":"y"}`)
	if &a.Names[0] != &b.Names[0] || !reflect.DeepEqual(a.Names, []string{"id", "name"}) {
		t.Errorf("rows with the same columns do not share their names: %q %q", a.Names, b.Names)
	}
	if cap(a.Names) != len(a.Names) {
		t.Errorf("shared names have room to append into (cap %d)", cap(a.Names))
	}
	if c := row(`{"name":"z","id":3}`); !reflect.DeepEqual(c.Names, []string{"name", "id"}) || c.Values[1] != changelog.Number("3") {
		t.Errorf("other order: %q %v", c.Names, c.Values)
	}
	if e := row(`{"i\u0064":4,"name":"w"}`); !reflect.DeepEqual(e.Names, []string{"id", "name"}) {
		t.Errorf("escaped name: %q", e.Names)
	}
	s := New([]byte(`{"id":1,"id":2}`))
	s.UseNames(&names)
	if _, err := s.Row(); !errors.Is(err, ErrDuplicateColumn) {
		t.Errorf("duplicate column with names: err = %v", err)
	}
	data := []byte(`{"id":5,"name":"v"}`)
	if n := testing.AllocsPerRun(100, func() {
		s := New(data)
		s.UseNames(&names)
		if _, err := s.Row(); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		// The row's text, and its values with the headers they point to
		// (see package box and block); the names are shared.
		t.Errorf("Row with known names: %v allocations, want at most 2", n)
	}
}

// nextKeyInKeys are the key sets TestNextKeyIn and FuzzScan walk objects
// for.
var nextKeyInKeys = [][]string{{"db", "schema", "table"}, {"id"}, {"a", "b"}, {strings.Repeat("k", 70)}, nil}

// walk walks the object in data as a decoder does, with NextKeyIn when
// in is set, else member by member with NextKey: the members of keys it
// finds ("key=value text") and where it stopped.
func walk(data []byte, keys []string, in bool) (got []string, err error) {
	s := New(data)
	if err := s.BeginObject(); err != nil {
		return nil, err
	}
	for first := true; ; first = false {
		var name string
		var ok bool
		if in {
			var k int
			if k, ok, err = s.NextKeyIn(first, keys); ok {
				name = keys[k]
			}
		} else {
			var key Token
			if key, ok, err = s.NextKey(first); ok {
				name = s.Text(key)
			}
		}
		if err != nil {
			return got, err
		}
		if !ok {
			return got, s.End()
		}
		tok, err := s.Value()
		if err != nil {
			return got, err
		}
		if slices.Contains(keys, name) {
			got = append(got, name+"="+string(data[tok.Start:tok.End]))
		}
	}
}

// checkNextKeyIn fails unless NextKeyIn finds the members NextKey and
// Value find, and fails where they fail, with the same error.
func checkNextKeyIn(t *testing.T, data []byte, keys []string) {
	t.Helper()
	got, err := walk(data, keys, true)
	want, wantErr := walk(data, keys, false)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
		t.Fatalf("%q, keys %q: NextKeyIn found %q, %v; NextKey and Value %q, %v", data, keys, got, err, want, wantErr)
	}
}

func TestNextKeyIn(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"db":"shop"}`, `{"version":"2.7.3.Final","db":"shop","ts_ms":1767225600000,"table":"orders","gtid":null,"row":0}`,
		`{"x":1,"db":"a","db":"b"}`, `{"d\u0062":"escaped key"}`, `{"a":{"b":[1,"db"]},"db":"x"}`, `{"id":"t1","total_order":1}`,
		`{ "db" : "shop" , "x" : 1 }`, `{"x":true,"y":false,"z":-1.5e3,"db":null}`, `{"x":"caf\u00e9 \"q\"","db":"é"}`,
		`{"` + strings.Repeat("k", 70) + `":1}`, `{"` + strings.Repeat("k", 69) + `":1}`, `{"table":{"nested":1}}`,
		// invalid
		`{`, `{"x"`, `{"x":`, `{"x":1`, `{"x":1,}`, `{,"x":1}`, `{"x":1 "y":2}`, `{"x" 1}`, `{"x":01}`, `{"x":-}`,
		`{"x":nul}`, `{"x":nullx}`, `{"x":1x}`, `{"x":"a\x"}`, "{\"x\":\"a\x01\"}", "{\"x\":\"\xff\"}",
		"{\"\x01\":1}", `{"x":[1,}`, `{"x":1}}`, `{"db":1}`, `{"db":`, `{"db"}`, `{"x":"unterminated`,
	} {
		for _, keys := range nextKeyInKeys {
			checkNextKeyIn(t, []byte(in), keys)
		}
	}
}
