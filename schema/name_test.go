package schema

import (
	"strings"
	"testing"
)

// TestReserved: every spelling a server could take for txsink's own
// tables is reserved — case variants, leading and trailing white space,
// runes that fold to ASCII letters, longer names of the family — and
// names that merely resemble them are not.
func TestReserved(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"txsink_progress", true},
		{"TXSINK_PROGRESS", true},
		{"Txsink_Dead_Letters", true},
		{"txsink_dead_letters", true},
		{"txsink_progress ", true},
		{"  txsink_progress", true},
		{"\ttxsink_dead_letters\n", true},
		{"txsink_progress\x00", true},
		{"txsink_progress_old", true},
		{"txſink_progress", true},      // U+017F folds to s
		{"txsin\u212a_progress", true}, // the Kelvin sign folds to k
		{"txsink", false},
		{"txsink_progres", false},
		{"my_txsink_progress", false},
		{"progress", false},
		{"txsink_events", false},
		{"", false},
	} {
		if got := Reserved(tt.name); got != tt.want {
			t.Errorf("Reserved(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestIdentProblem: a name is one plain identifier unless it is empty,
// invalid UTF-8, or holds a dot, a quote of any dialect, a control
// character, or white space at an end.
func TestIdentProblem(t *testing.T) {
	for _, tt := range []struct {
		name string
		want string // "" for a plain name, else part of the problem
	}{
		{"orders", ""},
		{"Orders_2024", ""},
		{"order items", ""}, // inner spaces are a name like any other
		{"заказы", ""},
		{"a-b$c", ""},
		{"", "is empty"},
		{"victim_db.t", "holds a dot"},
		{".t", "holds a dot"},
		{"t`", "quote character `"},
		{`t"`, `quote character "`},
		{"t'", "quote character '"},
		{"[t]", "quote character ["},
		{"t]", "quote character ]"},
		{"t\x00", "control character U+0000"},
		{"t\nx", "control character U+000A"},
		{"t\x7f", "control character U+007F"},
		{"t\u0085", "control character U+0085"},
		{"t\xff", "not valid UTF-8"},
		{" t", "begins with white space"},
		{"t ", "ends with white space"},
		{"t\u3000", "ends with white space"},
	} {
		got := IdentProblem(tt.name)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("IdentProblem(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
