// Package target applies commit units to a SQL database. It is split the way
// database/sql is split from its drivers: this package owns the transaction,
// the order of statements, chunking to the server's limits, progress and
// error classification; a Dialect (packages target/mysql, target/postgres,
// target/sqlite) only knows its server's SQL and catalog.
//
// Guarantees of Apply, for every dialect:
//
//   - One unit is one database transaction: all Deletes of all tables first,
//     then all Upserts and Inserts, then the progress rows, then COMMIT. A
//     reader sees all of it or none of it.
//   - Progress rows live in the target (table txsink_progress), written in
//     that same transaction, so the target's own state is the checkpoint:
//     Progress tells exactly what has been applied.
//   - An error says whether retrying can help: IsTransient reports deadlocks,
//     lock-wait timeouts, serialization failures and lost connections. After
//     any error the transaction was rolled back (or never committed), so the
//     unit may be applied again from the start.
package target

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// ProgressTable is the name of the table that holds each pipeline's
// positions in the target.
const ProgressTable = "txsink_progress"

// Dialect is what a SQL server contributes: quoting, statement text, limits,
// catalog reading and error classification. Implementations are stateless
// and safe for concurrent use; statement builders are pure functions.
type Dialect interface {
	// Name returns the dialect's name ("mysql", "mariadb", "postgres", "sqlite").
	Name() string
	// Quote quotes one identifier, doubling any quote character inside it.
	Quote(ident string) string
	// WritePlaceholder writes the n-th (1-based) bind placeholder. It
	// writes into the statement rather than returning a string: a
	// 1000-row statement has thousands of them.
	WritePlaceholder(b *strings.Builder, n int)
	// MaxParams is the most bind parameters one statement may carry.
	MaxParams() int
	// MaxStatementBytes bounds the bytes of values one statement may carry
	// (the server's packet limit, with head room).
	MaxStatementBytes() int
	// Upsert writes a statement that inserts rows rows of cols into t,
	// overwriting the rows whose primary key already exists.
	Upsert(b *strings.Builder, t *schema.Table, cols []string, rows int)
	// Insert writes a plain multi-row INSERT.
	Insert(b *strings.Builder, t *schema.Table, cols []string, rows int)
	// Delete writes a statement that deletes rows keys of t's primary key.
	Delete(b *strings.Builder, t *schema.Table, rows int)
	// ProgressSchema returns the statements that create the progress table
	// if it does not exist.
	ProgressSchema() []string
	// ProgressUpsert writes a statement storing rows progress rows, each
	// bound as (pipeline, partition, position, seq).
	ProgressUpsert(b *strings.Builder, rows int)
	// Describe reads table name ("t" or "ns.t") from the catalog.
	Describe(ctx context.Context, q Querier, name string) (*schema.Table, error)
	// Bind turns a converted value (package coerce) into what the driver
	// takes for col.
	Bind(col *schema.Column, v any) any
	// Transient reports whether err is worth retrying: the transaction was
	// lost or refused as a whole, and nothing of it was committed.
	Transient(err error) bool
}

