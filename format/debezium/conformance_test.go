package debezium

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/decodetest"
)

// conformanceDir holds the third-party fixtures (see its README.md). It
// lives in the shared workspace next to the repository, not in it.
const conformanceDir = "../../../shared/conformance/debezium"

// fixture reads a file of the conformance folder (decodetest.Fixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return decodetest.Fixture(t, conformanceDir, name)
}

func newDecoder(t testing.TB, opts format.Options) *Decoder {
	t.Helper()
	return decodetest.New(t, New, opts)
}

// decodeLines decodes a fixture line by line, as a file source would, and
// checks the position and size every change gets.
func decodeLines(t *testing.T, d *Decoder, name string, data []byte) (changes []changelog.Change, errAt int, err error) {
	t.Helper()
	var offset int64
	for i, line := range bytes.Split(data, []byte("\n")) {
		offset += int64(len(line)) + 1
		pos := changelog.Position{Partition: name, Offset: offset, Seq: int64(i + 1)}
		cs, err := d.Decode(line, pos)
		if err != nil {
			return changes, i + 1, err
		}
		for _, c := range cs {
			if c.Pos != pos {
				t.Fatalf("line %d: Pos = %v, want %v", i+1, c.Pos, pos)
			}
			if int(c.Size) != len(line)/len(cs) {
				t.Fatalf("line %d: Size = %d, want %d", i+1, c.Size, len(line)/len(cs))
			}
		}
		changes = append(changes, cs...)
	}
	return changes, 0, nil
}

// flinkColumns is the row type every Flink fixture test decodes into.
var flinkColumns = []string{"id", "name", "description", "weight"}

// flinkRows prints a change the way Flink's RowData.toString does, e.g.
// +I(101,scooter,Small 2-wheel scooter,3.14). Flink turns an update into
// -U (before) and +U (after); txsink emits one +U that carries Before, so
// the -U is printed from it.
func flinkRows(t *testing.T, c changelog.Change) []string {
	t.Helper()
	switch c.Kind {
	case changelog.Insert:
		return []string{"+I" + flinkRow(t, c.After)}
	case changelog.UpdateAfter:
		if c.Before.IsZero() {
			t.Fatalf("update of %v has no Before image", c.Table)
		}
		return []string{"-U" + flinkRow(t, c.Before), "+U" + flinkRow(t, c.After)}
	case changelog.Delete:
		return []string{"-D" + flinkRow(t, c.Before)}
	}
	t.Fatalf("unexpected kind %v", c.Kind)
	return nil
}

