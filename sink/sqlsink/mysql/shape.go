package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// shapeOf returns what decides how t may be bulk loaded, reading the
// catalog the first time t is loaded. Like Describe, it is read once: a
// trigger, foreign key or unique key added while txsink runs is seen at
// the next start, as are other changes of a table's definition.
func (d *Dialect) shapeOf(ctx context.Context, q sqlsink.Querier, t *schema.Table) (*tableShape, error) {
	key := t.String()
	d.bulk.mu.Lock()
	s := d.bulk.shapes[key]
	d.bulk.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := d.readShape(ctx, q, t)
	if err != nil {
		if d.Transient(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("bulk load: read the definition of %s: %w", t, err)
		}
		// The statement path needs none of this: take no chance with
		// a table txsink cannot inspect.
		s = &tableShape{why: "its definition could not be read: " + err.Error()}
	}
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	if d.bulk.shapes == nil {
		d.bulk.shapes = map[string]*tableShape{}
	}
	d.bulk.shapes[key] = s
	return s, nil
}

// readShape reads t's kind, triggers, referencing foreign keys, unique
// keys and columns from information_schema.
func (d *Dialect) readShape(ctx context.Context, q sqlsink.Querier, t *schema.Table) (*tableShape, error) {
	ns := t.Namespace
	if ns == "" {
		if err := q.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&ns); err != nil {
			return nil, err
		}
	}
	var kind, engine string
	var triggers, referencing, unique int
	err := q.QueryRowContext(ctx, `SELECT TABLE_TYPE, COALESCE(ENGINE, ''),
		(SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ?),
		(SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE WHERE REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?),
		(SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY')
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
		ns, t.Name, ns, t.Name, ns, t.Name, ns, t.Name).Scan(&kind, &engine, &triggers, &referencing, &unique)
	if err != nil {
		return nil, err
	}
	s := &tableShape{}
	switch kind {
	case "BASE TABLE":
	case "SYSTEM VERSIONED":
		// REPLACE would end a row's version and start another where
		// the upsert updates it.
		s.notReplace = "it is system-versioned"
	default:
		s.why = "it is a " + strings.ToLower(kind)
		return s, nil
	}
	if !strings.EqualFold(engine, "InnoDB") {
		// A savepoint or a rollback would not undo a load.
		s.why = "its engine, " + engine + ", is not InnoDB"
		return s, nil
	}
	if triggers > 0 {
		s.notNew = "it has triggers, which may write where a savepoint does not reach"
	}
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COALESCE(COLLATION_NAME, ''), EXTRA
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, ns, t.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var inexact []string
	for rows.Next() {
		var name, dataType, collation, extra string
		if err := rows.Scan(&name, &dataType, &collation, &extra); err != nil {
			return nil, err
		}
		if x := strings.ToUpper(extra); (strings.Contains(x, "GENERATED") && !strings.Contains(x, "DEFAULT_GENERATED")) || strings.Contains(x, "ROW ") {
			// Generated, or a system-versioning period column: nobody
			// writes it. (MySQL's DEFAULT_GENERATED is a writable
			// column with an expression default.)
			continue
		}
		s.columns = append(s.columns, name)
		if sqlsink.IsKey(t, name) && !exactKey(strings.ToLower(dataType), strings.ToLower(collation)) {
			inexact = append(inexact, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var why []string
	if s.notReplace != "" {
		why = append(why, s.notReplace)
	}
	if triggers > 0 {
		why = append(why, fmt.Sprintf("it has %d trigger(s), and REPLACE fires DELETE triggers where the upsert fires UPDATE ones", triggers))
	}
	if referencing > 0 {
		why = append(why, "foreign keys reference it, and REPLACE's delete would run their ON DELETE actions")
	}
	if unique > 0 {
		why = append(why, "it has unique keys besides the primary key, and REPLACE deletes every row any of them matches")
	}
	if len(inexact) > 0 {
		why = append(why, "key column(s) "+strings.Join(inexact, ", ")+" compare equal for values that differ (collation, padding or -0), and only the upsert is known to store the new spelling (it sets those key columns explicitly)")
	}
	s.notReplace = strings.Join(why, "; ")
	return s, nil
}

// exactKey reports whether two values of a column of this type that the
// server finds equal (so one replaces the other) are stored identically.
// Integers, decimals (1.0 and 1.00 store alike), temporal types and binary
// strings are; text is only under a binary collation without padding
// ("a" and "a " are equal under PAD SPACE); floats are not (0 and -0).
func exactKey(dataType, collation string) bool {
	switch dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year",
		"decimal", "numeric", "date", "datetime", "timestamp", "time",
		"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return true
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		return collation == "binary" || (strings.HasSuffix(collation, "_bin") &&
			(strings.Contains(collation, "_nopad_") || strings.Contains(collation, "_0900_")))
	}
	return false
}
