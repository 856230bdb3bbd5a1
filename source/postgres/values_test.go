package postgres

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestValue renders pgoutput's text values as the values the target
// columns convert exactly, and refuses what txsink-json cannot carry.
func TestValue(t *testing.T) {
	tests := []struct {
		name string
		oid  uint32
		text string
		want changelog.Value
		err  string
	}{
		{"int4", oidInt4, "-42", changelog.Number("-42"), ""},
		{"int8", oidInt8, "9223372036854775807", changelog.Number("9223372036854775807"), ""},
		{"numeric keeps its digits", oidNumeric, "12.50", changelog.Number("12.50"), ""},
		{"numeric NaN", oidNumeric, "NaN", "NaN", ""},
		{"float8", oidFloat8, "0.1", changelog.Number("0.1"), ""},
		{"float8 infinity", oidFloat8, "-Infinity", "-Infinity", ""},
		{"bool true", oidBool, "t", true, ""},
		{"bool false", oidBool, "f", false, ""},
		{"bool other", oidBool, "x", nil, "neither t nor f"},
		{"bytea text", oidBytea, `\x68c3a9`, "hé", ""},
		{"bytea empty", oidBytea, `\x`, "", ""},
		{"bytea binary", oidBytea, `\xff00`, nil, "not UTF-8 text"},
		{"bytea escape format", oidBytea, `abc`, nil, `\x`},
		{"json as written", oidJSON, `{"a": [1, 2]}`, `{"a": [1, 2]}`, ""},
		{"jsonb scalar", oidJSONB, `"s"`, `"s"`, ""},
		{"timestamptz", 1184, "2026-01-02 01:04:05.123456+00", "2026-01-02 01:04:05.123456+00", ""},
		{"text", 25, "O'Brien", "O'Brien", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := value(tt.oid, []byte(tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("value(%q) = %v, %v; want an error containing %q", tt.text, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("value(%q) = %#v, %v; want %#v", tt.text, got, err, tt.want)
			}
		})
	}
}

// TestDefaultSlot names a pipeline's slot within what PostgreSQL accepts.
func TestDefaultSlot(t *testing.T) {
	for in, want := range map[string]string{
		"orders":                "txsink_orders",
		"Orders-Sync.v2":        "txsink_orders_sync_v2",
		strings.Repeat("x", 80): "txsink_" + strings.Repeat("x", 56),
	} {
		if got := DefaultSlot(in); got != want || !slotName.MatchString(got) {
			t.Errorf("DefaultSlot(%q) = %q, want %q", in, got, want)
		}
	}
}
