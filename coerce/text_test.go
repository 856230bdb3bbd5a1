package coerce

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

func TestString(t *testing.T) {
	free := strCol(0)
	run(t, []tc{
		{col: free, in: "abc", want: "abc"},
		{col: free, in: "", want: ""},
		{col: strCol(3), in: "日本語", want: "日本語"},
		{col: strCol(2), in: "日本語", err: "is 3 characters long, the column holds at most 2 (txsink never truncates)"},
		{col: strCol(5), in: "héllo", want: "héllo"},
		{col: strCol(4), in: "héllo", err: "is 5 characters long, the column holds at most 4"},
		{col: strCol(2), in: "😀😀", want: "😀😀"},
		{col: strCol(1), in: "😀😀", err: "is 2 characters long, the column holds at most 1"},
		{col: strCol(1), in: "ab", err: "is 2 characters long"},
		{col: strCol(1), in: "a", want: "a"},
		{name: "flag emoji is two code points", col: strCol(1), in: "🇯🇵", err: "is 2 characters long"},
		{col: free, in: strings.Repeat("x", 100000), want: strings.Repeat("x", 100000)},
		{col: free, in: "ab\xffcd", err: "is not valid UTF-8: byte 0xff at offset 2 does not start a valid character"},
		{col: free, in: "日\xe6\x9c", err: "byte 0xe6 at offset 3"},
		{name: "surrogate half", col: free, in: "\xed\xa0\x80", err: "byte 0xed at offset 0"},
		{col: free, in: num("12.50"), want: "12.50"},
		{col: free, in: true, want: "true"},
		{col: free, in: false, want: "false"},
		{col: free, in: changelog.JSON(`{"a": [1, 2]}`), want: `{"a": [1, 2]}`},
		{col: free, in: []byte("héllo"), want: "héllo"},
		{col: free, in: []byte{0xc3}, err: "byte 0xc3 at offset 0"},
		{col: strCol(2), in: []byte("abc"), err: "is 3 characters long"},
		{col: free, in: int64(-42), want: "-42"},
		{col: free, in: uint64(math.MaxUint64), want: "18446744073709551615"},
		{col: free, in: 7, want: "7"},
		{col: free, in: 0.1, want: "0.1"},
		{col: free, in: float32(0.1), want: "0.1"},
		{col: free, in: math.NaN(), err: "not a finite number"},
		{col: free, in: time.Unix(0, 0), err: "is a time"},
	})
}

// TestStringLengthInBytes: a column whose length counts bytes (StarRocks'
// VARCHAR) refuses a string of few characters but more bytes, on the fast
// path and the slow one alike.
func TestStringLengthInBytes(t *testing.T) {
	col := func(n int) schema.Column { c := strCol(n); c.LengthInBytes = true; return c }
	run(t, []tc{
		{col: col(9), in: "日本語", want: "日本語"},
		{col: col(8), in: "日本語", err: "is 9 bytes long, the column holds at most 8 bytes (its length counts bytes of UTF-8, not characters"},
		{col: col(4), in: []byte("héllo"), err: "is 6 bytes long"},
		{col: col(5), in: "hello", want: "hello"},
	})
}

func TestBytes(t *testing.T) {
	free := bytesCol(0)
	run(t, []tc{
		{col: free, in: []byte{0, 1, 2, 0xff}, want: []byte{0, 1, 2, 0xff}},
		{col: free, in: []byte{}, want: []byte{}},
		{name: "base64 text stays text", col: free, in: "AQID", want: []byte("AQID")},
		{col: free, in: "\xff", want: []byte{0xff}},
		{col: bytesCol(3), in: []byte{1, 2, 3}, want: []byte{1, 2, 3}},
		{col: bytesCol(2), in: []byte{1, 2, 3}, err: "is 3 bytes long, the column holds at most 2 (txsink never truncates)"},
		{col: bytesCol(4), in: "日本", err: "is 6 bytes long, the column holds at most 4"},
		{col: bytesCol(1), in: "", want: []byte{}},
		{col: free, in: num("1"), err: "is a number, which cannot go into a bytes column"},
		{col: free, in: changelog.JSON(`[]`), err: "is a JSON"},
		{col: free, in: true, err: "is a boolean"},
	})
}

