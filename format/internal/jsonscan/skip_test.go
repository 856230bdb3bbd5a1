package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestWordTests holds special8 and nonDigit8 to their byte-at-a-time
// definitions: for every byte value at every position of a word, after
// bytes that pass and before bytes of each kind (which may borrow or
// carry into the bytes above), the lowest set bit is that byte's when it
// fails the test and above it when it passes.
func TestWordTests(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(uint64) uint64
		pass func(byte) bool
		fill byte // a byte that passes
	}{
		{"special8", special8, func(c byte) bool { return plainByte[c] }, 'a'},
		{"nonDigit8", nonDigit8, func(c byte) bool { return c >= '0' && c <= '9' }, '5'},
	} {
		for pos := range 8 {
			for c := range 256 {
				for _, above := range []byte{0x00, 0x1f, 0x20, '"', '0', '9', ':', '\\', 0x7f, 0x80, 0xb9, 0xba, 0xff, tc.fill} {
					var b [8]byte
					for k := range b {
						switch {
						case k < pos:
							b[k] = tc.fill
						case k == pos:
							b[k] = byte(c)
						default:
							b[k] = above
						}
					}
					m := tc.f(binary.LittleEndian.Uint64(b[:]))
					first := 8 // the first byte that fails, 8 for none
					for k := range b {
						if !tc.pass(b[k]) {
							first = k
							break
						}
					}
					if got := bits.TrailingZeros64(m) >> 3; got != first {
						t.Fatalf("%s(% x) = %#x: first failing byte %d, want %d", tc.name, b, m, got, first)
					}
				}
			}
		}
	}
}

// skipCases are objects NextKeyOf's loop (skipMembers) passes over or
// leaves to the general way at every turn: each kind of value, compact
// and not, well and badly formed, and cut short at every length.
var skipCases = []string{
	`{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null}`,
	`{"id":"t1","total_order":1,"data_collection_order":1}`,
	`{"a":0,"b":-0,"c":-1,"d":12345678901234567890,"e":1.5,"f":-0.25e+10,"g":1E5,"h":0e-0,"i":123456789.123456789e123456789,"db":1}`,
	`{"a":true,"b":false,"c":null,"d":"","e":"x","f":"12345678","g":"123456789012345678901234567890","db":2}`,
	`{"a":"caf\u00e9","b":"\"","c":"é","d":"\ud83d\ude00","e":"a\\b","f":"tab\there","db":3}`,
	`{"a":{"x":[1,2,{"y":null}]},"b":[],"c":{},"db":4}`,
	`{"abcdefghijklmno":1,"abcdefghijklmnop":2,"abcdefghijklmnopq":3,"abcdefghijklmnopqrstuvwxyz0123456789":4,"db":5}`,
	`{"a\u0062":1,"é":2,"\"":3,"db":6}`,
	`{ "a" : 1 , "b":2 ,"c" :3, "db" :7}`,
	// malformed values and members
	`{"a":01,"db":1}`, `{"a":-,"db":1}`, `{"a":-a}`, `{"a":1.,"db":1}`, `{"a":1.e5}`, `{"a":1e,"db":1}`, `{"a":1e+}`,
	`{"a":1e+a}`, `{"a":.5}`, `{"a":+1}`, `{"a":1x}`, `{"a":12345678x}`, `{"a":123456789012345678x}`, `{"a":fals}`,
	`{"a":falsee}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":nulll}`, `{"a":"x\qy"}`, "{\"a\":\"x\x01y\"}",
	"{\"a\":\"x\xffy\"}", "{\"a\xff\":1}", "{\"a\x1f\":1}", `{"a":"\ud800"}`, `{"a":1,,"b":2}`, `{"a":1,}`, `{"a":1 }`,
	`{"a":1"b":2}`, `{"a"1}`, `{"a":}`, `{"a",1}`, `{a:1}`, `{"a":1]`, `{"a":"x"]`, `{"a":null,"db"}`,
	`{"abcdefghijklmnopq"1}`, `{"abcdefghijklmnopq":x}`, `{"abcdefg"`, `{"abcdefghijklmnopqrstu":1,"a":1`,
}

