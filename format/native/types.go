package native

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/txsink/txsink/format/internal/jsonscan"
	"github.com/txsink/txsink/format/internal/textcache"
	"github.com/txsink/txsink/schema/coltype"
)

// DeclaresTypes reports true (format.TypeDeclarer): a line's "types"
// member declares its table's columns. Lines without one declare none.
func (d *Decoder) DeclaresTypes() bool { return true }

// The dialects a "types" member's column types may be written in.
const (
	// DialectPostgres types are written as PostgreSQL's format_type
	// writes them (coltype.ParsePostgres).
	DialectPostgres = "postgres"
	// DialectMySQL types are written as MySQL's COLUMN_TYPE writes them
	// (coltype.ParseMySQL).
	DialectMySQL = "mysql"
)

// Types is what a "types" member declares: the table's columns in order,
// each with its type in Dialect's spelling, the primary key, and the
// columns that take no NULL (the key's always). AppendTypes writes it.
type Types struct {
	Dialect string
	Columns []TypedColumn
	Key     []string
	NotNull []string
}

// TypedColumn is one declared column.
type TypedColumn struct {
	Name, Type string
}

// AppendTypes appends the JSON text of t as a "types" member's value.
// The postgres source writes it once per table version and hands the same
// bytes to every line of the table (AppendTyped), which the decoder then
// parses once.
func AppendTypes(dst []byte, t *Types) ([]byte, error) {
	dst = append(dst, `{"dialect":`...)
	dst, _ = appendString(dst, t.Dialect)
	dst = append(dst, `,"columns":{`...)
	var err error
	for i, c := range t.Columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, c.Name); err != nil {
			return dst, fmt.Errorf("txsink-json: encode types: column name: %w", err)
		}
		dst = append(dst, ':')
		if dst, err = appendString(dst, c.Type); err != nil {
			return dst, fmt.Errorf("txsink-json: encode types: column %q: %w", c.Name, err)
		}
	}
	dst = append(dst, '}')
	for _, l := range [...]struct {
		name  string
		names []string
	}{{"key", t.Key}, {"not_null", t.NotNull}} {
		if len(l.names) == 0 {
			continue
		}
		dst = append(dst, `,"`...)
		dst = append(dst, l.name...)
		dst = append(dst, `":[`...)
		for i, n := range l.names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = appendString(dst, n) // a column name, checked above
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// typeCache remembers the tables parsed from "types" members by their
// exact text: every line of a table repeats it, so each distinct text is
// parsed once, and the text the last line carried is passed over by a
// byte comparison instead of being scanned. It is safe for concurrent use.
type typeCache struct {
	textcache.Cache[*coltype.Table]
}

// lookup returns the table the "types" text declares, parsing it on
// first sight. A declaration it cannot read is a table whose Invalid says
// why: the line still decodes, and only creating a table from it is
// refused.
func (c *typeCache) lookup(text []byte) *coltype.Table {
	t, _ := c.Lookup(text, func(text []byte) (*coltype.Table, error) {
		t, err := parseTypes(text)
		if err != nil {
			t = &coltype.Table{From: `txsink-json's "types"`, Invalid: err.Error()}
		}
		return t, nil
	})
	return t
}

// parseTypes reads a "types" member: dialect, columns in order, key and
// not_null. Any other member is an error.
func parseTypes(text []byte) (*coltype.Table, error) {
	var raw struct {
		Dialect string          `json:"dialect"`
		Columns json.RawMessage `json:"columns"`
		Key     []string        `json:"key"`
		NotNull []string        `json:"not_null"`
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`"types" must be an object of dialect, columns, key and not_null: %w`, err)
	}
	var parse func(string) coltype.Type
	switch raw.Dialect {
	case DialectPostgres:
		parse = coltype.ParsePostgres
	case DialectMySQL:
		parse = coltype.ParseMySQL
	default:
		return nil, fmt.Errorf(`"types": "dialect" must be %q or %q, not %q`, DialectPostgres, DialectMySQL, raw.Dialect)
	}
	t := &coltype.Table{From: `txsink-json's "types" (` + raw.Dialect + ")"}
	cols := json.NewDecoder(bytes.NewReader(raw.Columns))
	if tok, err := cols.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf(`"types": "columns" must be an object of column names and types`)
	}
	seen := map[string]bool{}
	for cols.More() {
		name, err := cols.Token()
		if err != nil {
			return nil, fmt.Errorf(`"types": "columns": %w`, err)
		}
		var typ string
		if err := cols.Decode(&typ); err != nil {
			return nil, fmt.Errorf(`"types": the type of column %q must be a string`, name)
		}
		n := name.(string)
		if seen[n] {
			return nil, fmt.Errorf(`"types": column %q is declared twice`, n)
		}
		seen[n] = true
		t.Columns = append(t.Columns, coltype.Column{Name: n, Type: parse(typ), Nullable: true})
	}
	for _, n := range raw.NotNull {
		c, ok := t.Column(n)
		if !ok {
			return nil, fmt.Errorf(`"types": not_null names column %q, which "columns" does not declare`, n)
		}
		c.Nullable = false
	}
	if len(raw.Key) == 0 {
		return t, nil
	}
	return t.WithKey(raw.Key)
}

// readTypes reads a "types" member (null: none).
func readTypes(s *jsonscan.Scanner, cache *typeCache) (*coltype.Table, error) {
	if s.Peek() == '{' {
		if n, t, ok := cache.Match(s.Data()[s.Pos():]); ok {
			s.Skip(n)
			return t, nil
		}
	}
	tok, err := s.Value()
	if err != nil {
		return nil, err
	}
	switch tok.Kind {
	case jsonscan.Null:
		return nil, nil
	case jsonscan.Object:
		return cache.lookup(s.Data()[tok.Start:tok.End]), nil
	}
	return nil, &recordError{Reason: `"types" must be an object, not a ` + tok.Kind.String(), Hint: hintFields}
}
