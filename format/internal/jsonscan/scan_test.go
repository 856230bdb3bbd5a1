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

// validStrict is json.Valid, except that invalid UTF-8 and lone
// surrogate escapes, which encoding/json accepts and replaces with U+FFFD,
// are refused: txsink never changes a value silently.
func validStrict(b []byte) bool { return json.Valid(b) && utf8.Valid(b) && surrogatesPaired(b) }

// surrogatesPaired reports whether every \u escape of a UTF-16 surrogate
// in b, a document json.Valid accepts, is a high surrogate followed by an
// escaped low one. It is written apart from the scanner, on purpose: the
// tests hold the scanner to it.
func surrogatesPaired(b []byte) bool {
	hex := func(i int) uint64 {
		r, _ := strconv.ParseUint(string(b[i:i+4]), 16, 32)
		return r
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && b[i+1] != 'u':
			i++
		case c == '\\':
			r := hex(i + 2)
			i += 5
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return false
			case r >= 0xD800 && r <= 0xDBFF:
				if i+2 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
					return false
				}
				if lo := hex(i + 3); lo < 0xDC00 || lo > 0xDFFF {
					return false
				}
				i += 6
			}
		}
	}
	return true
}

// replacements counts the U+FFFD a document holds, written raw or as an
// escape: the most any value read from it may hold.
func replacements(b []byte) int {
	return bytes.Count(b, []byte("\uFFFD")) + bytes.Count(b, []byte(string(utf8.RuneError))) +
		bytes.Count(bytes.ToLower(b), []byte(`\ufffd`)) - bytes.Count(b, []byte(`\uFFFD`))
}

// checkText fails unless every string of texts is valid UTF-8 and they hold
// no more U+FFFD than the input data did: the scanner never makes one.
func checkText(t *testing.T, data []byte, texts ...string) {
	t.Helper()
	n := 0
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Fatalf("%q decodes to invalid UTF-8 %q", data, s)
		}
		n += strings.Count(s, string(utf8.RuneError))
	}
	if max := replacements(data); n > max {
		t.Fatalf("%q decodes to %d U+FFFD, the input holds %d", data, n, max)
	}
}

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
		`"plain"`, `"caf\u00e9"`, `"tab\there"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"a\udbff\udfffb"`,
		`"\/\\\""`, `"é€😀"`, `""`, `"\ufffd"`, `"\uFFFD"`, "\"\uFFFD\"", `"\ud7ff\ue000"`,
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

// TestLoneSurrogatesAreRefused: an escape of half a UTF-16 surrogate pair
// without its other half is refused as bad text, wherever the string is,
// at the offset of its backslash; encoding/json would decode each as
// U+FFFD and make "a\ud800" and "a\udbff" the same value.
func TestLoneSurrogatesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		in     string
		offset int
		esc    string
	}{
		{`"a\ud800b"`, 2, `\ud800`},
		{`"a\ud800"`, 2, `\ud800`},
		{`"a\udbff"`, 2, `\udbff`},
		{`"a\udfff"`, 2, `\udfff`},
		{`"\udc00"`, 1, `\udc00`},
		{`"\uDC00\uD800"`, 1, `\uDC00`},       // reversed
		{`"\ude00\ud83d"`, 1, `\ude00`},       // reversed
		{`"\ud83d\u0041"`, 1, `\ud83d`},       // a high one, then not a low one
		{`"\ud83d\ud83d\ude00"`, 1, `\ud83d`}, // two high ones
		{`"\ud83d\n"`, 1, `\ud83d`},
		{`"\ud83d\\ude00"`, 1, `\ud83d`}, // an escaped backslash, not an escape
		{`"x\ud83d\ude00\udc00"`, 14, `\udc00`},
		{`{"k\ud800":1}`, 3, `\ud800`},
		{`{"k":[1,{"v":"\udfff"}]}`, 14, `\udfff`},
	} {
		_, err := scanAll([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) || !se.BadText || se.Offset != tc.offset || !strings.Contains(se.Msg, "lone surrogate "+tc.esc) {
			t.Errorf("%s: err = %#v, want bad text at byte %d naming %s", tc.in, err, tc.offset, tc.esc)
		}
		if validStrict([]byte(tc.in)) {
			t.Errorf("%s: validStrict accepts it", tc.in)
		}
		for _, keys := range nextKeyInKeys {
			checkNextKeyIn(t, []byte(tc.in), keys)
		}
	}
	// Malformed JSON is not bad text.
	for _, in := range []string{`"\ud83d\u12"`, `"\ud83d\x"`, `"\ud83d`, `"\ud83d\`, `"\x"`, "\"\x01\"", `"abc`} {
		var se *SyntaxError
		if _, err := scanAll([]byte(in)); !errors.As(err, &se) || se.BadText {
			t.Errorf("%s: err = %#v, want malformed JSON, not bad text", in, err)
		}
	}
	if _, err := scanAll([]byte("\"\xff\"")); !strings.Contains(fmt.Sprint(err), "invalid text at byte 1: invalid UTF-8") {
		t.Errorf("invalid UTF-8: err = %v, want bad text", err)
	}
}

