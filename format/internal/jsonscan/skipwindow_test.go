package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// windowTail is input after an object long enough for every member of
// it to be read in skipMembers' window (memberWindow bytes from the
// key): the record going on, as after a Debezium "source" block.
var windowTail = `,"more":"after the object, as in a record, long enough for the window of every member before it"}`

// windowValues are values of every shape skipMembers' window reads
// itself (plain strings up to the window's end, whole numbers up to 16
// digits, literals) and of those it leaves to skipRest or to Value
// (longer strings and numbers, fractions, exponents, negative numbers,
// escapes, multi-byte characters, objects, arrays), well and badly
// formed.
func windowValues() []string {
	vs := []string{
		`0`, `01`, `0.5`, `0e1`, `0x`, `-0`, `-1`, `-`, `-a`, `1.`, `1.5`, `12.07`, `1e5`, `1E+5`, `1e`, `1x`,
		`null`, `nul`, `nulll`, `true`, `tru`, `truex`, `false`, `fals`, `falsee`, `fx`, `x`, `{}`, `[]`, `{"a":1}`, `[1,2]`,
		`"a\"b"`, `"caf\u00e9"`, `"é"`, "\"a\x01b\"", "\"a\xffb\"", `""`, `"`, `"x`, `+1`, `.5`, `}`, `,`,
	}
	for n := 0; n <= 60; n++ {
		vs = append(vs, `"`+strings.Repeat("s", n)+`"`)
		if n > 0 {
			// An escape or a multi-byte character as the string's
			// last byte, where the window's words see it last.
			vs = append(vs, `"`+strings.Repeat("s", n-1)+`\n"`, `"`+strings.Repeat("s", n-1)+`é"`)
		}
	}
	for n := 1; n <= 20; n++ {
		vs = append(vs, strings.Repeat("7", n), "1"+strings.Repeat("0", n-1)+".25", strings.Repeat("9", n)+"e3", strings.Repeat("8", n)+"x")
	}
	return vs
}

// TestSkipMembersWindow holds NextKeyOf to NextKey and Value
// (checkNextKeyIn) on members read in skipMembers' window and beside it:
// keys of every length up to 18 bytes (those of a wanted length looked
// up, found or not) with each of windowValues, first in their object and
// after another member, walked for keys of their lengths and last bytes
// and others, with the object followed by windowTail (the
// window) or by nothing (skipRest only); and on skipCases cut short at
// every byte and followed by windowTail, so that the window ends
// anywhere in a member.
func TestSkipMembersWindow(t *testing.T) {
	// Key sets whose keys share lengths and last bytes with the keys
	// walked past (Keys.ends), an empty key among them.
	keySets := append(nextKeyInKeys, []string{"db", "table", "ts_ms"}, []string{"abcdefghijklmno", "k"},
		[]string{"", "kkkkkkkkkkkkkkx", "kkkx", "xk"})
	for kn := 0; kn <= 18; kn++ {
		key := strings.Repeat("k", kn)
		for _, v := range windowValues() {
			for _, shape := range []string{`{"%s":%s,"db":1}`, `{"a":1,"%s":%s,"db":2}`, `{"abcdefghijklmno":"x","%s":%s}`} {
				obj := fmt.Sprintf(shape, key, v)
				for _, data := range []string{obj, obj + windowTail} {
					for _, keys := range keySets {
						checkNextKeyIn(t, []byte(data), keys)
					}
				}
			}
		}
	}
	for _, in := range skipCases {
		for n := 0; n <= len(in); n++ {
			for _, tail := range []string{windowTail, strings.Repeat(" ", 80), strings.Repeat("7", 80), strings.Repeat(`"`, 80)} {
				checkNextKeyIn(t, []byte(in[:n]+tail), nextKeyInKeys[0])
			}
		}
	}
}

// FuzzSkipMembersWindow is FuzzNextKeyOf with the object followed by
// windowTail, so that its members are read in skipMembers' window (and
// ScanRow's numbers by numberEnd's word tests) rather than near the
// input's end.
func FuzzSkipMembersWindow(f *testing.F) {
	for _, in := range skipCases {
		f.Add([]byte(in), uint8(0))
	}
	for i, v := range windowValues() {
		f.Add([]byte(`{"ts_ms":`+v+`,"db":1}`), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		in := []byte(string(data) + windowTail)
		checkNextKeyIn(t, in, nextKeyInKeys[int(which)%len(nextKeyInKeys)])
		checkScanRow(t, in)
		checkValue(t, in)
	})
}
