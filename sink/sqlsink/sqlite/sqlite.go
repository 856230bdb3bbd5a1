// Package sqlite is txsink's dialect for SQLite, over modernc.org/sqlite
// (pure Go, no cgo), so txsink runs with no server at all.
//
// SQLite stores what it is given; column types are affinities, not limits.
// txsink still converts each value for the declared type (so a DECIMAL
// stays exact text where REAL would round it), and writes date-times as
// ISO-8601 text in UTC, which sorts and compares correctly.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Dialect is the SQLite dialect. It has no state.
type Dialect struct {
	// Path is the database file, for the partitions' locks (see
	// OpenLocks); "" or ":memory:" for none.
	Path string
}

// Path returns the file path of a sqlite:// URL: sqlite:///abs/path.db is
// absolute, sqlite://rel/path.db is relative to baseDir, and
// sqlite::memory: is an in-memory database.
func Path(rawURL, baseDir string) (string, error) {
	if rawURL == "sqlite::memory:" || rawURL == "sqlite://:memory:" {
		return ":memory:", nil
	}
	rest, ok := strings.CutPrefix(rawURL, "sqlite://")
	if !ok {
		return "", fmt.Errorf("target url %q: want sqlite:///abs/path.db or sqlite://rel/path.db", rawURL)
	}
	rest, _, _ = strings.Cut(rest, "?")
	if rest == "" {
		return "", fmt.Errorf("target url %q names no file", rawURL)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("target url %q: %w", rawURL, err)
	}
	if !filepath.IsAbs(p) && baseDir != "" {
		p = filepath.Join(baseDir, p)
	}
	return p, nil
}

// cacheKiB is the page cache of a file database, in KiB (PRAGMA
// cache_size(-cacheKiB)). SQLite lives inside txsink's process, so its
// memory counts against txsink's bound of the configured buffer + 64 MiB,
// and modernc's allocator rounds each cached page (4 KiB plus SQLite's
// header) up to an 8 KiB slot: SQLite's default 2000 KiB took 4 MiB of
// RSS. Half of it costs no measurable throughput in txsink bench
// (insert-only and update-heavy), where a flush's upserts touch far more
// leaf pages than either cache holds, and still keeps the b-trees'
// interior pages.
const cacheKiB = 1000

// memoryPragmas bound SQLite's memory inside txsink's process: the page
// cache (cacheKiB), and no memory-mapped I/O, SQLite's default that this
// spells out: mapped database pages count as txsink's RSS and would grow
// with the database.
var memoryPragmas = "&_pragma=cache_size(-" + strconv.Itoa(cacheKiB) + ")&_pragma=mmap_size(0)"

// Open opens (creating if needed) the SQLite database at path, in WAL mode
// with foreign keys enforced and a busy timeout, so a reader does not make
// a commit fail, and with SQLite's memory bounded (memoryPragmas).
func Open(ctx context.Context, path string) (*sqlsink.DB, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" + memoryPragmas + "&_txlock=immediate"
	if path == ":memory:" {
		// An in-memory database lives in its page cache whatever its
		// size, so memoryPragmas would bound nothing.
		dsn = "file::memory:?_pragma=foreign_keys(1)"
	}
	return open(ctx, path, dsn)
}

// OpenReadOnly opens an existing SQLite database without writing to it,
// not even to switch its journal mode (txsink check and txsink schema use
// it). A file that does not exist yet is what txsink run would start
// from, an empty database: it is looked at as an empty in-memory one, so
// check reports every routed table missing and schema prints them all,
// and nothing is created on disk.
func OpenReadOnly(ctx context.Context, path string) (*sqlsink.DB, error) {
	if path == ":memory:" {
		return Open(ctx, path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Only where run could create the file: a folder that is not
		// there is refused as run refuses it.
		dir := filepath.Dir(path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = fmt.Errorf("%s is not a folder", dir)
			}
			return nil, fmt.Errorf("open %s: the database's folder cannot hold it: %w (create the folder, or fix the path in target.url)", path, err)
		}
		return open(ctx, path, "file::memory:")
	} else if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return open(ctx, path, "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)"+memoryPragmas)
}

func open(ctx context.Context, path, dsn string) (*sqlsink.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One writer at a time is all SQLite allows; one connection also keeps
	// an in-memory database alive and shared.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return sqlsink.New(db, Dialect{Path: path}), nil
}

// Name returns "sqlite".
func (Dialect) Name() string { return "sqlite" }

// TransactionalDDL is true: an ALTER TABLE commits with the unit that
// runs it (sqlsink.TransactionalDDL). SQLite has no ADD COLUMN IF NOT
// EXISTS; the unit reads the catalog under the database's write lock,
// which it holds from BEGIN IMMEDIATE on, so no other writer adds the
// column between.
func (Dialect) TransactionalDDL() bool { return true }