// Querier is what Describe needs: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Error is a failure of the target. Transient says whether retrying the
// whole unit may succeed.
type Error struct {
	// Op is what was being done ("apply", "describe", "read progress", ...).
	Op string
	// Table is the table the failing statement wrote, when one did.
	Table string
	// Key is the key of the first row of the failing statement, rendered.
	Key       string
	Transient bool
	Err       error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Table != "" {
		b.WriteString(" ")
		b.WriteString(e.Table)
	}
	if e.Key != "" {
		b.WriteString(" (from key ")
		b.WriteString(e.Key)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Transient {
		b.WriteString(" (transient: txsink retries)")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err, or an error it wraps, is a transient
// target error: retrying the unit may succeed.
func IsTransient(err error) bool {
	var te *Error
	return errors.As(err, &te) && te.Transient
}

// DB is a Target over a database/sql handle and a Dialect.
type DB struct {
	db      *sql.DB
	dialect Dialect
	// beforeCommit, when set, runs inside the transaction after every
	// statement of a unit and before COMMIT; an error aborts the unit.
	beforeCommit func(*commit.Unit) error
}

// SetBeforeCommit installs f to run inside each unit's transaction, after
// all its statements and before COMMIT; an error from f rolls the unit back
// as a failed COMMIT would. Tests use it to stop a pipeline inside a commit.
// Not safe to call while units are applied.
func (t *DB) SetBeforeCommit(f func(*commit.Unit) error) { t.beforeCommit = f }

// New returns a target that applies units to db in dialect d.
func New(db *sql.DB, d Dialect) *DB { return &DB{db: db, dialect: d} }

// DB returns the underlying handle (for tests and tools).
func (t *DB) DB() *sql.DB { return t.db }

// Dialect returns the target's dialect.
func (t *DB) Dialect() Dialect { return t.dialect }

// Close closes the database handle.
func (t *DB) Close() error { return t.db.Close() }

func (t *DB) wrap(op, table, key string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Table: table, Key: key, Transient: t.dialect.Transient(err), Err: err}
}

// Describe reads a table's schema from the catalog.
func (t *DB) Describe(ctx context.Context, name string) (*schema.Table, error) {
	tbl, err := t.dialect.Describe(ctx, t.db, name)
	if err != nil {
		return nil, t.wrap("describe", name, "", err)
	}
	return tbl, nil
}

// Setup creates the progress table if it does not exist.
func (t *DB) Setup(ctx context.Context) error {
	for _, s := range t.dialect.ProgressSchema() {
		if _, err := t.db.ExecContext(ctx, s); err != nil {
			return t.wrap("create progress table", ProgressTable, "", err)
		}
	}
	return nil
}

// Progress returns the positions stored for pipeline, by partition. A
// pipeline that never committed has none.
func (t *DB) Progress(ctx context.Context, pipeline string) (map[string]changelog.Position, error) {
	d := t.dialect
	q := "SELECT " + d.Quote("source_partition") + ", " + d.Quote("position") + ", " + d.Quote("seq") +
		" FROM " + d.Quote(ProgressTable) + " WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1)
	rows, err := t.db.QueryContext(ctx, q, pipeline)
	if err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	defer rows.Close()
	out := map[string]changelog.Position{}
	for rows.Next() {
		var p changelog.Position
		if err := rows.Scan(&p.Partition, &p.Offset, &p.Seq); err != nil {
			return nil, t.wrap("read progress", ProgressTable, "", err)
		}
		out[p.Partition] = p
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	return out, nil
}

// Apply applies u in one transaction (see the package doc for the order).
// On any error the transaction is rolled back; the error is an *Error.
func (t *DB) Apply(ctx context.Context, u *commit.Unit) (err error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return t.wrap("begin", "", "", err)
	}
	defer func() {
		if err != nil {
			// The rollback error is not interesting next to err: the
			// transaction is gone either way.
			_ = tx.Rollback()
		}
	}()
	var sb strings.Builder
	var args []any
	for _, b := range u.Batches {
		if err := t.deletes(ctx, tx, &sb, &args, b); err != nil {
			return err
		}
	}
	for _, b := range u.Batches {
		for _, g := range b.Upserts {
			if err := t.rows(ctx, tx, &sb, &args, b.Table, g, t.dialect.Upsert); err != nil {
				return err
			}
		}
		for _, g := range b.Inserts {
			if err := t.rows(ctx, tx, &sb, &args, b.Table, g, t.dialect.Insert); err != nil {
				return err
			}
		}
	}
	if len(u.Progress) > 0 {
		sb.Reset()
		args = args[:0]
		t.dialect.ProgressUpsert(&sb, len(u.Progress))
		for _, p := range u.Progress {
			args = append(args, u.Pipeline, p.Partition, p.Offset, p.Seq)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return t.wrap("write progress", ProgressTable, "", err)
		}
	}
	if t.beforeCommit != nil {
		if err := t.beforeCommit(u); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return t.wrap("commit", "", "", err)
	}
	return nil
}

// chunkRows returns how many rows of width params fit one statement.
func (t *DB) chunkRows(width, rowBytes int) int {
	n := t.dialect.MaxParams() / max(width, 1)
	if rowBytes > 0 {
		n = min(n, max(1, t.dialect.MaxStatementBytes()/rowBytes))
	}
	return max(n, 1)
}

func (t *DB) deletes(ctx context.Context, tx *sql.Tx, sb *strings.Builder, args *[]any, b *commit.Batch) error {
	if len(b.Deletes) == 0 {
		return nil
	}
	keyCols := make([]*schema.Column, len(b.Table.PrimaryKey))
	for i, k := range b.Table.PrimaryKey {
		keyCols[i], _ = b.Table.Column(k)
	}
	per := t.chunkRows(len(keyCols), approxBytes(b.Deletes[0]))
	for start := 0; start < len(b.Deletes); start += per {
		end := min(start+per, len(b.Deletes))
		sb.Reset()
		*args = (*args)[:0]
		t.dialect.Delete(sb, b.Table, end-start)
		for _, key := range b.Deletes[start:end] {
			for i, v := range key {
				*args = append(*args, t.dialect.Bind(keyCols[i], v))
			}
		}
		if _, err := tx.ExecContext(ctx, sb.String(), *args...); err != nil {
			return t.wrap("delete from", b.Table.String(), renderKey(b.Deletes[start]), err)
		}
	}
	return nil
}

type builder func(b *strings.Builder, t *schema.Table, cols []string, rows int)

func (t *DB) rows(ctx context.Context, tx *sql.Tx, sb *strings.Builder, args *[]any, tbl *schema.Table, g commit.Group, build builder) error {
	cols := make([]*schema.Column, len(g.Columns))
	for i, c := range g.Columns {
		cols[i], _ = tbl.Column(c)
	}
	per := t.chunkRows(len(cols), approxBytes(g.Rows[0]))
	for start := 0; start < len(g.Rows); start += per {
		end := min(start+per, len(g.Rows))
		sb.Reset()
		*args = (*args)[:0]
		build(sb, tbl, g.Columns, end-start)
		for _, row := range g.Rows[start:end] {
			for i, v := range row {
				*args = append(*args, t.dialect.Bind(cols[i], v))
			}
		}
		if _, err := tx.ExecContext(ctx, sb.String(), *args...); err != nil {
			return t.wrap("write", tbl.String(), firstKey(tbl, g.Columns, g.Rows[start]), err)
		}
	}
	return nil
}

// approxBytes estimates the bytes a row's values take on the wire, with
// slack for long values; chunking uses it to stay under packet limits.
func approxBytes(row []any) int {
	n := 0
	for _, v := range row {
		switch x := v.(type) {
		case string:
			n += len(x) * 2
		case []byte:
			n += len(x) * 2
		default:
			n += 24
		}
		n += 4
	}
	return n * 2
}

func firstKey(t *schema.Table, cols []string, row []any) string {
	if len(t.PrimaryKey) == 0 {
		return ""
	}
	vals := make([]any, 0, len(t.PrimaryKey))
	for _, k := range t.PrimaryKey {
		for i, c := range cols {
			if strings.EqualFold(c, k) {
				vals = append(vals, row[i])
			}
		}
	}
	return renderKey(vals)
}

func renderKey(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			parts[i] = fmt.Sprintf("%q", x)
		case []byte:
			parts[i] = fmt.Sprintf("%x", x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// WriteList writes n comma-separated copies of a parenthesized tuple of
// width placeholders, numbering from *next; dialects share it.
func WriteList(b *strings.Builder, d Dialect, rows, width int, next *int) {
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := 0; c < width; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			*next++
			d.WritePlaceholder(b, *next)
		}
		b.WriteByte(')')
	}
}

// QuotedTable returns the table's name quoted in d, with its namespace when
// it has one.
func QuotedTable(d Dialect, t *schema.Table) string {
	if t.Namespace == "" {
		return d.Quote(t.Name)
	}
	return d.Quote(t.Namespace) + "." + d.Quote(t.Name)
}

// QuoteList writes the quoted names separated by commas.
func QuoteList(b *strings.Builder, d Dialect, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.Quote(n))
	}
}

