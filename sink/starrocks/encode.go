package starrocks

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

// RowError is a row txsink refuses to load, before the server sees it: a
// value StarRocks would filter (a string longer in bytes than its column),
// or a change the table's kind cannot apply. It names the table, the key,
// the column and the change's position.
type RowError struct {
	Table, Key, Column string
	Pos                changelog.Position
	Msg                string
	bad                bool // BadInput (the row's values) rather than Permanent (the table's kind)
}

// Error names the place and why.
func (e *RowError) Error() string {
	var b strings.Builder
	if e.Pos.Partition != "" {
		fmt.Fprintf(&b, "%s: ", e.Pos)
	}
	fmt.Fprintf(&b, "starrocks table %s", e.Table)
	if e.Key != "" {
		fmt.Fprintf(&b, " key %s", e.Key)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, " column %s", e.Column)
	}
	return b.String() + ": " + e.Msg
}

// Kind is BadInput for a value the column cannot hold, Permanent for a
// change the table's kind cannot take.
func (e *RowError) Kind() errkind.Kind {
	if e.bad {
		return errkind.BadInput
	}
	return errkind.Permanent
}

// Where names the change, table, key and column.
func (e *RowError) Where() errkind.Where {
	return errkind.Where{Pos: e.Pos, Table: e.Table, Key: e.Key, Column: e.Column}
}

// Load is one load's columns header and JSON array body, and how its
// upserts meet the stored rows.
type Load struct {
	Columns []string
	Body    []byte
	Rows    int
	Options LoadOptions
}

// EncodeBatch turns one table's part of a commit unit into one load. For a
// Primary Key table the deletes come first, with __op = 1 and only the key
// columns, then the upserts with __op = 0: StarRocks applies a load's rows
// in order, so the unit's "deletes before writes" holds, and the last row
// of a key wins. A Duplicate Key table gets its inserts as they are, a
// Unique Key table its upserts. A table with a version column
// (commit.Rules.Version) is loaded with merge_condition on it (see
// LoadOptions), which keeps a stored row whose version is greater.
// A partial row image (a group marked Partial, alone in its batch, t
// seen as having its columns only) is loaded with partial_update, which
// keeps the stored values of the columns it lacks. Refused: deletes into
// a table other than a Primary Key one, a partial image into another
// kind or beside other rows, a row that leaves out a column (StarRocks
// would reset it: a load replaces the whole row), a string
// longer in bytes than its column, a version column on another table than
// a Primary Key one, a delete of a table with a version column and a NULL
// version (see versioned), and soft deletes not yet made partial updates
// (Target.softDeletes).
func EncodeBatch(t *Table, b *commit.Batch) (Load, error) {
	if err := t.RefuseChanges(len(b.Deletes) > 0); err != nil {
		return Load{}, err
	}
	if b.Rules.SoftDelete != "" && len(b.Deletes) > 0 {
		// Target.softDeletes makes them upserts first.
		return Load{}, &DescribeError{Table: t.String(), Msg: "soft deletes are loaded as partial updates of the soft-delete column: convert them first"}
	}
	var opt LoadOptions
	if ver := b.Rules.Version; ver != "" {
		if err := t.versioned(b); err != nil {
			return Load{}, err
		}
		opt.MergeCondition = ver
	}
	pk := t.TakesDeletes()
	var cols []string
	for _, c := range t.Columns {
		cols = append(cols, c.Name)
	}
	if pk {
		cols = append(cols, "__op")
	}
	var out []byte
	rows := 0
	out = append(out, '[')
	sep := func() {
		if rows > 0 {
			out = append(out, ',')
		}
		rows++
	}
	keyIdx := make([]int, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		keyIdx[i] = t.index(k)
	}
	for i, key := range b.Deletes {
		var pos changelog.Position
		if i < len(b.DeletePos) {
			pos = b.DeletePos[i]
		}
		sep()
		out = append(out, '{')
		for j, k := range t.PrimaryKey {
			var err error
			if out, err = t.member(out, k, key[j], pos, renderKey(key)); err != nil {
				return Load{}, err
			}
			out = append(out, ',')
		}
		out = append(out, `"__op":1}`...)
	}
	for _, groups := range [][]commit.Group{b.Upserts, b.Inserts} {
		for _, g := range groups {
			if g.Partial {
				if err := t.partial(b); err != nil {
					return Load{}, err
				}
				opt.PartialUpdate = true
			}
			if len(g.Columns) != len(t.Columns) {
				return Load{}, &RowError{Table: t.String(), Msg: fmt.Sprintf("a row carries %d of the table's %d columns (%s); a StarRocks load replaces the whole row, so the others would be reset",
					len(g.Columns), len(t.Columns), strings.Join(g.Columns, ", "))}
			}
			for r, row := range g.Rows {
				var pos changelog.Position
				if r < len(g.Pos) {
					pos = g.Pos[r]
				}
				key := ""
				if len(keyIdx) > 0 {
					kv := make([]any, len(keyIdx))
					for i, ci := range keyIdx {
						kv[i] = row[indexOf(g.Columns, t.Columns[ci].Name)]
					}
					key = renderKey(kv)
				}
				if v := b.Rules.Version; v != "" && row[indexOf(g.Columns, v)] == nil {
					return Load{}, &RowError{Table: t.String(), Key: key, Column: v, Pos: pos, bad: true,
						Msg: "the version column is NULL; StarRocks' merge_condition does not say how NULL compares, so txsink loads no NULL version"}
				}
				sep()
				out = append(out, '{')
				for i, name := range g.Columns {
					if i > 0 {
						out = append(out, ',')
					}
					var err error
					if out, err = t.member(out, name, row[i], pos, key); err != nil {
						return Load{}, err
					}
				}
				if pk {
					out = append(out, `,"__op":0`...)
				}
				out = append(out, '}')
			}
		}
	}
	out = append(out, ']')
	return Load{Columns: cols, Body: out, Rows: rows, Options: opt}, nil
}