// Quote quotes an identifier with double quotes.
func (Dialect) Quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// WritePlaceholder writes "?". Numbered "?n" placeholders would read
// better, but the driver looks each one up by name, which costs time
// quadratic in a statement's parameters.
func (Dialect) WritePlaceholder(b *strings.Builder, _ int) { b.WriteByte('?') }

// MaxParams is 4096, an eighth of SQLITE_MAX_VARIABLE_NUMBER's default
// (32766). SQLite parses and compiles a statement in its own heap, inside
// txsink's process: a parse-tree node and registers per parameter, several
// MiB for a 32766-parameter upsert, which modernc's allocator keeps mapped
// for reuse once freed. At 4096 SQLite's heap peaked at 6.9 MiB instead of
// 12.1 in txsink bench, at the same CPU per event: a statement of 4096
// parameters still spreads its fixed cost over hundreds of rows.
func (Dialect) MaxParams() int { return 4096 }

// MaxStatementBytes bounds one statement's values to SQLite's default
// 1 GB string limit, with head room.
func (Dialect) MaxStatementBytes() int { return 256 << 20 }

// Upsert writes
//
//	INSERT INTO "t" ("id","v") VALUES (?,?),(?,?)
//	ON CONFLICT ("id") DO UPDATE SET "v"=excluded."v"
func (d Dialect) Upsert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	d.Insert(b, t, cols, rows)
	sqlsink.WriteOnConflict(b, d, t, cols, "excluded")
}

var _ sqlsink.Guarder = Dialect{}

// GuardedUpsert writes Upsert's statement with the version guard:
//
//	... ON CONFLICT ("id") DO UPDATE SET "v"=excluded."v" WHERE "t"."v" IS NULL OR "t"."v" <= excluded."v"
//
// A row the WHERE keeps is not counted in changes(), which is how the
// refused rows are counted.
func (d Dialect) GuardedUpsert(b *strings.Builder, t *schema.Table, cols []string, rows int, ver string) {
	d.Upsert(b, t, cols, rows)
	sqlsink.WriteGuardCondition(b, d, d.Quote(t.Name), "excluded", ver)
}

// Insert writes INSERT INTO "t" ("a","b") VALUES (?,?),(?,?).
func (d Dialect) Insert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	sqlsink.WriteInsert(b, d, t, cols, rows)
}

// Delete writes DELETE FROM "t" WHERE "id" IN (?,?), or
// WHERE ("a","b") IN (VALUES (?,?),(?,?)) for a composite key (SQLite
// takes a row-value list only as a VALUES subquery).
func (d Dialect) Delete(b *strings.Builder, t *schema.Table, rows int) {
	b.WriteString("DELETE FROM ")
	b.WriteString(sqlsink.QuotedTable(d, t))
	b.WriteString(" WHERE ")
	if len(t.PrimaryKey) == 1 {
		sqlsink.WriteKeyIn(b, d, t.PrimaryKey, rows)
		return
	}
	b.WriteByte('(')
	sqlsink.QuoteList(b, d, t.PrimaryKey)
	b.WriteString(") IN (VALUES ")
	next := 0
	sqlsink.WriteList(b, d, rows, len(t.PrimaryKey), &next)
	b.WriteByte(')')
}

// ProgressSchema creates txsink_progress.
func (Dialect) ProgressSchema() []string {
	return []string{`CREATE TABLE IF NOT EXISTS "` + sqlsink.ProgressTable + `" (
		"pipeline" TEXT NOT NULL,
		"source_partition" TEXT NOT NULL,
		"position" INTEGER NOT NULL,
		"seq" INTEGER NOT NULL,
		"epoch" INTEGER NOT NULL DEFAULT 0,
		"position_mark" TEXT,
		"updated_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
		PRIMARY KEY ("pipeline", "source_partition"))`}
}

// DeadLetterSchema creates txsink_dead_letters.
func (Dialect) DeadLetterSchema() []string {
	return []string{`CREATE TABLE IF NOT EXISTS "` + sqlsink.DeadLetterTable + `" (
		"id" INTEGER PRIMARY KEY AUTOINCREMENT,
		"pipeline" TEXT NOT NULL,
		"source_partition" TEXT NOT NULL,
		"position" INTEGER NOT NULL,
		"seq" INTEGER NOT NULL,
		"txn_id" TEXT NOT NULL,
		"raw" BLOB NOT NULL,
		"reason" TEXT NOT NULL,
		"created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))`}
}

// ProgressClaim writes the claim of one partition: a new row at epoch 1,
// or the existing row's epoch plus one.
func (d Dialect) ProgressClaim(b *strings.Builder) {
	b.WriteString(`INSERT INTO "` + sqlsink.ProgressTable + `" ("pipeline","source_partition","position","seq","epoch") VALUES (`)
	d.WritePlaceholder(b, 1)
	b.WriteByte(',')
	d.WritePlaceholder(b, 2)
	b.WriteString(`,0,0,1) ON CONFLICT ("pipeline","source_partition") DO UPDATE SET "epoch"="` + sqlsink.ProgressTable + `"."epoch"+1`)
}

