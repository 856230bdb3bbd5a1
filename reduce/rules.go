package reduce

// A table's apply rules (tables[].version-column and tables[].delete):
// what the buffer adds to a delete (its version, its soft-delete value),
// which deletes it drops, and the live value upserts of a soft-deleted
// table carry.

import (
	"fmt"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// SetRules gives t the apply rules r, and, with ignoreDeletes, makes the
// buffer drop t's deletes (counted in Unit.IgnoredDeletes). It refuses
// rules on an append-only table, a column t lacks, a key column, a
// version column whose type has no order txsink trusts, and a soft-delete
// column that is neither a bool nor a nullable timestamp.
func (t *Table) SetRules(r commit.Rules, ignoreDeletes bool) error {
	if (r.Guarded() || ignoreDeletes) && t.AppendOnly {
		return fmt.Errorf("table %s is append-only: it takes inserts only, so version-column and delete have nothing to guard; remove them or append-only", t.Schema)
	}
	if r.SoftDelete != "" && ignoreDeletes {
		return fmt.Errorf("table %s: deletes cannot be both soft and ignored", t.Schema)
	}
	var ver, soft *schema.Column
	if r.Version != "" {
		c, err := t.ruleColumn("version-column", r.Version)
		if err != nil {
			return err
		}
		switch c.Class {
		case schema.Int, schema.Uint, schema.Decimal, schema.Float, schema.Date, schema.DateTime, schema.Timestamp:
		default:
			return fmt.Errorf("table %s: version-column %s is of type %s, which has no order txsink trusts for versions; use an integer, decimal, date or timestamp column", t.Schema, c.Name, c.Class)
		}
		ver = c
	}
	if r.SoftDelete != "" {
		c, err := t.ruleColumn("delete: soft", r.SoftDelete)
		if err != nil {
			return err
		}
		switch {
		case c.Class == schema.Bool, c.Class == schema.Int, c.Class == schema.Uint:
		case (c.Class == schema.DateTime || c.Class == schema.Timestamp) && c.Nullable:
		case c.Class == schema.DateTime || c.Class == schema.Timestamp:
			return fmt.Errorf("table %s: soft-delete column %s is NOT NULL, but a live row's is NULL; make it nullable", t.Schema, c.Name)
		default:
			return fmt.Errorf("table %s: soft-delete column %s is of type %s; use a boolean or integer column (set true, 1, on delete) or a nullable timestamp (set to the delete's time)", t.Schema, c.Name, c.Class)
		}
		if ver != nil && c.Name == ver.Name {
			return fmt.Errorf("table %s: column %s cannot be both the version column and the soft-delete column", t.Schema, c.Name)
		}
		soft = c
	}
	t.Rules, t.ignoreDeletes, t.verCol, t.softCol = r, ignoreDeletes, ver, soft
	if ver != nil {
		t.Rules.Version = ver.Name
	}
	if soft != nil {
		t.Rules.SoftDelete = soft.Name
	}
	return nil
}

// ruleColumn finds the column a rule names: a column of t that is not a
// key column nor generated.
func (t *Table) ruleColumn(rule, name string) (*schema.Column, error) {
	i, ok := t.colIndex[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("table %s: %s names column %s, which the table does not have", t.Schema, rule, name)
	}
	c := &t.Schema.Columns[i]
	for _, k := range t.keyCols {
		if k.Name == c.Name {
			return nil, fmt.Errorf("table %s: %s names key column %s; a row's key never changes, so name another column", t.Schema, rule, c.Name)
		}
	}
	if c.Generated {
		return nil, fmt.Errorf("table %s: %s names generated column %s, which txsink cannot write; name another column", t.Schema, rule, c.Name)
	}
	return c, nil
}

// deleteExtras returns what a delete of t carries beside its key, as the
// entry's row: its version (when t is guarded) and its soft-delete value
// (when t deletes softly). The version is the version column's value in
// img, the before image, when img carries it; else, for an integer
// column, the change's source position (Position.Offset: the txsink
// postgres source's commit LSN + 1, a Kafka offset + 1, a file's byte
// offset), which is right when the column holds that position; else the
// delete is refused as bad input. An update that moves a row to another
// key passes its after image: the old key goes at the update's version.
func (b *Buffer) deleteExtras(t *Table, c *changelog.Change, img changelog.Row, now time.Time) ([]any, error) {
	if t.verCol == nil && t.softCol == nil {
		return nil, nil
	}
	extra := make([]any, 2)
	if col := t.verCol; col != nil {
		if v, ok := img.Get(col.Name); ok {
			cv, err := coerce.Value(col, v)
			if err != nil {
				return nil, b.valueError(t, c, col.Name, keyFromImage(t, img), err)
			}
			extra[0] = cv
		} else if col.Class == schema.Int || col.Class == schema.Uint {
			cv, err := coerce.Value(col, c.Pos.Offset)
			if err != nil {
				return nil, b.valueError(t, c, col.Name, keyFromImage(t, img), err)
			}
			extra[0] = cv
		} else {
			return nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Key: keyFromImage(t, img), Column: col.Name,
				Reason: fmt.Sprintf("a delete's before image lacks version column %s, and the change's source position can stand for a version only in an integer column", col.Name),
				Hint:   "capture full before images for deletes (Debezium PostgreSQL: REPLICA IDENTITY FULL; MySQL: binlog_row_image=FULL), or use an integer version column the source fills with its position" + rerunTail}
		}
	}
	if col := t.softCol; col != nil {
		v, err := softValue(col, now)
		if err != nil {
			return nil, b.valueError(t, c, col.Name, keyFromImage(t, img), err)
		}
		extra[1] = v
	}
	return extra, nil
}

