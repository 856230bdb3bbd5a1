package starrocksfake

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Model is a StarRocks table kind, spelled as information_schema.tables_config's
// TABLE_MODEL column spells it.
type Model string

// The four StarRocks table kinds.
const (
	PrimaryKeys   Model = "PRI_KEYS"
	DuplicateKeys Model = "DUP_KEYS"
	UniqueKeys    Model = "UNQ_KEYS"
	AggregateKeys Model = "AGG_KEYS"
)

// Column is one column of a fake table, as its CREATE TABLE declared it.
type Column struct {
	Name string
	// Type is the StarRocks type name, upper case: BOOLEAN, TINYINT,
	// SMALLINT, INT, BIGINT, LARGEINT, FLOAT, DOUBLE, DECIMAL, CHAR,
	// VARCHAR, DATE, DATETIME or JSON (STRING is VARCHAR(65533)).
	Type string
	// Length is the byte length of CHAR and VARCHAR.
	Length int
	// Precision and Scale are DECIMAL's.
	Precision, Scale int
	// Nullable is false for NOT NULL. Key columns are never nullable.
	Nullable bool
	// Agg is the aggregate function of a value column of an Aggregate
	// table (SUM, MAX, MIN, REPLACE), empty otherwise.
	Agg string
	// Key marks the columns of the table's key clause.
	Key bool
	// Default is the DEFAULT value's text, nil when none was declared: a
	// load whose columns header leaves the column out gives it this value.
	Default *string
}

// Table is one fake table: its kind, columns and key.
type Table struct {
	Name    string
	Model   Model
	Columns []Column
	Key     []string
}

func (t *Table) column(name string) (int, bool) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i, true
		}
	}
	return -1, false
}

// statement is a parsed DDL statement the fake understands.
type statement struct {
	create *Table
	drop   string
	ifNot  bool // CREATE TABLE IF NOT EXISTS / DROP TABLE IF EXISTS
}

type lexer struct {
	toks []string
	i    int
}

func lex(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return nil, fmt.Errorf("unterminated `identifier at byte %d", i)
			}
			toks = append(toks, "`"+s[i+1:i+1+j])
			i += j + 2
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated string at byte %d", i)
			}
			toks = append(toks, "'"+s[i+1:i+1+j])
			i += j + 2
		case strings.IndexByte("(),=;.", c) >= 0:
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '-' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q at byte %d", c, i)
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

func (l *lexer) peek() string {
	if l.i < len(l.toks) {
		return l.toks[l.i]
	}
	return ""
}

func (l *lexer) next() string { t := l.peek(); l.i++; return t }

func (l *lexer) is(words ...string) bool {
	for k, w := range words {
		if l.i+k >= len(l.toks) || !strings.EqualFold(l.toks[l.i+k], w) {
			return false
		}
	}
	return true
}

func (l *lexer) accept(words ...string) bool {
	if l.is(words...) {
		l.i += len(words)
		return true
	}
	return false
}

func (l *lexer) expect(w string) error {
	if !l.accept(w) {
		return fmt.Errorf("expected %q, found %q", w, l.peek())
	}
	return nil
}

func ident(t string) string { return strings.TrimPrefix(t, "`") }

func (l *lexer) name() (string, error) {
	t := l.next()
	if t == "" || strings.HasPrefix(t, "'") || len(t) == 1 && strings.Contains("(),=;.", t) {
		return "", fmt.Errorf("expected a name, found %q", t)
	}
	n := ident(t)
	if l.accept(".") { // db.table: the fake serves one database, the name is the table's
		return l.name()
	}
	return n, nil
}

func (l *lexer) int() (int, error) {
	t := l.next()
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("expected a number, found %q", t)
	}
	return n, nil
}

func (l *lexer) nameList() ([]string, error) {
	if err := l.expect("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		n, err := l.name()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if l.accept(")") {
			return out, nil
		}
		if err := l.expect(","); err != nil {
			return nil, err
		}
	}
}

// skipParens skips a balanced parenthesised group starting at "(".
func (l *lexer) skipParens() error {
	if err := l.expect("("); err != nil {
		return err
	}
	for depth := 1; depth > 0; {
		switch l.next() {
		case "(":
			depth++
		case ")":
			depth--
		case "":
			return fmt.Errorf("unbalanced parentheses")
		}
	}
	return nil
}

// parseDDL parses the subset of StarRocks DDL the fake serves: CREATE TABLE
// with columns, an optional key clause, and DISTRIBUTED BY, ORDER BY,
// PROPERTIES, COMMENT and ENGINE clauses (read and ignored); DROP TABLE.
func parseDDL(s string) (*statement, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	l := &lexer{toks: toks}
	st := &statement{}
	switch {
	case l.accept("DROP", "TABLE"):
		st.ifNot = l.accept("IF", "EXISTS")
		if st.drop, err = l.name(); err != nil {
			return nil, err
		}
	case l.accept("CREATE", "TABLE"):
		st.ifNot = l.accept("IF", "NOT", "EXISTS")
		if st.create, err = parseCreate(l); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("the StarRocks fake runs only CREATE TABLE and DROP TABLE, not %q", s)
	}
	l.accept(";")
	if l.peek() != "" {
		return nil, fmt.Errorf("unexpected %q after the statement", l.peek())
	}
	return st, nil
}

