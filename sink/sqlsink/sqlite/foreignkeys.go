package sqlite

import (
	"context"
	"database/sql"
	"regexp"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var (
	references = regexp.MustCompile(`(?i)\bREFERENCES\b`)
	deferredFK = regexp.MustCompile(`(?i)\bDEFERRABLE\s+INITIALLY\s+DEFERRED\b`)
)

// ForeignKeys reads t's own foreign keys with PRAGMA foreign_key_list
// (sqlsink.ForeignKeyReader); a reference without columns is to the
// parent's primary key. SQLite reports neither names nor deferral: the
// keys count as deferred only when the CREATE statement defers every one
// of them, so a doubt keeps the order txsink gives them, never drops it.
func (d Dialect) ForeignKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.ForeignKey, error) {
	prefix := ""
	if t.Namespace != "" {
		prefix = d.Quote(t.Namespace) + "."
	}
	var ddl sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT sql FROM "+prefix+"sqlite_schema WHERE type = 'table' AND name = ?", t.Name).Scan(&ddl); err != nil && err != sql.ErrNoRows {
		return nil, err
	}
	refs := len(references.FindAllStringIndex(ddl.String, -1))
	deferred := refs > 0 && len(deferredFK.FindAllStringIndex(ddl.String, -1)) == refs
	// PRAGMA foreign_key_list: id, seq, table, from, to, on_update,
	// on_delete, match.
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"foreign_key_list("+d.Quote(t.Name)+")")
	if err != nil {
		return nil, err
	}
	var fks []schema.ForeignKey
	var byPK []int // foreign keys that reference the parent's primary key
	ids := map[int]int{}
	for rows.Next() {
		var id, seq int
		var parent, from, onUpdate, onDelete, match string
		var to sql.NullString
		if err := rows.Scan(&id, &seq, &parent, &from, &to, &onUpdate, &onDelete, &match); err != nil {
			rows.Close()
			return nil, err
		}
		i, ok := ids[id]
		if !ok {
			i = len(fks)
			ids[id] = i
			fks = append(fks, schema.ForeignKey{Parent: schema.Name{Namespace: t.Namespace, Name: parent}, OnDelete: onDelete, Deferrable: deferred, Deferred: deferred})
			if !to.Valid {
				byPK = append(byPK, i)
			}
		}
		fks[i].Columns = append(fks[i].Columns, from)
		fks[i].ParentColumns = append(fks[i].ParentColumns, to.String)
	}
	// Closed before the next query: the handle may have one connection.
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, i := range byPK {
		pk, err := d.primaryKey(ctx, q, prefix, fks[i].Parent.Name)
		if err != nil {
			return nil, err
		}
		fks[i].ParentColumns = pk
	}
	return fks, nil
}

// primaryKey reads table's primary-key columns in key order.
func (d Dialect) primaryKey(ctx context.Context, q sqlsink.Querier, prefix, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"table_info("+d.Quote(table)+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byPos := map[int]string{}
	for rows.Next() {
		var cid, notnull, pk int
		var name, typ string
		var def sql.NullString
		if err := rows.Scan(&cid, &name, &typ, &notnull, &def, &pk); err != nil {
			return nil, err
		}
		if pk > 0 {
			byPos[pk] = name
		}
	}
	key := make([]string, len(byPos))
	for pos, name := range byPos {
		key[pos-1] = name
	}
	return key, rows.Err()
}

// UniqueKeys reads t's unique indexes besides the primary key with PRAGMA
// index_list and index_info (sqlsink.UniqueKeyReader); partial indexes and
// indexes on expressions are left out.
func (d Dialect) UniqueKeys(ctx context.Context, q sqlsink.Querier, t *schema.Table) ([]schema.UniqueKey, error) {
	prefix := ""
	if t.Namespace != "" {
		prefix = d.Quote(t.Namespace) + "."
	}
	// index_list: seq, name, unique, origin (c, u, pk), partial.
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"index_list("+d.Quote(t.Name)+")")
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var seq, unique, partial int
		var name, origin string
		if err := rows.Scan(&seq, &name, &unique, &origin, &partial); err != nil {
			rows.Close()
			return nil, err
		}
		if unique == 1 && origin != "pk" && partial == 0 {
			names = append(names, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var keys []schema.UniqueKey
	for _, name := range names {
		cols, err := d.indexColumns(ctx, q, prefix, name)
		if err != nil {
			return nil, err
		}
		if cols != nil {
			keys = append(keys, schema.UniqueKey{Name: name, Columns: cols})
		}
	}
	return keys, nil
}

// indexColumns reads an index's columns in order, nil when one is an
// expression.
func (d Dialect) indexColumns(ctx context.Context, q sqlsink.Querier, prefix, index string) ([]string, error) {
	// index_info: seqno, cid, name (NULL for an expression).
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"index_info("+d.Quote(index)+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	expr := false
	for rows.Next() {
		var seq, cid int
		var name sql.NullString
		if err := rows.Scan(&seq, &cid, &name); err != nil {
			return nil, err
		}
		expr = expr || !name.Valid
		cols = append(cols, name.String)
	}
	if expr {
		return nil, rows.Err()
	}
	return cols, rows.Err()
}
