package collate

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/schema"
)

var (
	decimalCol = &schema.Column{Name: "d", Class: schema.Decimal, Precision: 10, Scale: 3}
	floatCol   = &schema.Column{Name: "f", Class: schema.Float, Bits: 64}
	uuidCol    = &schema.Column{Name: "u", Class: schema.Unknown, Compare: schema.Compare{UUID: true}}
	intCol     = &schema.Column{Name: "i", Class: schema.Int, Bits: 64}
	binCol     = &schema.Column{Name: "s", Class: schema.String}
	padCol     = &schema.Column{Name: "s", Class: schema.String, Compare: schema.Compare{PadSpace: true}}
	asciiCol   = &schema.Column{Name: "s", Class: schema.String, Compare: schema.Compare{Fold: schema.FoldASCII}}
	lowerCol   = &schema.Column{Name: "s", Class: schema.String, Compare: schema.Compare{Fold: schema.FoldLower}}
	generalCol = &schema.Column{Name: "s", Class: schema.String, Compare: schema.Compare{Fold: schema.FoldGeneralCI, PadSpace: true}}
	noPadCICol = &schema.Column{Name: "s", Class: schema.String, Compare: schema.Compare{Fold: schema.FoldGeneralCI}}
)

func key(col *schema.Column, v any) string { return string(AppendKey(nil, col, v)) }

func TestAppendKey(t *testing.T) {
	tests := []struct {
		name  string
		col   *schema.Column
		a, b  any
		equal bool
	}{
		{"decimal trailing zero", decimalCol, "1.5", "1.50", true},
		{"decimal integral", decimalCol, "1", "1.000", true},
		{"decimal zero", decimalCol, "0", "0.000", true},
		{"decimal negative zero", decimalCol, "-0.00", "0", true},
		{"decimal tens", decimalCol, "10", "1", false},
		{"decimal 10.0 is not 1", decimalCol, "10.0", "1", false},
		{"decimal 100 keeps its zeros", decimalCol, "100", "100.0", true},
		{"decimal sign", decimalCol, "-1.5", "1.5", false},
		{"float zero", floatCol, 0.0, math.Copysign(0, -1), true},
		{"float values", floatCol, 1.5, 1.25, false},
		{"uuid case", uuidCol, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{"uuid without dashes", uuidCol, "a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{"uuid braces", uuidCol, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{"uuid other", uuidCol, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", false},
		{"not a uuid stays", uuidCol, "a0eebc99", "A0EEBC99", false},
		{"int", intCol, int64(7), int64(7), true},
		{"binary case", binCol, "abc", "ABC", false},
		{"binary padding", binCol, "a", "a ", false},
		{"pad space", padCol, "a", "a  ", true},
		{"pad space only spaces", padCol, "a", "a\t", false},
		{"pad space leading", padCol, " a", "a", false},
		{"ascii fold", asciiCol, "ABC", "abc", true},
		{"ascii fold leaves accents", asciiCol, "É", "é", false},
		{"lower fold", lowerCol, "ÉΣ", "éσ", true},
		{"lower fold padding", lowerCol, "a", "a ", false},
		{"general case", generalCol, "abc", "ABC", true},
		{"general accent", generalCol, "é", "e", true},
		{"general sharp s", generalCol, "ß", "s", true},
		{"general padding", generalCol, "a ", "a", true},
		{"general supplementary", generalCol, "😀", "😁", true},
		{"general distinct", generalCol, "a", "b", false},
		{"general no pad", noPadCICol, "a ", "a", false},
		{"general no pad case", noPadCICol, "A", "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := key(tt.col, tt.a), key(tt.col, tt.b)
			if (ka == kb) != tt.equal {
				t.Errorf("key(%q) = %q, key(%q) = %q: equal = %v, want %v", tt.a, ka, tt.b, kb, ka == kb, tt.equal)
			}
		})
	}
}