func parseCreate(l *lexer) (*Table, error) {
	t := &Table{Model: DuplicateKeys}
	var err error
	if t.Name, err = l.name(); err != nil {
		return nil, err
	}
	if err := l.expect("("); err != nil {
		return nil, err
	}
	for {
		c, err := parseColumn(l)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		if _, dup := t.column(c.Name); dup {
			return nil, fmt.Errorf("table %s: column %s declared twice", t.Name, c.Name)
		}
		t.Columns = append(t.Columns, c)
		if l.accept(")") {
			break
		}
		if err := l.expect(","); err != nil {
			return nil, err
		}
	}
	keyed := false
	for l.peek() != "" && l.peek() != ";" {
		switch {
		case l.accept("ENGINE"):
			l.accept("=")
			l.next()
		case l.accept("COMMENT"):
			l.next()
		case l.is("PRIMARY", "KEY"), l.is("DUPLICATE", "KEY"), l.is("UNIQUE", "KEY"), l.is("AGGREGATE", "KEY"):
			if keyed {
				return nil, fmt.Errorf("table %s: two key clauses", t.Name)
			}
			keyed = true
			t.Model = map[string]Model{"PRIMARY": PrimaryKeys, "DUPLICATE": DuplicateKeys, "UNIQUE": UniqueKeys, "AGGREGATE": AggregateKeys}[strings.ToUpper(l.next())]
			l.next()
			if t.Key, err = l.nameList(); err != nil {
				return nil, err
			}
		case l.accept("DISTRIBUTED", "BY"):
			if l.accept("HASH") {
				if err := l.skipParens(); err != nil {
					return nil, err
				}
			} else {
				l.accept("RANDOM")
			}
			if l.accept("BUCKETS") {
				l.next()
			}
		case l.accept("PARTITION", "BY"), l.accept("ORDER", "BY"):
			for l.peek() != "" && l.peek() != "(" {
				l.next()
			}
			if err := l.skipParens(); err != nil {
				return nil, err
			}
		case l.accept("PROPERTIES"):
			if err := l.skipParens(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("table %s: the fake does not know the clause %q", t.Name, l.peek())
		}
	}
	for i, k := range t.Key {
		ci, ok := t.column(k)
		if !ok {
			return nil, fmt.Errorf("table %s: key column %s is not a column", t.Name, k)
		}
		// StarRocks requires the key columns to lead the column list.
		if ci != i {
			return nil, fmt.Errorf("table %s: key column %s must be column %d, the key columns come first", t.Name, k, i+1)
		}
		c := &t.Columns[ci]
		c.Key = true
		if t.Model == PrimaryKeys || t.Model == UniqueKeys {
			c.Nullable = false
		}
		switch c.Type {
		case "FLOAT", "DOUBLE", "JSON":
			return nil, fmt.Errorf("table %s: key column %s cannot be %s", t.Name, k, c.Type)
		}
	}
	if t.Model == PrimaryKeys && len(t.Key) == 0 {
		return nil, fmt.Errorf("table %s: a primary key table needs key columns", t.Name)
	}
	for _, c := range t.Columns {
		if t.Model == AggregateKeys && !c.Key && c.Agg == "" {
			return nil, fmt.Errorf("table %s: value column %s of an aggregate table needs an aggregate function", t.Name, c.Name)
		}
		if t.Model != AggregateKeys && c.Agg != "" {
			return nil, fmt.Errorf("table %s: column %s has an aggregate function outside an aggregate table", t.Name, c.Name)
		}
	}
	return t, nil
}

func parseColumn(l *lexer) (Column, error) {
	var c Column
	var err error
	if c.Name, err = l.name(); err != nil {
		return c, err
	}
	c.Type = strings.ToUpper(l.next())
	c.Nullable = true
	switch c.Type {
	case "INTEGER":
		c.Type = "INT"
	case "BOOL":
		c.Type = "BOOLEAN"
	case "STRING":
		c.Type, c.Length = "VARCHAR", 65533
	case "DECIMAL", "DECIMALV3", "NUMERIC":
		c.Type, c.Precision, c.Scale = "DECIMAL", 10, 0
	case "CHAR":
		c.Length = 1
	case "VARCHAR":
		c.Length = 1
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT", "DOUBLE", "DATE", "DATETIME", "JSON":
	default:
		return c, fmt.Errorf("column %s: the fake does not know the type %q", c.Name, c.Type)
	}
	if l.accept("(") {
		a, err := l.int()
		if err != nil {
			return c, err
		}
		b := -1
		if l.accept(",") {
			if b, err = l.int(); err != nil {
				return c, err
			}
		}
		if err := l.expect(")"); err != nil {
			return c, err
		}
		switch c.Type {
		case "DECIMAL":
			c.Precision, c.Scale = a, max(b, 0)
		case "CHAR", "VARCHAR":
			c.Length = a
		} // a display width of an integer type is ignored, as StarRocks does
	}
	switch {
	case c.Type == "DECIMAL" && (c.Precision < 1 || c.Precision > 38 || c.Scale > c.Precision):
		return c, fmt.Errorf("column %s: DECIMAL(%d,%d) is out of range: precision 1 to 38, scale 0 to precision", c.Name, c.Precision, c.Scale)
	case c.Type == "CHAR" && (c.Length < 1 || c.Length > 255):
		return c, fmt.Errorf("column %s: CHAR(%d) is out of range 1 to 255", c.Name, c.Length)
	case c.Type == "VARCHAR" && (c.Length < 1 || c.Length > 1048576):
		return c, fmt.Errorf("column %s: VARCHAR(%d) is out of range 1 to 1048576", c.Name, c.Length)
	}
	for {
		switch {
		case l.accept("NOT", "NULL"):
			c.Nullable = false
		case l.accept("NULL"):
		case l.is("SUM"), l.is("MAX"), l.is("MIN"), l.is("REPLACE"):
			c.Agg = strings.ToUpper(l.next())
		case l.accept("DEFAULT"):
			d := strings.TrimPrefix(l.next(), "'")
			c.Default = &d
		case l.accept("COMMENT"):
			l.next()
		default:
			return c, nil
		}
	}
}