// partial refuses a batch with a partial row image (commit.Group.Partial)
// that one load cannot carry with partial_update: into another table than
// a Primary Key one (StarRocks updates columns of Primary Key tables
// only), or beside other rows or deletes (partial_update is the load's).
// t is the table seen as having the image's columns only (see split).
func (t *Table) partial(b *commit.Batch) error {
	if t.Model != PrimaryKeys {
		return &DescribeError{Table: t.String(), Msg: "a partial row image (an update that lacks columns) needs a Primary Key table: StarRocks' partial_update updates columns of Primary Key tables only"}
	}
	if len(b.Upserts)+len(b.Inserts) != 1 || len(b.Deletes) > 0 {
		return &RowError{Table: t.String(), Msg: "a partial row image is loaded alone (partial_update is a load's): split the batch first"}
	}
	return nil
}

// versioned refuses a batch with a version column (commit.Rules.Version)
// that StarRocks cannot guard: merge_condition applies to the upserts of
// a Primary Key table only, and StarRocks does not condition deletes on
// it, so a hard delete could remove a row a newer change wrote. Every
// upsert carries the version column (the buffer refuses one without).
func (t *Table) versioned(b *commit.Batch) error {
	if t.Model != PrimaryKeys {
		return &DescribeError{Table: t.String(), Msg: "version-column needs a Primary Key table: StarRocks conditions upserts (merge_condition) of Primary Key tables only"}
	}
	if len(b.Deletes) > 0 {
		e := &RowError{Table: t.String(), Key: renderKey(b.Deletes[0]), Column: b.Rules.Version,
			Msg: "a delete of a table with version-column: StarRocks does not condition deletes on merge_condition, so a delete could remove a row a newer change wrote; " +
				"set the table's delete: soft:COLUMN (a conditioned update) or ignore (an audit copy), or remove version-column"}
		if len(b.DeletePos) > 0 {
			e.Pos = b.DeletePos[0]
		}
		return e
	}
	return nil
}

func (t *Table) index(name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// renderKey renders a key as the SQL sinks do: "(1, \"a\")".
func renderKey(key []any) string {
	parts := make([]string, len(key))
	for i, v := range key {
		switch x := v.(type) {
		case string:
			parts[i] = fmt.Sprintf("%q", x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// member appends "name":value for a value coerce converted for its column.
func (t *Table) member(out []byte, name string, v any, pos changelog.Position, key string) ([]byte, error) {
	out = strconv.AppendQuote(out, name) // column names are plain identifiers
	out = append(out, ':')
	refuse := func(msg string) error {
		return &RowError{Table: t.String(), Key: key, Column: name, Pos: pos, Msg: msg, bad: true}
	}
	switch v := v.(type) {
	case nil:
		return append(out, "null"...), nil
	case bool:
		return strconv.AppendBool(out, v), nil
	case int64:
		return strconv.AppendInt(out, v, 10), nil
	case uint64:
		return strconv.AppendUint(out, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, refuse("NaN and infinities cannot be loaded")
		}
		return strconv.AppendFloat(out, v, 'g', -1, 64), nil
	case time.Time:
		return append(out, `"`+v.Format("2006-01-02 15:04:05.999999")+`"`...), nil
	case string:
		if n, ok := t.ByteLength[name]; ok && len(v) > n {
			return nil, refuse(fmt.Sprintf("the value is %d bytes, longer than the column's %d (StarRocks counts CHAR and VARCHAR lengths in bytes)", len(v), n))
		}
		if c, _ := t.Column(name); c != nil && c.Class == schema.JSON {
			if !json.Valid([]byte(v)) {
				return nil, refuse("the value is not JSON")
			}
			return append(out, v...), nil // the JSON node itself, not a string holding it
		}
		b, _ := json.Marshal(v)
		return append(out, b...), nil
	}
	return nil, refuse(fmt.Sprintf("a %T value has no StarRocks load form", v))
}
