package starrocks

// Partial row images: StarRocks' partial_update keeps the columns a load
// does not carry, but inserts a row whose key is not stored with those
// columns at their defaults, where the SQL targets (and commit.Group's
// contract) refuse the update. So the keys of a partial load are looked
// up first.

import (
	"context"
	"fmt"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// maxKeysPerLookup bounds the keys of one look-up statement.
const maxKeysPerLookup = 256

// requireRows fails, with sink.ErrMissingRow naming the key and the
// change's position (bad input of that change: the dead-letter policy
// quarantines it), when a row of g, a partial image of tbl, is not
// stored. It reads the committed rows over the MySQL protocol: a row
// this unit's own transaction inserted is not seen there, but the buffer
// merges a partial image over an earlier full one of its key, so a
// partial image of a unit is of a key it did not insert. A row deleted by
// another writer between the look-up and the commit is inserted with the
// image's columns and the others' defaults: the window of the check.
func (t *Target) requireRows(ctx context.Context, tbl *Table, g commit.Group) error {
	keyIdx := make([]int, len(tbl.PrimaryKey))
	for i, k := range tbl.PrimaryKey {
		keyIdx[i] = indexOf(g.Columns, k)
		if keyIdx[i] < 0 {
			return &sink.Error{Op: "update", Table: tbl.String(), Err: fmt.Errorf("a partial row image lacks key column %s", k)}
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
		err := t.db.QueryRowContext(ctx, sb.String(), args...).Scan(&n)
		return n, err
	}
	key := func(row []any) string {
		kv := make([]any, len(keyIdx))
		for i, ci := range keyIdx {
			kv[i] = row[ci]
		}
		return renderKey(kv)
	}
	for start := 0; start < len(g.Rows); start += maxKeysPerLookup {
		end := min(start+maxKeysPerLookup, len(g.Rows))
		n, err := count(g.Rows[start:end])
		if err != nil {
			return &sink.Error{Op: "read the rows partial updates change in", Table: tbl.String(), Key: key(g.Rows[start]), Err: err, Transient: isTransientSQL(err)}
		}
		if n == end-start {
			continue
		}
		// A group's rows have distinct keys: one is missing. Find it.
		for i := start; i < end; i++ {
			n, err := count(g.Rows[i : i+1])
			if err != nil {
				return &sink.Error{Op: "read the rows partial updates change in", Table: tbl.String(), Key: key(g.Rows[i]), Err: err, Transient: isTransientSQL(err)}
			}
			if n > 0 {
				continue
			}
			e := &sink.Error{Op: "update", Table: tbl.String(), Key: key(g.Rows[i]), Err: sink.ErrMissingRow,
				Hint: "the source sent an update whose image lacks columns (a compressed or minimal row image, or Debezium's unavailable-value placeholder) for a row the target does not have, " +
					"and StarRocks' partial_update would insert it with those columns at their defaults; load the row first (a snapshot), or capture full row images; nothing of this commit was written"}
			if i < len(g.Pos) {
				e.Pos, e.At, e.Refused = g.Pos[i].String(), g.Pos[i], true
			}
			return e
		}
	}
	return nil
}
