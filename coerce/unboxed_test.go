package coerce

import (
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// TestUnboxed: Int64 and DateTime give what Value gives for the values
// they take, and decline (ok false) every value Value converts otherwise
// or refuses, and every column of another class.
func TestUnboxed(t *testing.T) {
	i32 := &schema.Column{Name: "n", Class: schema.Int, Bits: 32}
	i64 := &schema.Column{Name: "n", Class: schema.Int, Bits: 64}
	dec := &schema.Column{Name: "d", Class: schema.Decimal, Precision: 10, Scale: 2}
	for _, tc := range []struct {
		col *schema.Column
		v   changelog.Value
		ok  bool
	}{
		{i64, changelog.Number("7"), true},
		{i64, changelog.Number("-123456789012345678"), true},
		{i64, "42", true},
		{i32, changelog.Number("2147483648"), false}, // out of range: Value refuses it
		{i64, changelog.Number("5.0"), false},        // integral in another spelling: Value's path
		{i64, changelog.Number("1.5"), false},
		{i64, changelog.Number("1234567890123456789"), false}, // 19 digits
		{i64, nil, false},
		{i64, true, false},
		{dec, changelog.Number("7"), false},
	} {
		n, ok := Int64(tc.col, tc.v)
		if ok != tc.ok {
			t.Errorf("Int64(%s, %#v) ok = %v, want %v", tc.col.Class, tc.v, ok, tc.ok)
			continue
		}
		if ok {
			if want, err := Value(tc.col, tc.v); err != nil || want != any(n) {
				t.Errorf("Int64(%#v) = %d, Value gives %#v, %v", tc.v, n, want, err)
			}
		}
	}
	dt := &schema.Column{Name: "t", Class: schema.DateTime, FracDigits: 3}
	ts := &schema.Column{Name: "t", Class: schema.Timestamp, FracDigits: 0}
	for _, tc := range []struct {
		col *schema.Column
		v   changelog.Value
		ok  bool
	}{
		{dt, "2026-11-01 09:00:00.123", true},
		{ts, "2026-11-01 09:00:00", true},
		{ts, "2026-11-01 09:00:00.5", false}, // a fraction the column would round: refused by Value
		{dt, "2026-11-01T09:00:00Z", false},  // a zone: Value's path
		{dt, changelog.Number("1767225600000"), false},
		{dt, nil, false},
		{dec, "2026-11-01 09:00:00", false},
	} {
		tv, ok := DateTime(tc.col, tc.v)
		if ok != tc.ok {
			t.Errorf("DateTime(%s, %#v) ok = %v, want %v", tc.col.Class, tc.v, ok, tc.ok)
			continue
		}
		if ok {
			want, err := Value(tc.col, tc.v)
			if err != nil || !want.(time.Time).Equal(tv) || tv.Location() != time.UTC {
				t.Errorf("DateTime(%#v) = %v, Value gives %#v, %v", tc.v, tv, want, err)
			}
		}
	}
}
