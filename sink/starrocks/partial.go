package starrocks

// Partial row images: StarRocks' partial_update keeps the columns a load
// does not carry, but inserts a row whose key is not stored with those
// columns at their defaults, where the SQL targets (and commit.Group's
// contract) refuse the update. So the keys of a partial load are looked
// up first.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// maxKeysPerLookup bounds the keys of one look-up statement.
const maxKeysPerLookup = 256

// requireRows fails, with sink.ErrMissingRow naming the key and the
// change's position (bad input of that change: the dead-letter policy
// quarantines it), when a row of g, a partial image of tbl, is not
// stored. It reads the committed rows over the MySQL protocol, which do
// not show what the open transaction loaded: known says what the
// transaction's earlier parts (commit.Unit.Parts) loaded of tbl's keys,
// and decides for those keys. Within one part the buffer merges a
// partial image over an earlier full one of its key, so a partial image
// is of a key its own part did not insert. A row deleted by another
// writer between the look-up and the commit is inserted with the image's
// columns and the others' defaults: the window of the check.
func (t *Target) requireRows(ctx context.Context, tbl *Table, g commit.Group, known map[string]bool) error {
	missing, err := t.absent(ctx, tbl, g, true, known)
	if err != nil || len(missing) == 0 {
		return err
	}
	i := missing[0]
	e := &sink.Error{Op: "update", Table: tbl.String(), Key: keyOf(&tbl.Table, g.Columns, g.Rows[i]), Err: sink.ErrMissingRow,
		Hint: "the source sent an update whose image lacks columns (a compressed or minimal row image, or Debezium's unavailable-value placeholder) for a row the target does not have, " +
			"and StarRocks' partial_update would insert it with those columns at their defaults; load the row first (a snapshot), or capture full row images; nothing of this commit was written"}
	if i < len(g.Pos) {
		e.Pos, e.At, e.Refused = g.Pos[i].String(), g.Pos[i], true
	}
	return e
}

// loadedKeys returns what the parts in earlier loaded of table tbl's
// keys, by rendered key: true for a key a part upserted (it is there once
// those loads apply, in order), false for one a part deleted. A delete
// of a soft-delete table marks the row and leaves it where it was, so it
// says nothing. Nil when no part loaded the table.
func loadedKeys(earlier []*commit.Unit, tbl *Table) map[string]bool {
	var out map[string]bool
	for _, p := range earlier {
		for _, b := range p.Batches {
			if b.Table.Name != tbl.Table.Name {
				continue
			}
			if out == nil {
				out = map[string]bool{}
			}
			if b.Rules.SoftDelete == "" {
				for _, k := range b.Deletes {
					out[renderKey(k)] = false
				}
			}
			for _, g := range b.Upserts {
				for _, row := range g.Rows {
					out[keyOf(b.Table, g.Columns, row)] = true
				}
			}
		}
	}
	return out
}

