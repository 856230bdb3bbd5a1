package coerce

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// tc is one conversion case: col and in go to Value; either want is the
// result (err == "") or err is a substring the *Error's Reason must hold.
type tc struct {
	name string
	col  schema.Column
	in   changelog.Value
	want any
	err  string
}

// num is shorthand for a changelog.Number.
func num(s string) changelog.Number { return changelog.Number(s) }

func intCol(sqlType string, bits int) schema.Column {
	return schema.Column{Name: "n", Class: schema.Int, SQLType: sqlType, Bits: bits}
}

func uintCol(sqlType string, bits int) schema.Column {
	return schema.Column{Name: "n", Class: schema.Uint, SQLType: sqlType, Bits: bits}
}

func decCol(p, s int) schema.Column {
	return schema.Column{Name: "amount", Class: schema.Decimal, SQLType: "DECIMAL", Precision: p, Scale: s}
}

func floatCol(bits int) schema.Column {
	return schema.Column{Name: "f", Class: schema.Float, SQLType: "FLOAT", Bits: bits}
}

func strCol(length int) schema.Column {
	return schema.Column{Name: "s", Class: schema.String, SQLType: "VARCHAR", Length: length}
}

func bytesCol(length int) schema.Column {
	return schema.Column{Name: "b", Class: schema.Bytes, SQLType: "VARBINARY", Length: length}
}

func timeCol(class schema.Class, fd int) schema.Column {
	return schema.Column{Name: "t", Class: class, SQLType: class.String(), FracDigits: fd}
}

func utc(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

// same compares a result with the wanted one: time.Time by instant and
// location (UTC), everything else by type and value.
func same(got, want any) bool {
	if wt, ok := want.(time.Time); ok {
		gt, ok := got.(time.Time)
		return ok && gt.Equal(wt) && gt.Location() == time.UTC
	}
	return reflect.DeepEqual(got, want)
}

// run checks every case, and that every error is an *Error whose fields
// describe the column and the input.
func run(t *testing.T, cases []tc) {
	t.Helper()
	for _, c := range cases {
		name := c.name
		if name == "" {
			name = Describe(c.in)
		}
		t.Run(name, func(t *testing.T) {
			col := c.col
			got, err := Value(&col, c.in)
			if c.err == "" {
				if err != nil {
					t.Fatalf("Value(%s) error: %v", Describe(c.in), err)
				}
				if !same(got, c.want) {
					t.Fatalf("Value(%s) = %#v (%T), want %#v (%T)", Describe(c.in), got, got, c.want, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Value(%s) = %#v, want error containing %q", Describe(c.in), got, c.err)
			}
			if got != nil {
				t.Errorf("Value(%s) returned %#v alongside its error", Describe(c.in), got)
			}
			checkError(t, &col, c.in, err, c.err)
		})
	}
}

// checkError checks that err is an *Error for col and in whose Reason holds
// reason.
func checkError(t *testing.T, col *schema.Column, in changelog.Value, err error, reason string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *coerce.Error", err, err)
	}
	if !strings.Contains(e.Reason, reason) {
		t.Errorf("Reason %q does not contain %q", e.Reason, reason)
	}
	if e.Column != col.Name {
		t.Errorf("Column = %q, want %q", e.Column, col.Name)
	}
	wantType := col.SQLType
	if wantType == "" {
		wantType = col.Class.String()
	}
	if e.SQLType != wantType {
		t.Errorf("SQLType = %q, want %q", e.SQLType, wantType)
	}
	if e.Value != Describe(in) {
		t.Errorf("Value = %q, want %q", e.Value, Describe(in))
	}
	if want := "column " + col.Name + " " + wantType + ": value " + Describe(in) + " " + e.Reason; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !e.Permanent() {
		t.Error("Permanent() = false")
	}
}
