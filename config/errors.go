package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/txsink/txsink/errkind"
)

// Error is one problem found in a configuration.
type Error struct {
	// File is the configuration file's path as given to Load; "" for Parse
	// and Validate.
	File string
	// Line is the 1-based line of the YAML the problem is on; 0 when not
	// known (a Config built in Go, or a key that is missing altogether and
	// whose section is not in the file either).
	Line int
	// Key is the YAML key path of the problem, for example
	// "tables[1].source" (indices count from 0) or
	// "sink.buffer-flush.max-rows"; "" for a problem of the file as a whole.
	Key string
	// Msg says what is wrong and what to do about it.
	Msg string
}

// Error returns "file:line: key: message", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Kind reports errkind.Permanent: a configuration problem stops the
// pipeline until the configuration is corrected.
func (e *Error) Kind() errkind.Kind { return errkind.Permanent }

// ErrorList is every problem found in one configuration, in line order. It is
// the error Parse, Load and Validate return; errors.As finds its entries.
type ErrorList []*Error

// Error returns the problems one per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the entries, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sorted orders the list by line, keeping the order of problems on one line
// (and of problems without a line, which go last).
func (l ErrorList) sorted() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = int(^uint(0) >> 1)
		}
		if lb == 0 {
			lb = int(^uint(0) >> 1)
		}
		return cmp.Compare(la, lb)
	})
	return l
}
