package schema

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name names one target table by its parts. It is carried as two strings
// from routing to the dialect's catalog query and statements, and never
// joined into one dotted string that is split again: a table name may
// hold a dot, and splitting it would let that name choose a namespace.
type Name struct {
	// Namespace is the database (MySQL), schema (PostgreSQL) or attached
	// database (SQLite) holding the table; "" is the connection's own
	// (the URL's database, the search_path's first schema, main).
	Namespace string
	// Name is the table's name: one identifier, whatever it holds.
	Name string
}

// String returns "namespace.name", or "name" without a namespace, for
// messages only: it cannot be read back when a part holds a dot.
func (n Name) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "." + n.Name
}

// The tables txsink keeps in every target, beside the data.
const (
	// ProgressTable holds each pipeline's positions.
	ProgressTable = "txsink_progress"
	// DeadLetterTable holds the records quarantined under bad-input:
	// dead-letter.
	DeadLetterTable = "txsink_dead_letters"
)

// Reserved reports whether txsink keeps name for its own tables, so that
// no change may write a table of that name in any namespace: every name
// that begins with txsink_progress or txsink_dead_letters, ignoring case
// (as strings.EqualFold folds it) and leading white space. A prefix, not
// the two names: MySQL compares names ignoring trailing spaces, and a
// server may fold case (lower_case_table_names, SQLite), so a spelling
// that differs from the real name only in its case or its tail must be
// refused as the real name is.
func Reserved(name string) bool {
	name = strings.TrimLeftFunc(name, unicode.IsSpace)
	return hasFoldPrefix(name, ProgressTable) || hasFoldPrefix(name, DeadLetterTable)
}

// hasFoldPrefix reports whether s begins with prefix under simple case
// folding, comparing rune by rune so that a rune that folds to an ASCII
// letter (U+017F, long s, folds to s) counts as that letter.
func hasFoldPrefix(s, prefix string) bool {
	for _, p := range prefix {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !strings.EqualFold(string(r), string(p)) {
			return false
		}
		s = s[size:]
	}
	return true
}

// IdentProblem says why s cannot be one plain identifier txsink routes
// to, or returns "" when it can. It refuses what a quoting mistake or a
// hostile source name looks like, rather than what a server could hold:
// an empty name, invalid UTF-8, a dot (it reads as a namespace), a quote
// character of any dialect (` " ' [ ]), a control character (NUL
// included), and white space at either end (MySQL cannot hold it, and
// compares names ignoring trailing spaces).
func IdentProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '.':
			return "holds a dot"
		case strings.ContainsRune("`\"'[]", r):
			return fmt.Sprintf("holds the quote character %c", r)
		case unicode.IsControl(r):
			return fmt.Sprintf("holds the control character %U", r)
		}
	}
	if first, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(first) {
		return "begins with white space"
	}
	if last, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(last) {
		return "ends with white space"
	}
	return ""
}
