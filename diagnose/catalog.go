package diagnose

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// The catalog queries live here rather than in the dialect packages: they
// serve check alone, and keeping them together keeps what check reads in
// one place.

// index is a UNIQUE index besides the primary key.
type index struct {
	name     string
	columns  []string
	deferred bool // PostgreSQL: a constraint checked at COMMIT
}

// trigger is a trigger on a target table.
type trigger struct {
	name    string
	when    string // "BEFORE INSERT", ...
	outside string // what it writes outside the target database, "" if nothing found
}

// foreignKey is a foreign key between a target table and another table.
type foreignKey struct {
	name               string
	child, parent      string
	childCols          []string
	parentCols         []string
	onDelete, onUpdate string // "CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT", "NO ACTION"
	deferred           bool   // checked at COMMIT
	parentSide         bool   // the table being checked is the referenced one
}

// named returns " NAME" for a named foreign key, "" for SQLite's unnamed
// ones, to follow "foreign key" in a sentence.
func (fk foreignKey) named() string {
	if fk.name == "" {
		return ""
	}
	return " " + fk.name
}

// catalog is what check reads about one table beyond schema.Table.
type catalog struct {
	unique      []index
	triggers    []trigger
	foreignKeys []foreignKey
	// nondeterministic maps lower-cased column names to their
	// nondeterministic collation (PostgreSQL).
	nondeterministic map[string]string
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func readCatalog(ctx context.Context, q sink.Querier, dialect string, t *schema.Table) (*catalog, error) {
	switch dialect {
	case "mysql", "mariadb":
		return mysqlCatalog(ctx, q, t)
	case "postgres":
		return postgresCatalog(ctx, q, t)
	case "sqlite":
		return sqliteCatalog(ctx, q, t)
	}
	return &catalog{}, nil
}

// timeout is a server setting; value 0 means off.
type timeout struct {
	name  string
	value time.Duration
}

func serverTimeouts(ctx context.Context, q sink.Querier, dialect string) ([]timeout, error) {
	switch dialect {
	case "mysql", "mariadb":
		// Session values: the session is opened with the URL's
		// parameters, as txsink run's sessions are.
		var lockWait, wait float64
		if err := q.QueryRowContext(ctx, "SELECT @@SESSION.innodb_lock_wait_timeout, @@SESSION.wait_timeout").Scan(&lockWait, &wait); err != nil {
			return nil, err
		}
		return []timeout{
			{"innodb_lock_wait_timeout", time.Duration(lockWait * float64(time.Second))},
			{"wait_timeout", time.Duration(wait * float64(time.Second))},
		}, nil
	case "postgres":
		rows, err := q.QueryContext(ctx, `SELECT name, setting::bigint FROM pg_settings
			WHERE name IN ('idle_in_transaction_session_timeout', 'lock_timeout', 'statement_timeout') ORDER BY name`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []timeout
		for rows.Next() {
			var t timeout
			var ms int64
			if err := rows.Scan(&t.name, &ms); err != nil {
				return nil, err
			}
			t.value = time.Duration(ms) * time.Millisecond // all three are in ms
			out = append(out, t)
		}
		return out, rows.Err()
	}
	return nil, nil
}

// writeTarget finds the table a SQL write statement names with a
// qualifier: group 1 is the qualifier (database or schema).
var writeTarget = regexp.MustCompile("(?i)\\b(?:insert\\s+(?:ignore\\s+)?into|replace\\s+into|update|delete\\s+from)\\s+[`\"]?(\\w+)[`\"]?\\s*\\.")

// outsideWrites returns what body writes outside database ns: a table
// qualified with another database or schema, or a dblink call. It is a
// heuristic over the trigger's text; a write through a stored procedure
// or a FEDERATED table is not found.
func outsideWrites(body, ns string) string {
	var found []string
	seen := map[string]bool{}
	for _, m := range writeTarget.FindAllStringSubmatch(body, -1) {
		q := m[1]
		if strings.EqualFold(q, ns) || seen[strings.ToLower(q)] {
			continue
		}
		seen[strings.ToLower(q)] = true
		found = append(found, "writes to "+q+".*")
	}
	if strings.Contains(strings.ToLower(body), "dblink") {
		found = append(found, "calls dblink")
	}
	return strings.Join(found, ", ")
}

func mysqlCatalog(ctx context.Context, q sink.Querier, t *schema.Table) (*catalog, error) {
	cat := &catalog{}
	rows, err := q.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY'
		ORDER BY INDEX_NAME, SEQ_IN_INDEX`, t.Namespace, t.Name)
	if err != nil {
		return nil, err
	}
	err = scanIndexes(rows, cat)
	if err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT
		FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ?
		ORDER BY TRIGGER_NAME`, t.Namespace, t.Name)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name, timing, event, body string
		if err := r.Scan(&name, &timing, &event, &body); err != nil {
			return err
		}
		cat.triggers = append(cat.triggers, trigger{name: name, when: timing + " " + event, outside: outsideWrites(body, t.Namespace)})
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT k.CONSTRAINT_NAME, k.TABLE_SCHEMA, k.TABLE_NAME, k.COLUMN_NAME,
		k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, r.DELETE_RULE, r.UPDATE_RULE
		FROM information_schema.KEY_COLUMN_USAGE k
		JOIN information_schema.REFERENTIAL_CONSTRAINTS r
		  ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
		WHERE k.REFERENCED_TABLE_NAME IS NOT NULL
		  AND ((k.TABLE_SCHEMA = ? AND k.TABLE_NAME = ?) OR (k.REFERENCED_TABLE_SCHEMA = ? AND k.REFERENCED_TABLE_NAME = ?))
		ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`, t.Namespace, t.Name, t.Namespace, t.Name)
	if err != nil {
		return nil, err
	}
	byName := map[string]*foreignKey{}
	var order []string
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name, cs, ct, cc, ps, pt, pc, del, upd string
		if err := r.Scan(&name, &cs, &ct, &cc, &ps, &pt, &pc, &del, &upd); err != nil {
			return err
		}
		id := cs + "." + ct + "." + name
		fk := byName[id]
		if fk == nil {
			fk = &foreignKey{name: name, child: cs + "." + ct, parent: ps + "." + pt, onDelete: del, onUpdate: upd}
			byName[id] = fk
			order = append(order, id)
		}
		fk.childCols = append(fk.childCols, cc)
		fk.parentCols = append(fk.parentCols, pc)
		return nil
	}); err != nil {
		return nil, err
	}
	self := t.Namespace + "." + t.Name
	for _, id := range order {
		fk := byName[id]
		isChild := strings.EqualFold(fk.child, self)
		isParent := strings.EqualFold(fk.parent, self)
		if isChild {
			cat.foreignKeys = append(cat.foreignKeys, *fk)
		}
		if isParent {
			p := *fk
			p.parentSide = true
			cat.foreignKeys = append(cat.foreignKeys, p)
		}
	}
	return cat, nil
}

// scanIndexes reads (index name, column name) rows ordered by index.
func scanIndexes(rows *sql.Rows, cat *catalog) error {
	return scanRows(rows, func(r *sql.Rows) error {
		var name, col string
		if err := r.Scan(&name, &col); err != nil {
			return err
		}
		if n := len(cat.unique); n > 0 && cat.unique[n-1].name == name {
			cat.unique[n-1].columns = append(cat.unique[n-1].columns, col)
			return nil
		}
		cat.unique = append(cat.unique, index{name: name, columns: []string{col}})
		return nil
	})
}

// scanRows calls f for each row and closes rows. Closing before the next
// query matters for SQLite, whose handle has a single connection.
func scanRows(rows *sql.Rows, f func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// pgRules maps pg_constraint's action codes to SQL.
var pgRules = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

func postgresCatalog(ctx context.Context, q sink.Querier, t *schema.Table) (*catalog, error) {
	cat := &catalog{nondeterministic: map[string]string{}}
	rel := quoteIdent(t.Namespace) + "." + quoteIdent(t.Name)
	rows, err := q.QueryContext(ctx, `SELECT c.relname, pg_get_indexdef(i.indexrelid, k, true),
		COALESCE((SELECT con.condeferred FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.contype = 'u'), false)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid, generate_series(1, i.indnkeyatts) k
		WHERE i.indrelid = $1::regclass AND i.indisunique AND NOT i.indisprimary
		ORDER BY c.relname, k`, rel)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name, col string
		var deferred bool
		if err := r.Scan(&name, &col, &deferred); err != nil {
			return err
		}
		if n := len(cat.unique); n > 0 && cat.unique[n-1].name == name {
			cat.unique[n-1].columns = append(cat.unique[n-1].columns, col)
			return nil
		}
		cat.unique = append(cat.unique, index{name: name, columns: []string{col}, deferred: deferred})
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT t.tgname, pg_get_triggerdef(t.oid), p.prosrc
		FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE t.tgrelid = $1::regclass AND NOT t.tgisinternal ORDER BY t.tgname`, rel)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name, def, body string
		if err := r.Scan(&name, &def, &body); err != nil {
			return err
		}
		cat.triggers = append(cat.triggers, trigger{name: name, when: pgTriggerWhen(def), outside: outsideWrites(body, t.Namespace)})
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT c.conname, c.conrelid::regclass::text, c.confrelid::regclass::text,
		c.confdeltype::text, c.confupdtype::text, c.condeferred,
		c.conrelid = $1::regclass, c.confrelid = $1::regclass,
		(SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
		   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n),
		(SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
		   JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)
		FROM pg_constraint c
		WHERE c.contype = 'f' AND (c.conrelid = $1::regclass OR c.confrelid = $1::regclass)
		ORDER BY c.conname`, rel)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var fk foreignKey
		var del, upd, childCols, parentCols string
		var isChild, isParent bool
		if err := r.Scan(&fk.name, &fk.child, &fk.parent, &del, &upd, &fk.deferred, &isChild, &isParent, &childCols, &parentCols); err != nil {
			return err
		}
		fk.onDelete, fk.onUpdate = pgRules[del], pgRules[upd]
		fk.childCols, fk.parentCols = strings.Split(childCols, ","), strings.Split(parentCols, ",")
		if isChild {
			cat.foreignKeys = append(cat.foreignKeys, fk)
		}
		if isParent {
			fk.parentSide = true
			cat.foreignKeys = append(cat.foreignKeys, fk)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// Key columns under a nondeterministic collation compare by a rule
	// txsink does not know (citext is handled by Describe).
	rows, err = q.QueryContext(ctx, `SELECT a.attname, co.collname FROM pg_attribute a
		JOIN pg_collation co ON co.oid = a.attcollation
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT co.collisdeterministic`, rel)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var col, coll string
		if err := r.Scan(&col, &coll); err != nil {
			return err
		}
		cat.nondeterministic[strings.ToLower(col)] = coll
		return nil
	}); err != nil {
		return nil, err
	}
	return cat, nil
}

// pgTriggerWhen extracts "AFTER INSERT OR UPDATE" from a CREATE TRIGGER
// statement.
var pgTriggerWhenRE = regexp.MustCompile(`(?i)\b(BEFORE|AFTER|INSTEAD OF)\s+(.*?)\s+ON\s`)

func pgTriggerWhen(def string) string {
	if m := pgTriggerWhenRE.FindStringSubmatch(def); m != nil {
		return strings.ToUpper(m[1]) + " " + m[2]
	}
	return def
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func sqliteCatalog(ctx context.Context, q sink.Querier, t *schema.Table) (*catalog, error) {
	cat := &catalog{}
	prefix := ""
	if t.Namespace != "" {
		prefix = quoteIdent(t.Namespace) + "."
	}
	// PRAGMA index_list: seq, name, unique, origin ("pk" for the primary
	// key, "u" for a UNIQUE constraint, "c" for CREATE INDEX), partial.
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"index_list("+quoteIdent(t.Name)+")")
	if err != nil {
		return nil, err
	}
	var names []string
	if err := scanRows(rows, func(r *sql.Rows) error {
		var seq, unique, partial int
		var name, origin string
		if err := r.Scan(&seq, &name, &unique, &origin, &partial); err != nil {
			return err
		}
		if unique == 1 && origin != "pk" {
			names = append(names, name)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"index_info("+quoteIdent(name)+")")
		if err != nil {
			return nil, err
		}
		ix := index{name: name}
		if err := scanRows(rows, func(r *sql.Rows) error {
			var seqno, cid int
			var col sql.NullString
			if err := r.Scan(&seqno, &cid, &col); err != nil {
				return err
			}
			ix.columns = append(ix.columns, col.String)
			return nil
		}); err != nil {
			return nil, err
		}
		cat.unique = append(cat.unique, ix)
	}
	rows, err = q.QueryContext(ctx, "SELECT name, sql FROM "+prefix+"sqlite_schema WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE ORDER BY name", t.Name)
	if err != nil {
		return nil, err
	}
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name, ddl string
		if err := r.Scan(&name, &ddl); err != nil {
			return err
		}
		// A SQLite trigger can only write to its own database (TEMP
		// triggers aside), so nothing it does is outside.
		cat.triggers = append(cat.triggers, trigger{name: name, when: pgTriggerWhen(ddl)})
		return nil
	}); err != nil {
		return nil, err
	}
	// Foreign keys: this table's own, and every other table's that
	// reference it. SQLite reports no deferral; a table whose CREATE
	// statement defers any foreign key counts as deferring all of them,
	// which can only hide a warning, never invent one.
	rows, err = q.QueryContext(ctx, "SELECT name, sql FROM "+prefix+"sqlite_schema WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	ddls := map[string]string{}
	var tables []string
	if err := scanRows(rows, func(r *sql.Rows) error {
		var name string
		var ddl sql.NullString
		if err := r.Scan(&name, &ddl); err != nil {
			return err
		}
		ddls[name] = ddl.String
		tables = append(tables, name)
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(tables)
	for _, child := range tables {
		fks, err := sqliteForeignKeys(ctx, q, prefix, child, ddls[child])
		if err != nil {
			return nil, err
		}
		for _, fk := range fks {
			if strings.EqualFold(child, t.Name) {
				cat.foreignKeys = append(cat.foreignKeys, fk)
			}
			if strings.EqualFold(fk.parent, t.Name) {
				fk.parentSide = true
				cat.foreignKeys = append(cat.foreignKeys, fk)
			}
		}
	}
	return cat, nil
}

// deferredFK spots DEFERRABLE INITIALLY DEFERRED in a CREATE TABLE; SQLite's
// pragmas do not report it.
var deferredFK = regexp.MustCompile(`(?i)DEFERRABLE\s+INITIALLY\s+DEFERRED`)

// sqliteForeignKeys reads the foreign keys of table child. SQLite does not
// report their names.
func sqliteForeignKeys(ctx context.Context, q sink.Querier, prefix, child, ddl string) ([]foreignKey, error) {
	// PRAGMA foreign_key_list: id, seq, table, from, to, on_update,
	// on_delete, match.
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"foreign_key_list("+quoteIdent(child)+")")
	if err != nil {
		return nil, err
	}
	byID := map[int]*foreignKey{}
	var ids []int
	if err := scanRows(rows, func(r *sql.Rows) error {
		var id, seq int
		var parent, from, onUpdate, onDelete, match string
		var to sql.NullString
		if err := r.Scan(&id, &seq, &parent, &from, &to, &onUpdate, &onDelete, &match); err != nil {
			return err
		}
		fk := byID[id]
		if fk == nil {
			fk = &foreignKey{child: child, parent: parent, onDelete: onDelete, onUpdate: onUpdate,
				deferred: deferredFK.MatchString(ddl)}
			byID[id] = fk
			ids = append(ids, id)
		}
		fk.childCols = append(fk.childCols, from)
		parentCol := to.String
		if !to.Valid {
			parentCol = "its primary key" // REFERENCES parent without columns
		}
		fk.parentCols = append(fk.parentCols, parentCol)
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Ints(ids)
	out := make([]foreignKey, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out, nil
}
