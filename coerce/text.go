package coerce

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// toString converts v for a character column. Text must be valid UTF-8 and,
// when the column has a Length, at most Length characters (runes) long.
// Accepted: string; []byte and changelog.JSON holding UTF-8 text; Number as
// its text; bool as "true"/"false"; Go integers and finite floats as their
// shortest decimal text.
func toString(col *schema.Column, v changelog.Value) (any, error) {
	// The common case first: a string that fits, returned as the very
	// interface passed in, without normalize's type switch and sameOr's
	// comparison.
	if s, ok := v.(string); ok && fitsText(col, s) {
		return v, nil
	}
	return toStringAny(col, v)
}

// fitsText reports whether the string s goes into the character column col
// as it is: valid UTF-8, within the column's Length.
func fitsText(col *schema.Column, s string) bool {
	return validText(s) &&
		(col.Length <= 0 || len(s) <= col.Length || !col.LengthInBytes && utf8.RuneCountInString(s) <= col.Length)
}

// validText reports whether s is valid UTF-8, as utf8.ValidString does,
// in fewer instructions for the short ASCII text most columns hold:
// ValidString reads a string of under 8 bytes a byte at a time, at about
// seven instructions a byte and a call, where a string of up to 16 ASCII
// bytes is told here by two words' high bits (ASCII is valid UTF-8).
func validText(s string) bool {
	const hiBits = 0x8080808080808080
	switch n := len(s); {
	case n >= 8 && n <= 16:
		if (word(s)|word(s[n-8:]))&hiBits == 0 {
			return true
		}
	case n < 8:
		var or byte
		for i := 0; i < n; i++ {
			or |= s[i]
		}
		if or < utf8.RuneSelf {
			return true
		}
	}
	return utf8.ValidString(s)
}

// word returns the first 8 bytes of s, which has at least 8, as a
// little-endian integer (the compiler makes it one load).
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// toStringAny is toString for every input and every error.
func toStringAny(col *schema.Column, v changelog.Value) (any, error) {
	var s string
	switch x := normalize(v).(type) {
	case string:
		s = x
	case changelog.Number:
		s = string(x)
	case bool:
		s = strconv.FormatBool(x)
	case changelog.JSON:
		s = string(x)
	case []byte:
		s = string(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		if !finite(x) {
			return nil, newError(col, v, string(errNotFinite))
		}
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		if !finite(float64(x)) {
			return nil, newError(col, v, string(errNotFinite))
		}
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		return nil, typeError(col, v)
	}
	if reason := checkUTF8(s); reason != "" {
		return nil, newError(col, v, reason)
	}
	// A string of at most Length bytes has at most Length characters, so the
	// count is only needed for longer ones.
	if col.Length > 0 && len(s) > col.Length {
		if col.LengthInBytes {
			return nil, newError(col, v, "is "+plural(len(s), "byte")+" long, the column holds at most "+strconv.Itoa(col.Length)+" bytes (its length counts bytes of UTF-8, not characters; txsink never truncates)")
		}
		if n := utf8.RuneCountInString(s); n > col.Length {
			return nil, newError(col, v, "is "+plural(n, "character")+" long, the column holds at most "+strconv.Itoa(col.Length)+" (txsink never truncates)")
		}
	}
	return sameOr(v, s), nil
}

// sameOr returns s, reusing v's box when v holds the same text: v itself
// when it is the string s, or v retyped when it is a Number with the text
// s (see textOf). Returning the interface the caller passed, instead of
// the string it holds, saves boxing the string again: an allocation per
// value.
func sameOr(v changelog.Value, s string) any {
	switch x := v.(type) {
	case string:
		if x == s {
			return v
		}
	case changelog.Number:
		if string(x) == s {
			return textOf(v)
		}
	}
	return s
}

// checkUTF8 returns "" when s is valid UTF-8, else a reason naming the first
// bad byte and its offset.
func checkUTF8(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return "is not valid UTF-8: byte 0x" + strconv.FormatUint(uint64(s[i]), 16) + " at offset " + strconv.Itoa(i) + " does not start a valid character"
		}
		i += size
	}
	return "is not valid UTF-8" // unreachable: ValidString said otherwise
}

// toBytes converts v for a binary column: []byte as is (no copy), string as
// its bytes. When the column has a Length, the value may be at most Length
// bytes long.
//
// A string is taken byte for byte, never decoded: JSON formats read without
// a schema deliver binary columns as text (Debezium's base64, hex, …) and
// cannot say which encoding; a decoder that knows (Debezium with the schema
// envelope) delivers []byte already.
func toBytes(col *schema.Column, v changelog.Value) (any, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		return nil, typeError(col, v)
	}
	if col.Length > 0 && len(b) > col.Length {
		return nil, newError(col, v, "is "+plural(len(b), "byte")+" long, the column holds at most "+strconv.Itoa(col.Length)+" (txsink never truncates)")
	}
	if _, ok := v.([]byte); ok {
		return v, nil // as is, without boxing it again
	}
	return b, nil
}

// toJSON converts v for a JSON column and returns JSON text. changelog.JSON,
// string (Debezium's io.debezium.data.Json is a string holding the document)
// and []byte must hold valid JSON in valid UTF-8; they are returned as they
// are. Number, bool, Go integers and finite floats become their JSON text.
func toJSON(col *schema.Column, v changelog.Value) (any, error) {
	switch x := normalize(v).(type) {
	case changelog.JSON:
		if reason := checkJSON(x); reason != "" {
			return nil, newError(col, v, reason)
		}
		return string(x), nil
	case string:
		if reason := checkJSON([]byte(x)); reason != "" {
			return nil, newError(col, v, reason)
		}
		return v, nil
	case []byte:
		if reason := checkJSON(x); reason != "" {
			return nil, newError(col, v, reason)
		}
		return string(x), nil
	case changelog.Number:
		if !json.Valid([]byte(x)) {
			return nil, newError(col, v, "is not a JSON number")
		}
		return textOf(v), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		if !finite(x) {
			return nil, newError(col, v, string(errNotFinite))
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		if !finite(float64(x)) {
			return nil, newError(col, v, string(errNotFinite))
		}
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	}
	return nil, typeError(col, v)
}

// checkJSON returns "" when b is one valid JSON value in valid UTF-8, else
// the reason it is not.
func checkJSON(b []byte) string {
	if !utf8.Valid(b) {
		return checkUTF8(string(b))
	}
	if json.Valid(b) {
		return ""
	}
	var raw json.RawMessage
	err := json.Unmarshal(b, &raw)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return "is not valid JSON: " + syn.Error() + " (at byte " + strconv.FormatInt(syn.Offset, 10) + ")"
	}
	if err != nil {
		return "is not valid JSON: " + err.Error()
	}
	return "is not valid JSON"
}

// toUnknown passes v on for a column whose type txsink does not know: text
// and numbers as strings, JSON as its text, and bool, []byte, Go integers,
// floats and time.Time as themselves (integers as int64 or uint64, floats as
// float64). Nothing is checked: the database decides.
func toUnknown(col *schema.Column, v changelog.Value) (any, error) {
	switch x := normalize(v).(type) {
	case string:
		return v, nil
	case changelog.Number:
		return textOf(v), nil
	case changelog.JSON:
		return string(x), nil
	case bool, []byte, int64, uint64, float64, time.Time:
		return x, nil
	case float32:
		return float64(x), nil
	}
	return nil, typeError(col, v)
}