// TestRowNamesTheBadColumn: a row whose value is not text is refused
// naming its column, nested values included; a bad column name names none.
func TestRowNamesTheBadColumn(t *testing.T) {
	for _, tc := range []struct{ in, column string }{
		{`{"id":1,"doc":"a\ud800b"}`, "doc"},
		{`{"id":1,"d\u006fc":"\udc00"}`, "doc"},
		{`{"id":1,"doc":{"x":["\ud800"]}}`, "doc"},
		{"{\"id\":1,\"doc\":\"\xff\"}", "doc"},
		{`{"id":1,"d\ud800":"x"}`, ""},
	} {
		s := New([]byte(tc.in))
		_, err := s.Row()
		var se *SyntaxError
		if !errors.As(err, &se) || !se.BadText || se.Column != tc.column {
			t.Errorf("%s: err = %#v, want bad text in column %q", tc.in, err, tc.column)
		}
	}
}

// TestTolerateBadText: a tolerant scanner passes over bad text, so a second
// look at a refused record finds what comes after it, and still refuses
// malformed JSON.
func TestTolerateBadText(t *testing.T) {
	for _, in := range []string{
		`{"after":{"doc":"\ud800"},"source":{"table":"t"}}`,
		"{\"after\":{\"doc\":\"\xff x \\udc00\"},\"source\":{\"table\":\"t\"}}",
		`{"a\udc00":1,"source":{"table":"t"}}`,
		`{"x":"\ud83d\ude00","source":{"table":"t"}}`,
	} {
		s := New([]byte(in))
		s.TolerateBadText()
		tok, err := s.Value()
		if err != nil || tok.Kind != Object || s.End() != nil {
			t.Errorf("%s: tolerant scan: %v, %v", in, tok, err)
		}
	}
	// What a tolerant scanner reads shows the bad text as written.
	s := New([]byte("\"t\\udc00 \xff \\ud83d\\ude00\""))
	s.TolerateBadText()
	if tok, err := s.Value(); err != nil || s.Text(tok) != `t\udc00 \xff 😀` || string(s.Bytes(tok)) != s.Text(tok) {
		t.Errorf("tolerant Text = %q, %v", s.Text(tok), err)
	}
	s = New([]byte(`{"doc":"\ud800","x":01}`))
	s.TolerateBadText()
	if _, err := s.Value(); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("tolerant scan of malformed JSON: %v", err)
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
		`"a\ud800b"`, `{"k":"\udc00","\ud83d\ude00":"\ufffd"}`, `"\ud83d\u0041"`, "\"\uFFFD\xef\xbf\xbd\"",
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
			// What encoding/json accepts is refused only for bad text.
			if se, ok := err.(*SyntaxError); json.Valid(data) && (!ok || !se.BadText) {
				t.Fatalf("well-formed JSON refused with %#v, want BadText", err)
			}
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
			checkText(t, data, s.Text(tok))
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
			texts := slices.Clone(row.Names)
			for _, v := range row.Values {
				if s, ok := v.(string); ok {
					texts = append(texts, s)
				}
			}
			checkText(t, data, texts...)
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
// for. The last ones are keys of every length a Keys table compares as
// words (up to 16 bytes), and keys that share their first or last 8 bytes.
var nextKeyInKeys = [][]string{
	{"db", "schema", "table"}, {"id"}, {"a", "b"}, {strings.Repeat("k", 70)}, nil,
	{"before", "after", "op", "source", "transaction", "status", "id", "event_count", "schema", "payload"},
	{"x", "xy", "xyz", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq", "Xbcdefghijklmnop", "abcdefghijklmnoX"},
}

// walk modes: NextKeyIn, NextKeyOf, or member by member with NextKey.
const (
	walkIn = iota
	walkOf
	walkKey
)

// walk walks the object in data as a decoder does, with NextKeyIn,
// NextKeyOf or member by member with NextKey (mode): the members of keys
// it finds ("key=value text") and where it stopped.
func walk(data []byte, keys []string, mode int) (got []string, err error) {
	s := New(data)
	if err := s.BeginObject(); err != nil {
		return nil, err
	}
	ks := NewKeys(keys...)
	for first := true; ; first = false {
		var name string
		var ok bool
		if mode == walkIn || mode == walkOf {
			var k int
			if mode == walkIn {
				k, ok, err = s.NextKeyIn(first, keys)
			} else {
				k, ok, err = s.NextKeyOf(first, &ks)
			}
			if ok {
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

// checkNextKeyIn fails unless NextKeyIn, and NextKeyOf with the keys made
// by NewKeys, find the members NextKey and Value find, and fail where they
// fail, with the same error.
func checkNextKeyIn(t *testing.T, data []byte, keys []string) {
	t.Helper()
	want, wantErr := walk(data, keys, walkKey)
	for _, mode := range []int{walkIn, walkOf} {
		got, err := walk(data, keys, mode)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
			t.Fatalf("%q, keys %q, mode %d: found %q, %v; NextKey and Value %q, %v", data, keys, mode, got, err, want, wantErr)
		}
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
		// keys a Keys table tells apart by their words, and keys at the
		// end of the input, where 8 bytes from the key's start are not there
		`{"before":null,"after":{"id":1},"source":{},"op":"c","ts_ms":1,"transaction":null,"event_count":3,"event_counts":1,"payload":{}}`,
		`{"x":1,"xy":2,"xyz":3,"xyzw":4,"abcdefg":5,"abcdefgh":6,"abcdefghi":7,"abcdefgX":8,"abcdefghijklmnop":9,"abcdefghijklmnoX":10,"Xbcdefghijklmnop":11,"abcdefghijklmnopq":12}`,
		`{"abcdefghijklmnop`, `{"abcdefghijklmnop"`, `{"x"`, `{"xy":`, `{"x":1,"abcdefg`, `{"a\u0062cdefgh":1,"abcdefgh":2}`,
	} {
		for _, keys := range nextKeyInKeys {
			checkNextKeyIn(t, []byte(in), keys)
		}
	}
}

// TestKeysFind checks that Keys finds each of its keys, and nothing else,
// with a table and without one (an empty key, or more keys than a table
// holds).
func TestKeysFind(t *testing.T) {
	many := make([]string, maxKeys+1)
	for i := range many {
		many[i] = "k" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name  string
		keys  []string
		table bool
	}{
		// The formats' field tables, which must get a table.
		{"debezium", []string{"before", "after", "op", "source", "transaction", "status", "id", "event_count", "schema", "payload"}, true},
		{"debezium payload", []string{"before", "after", "op", "source", "transaction", "status", "id", "event_count"}, true},
		{"debezium source", []string{"db", "schema", "table"}, true},
		{"canal", []string{"database", "table", "type", "isDdl", "data", "old"}, true},
		{"maxwell", []string{"database", "table", "type", "xid", "commit", "data", "old"}, true},
		{"ogg", []string{"table", "op_type", "before", "after"}, true},
		{"flinkjson", []string{"data", "op"}, true},
		{"native", []string{"op", "table", "row", "before", "txn", "txn_end"}, true},
		{"64 keys", many[:maxKeys], true},
		{"long", []string{strings.Repeat("k", 70), strings.Repeat("k", 300), "k"}, false},
		{"shared words", []string{"abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnoX", "Xbcdefghijklmnop"}, true},
		{"empty key", []string{"a", ""}, false},
		{"too many", many, false},
		{"none", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKeys(tc.keys...)
			if (k.table != nil) != tc.table {
				t.Errorf("table %v, want %v", k.table != nil, tc.table)
			}
			for i, w := range tc.keys {
				if got := k.Find([]byte(w)); got != i {
					t.Errorf("Find(%q) = %d, want %d", w, got, i)
				}
				// FindKey on the key as read, plain and escaped, with and
				// without 8 bytes after its start.
				objs := []string{`{"` + w + `":1234567890}`, `{"` + w + `":`}
				if w != "" {
					objs = append(objs, `{"\u00`+strconv.FormatInt(int64(w[0]), 16)+w[1:]+`":1}`)
				}
				for _, obj := range objs {
					s := New([]byte(obj))
					if s.BeginObject() != nil {
						t.Fatal(obj)
					}
					key, ok, err := s.NextKey(true)
					if err == nil && ok {
						if got := s.FindKey(&k, key); got != i {
							t.Errorf("FindKey(%s) = %d, want %d", obj, got, i)
						}
					}
				}
				for _, other := range []string{w + "x", "x" + w, strings.ToUpper(w) + "!"} {
					if !slices.Contains(tc.keys, other) {
						if got := k.Find([]byte(other)); got != -1 {
							t.Errorf("Find(%q) = %d, want -1", other, got)
						}
					}
				}
			}
		})
	}
}