// WriteKeyIn writes the WHERE clause of a multi-key delete:
// "k IN (?,?)" for one key column, "(a,b) IN ((?,?),(?,?))" for several.
func WriteKeyIn(b *strings.Builder, d Dialect, key []string, rows int) {
	next := 0
	if len(key) == 1 {
		b.WriteString(d.Quote(key[0]))
		b.WriteString(" IN (")
		for r := 0; r < rows; r++ {
			if r > 0 {
				b.WriteByte(',')
			}
			next++
			d.WritePlaceholder(b, next)
		}
		b.WriteByte(')')
		return
	}
	b.WriteByte('(')
	QuoteList(b, d, key)
	b.WriteString(") IN (")
	WriteList(b, d, rows, len(key), &next)
	b.WriteByte(')')
}

// WriteInsert writes INSERT INTO t (cols) VALUES (...),(...) with rows
// tuples of placeholders.
func WriteInsert(b *strings.Builder, d Dialect, t *schema.Table, cols []string, rows int) {
	b.WriteString("INSERT INTO ")
	b.WriteString(QuotedTable(d, t))
	b.WriteString(" (")
	QuoteList(b, d, cols)
	b.WriteString(") VALUES ")
	next := 0
	WriteList(b, d, rows, len(cols), &next)
}

// WriteOnConflict writes the upsert tail shared by PostgreSQL and SQLite:
// ON CONFLICT (key) DO UPDATE SET c=excluded.c for every non-key column, or
// DO NOTHING when every column is a key column (the row then equals the
// image already). excluded is how the dialect spells the proposed row.
func WriteOnConflict(b *strings.Builder, d Dialect, t *schema.Table, cols []string, excluded string) {
	b.WriteString(" ON CONFLICT (")
	QuoteList(b, d, t.PrimaryKey)
	b.WriteString(") DO ")
	n := 0
	for _, c := range cols {
		if IsKey(t, c) {
			continue
		}
		if n == 0 {
			b.WriteString("UPDATE SET ")
		} else {
			b.WriteByte(',')
		}
		n++
		q := d.Quote(c)
		b.WriteString(q)
		b.WriteByte('=')
		b.WriteString(excluded)
		b.WriteByte('.')
		b.WriteString(q)
	}
	if n == 0 {
		b.WriteString("NOTHING")
	}
}

// IsKey reports whether column c is one of t's primary-key columns.
func IsKey(t *schema.Table, c string) bool {
	for _, k := range t.PrimaryKey {
		if strings.EqualFold(k, c) {
			return true
		}
	}
	return false
}

// SplitName splits "ns.table" into its parts; ns is "" without a dot.
func SplitName(name string) (ns, table string) {
	ns, table, ok := strings.Cut(name, ".")
	if !ok {
		return "", ns
	}
	return ns, table
}

func placeholder(d Dialect, n int) string {
	var b strings.Builder
	d.WritePlaceholder(&b, n)
	return b.String()
}