// TestNextKeyOfSkips holds NextKeyOf to NextKey and Value (checkNextKeyIn:
// the members found, the error and its offset, where the walk ends) on
// skipCases, whole, cut short at every byte, and followed by more input
// (the loop reads words past an object's end when the input goes on).
func TestNextKeyOfSkips(t *testing.T) {
	keys := append(nextKeyInKeys, []string{"db", "abcdefghijklmnopq", "abcdefghijklmnopqrstuvwxyz0123456789"})
	for _, in := range skipCases {
		for _, data := range []string{in, in + `,"more":"after the object, as in a record"}`} {
			for n := 0; n <= len(data); n++ {
				for _, k := range keys {
					checkNextKeyIn(t, []byte(data[:n]), k)
				}
			}
		}
	}
}

// refValue is Value as it was before skipObject passed over members in
// NextKeyOf's loop: an object's members read with NextKey and refValue,
// an array's elements with refValue; scalars as Value reads them.
func refValue(s *Scanner, depth int) (Token, error) {
	start := skipWS(s.data, s.pos)
	s.pos = start
	if start >= len(s.data) || s.data[start] != '{' && s.data[start] != '[' {
		return s.value(depth)
	}
	if depth+1 > MaxDepth {
		return Token{}, s.errf("nesting deeper than " + fmt.Sprint(MaxDepth))
	}
	s.pos++
	if s.data[start] == '{' {
		for first := true; ; first = false {
			_, ok, err := s.NextKey(first)
			if err != nil {
				return Token{}, err
			}
			if !ok {
				return Token{Kind: Object, Start: start, End: s.pos}, nil
			}
			if _, err := refValue(s, depth+1); err != nil {
				return Token{}, err
			}
		}
	}
	if s.Peek() == ']' {
		s.pos++
		return Token{Kind: Array, Start: start, End: s.pos}, nil
	}
	for {
		if _, err := refValue(s, depth+1); err != nil {
			return Token{}, err
		}
		switch s.Peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return Token{Kind: Array, Start: start, End: s.pos}, nil
		default:
			return Token{}, s.unexpected("',' or ']'")
		}
	}
}

// checkValue fails unless Value and refValue read data alike: the same
// token, error and offset after it.
func checkValue(t *testing.T, data []byte) {
	t.Helper()
	s, r := New(data), New(data)
	tok, err := s.Value()
	rtok, rerr := refValue(&r, 0)
	if fmt.Sprint(err) != fmt.Sprint(rerr) || s.pos != r.pos || err == nil && tok != rtok {
		t.Fatalf("%q: Value %+v, %v at %d; refValue %+v, %v at %d", data, tok, err, s.pos, rtok, rerr, r.pos)
	}
}

// TestSkipObject holds Value's skipObject to refValue on skipCases, whole,
// cut short at every byte and inside other values, and on nesting at and
// past MaxDepth.
func TestSkipObject(t *testing.T) {
	for _, in := range skipCases {
		for _, data := range []string{in, `{"x":` + in + `}`, `[` + in + `,` + in + `]`, `{"a":[{"b":` + in + `}],"c":1}`} {
			for n := 0; n <= len(data); n++ {
				checkValue(t, []byte(data[:n]))
			}
		}
	}
	for _, depth := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		checkValue(t, []byte(strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth)))
		checkValue(t, []byte(strings.Repeat(`{"a":[`, depth/2)+"1"+strings.Repeat("]}", depth/2)))
	}
}

// TestScanRowFast holds ScanRow (its loop, scanMembers) to the general
// way (scanRowGeneral) on skipCases as TestNextKeyOfSkips does, and on
// rows wider than Rows' buffer.
func TestScanRowFast(t *testing.T) {
	wide := make([]string, 40)
	for i := range wide {
		wide[i] = fmt.Sprintf(`"c%d":%d`, i, i)
	}
	for _, in := range append(skipCases, "{"+strings.Join(wide, ",")+"}", "{"+strings.Join(wide[:32], ",")+"}") {
		for _, data := range []string{in, in + `,"more":"after the object, as in a record"}`} {
			for n := 0; n <= len(data); n++ {
				checkScanRow(t, []byte(data[:n]))
			}
		}
	}
}

