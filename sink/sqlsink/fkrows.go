package sqlsink

// Rows of a table that references itself, ordered within the table (see
// fkorder.go): a written row after the row it references when the unit
// writes that one too, a deleted row before the row it references when
// the unit deletes that one too. Each level is a statement of its own, so the order holds whichever way
// the server walks one statement's rows (InnoDB checks row by row, in
// index order for a DELETE).

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// rowID is a row of a table's groups: group g, row r.
type rowID struct{ g, r int }

// valueKey renders values as one comparable string, or reports false when
// one is NULL (a NULL reference references nothing). Converted values of
// a key and of the columns referencing it render alike.
func valueKey(vals []any) (string, bool) {
	var buf [64]byte
	b := buf[:0]
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			return "", false
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case int:
			b = strconv.AppendInt(b, int64(x), 10)
		case uint64:
			b = strconv.AppendUint(b, x, 10)
		case []byte:
			b = append(b, x...)
		case string:
			b = append(b, x...)
		default:
			b = fmt.Append(b, x)
		}
		b = append(b, 0)
	}
	return string(b), true
}

// columnsAt returns where names sit in cols, or false when one is absent.
func columnsAt(cols, names []string) ([]int, bool) {
	at := make([]int, len(names))
	for i, n := range names {
		at[i] = -1
		for j, c := range cols {
			if strings.EqualFold(c, n) {
				at[i] = j
				break
			}
		}
		if at[i] < 0 {
			return nil, false
		}
	}
	return at, true
}

func pick(row []any, at []int) []any {
	vals := make([]any, len(at))
	for i, j := range at {
		vals[i] = row[j]
	}
	return vals
}

// levels gives each of n nodes its distance from a node without a parent
// (parent(i) < 0), following parent, or fails on a cycle.
func levels(n int, parents func(i int) []int) ([]int, int, bool) {
	level := make([]int, n)
	state := make([]uint8, n) // 0 new, 1 on the path, 2 done
	top := 0
	var visit func(i int) bool
	visit = func(i int) bool {
		switch state[i] {
		case 1:
			return false
		case 2:
			return true
		}
		state[i] = 1
		for _, p := range parents(i) {
			if !visit(p) {
				return false
			}
			level[i] = max(level[i], level[p]+1)
		}
		state[i] = 2
		top = max(top, level[i])
		return true
	}
	for i := 0; i < n; i++ {
		if !visit(i) {
			return nil, 0, false
		}
	}
	return level, top, true
}

// writeLevels orders a self-referencing table's upsert groups so that a
// row comes after the row it references when the unit writes both: the
// groups split by level, parents first. It returns groups as they are
// when no row references another of the unit.
func writeLevels(t *schema.Table, groups []commit.Group, self []*schema.ForeignKey) ([]commit.Group, error) {
	var ids []rowID
	for g := range groups {
		for r := range groups[g].Rows {
			ids = append(ids, rowID{g, r})
		}
	}
	parents := make([][]int, len(ids))
	linked := false
	for _, fk := range self {
		byParentKey := map[string]int{}
		for i, id := range ids {
			g := &groups[id.g]
			if at, ok := columnsAt(g.Columns, fk.ParentColumns); ok {
				if k, ok := valueKey(pick(g.Rows[id.r], at)); ok {
					byParentKey[k] = i
				}
			}
		}
		for i, id := range ids {
			g := &groups[id.g]
			at, ok := columnsAt(g.Columns, fk.Columns)
			if !ok {
				continue
			}
			if k, ok := valueKey(pick(g.Rows[id.r], at)); ok {
				if p, ok := byParentKey[k]; ok && p != i {
					parents[i] = append(parents[i], p)
					linked = true
				}
			}
		}
	}
	if !linked {
		return groups, nil
	}
	level, top, ok := levels(len(ids), func(i int) []int { return parents[i] })
	if !ok {
		return nil, selfCycle(t, self)
	}
	var out []commit.Group
	for l := 0; l <= top; l++ {
		for g := range groups {
			sub := commit.Group{Columns: groups[g].Columns, Partial: groups[g].Partial}
			for i, id := range ids {
				if id.g != g || level[i] != l {
					continue
				}
				sub.Rows = append(sub.Rows, groups[g].Rows[id.r])
				if id.r < len(groups[g].Pos) {
					sub.Pos = append(sub.Pos, groups[g].Pos[id.r])
				}
			}
			if len(sub.Rows) > 0 {
				out = append(out, sub)
			}
		}
	}
	return out, nil
}

