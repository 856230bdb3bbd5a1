package bulktext

import "testing"

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		nul  bool
		want string
	}{
		{"", false, ""},
		{"plain", false, "plain"},
		{"a\tb\nc\rd\\e", false, `a\tb\nc\rd\\e`},
		{"日本\t語", false, "日本\\t語"},
		{"a\x00b", false, "a\x00b"},
		{"a\x00b", true, `a\0b`},
		{"\\\\", true, `\\\\`},
		{"\xff\t", false, "\xff\\t"},
	} {
		if got := string(AppendEscaped([]byte(">"), tc.in, tc.nul)); got != ">"+tc.want {
			t.Errorf("AppendEscaped(%q, nul %v) = %q, want %q", tc.in, tc.nul, got, ">"+tc.want)
		}
		if got := string(AppendEscaped(nil, []byte(tc.in), tc.nul)); got != tc.want {
			t.Errorf("AppendEscaped([]byte %q, nul %v) = %q, want %q", tc.in, tc.nul, got, tc.want)
		}
	}
}