func TestAppendKeyAppends(t *testing.T) {
	when := time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		col  *schema.Column
		v    any
		want string
	}{
		{intCol, int64(-7), "-7"},
		{&schema.Column{Class: schema.Uint}, uint64(18446744073709551615), "18446744073709551615"},
		{decimalCol, "-12.340", "-12.34"},
		{floatCol, math.Copysign(0, -1), "0"},
		{uuidCol, "A0EEBC999C0B4EF8BB6D6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{binCol, "Ab ", "Ab "},
		{&schema.Column{Class: schema.Bytes}, []byte{0, 1}, "\x00\x01"},
		{&schema.Column{Class: schema.DateTime}, when, "2024-01-02T03:04:05.000006Z"},
		{&schema.Column{Class: schema.Bool}, true, "true"},
		{generalCol, "aÉ ", "\x00A\x00E"},
	}
	for _, tt := range tests {
		got := AppendKey([]byte("x"), tt.col, tt.v)
		if string(got) != "x"+tt.want {
			t.Errorf("AppendKey(%v, %#v) = %q, want %q", tt.col.Class, tt.v, got, "x"+tt.want)
		}
	}
}

func TestExact(t *testing.T) {
	tests := []struct {
		col  *schema.Column
		want bool
	}{
		{intCol, true}, {binCol, true}, {&schema.Column{Class: schema.Bytes}, true},
		{&schema.Column{Class: schema.Date}, true}, {&schema.Column{Class: schema.Unknown}, true},
		{decimalCol, false}, {floatCol, false}, {uuidCol, false}, {padCol, false},
		{asciiCol, false}, {lowerCol, false}, {generalCol, false},
	}
	for _, tt := range tests {
		if got := Exact(tt.col); got != tt.want {
			t.Errorf("Exact(%v %+v) = %v, want %v", tt.col.Class, tt.col.Compare, got, tt.want)
		}
	}
}

// FuzzAppendText checks what every fold promises whatever the text: the
// form of a string equals the form of its padded, re-cased spellings where
// the fold says so, and the ASCII fold changes nothing but A–Z.
func FuzzAppendText(f *testing.F) {
	for _, s := range []string{"", "a", "ABC ", "é", "ß", "😀 ", "\x00", "ǅ", "K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // coerce refuses invalid text before it is a key
		}
		for _, c := range []schema.Compare{
			{PadSpace: true}, {Fold: schema.FoldASCII}, {Fold: schema.FoldLower}, {Fold: schema.FoldGeneralCI, PadSpace: true}, {Fold: schema.FoldGeneralCI},
		} {
			k := AppendText(nil, &c, s)
			if c.PadSpace && !bytes.Equal(k, AppendText(nil, &c, s+"  ")) {
				t.Errorf("%+v: %q and %q+spaces differ", c, s, s)
			}
			if c.Fold == schema.FoldGeneralCI && len(k) != 2*utf8.RuneCountInString(trimSpaces(s, c.PadSpace)) {
				t.Errorf("general_ci form of %q has %d bytes", s, len(k))
			}
			if c.Fold == schema.FoldASCII {
				if len(k) != len(s) || !bytes.EqualFold(k, []byte(s)) {
					t.Errorf("ASCII fold of %q = %q", s, k)
				}
			}
		}
		upper := bytes.ToUpper([]byte(s))
		if utf8.Valid(upper) && bytes.Equal(bytes.ToLower(upper), bytes.ToLower([]byte(s))) {
			if a, b := AppendText(nil, &schema.Compare{Fold: schema.FoldLower}, s), AppendText(nil, &schema.Compare{Fold: schema.FoldLower}, string(upper)); !bytes.Equal(a, b) {
				t.Errorf("lower fold: %q and %q differ", s, upper)
			}
		}
	})
}

func trimSpaces(s string, pad bool) string {
	if !pad {
		return s
	}
	return string(bytes.TrimRight([]byte(s), " "))
}

// FuzzUUID checks that the UUID form is a fixed point, and that a text
// the form rewrites was a UUID: 32 hexadecimal digits once dashes and
// braces are dropped.
func FuzzUUID(f *testing.F) {
	for _, s := range []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC999C0B4EF8BB6D6BB9BD380A11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0ee-", "", "{}", "g0eebc999c0b4ef8bb6d6bb9bd380a11"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := key(uuidCol, s)
		if again := key(uuidCol, k); again != k {
			t.Errorf("form of %q is %q, whose form is %q", s, k, again)
		}
		if k == s {
			return
		}
		digits := 0
		for _, r := range strings.Trim(s, "{}") {
			switch {
			case r == '-':
			case strings.ContainsRune("0123456789abcdefABCDEF", r):
				digits++
			default:
				t.Errorf("%q, not a UUID, was rewritten as %q", s, k)
			}
		}
		if digits != 32 || len(k) != 36 {
			t.Errorf("%q (%d digits) was rewritten as %q", s, digits, k)
		}
	})
}
