// Package flinkrow prints decoded changes the way the peers of the
// conformance fixtures (../shared/conformance) assert them, so the format
// tests can compare a decoder's output with the peer's text exactly:
//
//   - Flink's RowData.toString, +I(101,scooter,Small 2-wheel scooter,3.14),
//     used by the Flink SerDe tests' .expected.txt files;
//   - Flink's Row.toString of a table's state, +I[101, scooter, ..., 3.14],
//     used by the Paimon *.state.expected.txt files.
//
// It is test support: only the format packages' tests import it.
package flinkrow

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
)

// Columns is the row type every Flink fixture test decodes into:
// ROW(id INT NOT NULL, name STRING, description STRING, weight FLOAT).
var Columns = []string{"id", "name", "description", "weight"}

// floatColumn is the FLOAT (float32) column of Columns.
const floatColumn = "weight"

// Lines prints a change as RowData.toString lines. Flink turns an update into
// -U (before) and +U (after); a txsink +U that carries Before prints both,
// its -U from Before, and a +U without Before prints only the +U. A -U
// change (the Flink changelog formats send it as a message of its own)
// prints its Before.
func Lines(c changelog.Change) ([]string, error) {
	img := func(r changelog.Row) (string, error) {
		s, err := RowData(r)
		if err != nil {
			return "", fmt.Errorf("%v change of %v: %w", c.Kind, c.Table, err)
		}
		return c.Kind.String() + s, nil
	}
	switch c.Kind {
	case changelog.Insert:
		l, err := img(c.After)
		return []string{l}, err
	case changelog.UpdateAfter:
		after, err := img(c.After)
		if err != nil || c.Before.IsZero() {
			return []string{after}, err
		}
		before, err := RowData(c.Before)
		return []string{"-U" + before, after}, err
	case changelog.UpdateBefore, changelog.Delete:
		l, err := img(c.Before)
		return []string{l}, err
	}
	return nil, fmt.Errorf("unexpected change kind %v", c.Kind)
}

// RowData prints a row of Columns (in that order) like RowData.toString,
// without the kind: (101,scooter,Small 2-wheel scooter,3.14). The weight is
// read as a float32 and printed like Java's Float.toString, whether the
// format sent it as a number or as a string.
func RowData(r changelog.Row) (string, error) {
	if r.Len() != len(Columns) {
		return "", fmt.Errorf("row has columns %v, want %v", r.Names, Columns)
	}
	parts := make([]string, len(Columns))
	for i, col := range Columns {
		if r.Names[i] != col {
			return "", fmt.Errorf("column %d is %q, want %q (the order must follow the message)", i, r.Names[i], col)
		}
		var text string
		switch x := r.Values[i].(type) {
		case nil:
			parts[i] = "null"
			continue
		case string:
			text = x
		case changelog.Number:
			text = string(x)
		default:
			return "", fmt.Errorf("column %s: unexpected value %#v (%T)", col, x, x)
		}
		if col == floatColumn {
			f, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return "", fmt.Errorf("column %s: %q is not a number: %w", col, text, err)
			}
			text = JavaFloatString(float32(f))
		}
		parts[i] = text
	}
	return "(" + strings.Join(parts, ",") + ")", nil
}

// JavaFloatString formats f like Java's Float.toString: the shortest
// decimal that reads back as f, in plain notation with at least one
// fraction digit for 1e-3 <= |f| < 1e7, else as d.dddE±n.
func JavaFloatString(f float32) string {
	switch {
	case math.IsNaN(float64(f)):
		return "NaN"
	case math.IsInf(float64(f), 1):
		return "Infinity"
	case math.IsInf(float64(f), -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(float64(f)) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(float64(f), 'e', -1, 32)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		var s string
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			s = digits[:exp+1] + "." + digits[exp+1:]
			if strings.HasSuffix(s, ".") {
				s += "0"
			}
		} else {
			s = "0." + strings.Repeat("0", -exp-1) + digits
		}
		return sign + s
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

// Table is the state of a primary-key table that changes are applied to in
// order, the way the Paimon sync action the state fixtures come from does:
// +I and +U replace the row of their key with After, -D deletes the key of
// Before, and -U is ignored (as txsink ignores it).
type Table struct {
	key  string
	rows map[string]changelog.Row
}

// NewTable returns an empty table whose primary key is column key.
func NewTable(key string) *Table {
	return &Table{key: key, rows: map[string]changelog.Row{}}
}

// Apply applies one change.
func (t *Table) Apply(c changelog.Change) error {
	switch c.Kind {
	case changelog.Insert, changelog.UpdateAfter:
		k, err := t.keyOf(c.After)
		if err != nil {
			return err
		}
		t.rows[k] = c.After
	case changelog.Delete:
		k, err := t.keyOf(c.Before)
		if err != nil {
			return err
		}
		delete(t.rows, k)
	case changelog.UpdateBefore:
	default:
		return fmt.Errorf("unexpected change kind %v", c.Kind)
	}
	return nil
}

func (t *Table) keyOf(r changelog.Row) (string, error) {
	v, ok := r.Get(t.key)
	if !ok {
		return "", fmt.Errorf("row %v has no key column %s", r.Names, t.key)
	}
	s, err := Text(v)
	if err != nil || v == nil {
		return "", fmt.Errorf("row %v: key %s = %#v is not a string or number", r.Names, t.key, v)
	}
	return s, nil
}

// Lines prints the table as sorted Row.toString lines over cols, the
// columns of the table in the peer's schema: +I[101, scooter, NULL]. A
// column a row lacks (added to the table after the row was written) is NULL.
func (t *Table) Lines(cols []string) ([]string, error) {
	var out []string
	for _, r := range t.rows {
		parts := make([]string, len(cols))
		for i, col := range cols {
			v, _ := r.Get(col)
			s, err := Text(v)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", col, err)
			}
			parts[i] = s
		}
		out = append(out, "+I["+strings.Join(parts, ", ")+"]")
	}
	sort.Strings(out)
	return out, nil
}

// Text prints a value as a STRING column of the Paimon table holds it:
// numbers and strings as their text, SQL NULL as NULL.
func Text(v changelog.Value) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case string:
		return x, nil
	case changelog.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("unexpected value %#v (%T)", v, v)
}

// SchemaColumns returns the column names of a fixture's X.schema.txt: the
// first word of every line that is not a comment, blank or the PRIMARY KEY
// clause.
func SchemaColumns(schema string) []string {
	var cols []string
	for _, l := range strings.Split(schema, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(l, "#") && f[0] != "PRIMARY" {
			cols = append(cols, f[0])
		}
	}
	return cols
}

// ExpectedLines splits an .expected.txt or .state.expected.txt file into its
// lines, without blank lines and # comments.
func ExpectedLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