// scanRowGeneral is ScanRow as it was before scanMembers: every member
// read with NextKey and Value.
func scanRowGeneral(s *Scanner, rs *Rows, p *Pending) error {
	if err := s.BeginObject(); err != nil {
		return err
	}
	start := s.pos - 1
	p.start, p.lo, p.names = start, rs.n, nil
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		val, err := s.value(0)
		if err != nil {
			return s.inColumn(err, key)
		}
		rs.next().set(start, key, val)
	}
	return s.rowNames(rs, p, start)
}

// checkScanRow fails unless ScanRow and scanRowGeneral read data alike:
// the same error, the same members and row, the same offset after it.
func checkScanRow(t *testing.T, data []byte) {
	t.Helper()
	var rs, grs Rows
	var p, gp Pending
	s, g := New(data), New(data)
	err, gerr := s.ScanRow(&rs, &p), scanRowGeneral(&g, &grs, &gp)
	if fmt.Sprint(err) != fmt.Sprint(gerr) || s.pos != g.pos {
		t.Fatalf("%q: ScanRow %v at %d, the general way %v at %d", data, err, s.pos, gerr, g.pos)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(rs.members(&p), grs.members(&gp)) || !reflect.DeepEqual(p, gp) {
		t.Fatalf("%q: ScanRow %+v %+v, the general way %+v %+v", data, rs.members(&p), p, grs.members(&gp), gp)
	}
	if row, grow := rs.Row(data, &p), grs.Row(data, &gp); !reflect.DeepEqual(row, grow) {
		t.Fatalf("%q: ScanRow's row %v, the general way's %v", data, row, grow)
	}
}

// FuzzNextKeyOf holds NextKeyOf to NextKey and Value (checkNextKeyIn),
// ScanRow to the general way (checkScanRow) and Value to refValue
// (checkValue), on objects shaped like the Debezium blocks and rows they
// mostly read.
func FuzzNextKeyOf(f *testing.F) {
	for _, in := range skipCases {
		f.Add([]byte(in), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		keys := nextKeyInKeys[int(which)%len(nextKeyInKeys)]
		more := []byte(string(data) + strings.Repeat(`,"x":1`, 3))
		// The object, and the same object with more input after it.
		for _, in := range [][]byte{data, more} {
			checkNextKeyIn(t, in, keys)
			checkScanRow(t, in)
			checkValue(t, in)
		}
	})
}

// TestSkipDigits holds skipDigits to a byte-at-a-time loop: runs of
// digits of every length up to 20 ended by every byte value or by the
// input's end, from every offset.
func TestSkipDigits(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for c := -1; c < 256; c++ {
			b := []byte("x" + strings.Repeat("7", n))
			if c >= 0 {
				b = append(b, byte(c), '1', '2')
			}
			for from := 0; from <= len(b); from++ {
				want := from
				for want < len(b) && b[want] >= '0' && b[want] <= '9' {
					want++
				}
				if got := skipDigits(b, from); got != want {
					t.Fatalf("skipDigits(%q, %d) = %d, want %d", b, from, got, want)
				}
			}
		}
	}
}

// TestNamesFindByWords checks Names.find's comparison of short names as
// words: a row is given the interned list of its names exactly when its
// keys are those names, for names of every length up to 10, differing in
// any one byte, and last in a short row (fewer than 8 bytes after the
// key's start).
func TestNamesFindByWords(t *testing.T) {
	row := func(names *Names, in string) []string {
		t.Helper()
		s := New([]byte(in))
		s.UseNames(names)
		r, err := s.Row()
		if err != nil {
			t.Fatal(err)
		}
		return r.Names
	}
	for n := 1; n <= 10; n++ {
		name := strings.Repeat("k", n)
		for _, shape := range []string{`{"a":1,"%s":2}`, `{"%s":1}`, `{"%s":1,"b":2}`} {
			var names Names
			first := row(&names, fmt.Sprintf(shape, name))
			if again := row(&names, fmt.Sprintf(shape, name)); &again[0] != &first[0] {
				t.Errorf("%q, %s: the same names not shared", name, shape)
			}
			for at := range n {
				other := []byte(name)
				other[at] = 'x'
				got := row(&names, fmt.Sprintf(shape, other))
				if &got[0] == &first[0] || !slices.Contains(got, string(other)) {
					t.Errorf("%q, %s: names %q for key %q", name, shape, got, other)
				}
			}
		}
	}
}
