package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// window decides, for the stream after a resumed snapshot, which changes
// of the transactions committed before the last resume point to apply:
// those whose key the copy as of that point did not read (see
// snapshot.go). Only the pump uses it.
type window struct {
	segs []segment
	// keys are the primary keys of the tables whose bound in some segment
	// is a key, by table name; cmp compares keys the server's way.
	keys map[string]*tableInfo
	cmp  *pgconn.PgConn
}

// end is where the windows end: changes of transactions committed at or
// after it are all applied.
func (w *window) end() uint64 { return w.segs[len(w.segs)-1].Until }

// keeps reports whether the change of table at key, in the transaction
// committed at commit, is to be applied.
func (w *window) keeps(ctx context.Context, table string, commit uint64, key []string) (bool, error) {
	i := slices.IndexFunc(w.segs, func(s segment) bool { return commit < s.Until })
	if i < 0 {
		return true, nil
	}
	b, ok := w.segs[i].Bounds[table]
	switch {
	case !ok || b.Done:
		// Copied in full before this window began (or not a table of the
		// snapshot): every change since applies.
		return true, nil
	case b.After == nil:
		// Not copied yet when this window began: the later copy holds
		// every change of the window.
		return false, nil
	}
	ti := w.keys[table]
	if ti == nil || len(key) != len(b.After) {
		return false, fmt.Errorf("postgres source: table %s: a change's key %v cannot be compared with the snapshot's bound %v", table, key, b.After)
	}
	return w.atMost(ctx, ti, key, b.After)
}

// atMost reports whether key <= bound in the table's key order: in Go for
// integer keys, by the server otherwise (its collations).
func (w *window) atMost(ctx context.Context, ti *tableInfo, key, bound []string) (bool, error) {
	ints := true
	for _, c := range ti.pk {
		ints = ints && (c.oid == 20 || c.oid == 21 || c.oid == 23) // int8, int2, int4
	}
	if ints {
		for i := range key {
			a, err1 := strconv.ParseInt(key[i], 10, 64)
			b, err2 := strconv.ParseInt(bound[i], 10, 64)
			if err1 != nil || err2 != nil {
				return false, fmt.Errorf("postgres source: table %s: key %v or bound %v is not a whole number", ti.table, key, bound)
			}
			if a != b {
				return a < b, nil
			}
		}
		return true, nil
	}
	params := make([][]byte, 0, 2*len(key))
	for _, v := range append(append([]string(nil), key...), bound...) {
		params = append(params, []byte(v))
	}
	sql := "SELECT " + keyTuple(ti.pk, 1) + " <= " + keyTuple(ti.pk, len(key)+1)
	res := w.cmp.ExecParams(ctx, sql, params, nil, nil, nil).Read()
	if res.Err != nil {
		return false, fmt.Errorf("postgres source: table %s: compare key %v with the snapshot's bound: %w", ti.table, key, res.Err)
	}
	return len(res.Rows) == 1 && string(res.Rows[0][0]) == "t", nil
}

// close disconnects the comparing connection.
func (w *window) close() {
	if w != nil && w.cmp != nil {
		w.cmp.Close(context.Background())
		w.cmp = nil
	}
}

// tupleKey returns the text of a tuple's primary key columns, nil when a
// column is missing (not in the tuple, null, or an unchanged TOASTed
// value).
func tupleKey(r *relation, t *pglogrepl.TupleData, pk []keyCol) []string {
	if t == nil {
		return nil
	}
	key := make([]string, len(pk))
	for i, c := range pk {
		j := slices.Index(r.names, c.name)
		if j < 0 || j >= len(t.Columns) || t.Columns[j].DataType != pglogrepl.TupleDataTypeText {
			return nil
		}
		key[i] = string(t.Columns[j].Data)
	}
	return key
}