func flinkRow(t *testing.T, r changelog.Row) string {
	t.Helper()
	if r.Len() != len(flinkColumns) {
		t.Fatalf("row has columns %v, want %v", r.Names, flinkColumns)
	}
	parts := make([]string, len(flinkColumns))
	for i, col := range flinkColumns {
		if r.Names[i] != col {
			t.Fatalf("column %d is %q, want %q (order must follow the message)", i, r.Names[i], col)
		}
		v := r.Values[i]
		switch x := v.(type) {
		case nil:
			parts[i] = "null"
		case string:
			parts[i] = x
		case changelog.Number:
			if col == "weight" {
				f, err := strconv.ParseFloat(string(x), 64)
				if err != nil {
					t.Fatalf("weight %q: %v", x, err)
				}
				parts[i] = javaFloatString(float32(f))
			} else {
				parts[i] = string(x)
			}
		default:
			t.Fatalf("column %s: unexpected value %#v (%T)", col, v, v)
		}
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// javaFloatString formats f like Java's Float.toString: the shortest
// decimal that reads back as f, in plain notation with at least one
// fraction digit for 1e-3 <= |f| < 1e7, else as d.dddE±n.
func javaFloatString(f float32) string {
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
	// "d.dddde±xx": the shortest digits and the decimal exponent.
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

func TestJavaFloatString(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want string
	}{
		{3.14, "3.14"}, {1, "1.0"}, {0.875, "0.875"}, {22.2, "22.2"}, {0.1, "0.1"},
		{100, "100.0"}, {-5.17, "-5.17"}, {0, "0.0"}, {0.001, "0.001"}, {1e7, "1.0E7"},
		{1.5e-4, "1.5E-4"}, {123456.7, "123456.7"},
	} {
		if got := javaFloatString(tc.in); got != tc.want {
			t.Errorf("javaFloatString(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestConformanceFlink decodes Flink's debezium-json fixtures and compares
// the changelog with the one Flink's tests assert.
func TestConformanceFlink(t *testing.T) {
	for _, name := range []string{
		"debezium-data-schema-include.txt",
		"debezium-data-schema-exclude.txt",
		"debezium-postgres-data-schema-include.txt",
		"debezium-postgres-data-schema-exclude.txt",
	} {
		t.Run(name, func(t *testing.T) {
			data := fixture(t, name)
			want := strings.Split(strings.TrimRight(string(fixture(t, name+".expected.txt")), "\n"), "\n")
			changes, line, err := decodeLines(t, newDecoder(t, nil), name, data)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			var got []string
			for _, c := range changes {
				if c.Table != (changelog.Table{Namespace: "inventory", Name: "products"}) {
					t.Errorf("%v: table %#v, want inventory.products", c.Pos, c.Table)
				}
				if c.TxnID != "" {
					t.Errorf("%v: TxnID %q, want none (transaction is null)", c.Pos, c.TxnID)
				}
				got = append(got, flinkRows(t, c)...)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("changelog differs from the peer's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestConformanceReplicaIdentity: with REPLICA IDENTITY DEFAULT, Postgres
// updates carry no before image; the peer fails at the first one (line 10)
// with the message of the .expected-error.txt file.
func TestConformanceReplicaIdentity(t *testing.T) {
	const name = "debezium-postgres-data-replica-identity.txt"
	data := fixture(t, name)
	var wantMsg string
	for _, l := range strings.Split(string(fixture(t, name+".expected-error.txt")), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			wantMsg = l
		}
	}
	if wantMsg == "" {
		t.Fatal("no expected message in the .expected-error.txt file")
	}

	changes, line, err := decodeLines(t, newDecoder(t, nil), name, data)
	if line != 10 {
		t.Fatalf("decoding failed at line %d (err %v), want line 10", line, err)
	}
	if len(changes) != 9 {
		t.Errorf("lines 1-9 gave %d changes, want 9", len(changes))
	}
	var fe *format.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *format.Error", err, err)
	}
	if fe.Pos.Seq != 10 || fe.Table != "inventory.products" || fe.Format != Name {
		t.Errorf("error names %v, table %q, format %q; want line 10, inventory.products, %s", fe.Pos, fe.Table, fe.Format, Name)
	}
	// The peer's message is "<reason>, <hint>"; ours carries both parts.
	if got := fe.Reason + ", " + fe.Hint; !strings.HasPrefix(got, strings.TrimSuffix(wantMsg, ".")) {
		t.Errorf("reason and hint\n%q\ndo not start with the peer's message\n%q", got, wantMsg)
	}
	if !strings.Contains(fe.Hint, OptionAllowMissingBefore) {
		t.Errorf("hint %q does not name option %s", fe.Hint, OptionAllowMissingBefore)
	}
	if msg := fe.Error(); !strings.HasPrefix(msg, Name+": "+name+":10: table inventory.products: ") {
		t.Errorf("Error() = %q", msg)
	}

	// With the option, updates decode as plain +U; the delete on line 16
	// (before and after null) still fails: its key is unknown.
	changes, line, err = decodeLines(t, newDecoder(t, format.Options{OptionAllowMissingBefore: "true"}), name, data)
	if line != 16 || !errors.As(err, &fe) || !strings.Contains(fe.Reason, `delete event has no "before" image`) {
		t.Fatalf("with %s: failed at line %d with %v; want line 16, delete without before", OptionAllowMissingBefore, line, err)
	}
	if len(changes) != 15 {
		t.Errorf("with %s: %d changes before line 16, want 15", OptionAllowMissingBefore, len(changes))
	}
	for _, c := range changes[9:] {
		if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
			t.Errorf("%v: update has a Before image %v, the record had none", c.Pos, c.Before)
		}
	}
}

var customerRE = regexp.MustCompile(`Customer\{[^}]*\}`)

// customer prints a row the way debezium's SerdeTest Customer.toString
// does, over the Customer class's fields.
func customer(t *testing.T, r changelog.Row) string {
	t.Helper()
	var parts []string
	for _, col := range []string{"id", "first_name", "last_name", "email"} {
		v, ok := r.Get(col)
		if !ok {
			t.Fatalf("row %v lacks column %s", r.Names, col)
		}
		switch x := v.(type) {
		case changelog.Number:
			parts = append(parts, col+"="+string(x))
		case string:
			parts = append(parts, col+"="+strconv.Quote(x))
		default:
			t.Fatalf("column %s: unexpected %#v", col, v)
		}
	}
	return "Customer{" + strings.Join(parts, ", ") + "}"
}

// TestConformanceSerde decodes debezium's own SerdeTest documents (each
// file one pretty-printed record).
func TestConformanceSerde(t *testing.T) {
	d := newDecoder(t, nil)
	decodeFile := func(t *testing.T, name string) ([]changelog.Change, error) {
		t.Helper()
		pos := changelog.Position{Partition: name, Seq: 1}
		return d.Decode(fixture(t, "debezium-serde/"+name), pos)
	}
	expected := func(t *testing.T, name string) string {
		t.Helper()
		m := customerRE.FindString(string(fixture(t, "debezium-serde/"+name+".expected.txt")))
		if m == "" {
			t.Fatalf("no Customer{...} in %s.expected.txt", name)
		}
		return m
	}
	one := func(t *testing.T, cs []changelog.Change, err error, kind changelog.Kind) changelog.Change {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Kind != kind {
			t.Fatalf("got %v, want one %v change", cs, kind)
		}
		if cs[0].Table != (changelog.Table{Namespace: "inventory", Name: "customers"}) {
			t.Errorf("table %#v, want inventory.customers", cs[0].Table)
		}
		return cs[0]
	}

	for _, name := range []string{"serde-with-schema.json", "serde-without-schema.json"} {
		t.Run(name, func(t *testing.T) {
			cs, err := decodeFile(t, name)
			c := one(t, cs, err, changelog.Insert) // op "c"
			if got, want := customer(t, c.After), expected(t, name); got != want {
				t.Errorf("after = %s, want %s", got, want)
			}
		})
	}
	t.Run("serde-update.json", func(t *testing.T) {
		cs, err := decodeFile(t, "serde-update.json")
		c := one(t, cs, err, changelog.UpdateAfter)
		if got, want := customer(t, c.Before), expected(t, "serde-update.json"); got != want {
			t.Errorf("before = %s, want %s", got, want)
		}
		if v, _ := c.After.Get("first_name"); v != "Anne" {
			t.Errorf("after first_name = %v, want Anne", v)
		}
	})
	t.Run("serde-unknown-property.json", func(t *testing.T) {
		// The peer's lenient mode ignores the extra column; txsink keeps
		// every column and lets the target schema decide.
		cs, err := decodeFile(t, "serde-unknown-property.json")
		c := one(t, cs, err, changelog.UpdateAfter)
		if got, want := customer(t, c.Before), expected(t, "serde-unknown-property.json"); got != want {
			t.Errorf("before = %s, want %s", got, want)
		}
		if v, ok := c.Before.Get("middle_name"); !ok || v != "L" {
			t.Errorf("before middle_name = %v, %v; want the extra column kept", v, ok)
		}
	})
	t.Run("serde-unwrapped.json", func(t *testing.T) {
		// A flattened row has no envelope: txsink refuses it and says why.
		_, err := decodeFile(t, "serde-unwrapped.json")
		var fe *format.Error
		if !errors.As(err, &fe) || !strings.Contains(fe.Hint, "ExtractNewRecordState") {
			t.Fatalf("got %v, want a *format.Error hinting at ExtractNewRecordState", err)
		}
	})
}

// TestConformancePaimonState applies Paimon's schema-evolution files in
// order with primary key id and compares the table with the state Paimon
// asserts after each file.
func TestConformancePaimonState(t *testing.T) {
	d := newDecoder(t, nil)
	type row = map[string]changelog.Value
	state := map[string]row{}
	key := func(t *testing.T, r changelog.Row) string {
		t.Helper()
		v, ok := r.Get("id")
		n, isNum := v.(changelog.Number)
		if !ok || !isNum {
			t.Fatalf("row %v has no numeric id", r)
		}
		return string(n)
	}
	for _, file := range []string{"debezium-data-1.txt", "debezium-data-2.txt", "debezium-data-3.txt"} {
		name := "paimon-schemaevolution/" + file
		data := fixture(t, name)
		for i, line := range bytes.Split(data, []byte("\n")) {
			if !bytes.HasPrefix(line, []byte("{")) {
				continue // the license header and blank lines
			}
			cs, err := d.Decode(line, changelog.Position{Partition: name, Seq: int64(i + 1)})
			if err != nil {
				t.Fatalf("%s:%d: %v", name, i+1, err)
			}
			if len(cs) != 1 || cs[0].Table != (changelog.Table{Namespace: "test", Name: "product"}) {
				t.Fatalf("%s:%d: got %v, want one change of test.product", name, i+1, cs)
			}
			c := cs[0]
			switch c.Kind {
			case changelog.Insert, changelog.UpdateAfter:
				r := row{}
				for j, n := range c.After.Names {
					r[n] = c.After.Values[j]
				}
				state[key(t, c.After)] = r
			case changelog.Delete:
				delete(state, key(t, c.Before))
			default:
				t.Fatalf("%s:%d: unexpected kind %v", name, i+1, c.Kind)
			}
			if c.Kind == changelog.UpdateAfter {
				// The partial before image ({"address":"Shanghai"}) is kept as sent.
				if c.Before.Len() != 1 || c.Before.Names[0] != "address" {
					t.Errorf("%s:%d: before = %v, want the partial image {address}", name, i+1, c.Before)
				}
			}
		}

		// Columns as the peer's schema lists them, then Row.toString lines.
		var cols []string
		for _, l := range strings.Split(string(fixture(t, name+".schema.txt")), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(l, "#") && f[0] != "PRIMARY" {
				cols = append(cols, f[0])
			}
		}
		var got []string
		for _, r := range state {
			parts := make([]string, len(cols))
			for j, col := range cols {
				switch v := r[col].(type) {
				case nil:
					parts[j] = "NULL"
				case changelog.Number:
					parts[j] = string(v)
				case string:
					parts[j] = v
				default:
					t.Fatalf("column %s: unexpected %#v", col, v)
				}
			}
			got = append(got, "+I["+strings.Join(parts, ", ")+"]")
		}
		want := strings.Split(strings.TrimRight(string(fixture(t, name+".state.expected.txt")), "\n"), "\n")
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("after %s the table is\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestConformanceTransactionMetadata decodes the Debezium documentation's
// transaction examples: BEGIN gives no change, END one EndTxn change with
// the documented event count, and data events carry the same transaction
// key as their END (for PostgreSQL, whose ids differ by LSN, the txId).
func TestConformanceTransactionMetadata(t *testing.T) {
	d := newDecoder(t, nil)
	for _, conn := range []string{"mysql", "postgresql", "vitess"} {
		t.Run(conn, func(t *testing.T) {
			name := "txmeta-docs/" + conn + "-transaction-boundary-events.txt"
			events := bytes.Split(bytes.TrimSpace(fixture(t, name)), []byte("\n\n"))
			if len(events) != 2 {
				t.Fatalf("%s: %d events, want BEGIN and END", name, len(events))
			}
			if cs, err := d.Decode(events[0], changelog.Position{Partition: name, Seq: 1}); err != nil || len(cs) != 0 {
				t.Errorf("BEGIN: got %v, %v; want no change, no error", cs, err)
			}
			cs, err := d.Decode(events[1], changelog.Position{Partition: name, Seq: 2})
			wantEvents := map[string]int{"mysql": 2, "postgresql": 2, "vitess": 1}[conn]
			if err != nil || len(cs) != 1 || cs[0].Kind != changelog.EndTxn || !cs[0].TxnEnd || int(cs[0].TxnEvents) != wantEvents {
				t.Fatalf("END: got %+v, %v; want one EndTxn with %d events", cs, err, wantEvents)
			}
			endKey := cs[0].TxnID

			for _, kind := range []string{"data-event-with-transaction", "data-event-with-ordered-transaction"} {
				name := "txmeta-docs/" + conn + "-" + kind + ".txt"
				if _, err := os.Stat(filepath.Join(conformanceDir, name)); err != nil {
					continue // only vitess has the ordered variant
				}
				// The documentation elides "source" as "..."; put a table in.
				rec := regexp.MustCompile(`(?m)^\s*\.\.\.\s*$`).ReplaceAll(fixture(t, name), []byte(`"db":"s1","table":"a"`))
				want := regexp.MustCompile(`"id": "((?:[^"\\]|\\.)*)"`).FindSubmatch(rec)
				if want == nil {
					t.Fatalf("%s: no transaction id", name)
				}
				wantID, err := strconv.Unquote(`"` + string(want[1]) + `"`)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := d.Decode(rec, changelog.Position{Partition: name, Seq: 1})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(cs) != 1 || cs[0].Kind != changelog.Insert || cs[0].TxnID != TxnKey(wantID) {
					t.Fatalf("%s: got %+v, want one +I with TxnID %q", name, cs, TxnKey(wantID))
				}
				if conn != "vitess" && cs[0].TxnID != endKey {
					// The vitess examples are of different transactions.
					t.Errorf("%s: data event's transaction key %q differs from END's %q", name, cs[0].TxnID, endKey)
				}
				if v, _ := cs[0].After.Get("pk"); v != "2" {
					t.Errorf("%s: pk = %v, want \"2\"", name, v)
				}
			}
		})
	}
}