func TestJSON(t *testing.T) {
	col := schema.Column{Name: "doc", Class: schema.JSON, SQLType: "jsonb"}
	run(t, []tc{
		{col: col, in: changelog.JSON(`{"a":1}`), want: `{"a":1}`},
		{col: col, in: changelog.JSON(` [1, "日本"] `), want: ` [1, "日本"] `},
		{name: "debezium Json string", col: col, in: `{"a":[1,2]}`, want: `{"a":[1,2]}`},
		{col: col, in: `"hello"`, want: `"hello"`},
		{col: col, in: `null`, want: `null`},
		{col: col, in: "hello", err: "is not valid JSON: invalid character 'h' looking for beginning of value (at byte 1)"},
		{col: col, in: "", err: "is not valid JSON"},
		{col: col, in: `{"a":`, err: "is not valid JSON"},
		{col: col, in: `{} {}`, err: "is not valid JSON"},
		{col: col, in: changelog.JSON(`{'a':1}`), err: "is not valid JSON"},
		{col: col, in: "\"\xff\"", err: "is not valid UTF-8: byte 0xff at offset 1"},
		{col: col, in: []byte(`{"b":true}`), want: `{"b":true}`},
		{col: col, in: []byte(`{`), err: "is not valid JSON"},
		{col: col, in: num("1.5e3"), want: "1.5e3"},
		{col: col, in: num("+1"), err: "is not a JSON number"},
		{col: col, in: num("NaN"), err: "is not a JSON number"},
		{col: col, in: true, want: "true"},
		{col: col, in: int64(-5), want: "-5"},
		{col: col, in: uint64(5), want: "5"},
		{col: col, in: 2.5, want: "2.5"},
		{col: col, in: float32(0.1), want: "0.1"},
		{col: col, in: math.Inf(1), err: "not a finite number"},
		{col: col, in: time.Unix(0, 0), err: "is a time"},
	})
}

func TestUnknown(t *testing.T) {
	col := schema.Column{Name: "x", Class: schema.Unknown, SQLType: "geometry"}
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	run(t, []tc{
		{col: col, in: "POINT(1 2)", want: "POINT(1 2)"},
		{col: col, in: num("1e400"), want: "1e400"},
		{col: col, in: true, want: true},
		{col: col, in: []byte{1, 2}, want: []byte{1, 2}},
		{col: col, in: changelog.JSON(`{}`), want: "{}"},
		{col: col, in: 5, want: int64(5)},
		{col: col, in: uint64(5), want: uint64(5)},
		{col: col, in: 1.5, want: 1.5},
		{col: col, in: float32(1.5), want: 1.5},
		{col: col, in: now, want: now},
		{col: col, in: map[string]int{}, err: "a value of Go type map[string]int, which cannot go into an unknown column"},
	})
}

func TestNull(t *testing.T) {
	for c := schema.Unknown; c <= schema.JSON; c++ {
		col := schema.Column{Name: "c", Class: c, SQLType: "T", Nullable: true}
		got, err := Value(&col, nil)
		if got != nil || err != nil {
			t.Errorf("%s nullable: Value(nil) = %v, %v; want nil, nil", c, got, err)
		}
		col.Nullable = false
		got, err = Value(&col, nil)
		if got != nil || err == nil {
			t.Fatalf("%s NOT NULL: Value(nil) = %v, %v; want an error", c, got, err)
		}
		checkError(t, &col, nil, err, "cannot go into a NOT NULL column")
	}
}

func TestUnknownClass(t *testing.T) {
	col := schema.Column{Name: "c", Class: schema.Class(99), SQLType: "weird"}
	_, err := Value(&col, "x")
	if err == nil {
		t.Fatal("Value for class 99 succeeded")
	}
	checkError(t, &col, "x", err, "does not know column class Class(99)")
}

