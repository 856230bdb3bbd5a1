package reduce

import (
	"strings"
	"testing"
)

// TestSameSlice checks each way sameSlice tells two name lists apart or
// equal: one slice twice, copies of its headers, the same text at other
// addresses, and lists that differ in length, in a name, or in a name's
// length only.
func TestSameSlice(t *testing.T) {
	names := []string{"id", "customer", "status", "amount", "created_at", "note"}
	copied := append([]string(nil), names...)
	// The same text at other addresses: no header is equal.
	cloned := make([]string, len(names))
	for i, n := range names {
		cloned[i] = strings.Clone(n)
	}
	renamed := append([]string(nil), names...)
	renamed[4] = "created_on"
	shorter := append([]string(nil), names...)
	shorter[5] = names[5][:3] // same pointer, another length
	for _, tc := range []struct {
		name string
		a, b []string
		want bool
	}{
		{"one slice", names, names, true},
		{"copied headers", names, copied, true},
		{"same text elsewhere", names, cloned, true},
		{"both empty", nil, []string{}, true},
		{"fewer names", names, names[:5], false},
		{"a name differs", names, renamed, false},
		{"a name cut short", names, shorter, false},
		{"one empty", nil, names, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSlice(tc.a, tc.b); got != tc.want {
				t.Errorf("sameSlice(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := sameSlice(tc.b, tc.a); got != tc.want {
				t.Errorf("sameSlice(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
			}
		})
	}
}