func selfCycle(t *schema.Table, self []*schema.ForeignKey) *CycleError {
	ce := &CycleError{Tables: []string{t.String()}, Rows: true}
	for _, fk := range self {
		ce.Constraints = append(ce.Constraints, fk.Label(t))
	}
	return ce
}

// deleteLevels orders the deletes of w, a self-referencing table's, so
// that a row goes before the row it references when the unit deletes
// both, as the target holds them inside the unit's transaction (after the
// table's writes moved the children the unit keeps): the deepest rows
// first, a statement per level. It returns a *CycleError for rows that
// reference each other.
func (t *DB) deleteLevels(ctx context.Context, tx *sql.Tx, w *work, self []*schema.ForeignKey) ([]*work, error) {
	tbl := w.table
	byKey := make(map[string]int, len(w.tuples))
	for i, k := range w.tuples {
		if s, ok := valueKey(k); ok {
			byKey[s] = i
		}
	}
	// The columns read: the key, then each foreign key's own and
	// referenced columns.
	cols := append([]string(nil), tbl.PrimaryKey...)
	for _, fk := range self {
		cols = append(cols, fk.Columns...)
		cols = append(cols, fk.ParentColumns...)
	}
	type stored struct {
		i    int
		vals []any
	}
	var rows []stored
	per := t.chunkRows(len(tbl.PrimaryKey), 64)
	for start := 0; start < len(w.tuples); start += per {
		end := min(start+per, len(w.tuples))
		var sb strings.Builder
		sb.WriteString("SELECT ")
		QuoteList(&sb, t.dialect, cols)
		sb.WriteString(" FROM " + QuotedTable(t.dialect, tbl) + " WHERE ")
		WriteKeyIn(&sb, t.dialect, tbl.PrimaryKey, end-start)
		var args []any
		for _, k := range w.tuples[start:end] {
			for j, v := range k {
				args = append(args, t.dialect.Bind(w.cols[j], v))
			}
		}
		res, err := tx.QueryContext(ctx, sb.String(), args...)
		if err != nil {
			return nil, t.wrap("read the rows deletes of a self-referencing table order", tbl.String(), w.key(start), err)
		}
		for res.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			if err := res.Scan(ptrs...); err != nil {
				res.Close()
				return nil, t.wrap("read the rows deletes of a self-referencing table order", tbl.String(), "", err)
			}
			k, _ := valueKey(vals[:len(tbl.PrimaryKey)])
			if i, ok := byKey[k]; ok {
				rows = append(rows, stored{i: i, vals: vals})
			}
		}
		err = res.Err()
		res.Close()
		if err != nil {
			return nil, t.wrap("read the rows deletes of a self-referencing table order", tbl.String(), "", err)
		}
	}
	// parent[i]: the deleted rows row i references.
	parents := make([][]int, len(w.tuples))
	linked := false
	off := len(tbl.PrimaryKey)
	for _, fk := range self {
		n := len(fk.Columns)
		byParentKey := map[string]int{}
		for _, r := range rows {
			if k, ok := valueKey(r.vals[off+n : off+2*n]); ok {
				byParentKey[k] = r.i
			}
		}
		for _, r := range rows {
			if k, ok := valueKey(r.vals[off : off+n]); ok {
				if p, ok := byParentKey[k]; ok && p != r.i {
					parents[r.i] = append(parents[r.i], p)
					linked = true
				}
			}
		}
		off += 2 * n
	}
	if !linked {
		return []*work{w}, nil
	}
	level, top, ok := levels(len(w.tuples), func(i int) []int { return parents[i] })
	if !ok {
		return nil, selfCycle(tbl, self)
	}
	var out []*work
	for l := top; l >= 0; l-- {
		sub := *w
		sub.tuples, sub.pos = nil, nil
		for i := range w.tuples {
			if level[i] != l {
				continue
			}
			sub.tuples = append(sub.tuples, w.tuples[i])
			if i < len(w.pos) {
				sub.pos = append(sub.pos, w.pos[i])
			}
		}
		if len(sub.tuples) > 0 {
			out = append(out, &sub)
		}
	}
	return out, nil
}