func TestSQLTypeFallsBackToClass(t *testing.T) {
	col := schema.Column{Name: "n", Class: schema.Int, Bits: 8}
	_, err := Value(&col, num("300"))
	want := "column n int: value 300 is out of range: the column holds -128 to 127"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestDescribe(t *testing.T) {
	long := strings.Repeat("a", 100)
	cases := []struct {
		in   changelog.Value
		want string
	}{
		{nil, "NULL"},
		{true, "true"},
		{num("12.345"), "12.345"},
		{"12.345", `"12.345"`},
		{"a\"b\n", `"a\"b\n"`},
		{"ab\xff", `"ab\xff"`},
		{"日本語", `"日本語"`},
		{changelog.JSON(`{"a":1}`), `{"a":1}`},
		{changelog.JSON("{\n}"), `{\n}`},
		{[]byte{0x0a, 0x1b}, "0x0a1b"},
		{[]byte{}, "0x (empty)"},
		{int64(-5), "-5"},
		{7, "7"},
		{int32(7), "7"},
		{int16(7), "7"},
		{int8(7), "7"},
		{uint(7), "7"},
		{uint8(7), "7"},
		{uint16(7), "7"},
		{uint32(7), "7"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{0.1, "0.1"},
		{float32(0.1), "0.1"},
		{time.Date(2020, 5, 13, 7, 40, 6, 5e8, time.UTC), "2020-05-13T07:40:06.5Z"},
		{struct{ A int }{1}, "struct { A int }({1})"},
		{long, `"` + strings.Repeat("a", 61) + `"…`},
		{num(long), strings.Repeat("a", 63) + "…"},
		{strings.Repeat("日", 100), `"` + strings.Repeat("日", 61) + `"…`},
		{strings.Repeat("\xff", 100), `"` + strings.Repeat(`\xff`, 15) + `"…`},
		{make([]byte, 100), "0x" + strings.Repeat("00", 29) + "…"},
	}
	for _, c := range cases {
		got := Describe(c.in)
		if got != c.want {
			t.Errorf("Describe(%#v) = %s, want %s", c.in, got, c.want)
		}
		if n := len([]rune(got)); n > describeMax {
			t.Errorf("Describe(%#v) is %d characters long", c.in, n)
		}
	}
}

// TestTextPassesThroughWithoutAllocating guards the hot path of character,
// decimal, date and binary columns: a value already right for its column
// is returned as the very interface passed in (or, for a Number, one
// sharing its header), not boxed again.
func TestTextPassesThroughWithoutAllocating(t *testing.T) {
	for _, c := range []struct {
		col schema.Column
		in  changelog.Value
	}{
		{strCol(64), changelog.Value("PAID")},
		{decCol(12, 2), changelog.Value("969.60")},
		{timeCol(schema.Date, 0), changelog.Value("2026-11-01")},
		{schema.Column{Name: "b", Class: schema.Bytes}, changelog.Value([]byte{1, 2})},
		// A Number kept as text comes back as a string pointing at the
		// Number's own header (see textOf).
		{decCol(12, 2), changelog.Value(changelog.Number("969.60"))},
		{strCol(64), changelog.Value(changelog.Number("42"))},
		{schema.Column{Name: "u", Class: schema.Unknown}, changelog.Value(changelog.Number("42"))},
	} {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := Value(&c.col, c.in); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s column, %#v: %v allocations per conversion, want 0", c.col.Class, c.in, n)
		}
	}
}

// TestValidTextIsValidString: validText, toString's short-text check,
// agrees with utf8.ValidString at every length around its two words and
// with a non-ASCII or invalid byte at every place.
func TestValidTextIsValidString(t *testing.T) {
	for n := 0; n <= 24; n++ {
		base := strings.Repeat("a", n)
		cases := []string{base}
		for i := 0; i < n; i++ {
			for _, b := range []string{"\x80", "\xff", "é"[:1], "é"} {
				cases = append(cases, base[:i]+b+base[i+1:])
			}
		}
		for _, s := range cases {
			if got, want := validText(s), utf8.ValidString(s); got != want {
				t.Errorf("validText(%q) = %v, utf8.ValidString %v", s, got, want)
			}
		}
	}
}