// softValue is what a soft delete writes into col: true (1 in an
// integer column, MariaDB's BOOLEAN), or now, cut to the column's
// fractional digits (a value it would round is refused).
func softValue(col *schema.Column, now time.Time) (any, error) {
	switch col.Class {
	case schema.Bool:
		return coerce.Value(col, true)
	case schema.Int, schema.Uint:
		return coerce.Value(col, 1)
	}
	step := time.Second
	for range min(col.FracDigits, 9) {
		step /= 10
	}
	return coerce.Value(col, now.UTC().Truncate(step))
}

// reviveValue is a live row's value of a soft-delete column: false (0),
// or NULL.
func reviveValue(col *schema.Column) (any, error) {
	switch col.Class {
	case schema.Bool:
		return coerce.Value(col, false)
	case schema.Int, schema.Uint:
		return coerce.Value(col, 0)
	}
	return nil, nil
}

// revive returns row (of plan p's columns) with t's soft-delete column
// set live, when the image does not carry that column itself: an upsert
// of a soft-deleted row brings it back.
func (t *Table) revive(p *plan, row []any) ([]string, []any, error) {
	for _, name := range p.out {
		if name == t.softCol.Name {
			return p.out, row, nil
		}
	}
	v, err := reviveValue(t.softCol)
	if err != nil {
		return nil, nil, err
	}
	e := t.mergeImages(&entry{cols: p.out, row: row}, entry{cols: t.planFor([]string{t.softCol.Name}).out, row: []any{v}})
	return e.cols, e.row, nil
}

// soften turns e, a soft delete of a key whose upsert old the buffer
// holds, into that upsert with the soft-delete column set: the row the
// target never saw must still be there, marked deleted.
func (t *Table) soften(old *entry, e entry) entry {
	soft := entry{pos: e.pos, cols: t.planFor([]string{t.softCol.Name}).out, row: []any{e.row[1]}}
	m := t.mergeImages(old, soft)
	m.pos, m.del, m.key = e.pos, false, nil
	return m
}

// versioned refuses an upsert of a versioned table whose image (plan p)
// lacks the version column: the guard has nothing to compare, and the
// stored version would stay while the other columns moved.
func (t *Table) versioned(p *plan, c *changelog.Change) error {
	if t.verCol == nil {
		return nil
	}
	for _, name := range p.out {
		if name == t.verCol.Name {
			return nil
		}
	}
	return &Error{Pos: c.Pos, Table: t.Schema.String(), Key: keyFromImage(t, c.After), Column: t.verCol.Name,
		Reason: fmt.Sprintf("the change's image lacks version column %s, so the version guard has nothing to compare", t.verCol.Name),
		Hint:   "capture full row images for this table (or images that always carry the version column), or remove version-column from its tables entry" + rerunTail}
}