// ProgressAdvance writes the fenced update of one partition's position.
func (d Dialect) ProgressAdvance(b *strings.Builder) {
	b.WriteString(`UPDATE "` + sqlsink.ProgressTable + `" SET "position"=`)
	d.WritePlaceholder(b, 1)
	b.WriteString(`,"seq"=`)
	d.WritePlaceholder(b, 2)
	b.WriteString(`,"position_mark"=`)
	d.WritePlaceholder(b, 3)
	b.WriteString(`,"updated_at"=strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE "pipeline"=`)
	d.WritePlaceholder(b, 4)
	b.WriteString(` AND "source_partition"=`)
	d.WritePlaceholder(b, 5)
	b.WriteString(` AND "epoch"=`)
	d.WritePlaceholder(b, 6)
}

// Bind writes times as ISO-8601 text in UTC, booleans as 0/1 and unsigned
// integers past int64 as text (SQLite integers are signed 64-bit).
func (Dialect) Bind(col *schema.Column, v any) any {
	switch x := v.(type) {
	case time.Time:
		switch col.Class {
		case schema.Date:
			return x.UTC().Format("2006-01-02")
		case schema.Timestamp:
			return x.UTC().Format("2006-01-02T15:04:05.999999999Z")
		}
		return x.UTC().Format("2006-01-02 15:04:05.999999999")
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case uint64:
		if x > 1<<63-1 {
			return strconv.FormatUint(x, 10)
		}
		return int64(x)
	}
	return v
}

// Transient reports SQLITE_BUSY and SQLITE_LOCKED: another connection held
// the database too long.
func (Dialect) Transient(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
	}
	return false
}

