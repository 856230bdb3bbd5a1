package debezium

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
)

// OptionUnavailableValuePlaceholder is the connector's
// unavailable.value.placeholder: the value Debezium writes for a column
// whose value it does not have (an unchanged TOASTed column of a
// PostgreSQL table with REPLICA IDENTITY DEFAULT, an Oracle LOB it did not
// mine). The decoder drops such a column from the row image, so the
// change does not carry it and the target keeps its stored value, instead
// of writing the placeholder over it. The default is
// DefaultUnavailableValuePlaceholder; "hex:5f5f..." gives the placeholder
// as bytes, as Debezium's PostgreSQL connector reads it; "" turns the
// detection off, for a source whose values may be the placeholder itself.
const OptionUnavailableValuePlaceholder = "debezium.unavailable-value-placeholder"

// DefaultUnavailableValuePlaceholder is Debezium's default
// unavailable.value.placeholder.
const DefaultUnavailableValuePlaceholder = "__debezium_unavailable_value"

// placeholder is every form Debezium gives its unavailable-value
// placeholder P in a JSON row image (see UnchangedToastedPlaceholder in
// debezium-connector-postgres):
//
//	text, json, xml, ... columns      "P"
//	bytea (binary.handling.mode=bytes) "base64(P)", the bytes of P as JsonConverter writes bytes
//	text[] and other string arrays     ["P"]
//	bytea[]                            ["base64(P)"]
//	uuid[]                             ["<the name-based UUID of P's bytes>"]
//	smallint[], int[], bigint[]        [95,95,100,...], one element per byte of P
//	real[], double precision[]         [95.0,95.0,100.0,...]
//	hstore                             {"P":"P"}, or that text (hstore.handling.mode=json)
//
// The base64 form is taken as the placeholder only where the Connect
// schema says the column is bytes, or where there is no schema to say:
// without a schema a bytea column's bytes arrive as base64 text, which
// txsink writes byte for byte, so the placeholder would be stored as data.
// With a schema that says string the column is text, and base64 text is
// its value. Boolean and numeric arrays, whose placeholders (one element
// per byte: all true, or decimals) look like data, are not recognised.
type placeholder struct {
	text, base64 string
	// hstore is the JSON text of the hstore form, {"P":"P"}: a JSON
	// object, or a string holding it.
	hstore string
	// json holds the compact JSON texts of the array and object forms.
	json []string
	// maxJSON is the longest of them, so longer values are passed over
	// without a look.
	maxJSON int
}

// newPlaceholder returns the forms of the placeholder spec (the option's
// value), nil for "" (detection off).
func newPlaceholder(spec string) (*placeholder, error) {
	if spec == "" {
		return nil, nil
	}
	raw := []byte(spec)
	if h, ok := strings.CutPrefix(spec, "hex:"); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("format %s: option %s: %q is not hex:<hexadecimal bytes>", Name, OptionUnavailableValuePlaceholder, spec)
		}
		raw = b
	}
	// Java's new String(bytes) in the connector: each invalid byte is U+FFFD.
	text := strings.ToValidUTF8(string(raw), "\uFFFD")
	p := &placeholder{text: text, base64: base64.StdEncoding.EncodeToString(raw)}
	str := jsonString
	p.hstore = "{" + str(text) + ":" + str(text) + "}"
	var ints, floats []string
	for _, b := range raw {
		// Java's bytes are signed: 0x80 and above are negative.
		n := int(int8(b))
		ints = append(ints, strconv.Itoa(n))
		floats = append(floats, strconv.Itoa(n)+".0")
	}
	p.json = []string{
		"[" + str(text) + "]",
		"[" + str(p.base64) + "]",
		"[" + str(nameUUID(raw)) + "]",
		"[" + strings.Join(ints, ",") + "]",
		"[" + strings.Join(floats, ",") + "]",
		p.hstore,
	}
	for _, j := range p.json {
		p.maxJSON = max(p.maxJSON, len(j))
	}
	return p, nil
}

// jsonString returns s as a JSON string the way Jackson writes it: quotes,
// backslashes and control characters escaped, everything else as is.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// nameUUID is Java's UUID.nameUUIDFromBytes: the version 3 UUID of b.
func nameUUID(b []byte) string {
	h := md5.Sum(b)
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// is reports whether v, the value of column i of row, whose Connect
// schema is img (nil without one), is the placeholder. Most values differ
// from every form in length, so that is looked at first: the check is on
// every value of every image.
func (p *placeholder) is(row *changelog.Row, i int, v changelog.Value, img *image) bool {
	switch x := v.(type) {
	case string:
		if len(x) == len(p.text) && x == p.text || len(x) == len(p.hstore) && x == p.hstore {
			return true
		}
		if len(x) == len(p.base64) && x == p.base64 {
			// Base64 is bytes only where no schema says the column is
			// something else.
			var col *column
			if img != nil {
				col = img.find(i, row.Names[i])
			}
			return col == nil || col.conv == convBytes
		}
	case changelog.JSON:
		if len(x) == 0 || len(x) > 2*p.maxJSON {
			return false
		}
		for _, j := range p.json {
			if compactEqual(x, j) {
				return true
			}
		}
	}
	return false
}

// maybe reports whether v may be the placeholder, by its type and
// length alone: a test made inline for every value of every image, which
// most values fail (numbers, NULLs, strings of other lengths), sparing
// them the call to is.
func (p *placeholder) maybe(v changelog.Value) bool {
	switch x := v.(type) {
	case string:
		return len(x) == len(p.text) || len(x) == len(p.hstore) || len(x) == len(p.base64)
	case changelog.JSON:
		return len(x) != 0 && len(x) <= 2*p.maxJSON
	}
	return false
}

// compactEqual reports whether the JSON text b is want once the white space
// between its tokens is left out, so that a producer that spaces its
// arrays out is matched too. It does not allocate: it is asked of every
// JSON value of every image.
func compactEqual(b []byte, want string) bool {
	in, esc := false, false
	j := 0
	for _, c := range b {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		if j >= len(want) || want[j] != c {
			return false
		}
		j++
	}
	return j == len(want)
}

// drop removes the columns of row whose value is the placeholder, img
// being the row's Connect schema (nil without one): the change then does
// not carry them, as if the image had left them out. row.Names may be
// shared with other rows (see changelog.Row), so a row that loses columns
// gets a list of its own.
func (p *placeholder) drop(row *changelog.Row, img *image) {
	first := -1
	for i, v := range row.Values {
		if p.maybe(v) && p.is(row, i, v, img) {
			first = i
			break
		}
	}
	if first < 0 {
		return
	}
	names := append(make([]string, 0, len(row.Names)-1), row.Names[:first]...)
	values := row.Values[:first]
	for i := first + 1; i < len(row.Values); i++ {
		if v := row.Values[i]; p.maybe(v) && p.is(row, i, v, img) {
			continue
		}
		names = append(names, row.Names[i])
		values = append(values, row.Values[i])
	}
	row.Names, row.Values = names[:len(names):len(names)], values
}