// absent returns the indexes of g's rows whose key tbl does not store
// (committed, read over the MySQL protocol, unless known, what the open
// transaction loaded before, decides): the first one only, when first is
// set. A group's rows have distinct keys.
func (t *Target) absent(ctx context.Context, tbl *Table, g commit.Group, first bool, known map[string]bool) ([]int, error) {
	keyIdx := make([]int, len(tbl.PrimaryKey))
	for i, k := range tbl.PrimaryKey {
		keyIdx[i] = indexOf(g.Columns, k)
		if keyIdx[i] < 0 {
			return nil, &sink.Error{Op: "update", Table: tbl.String(), Err: fmt.Errorf("a partial row image lacks key column %s", k)}
		}
	}
	count := func(rows [][]any) (int, error) {
		var sb strings.Builder
		sb.WriteString("SELECT COUNT(*) FROM " + quoteIdent(tbl.Name) + " WHERE ")
		args := make([]any, 0, len(rows)*len(keyIdx))
		for r, row := range rows {
			if r > 0 {
				sb.WriteString(" OR ")
			}
			sb.WriteByte('(')
			for i, ci := range keyIdx {
				if i > 0 {
					sb.WriteString(" AND ")
				}
				sb.WriteString(quoteIdent(tbl.PrimaryKey[i]) + " = ?")
				args = append(args, row[ci])
			}
			sb.WriteByte(')')
		}
		var n int
		if err := t.db.QueryRowContext(ctx, sb.String(), args...).Scan(&n); err != nil {
			return 0, &sink.Error{Op: "read the rows partial updates change in", Table: tbl.String(), Key: keyOf(&tbl.Table, g.Columns, rows[0]), Err: err, Transient: isTransientSQL(err)}
		}
		return n, nil
	}
	// The rows the committed state decides, by index into g.Rows.
	var out, ask []int
	for i, row := range g.Rows {
		if present, ok := known[keyOf(&tbl.Table, g.Columns, row)]; ok {
			if !present {
				out = append(out, i)
			}
			continue
		}
		ask = append(ask, i)
	}
	rowsOf := func(idx []int) [][]any {
		rows := make([][]any, len(idx))
		for j, i := range idx {
			rows[j] = g.Rows[i]
		}
		return rows
	}
	for start := 0; start < len(ask); start += maxKeysPerLookup {
		end := min(start+maxKeysPerLookup, len(ask))
		n, err := count(rowsOf(ask[start:end]))
		if err != nil {
			return nil, err
		}
		for j := start; j < end && n < end-start; j++ {
			m, err := count(rowsOf(ask[j : j+1]))
			if err != nil {
				return nil, err
			}
			if m == 0 {
				out = append(out, ask[j])
			}
		}
	}
	slices.Sort(out)
	if first && len(out) > 1 {
		out = out[:1]
	}
	return out, nil
}

// softDeletes returns b with its deletes (delete: soft:COLUMN) made a
// partial update of each stored key: the soft-delete column set to the
// delete's value (Batch.SoftValues) and, with a version column, the
// version to the delete's, which merge_condition then guards as any
// upsert. A key not stored (nor loaded by an earlier part, known) is left out, as the SQL targets' UPDATE
// changes no row (partial_update would insert a marked row of defaults).
// A key the unit also writes is not among the deletes: the buffer makes a
// delete after an upsert of its key an upsert with the column set.
func (t *Target) softDeletes(ctx context.Context, tbl *Table, b *commit.Batch, known map[string]bool) (*commit.Batch, error) {
	soft, ver := b.Rules.SoftDelete, b.Rules.Version
	var cols []string
	for _, c := range tbl.Columns {
		if slices.Contains(tbl.PrimaryKey, c.Name) || c.Name == soft || c.Name == ver {
			cols = append(cols, c.Name)
		}
	}
	g := commit.Group{Columns: cols, Partial: true, Pos: b.DeletePos}
	for i, key := range b.Deletes {
		row := make([]any, len(cols))
		for j, c := range cols {
			switch {
			case c == soft:
				row[j] = b.SoftValues[i]
			case c == ver:
				row[j] = b.DeleteVersions[i]
			default:
				row[j] = key[slices.Index(tbl.PrimaryKey, c)]
			}
		}
		g.Rows = append(g.Rows, row)
	}
	missing, err := t.absent(ctx, tbl, g, false, known)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		kept := commit.Group{Columns: cols, Partial: true}
		for i, row := range g.Rows {
			if !slices.Contains(missing, i) {
				kept.Rows = append(kept.Rows, row)
				if i < len(g.Pos) {
					kept.Pos = append(kept.Pos, g.Pos[i])
				}
			}
		}
		g = kept
	}
	out := *b
	out.Deletes, out.DeletePos, out.DeleteVersions, out.SoftValues = nil, nil, nil, nil
	if len(g.Rows) > 0 {
		out.Upserts = append(slices.Clone(b.Upserts), g)
	}
	return &out, nil
}
