package sqlsink

// The SQL text every dialect shares: quoted names, INSERT and upsert
// statements with their placeholders, multi-key deletes.

import (
	"strings"

	"github.com/txsink/txsink/collate"
	"github.com/txsink/txsink/schema"
)

// Quoter quotes identifiers: a Dialect, or a sink.Catalog.
type Quoter interface {
	Quote(ident string) string
}

// QuotedTable returns the table's name quoted in d, with its namespace when
// it has one.
func QuotedTable(d Quoter, t *schema.Table) string {
	if t.Namespace == "" {
		return d.Quote(t.Name)
	}
	return d.Quote(t.Namespace) + "." + d.Quote(t.Name)
}

// QuoteList writes the quoted names separated by commas.
func QuoteList(b *strings.Builder, d Dialect, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.Quote(n))
	}
}

// WriteKeyIn writes the WHERE clause of a multi-key delete:
// "k IN (?,?)" for one key column, "(a,b) IN ((?,?),(?,?))" for several.
func WriteKeyIn(b *strings.Builder, d Dialect, key []string, rows int) {
	next := 0
	if len(key) == 1 {
		b.WriteString(d.Quote(key[0]))
		b.WriteString(" IN (")
		for r := 0; r < rows; r++ {
			if r > 0 {
				b.WriteByte(',')
			}
			next++
			d.WritePlaceholder(b, next)
		}
		b.WriteByte(')')
		return
	}
	b.WriteByte('(')
	QuoteList(b, d, key)
	b.WriteString(") IN (")
	WriteList(b, d, rows, len(key), &next)
	b.WriteByte(')')
}

// WriteInsert writes INSERT INTO t (cols) VALUES (...),(...) with rows
// tuples of placeholders.
func WriteInsert(b *strings.Builder, d Dialect, t *schema.Table, cols []string, rows int) {
	b.WriteString("INSERT INTO ")
	b.WriteString(QuotedTable(d, t))
	b.WriteString(" (")
	QuoteList(b, d, cols)
	b.WriteString(") VALUES ")
	next := 0
	WriteList(b, d, rows, len(cols), &next)
}

// WriteOnConflict writes the upsert tail shared by PostgreSQL and SQLite:
// ON CONFLICT (key) DO UPDATE SET c=excluded.c for every non-key column, or
// DO NOTHING when every column is a key column (the row then equals the
// image already). excluded is how the dialect spells the proposed row.
func WriteOnConflict(b *strings.Builder, d Dialect, t *schema.Table, cols []string, excluded string) {
	b.WriteString(" ON CONFLICT (")
	QuoteList(b, d, t.PrimaryKey)
	b.WriteString(") DO ")
	n := 0
	for _, c := range cols {
		if !Assigns(t, c) {
			continue
		}
		if n == 0 {
			b.WriteString("UPDATE SET ")
		} else {
			b.WriteByte(',')
		}
		n++
		q := d.Quote(c)
		b.WriteString(q)
		b.WriteByte('=')
		b.WriteString(excluded)
		b.WriteByte('.')
		b.WriteString(q)
	}
	if n == 0 {
		b.WriteString("NOTHING")
	}
}

// Assigns reports whether an upsert of t sets column c of a row that
// exists: every column but the key, and the key columns whose equal
// values can be spelled differently (collate.Exact: 'abc' and 'ABC' in a
// case-insensitive column, 1.5 and 1.50), so the row ends in the spelling
// of the last change, as it would had every change been applied alone.
func Assigns(t *schema.Table, c string) bool {
	if !IsKey(t, c) {
		return true
	}
	col, ok := t.Column(c)
	return ok && !collate.Exact(col)
}

// IsKey reports whether column c is one of t's primary-key columns.
func IsKey(t *schema.Table, c string) bool {
	for _, k := range t.PrimaryKey {
		if strings.EqualFold(k, c) {
			return true
		}
	}
	return false
}

func placeholder(d Dialect, n int) string {
	var b strings.Builder
	d.WritePlaceholder(&b, n)
	return b.String()
}