// Describe reads name with PRAGMA table_xinfo: the table name.Name of the
// attached database name.Namespace, or, when that is "", the table SQLite
// finds for the unqualified name (statements name it the same way).
func (d Dialect) Describe(ctx context.Context, q sqlsink.Querier, name schema.Name) (*schema.Table, error) {
	ns, tbl := name.Namespace, name.Name
	prefix := ""
	if ns != "" {
		prefix = d.Quote(ns) + "."
	}
	rows, err := q.QueryContext(ctx, "PRAGMA "+prefix+"table_xinfo("+d.Quote(tbl)+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &schema.Table{Namespace: ns, Name: tbl}
	type pk struct {
		name string
		pos  int
	}
	var pks []pk
	for rows.Next() {
		var (
			cid, notnull, pkPos, hidden int
			colName, colType            string
			def                         sql.NullString
		)
		if err := rows.Scan(&cid, &colName, &colType, &notnull, &def, &pkPos, &hidden); err != nil {
			return nil, err
		}
		c := schema.Column{Name: colName, SQLType: colType, Nullable: notnull == 0 && pkPos == 0, Generated: hidden == 2 || hidden == 3, HasDefault: def.Valid}
		classify(&c, colType)
		if hidden == 1 {
			continue // a hidden column of a virtual table
		}
		t.Columns = append(t.Columns, c)
		if pkPos > 0 {
			pks = append(pks, pk{colName, pkPos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, &sink.MissingTableError{Table: name.String()}
	}
	t.PrimaryKey = make([]string, len(pks))
	for _, p := range pks {
		t.PrimaryKey[p.pos-1] = p.name
	}
	if len(pks) == 1 {
		// An INTEGER PRIMARY KEY is the rowid, which SQLite fills.
		if c, _ := t.Column(pks[0].name); strings.EqualFold(c.SQLType, "INTEGER") {
			c.HasDefault = true
		}
	}
	if err := d.markCollations(ctx, q, t, prefix); err != nil {
		return nil, err
	}
	return t, nil
}

// markCollations sets how SQLite compares each column declared with a
// COLLATE clause (its catalog only keeps that in the table's CREATE
// statement): BINARY compares bytes, NOCASE folds A–Z only, RTRIM ignores
// trailing spaces; any other collation is one an application registered,
// which txsink cannot reproduce.
func (d Dialect) markCollations(ctx context.Context, q sqlsink.Querier, t *schema.Table, prefix string) error {
	var ddl sql.NullString
	err := q.QueryRowContext(ctx, "SELECT sql FROM "+prefix+"sqlite_schema WHERE type = 'table' AND name = ?", t.Name).Scan(&ddl)
	if err != nil || !ddl.Valid {
		return nil
	}
	for _, def := range splitColumns(ddl.String) {
		fields := strings.Fields(def)
		var coll string
		for i, f := range fields {
			if strings.EqualFold(f, "COLLATE") && i+1 < len(fields) {
				coll = strings.Trim(fields[i+1], "\"`[]',")
			}
		}
		if coll == "" || len(fields) == 0 {
			continue
		}
		c, ok := t.Column(strings.Trim(fields[0], "\"`[]"))
		if !ok {
			continue
		}
		cmp := schema.Compare{Collation: strings.ToUpper(coll)}
		switch cmp.Collation {
		case "BINARY":
			cmp.Collation = ""
		case "NOCASE":
			cmp.Fold = schema.FoldASCII
		case "RTRIM":
			cmp.PadSpace = true
		default:
			cmp.Unsupported = "it is not one of SQLite's built-in collations"
		}
		c.Compare = cmp
	}
	return nil
}

// splitColumns splits the body of a CREATE TABLE at top-level commas.
func splitColumns(ddl string) []string {
	open := strings.IndexByte(ddl, '(')
	if open < 0 {
		return nil
	}
	var out []string
	depth, start := 0, open+1
	for i := open + 1; i < len(ddl); i++ {
		switch ddl[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				out = append(out, strings.TrimSpace(ddl[start:i]))
				return out
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(ddl[start:i]))
				start = i + 1
			}
		}
	}
	return out
}

// sqliteDigits is how many significant digits SQLite keeps of a decimal
// stored in a column of NUMERIC affinity.
const sqliteDigits = 15

// fracDigits reads DATETIME(n): the fractional-second digits a column
// declares, 6 (microseconds) when it declares none. It also tells how
// Debezium's integer date-times are read (package coerce).
func fracDigits(args []int) int {
	if len(args) == 1 && args[0] >= 0 && args[0] <= 9 {
		return args[0]
	}
	return 6
}

// classify maps a declared type to a class by SQLite's affinity rules,
// refined by the common type names so conversion is as strict as the
// declaration says. Lengths are not enforced: SQLite keeps any length.
func classify(c *schema.Column, declared string) {
	t := strings.ToUpper(strings.TrimSpace(declared))
	base, args, _ := strings.Cut(t, "(")
	base = strings.TrimSpace(base)
	args = strings.TrimSuffix(strings.TrimSpace(args), ")")
	nums := func() []int {
		var out []int
		for _, p := range strings.Split(args, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	switch {
	case base == "BOOLEAN" || base == "BOOL":
		c.Class = schema.Bool
	case base == "DATE":
		c.Class = schema.Date
	case base == "DATETIME" || base == "TIMESTAMP WITHOUT TIME ZONE":
		c.Class, c.FracDigits = schema.DateTime, fracDigits(nums())
	case base == "TIMESTAMP" || base == "TIMESTAMPTZ" || base == "TIMESTAMP WITH TIME ZONE":
		c.Class, c.FracDigits = schema.Timestamp, fracDigits(nums())
	case base == "TIME":
		c.Class, c.FracDigits = schema.Time, fracDigits(nums())
	case base == "JSON" || base == "JSONB":
		c.Class = schema.JSON
	case base == "DECIMAL" || base == "NUMERIC":
		// NUMERIC affinity turns decimal text into REAL, which keeps 15
		// significant digits. txsink never rounds, so it holds such a
		// column to 15 digits and says why; a TEXT column keeps any value.
		c.Class, c.Precision = schema.Decimal, sqliteDigits
		if n := nums(); len(n) >= 1 {
			c.Precision = min(n[0], sqliteDigits)
			if len(n) == 2 {
				c.Scale = min(n[1], c.Precision)
			}
		}
		c.SQLType = declared + " (SQLite keeps 15 significant digits; declare the column TEXT to keep more)"
	case strings.Contains(base, "INT"):
		c.Class, c.Bits = schema.Int, 64
	case strings.Contains(base, "CHAR") || strings.Contains(base, "CLOB") || strings.Contains(base, "TEXT"):
		c.Class = schema.String
	case strings.Contains(base, "BLOB") || base == "" || strings.Contains(base, "BINARY"):
		if base == "" {
			c.Class = schema.Unknown
		} else {
			c.Class = schema.Bytes
		}
	case strings.Contains(base, "REAL") || strings.Contains(base, "FLOA") || strings.Contains(base, "DOUB"):
		c.Class, c.Bits = schema.Float, 64
	default:
		c.Class = schema.Unknown
	}
}

// ServerCondition reports the database's state that no row causes: a
// full disk (SQLITE_FULL), I/O errors, a read-only or unopenable file,
// no memory, a corrupt file, a denied access.
func (Dialect) ServerCondition(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_PERM, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// RowFault reports a failed CHECK or NOT NULL constraint, a value a STRICT
// table's column type refuses, a datatype mismatch and a value over
// SQLite's length limit: each about the row's own values.
func (Dialect) RowFault(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_DATATYPE:
		return true
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
		return true
	}
	return false
}
