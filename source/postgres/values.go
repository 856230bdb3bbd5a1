package postgres

import (
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
)

// Type OIDs of PostgreSQL's built-in types whose text form needs more than
// a string to reach a target column exactly (pg_type.oid; fixed since
// PostgreSQL 8).
const (
	oidBool    = 16
	oidBytea   = 17
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidOID     = 26
	oidJSON    = 114
	oidFloat4  = 700
	oidFloat8  = 701
	oidNumeric = 1700
	oidJSONB   = 3802
)

// value renders a column's pgoutput text value (the type's output function,
// under the session settings the replication connection sets: ISO dates,
// UTC, hexadecimal bytea) as the changelog.Value the target column converts
// exactly:
//
//   - integers, numeric and floats as changelog.Number, their exact text
//     (NaN and the infinities, which JSON cannot write, as strings: a
//     target column refuses them by name);
//   - bool as bool;
//   - bytea as its bytes, as a string: txsink-json has no binary type, so
//     bytes that are not UTF-8 text are refused, naming the column;
//   - json and jsonb as their JSON text, unchanged;
//   - everything else (text, dates, timestamps with their zone, uuid,
//     arrays...) as its text, which the target column parses.
func value(oid uint32, text []byte) (changelog.Value, error) {
	switch oid {
	case oidInt2, oidInt4, oidInt8, oidOID:
		return changelog.Number(text), nil
	case oidNumeric, oidFloat4, oidFloat8:
		switch s := string(text); s {
		case "NaN", "Infinity", "-Infinity":
			return s, nil
		default:
			return changelog.Number(s), nil
		}
	case oidBool:
		switch string(text) {
		case "t":
			return true, nil
		case "f":
			return false, nil
		}
		return nil, fmt.Errorf("bool value %q is neither t nor f", text)
	case oidBytea:
		if len(text) < 2 || text[0] != '\\' || text[1] != 'x' {
			return nil, fmt.Errorf("bytea value does not start with \\x (is bytea_output hex?)")
		}
		b := make([]byte, hex.DecodedLen(len(text)-2))
		if _, err := hex.Decode(b, text[2:]); err != nil {
			return nil, fmt.Errorf("bytea value: %w", err)
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("bytea value of %d bytes is not UTF-8 text, and txsink-json, the format this source writes, has no binary type", len(b))
		}
		return string(b), nil
	}
	return string(text), nil
}
