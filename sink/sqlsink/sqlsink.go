// Package sqlsink is the sink.Sink of SQL databases: it applies commit units
// to a SQL database, with every optional capability of package sink. It is
// split the way
// database/sql is split from its drivers: this package owns the transaction,
// the order of statements, chunking to the server's limits, progress and
// error classification; a Dialect (packages sqlsink/mysql, sqlsink/postgres,
// sqlsink/sqlite) only knows its server's SQL and catalog.
//
// Guarantees of Apply, for every dialect:
//
//   - One unit is one database transaction: the progress rows, then all
//     Deletes of all tables, then all Upserts and Inserts — except where
//     the foreign keys among the unit's tables, read from the catalog,
//     order them otherwise so that every constraint holds at every
//     statement (see fkorder.go) — then COMMIT. A reader sees all of it or
//     none of it.
//   - Rows of a unit that exchange the values of a secondary unique key
//     apply: the values they take are freed from the unit's rows holding
//     them first, and a row outside the unit holding one fails the unit
//     (see unique.go); MySQL's ON DUPLICATE KEY UPDATE never updates a
//     row the unit did not mean.
//   - Progress rows live in the target (table txsink_progress), written in
//     that same transaction, so the target's own state is the checkpoint:
//     Progress tells exactly what has been applied.
//   - An error (a *sink.Error) says whether retrying can help: its
//     errkind.Kind is Transient for deadlocks, lock-wait timeouts,
//     serialization failures and lost connections. After
//     any error the transaction was rolled back (or never committed), so the
//     unit may be applied again from the start.
package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// ProgressTable is the name of the table that holds each pipeline's
// positions in the target. Changes never write it: see schema.Reserved.
const ProgressTable = schema.ProgressTable

// DeadLetterTable is the name of the table that holds quarantined source
// transactions under the dead-letter policy. Changes never write it.
const DeadLetterTable = schema.DeadLetterTable

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
	// DeadLetterSchema returns the statements that create the dead-letter
	// table if it does not exist.
	DeadLetterSchema() []string
	// ProgressClaim writes the statement that claims one partition for a
	// new owner, bound as (pipeline, partition): it inserts the row at
	// epoch 1 (position 0), or adds one to an existing row's epoch.
	ProgressClaim(b *strings.Builder)
	// ProgressAdvance writes the statement that moves one partition's
	// position, bound as (position, seq, mark, pipeline, partition, epoch),
	// mark being the position's fingerprint or NULL (column position_mark). It
	// matches no row once another owner has claimed the partition; it must
	// report matched rows, not changed rows.
	ProgressAdvance(b *strings.Builder)
	// Describe reads table name from the catalog; a name without a
	// namespace is looked up in the connection's own. It takes name's
	// parts as they are and splits neither at a dot.
	Describe(ctx context.Context, q Querier, name schema.Name) (*schema.Table, error)
	// Bind turns a converted value (package coerce) into what the driver
	// takes for col.
	Bind(col *schema.Column, v any) any
	// Transient reports whether err is worth retrying: the transaction was
	// lost or refused as a whole, and nothing of it was committed.
	Transient(err error) bool
	// ServerCondition reports whether err is the server's own state —
	// disk or memory exhausted, an I/O error, a read-only server, missing
	// privileges — which no row of the statement caused: txsink does not
	// look for a row at fault and does not blame one.
	ServerCondition(err error) bool
	// RowFault reports whether err, the server's answer to a statement
	// of one row, refuses that row for its own values: a value its column
	// cannot hold (text the encoding refuses, out of range, too long), a
	// CHECK constraint, a NOT NULL column the row leaves without a value.
	// Such a refusal depends on no other row and on no state of the
	// server, so the change that made the row is bad input. Foreign keys
	// and unique keys depend on other rows and are not row faults.
	RowFault(err error) bool
}

// Querier is what Describe needs: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier = sink.Querier

// DB is a sink.Sink over a database/sql handle and a Dialect.
type DB struct {
	db      *sql.DB
	dialect Dialect
	// epochs holds the epoch this instance claimed, per pipeline and
	// partition (claimKey). Only the goroutine applying units uses it.
	epochs map[string]int64
	// widened are the columns widened without DDL on a DeclaredTypes
	// target (see Widen), described wider for the rest of the run.
	widened widened
	// lockMu guards locks and held: the session holding the partitions'
	// locks (see Hold), opened at the first Hold, and the keys it holds.
	lockMu sync.Mutex
	locks  Locks
	held   map[string]bool
	// plannedMu guards planned: the tables PlanColumns described, by
	// plannedKey (see expectedVersion). The applying goroutine writes
	// it; ShapeChanged reads it from the engine's.
	plannedMu sync.Mutex
	planned   map[string]plannedShape
}

// New returns a target that applies units to db in dialect d.
func New(db *sql.DB, d Dialect) *DB { return &DB{db: db, dialect: d, epochs: map[string]int64{}} }

// DB returns the underlying handle (for tests and tools).
func (t *DB) DB() *sql.DB { return t.db }

// Dialect returns the target's dialect.
func (t *DB) Dialect() Dialect { return t.dialect }

// DB is a sink with every capability.
var (
	_ sink.Sink           = (*DB)(nil)
	_ sink.Locker         = (*DB)(nil)
	_ sink.DeadLetterer   = (*DB)(nil)
	_ sink.ShapeChecker   = (*DB)(nil)
	_ sink.ProgressKeeper = (*DB)(nil)
	_ sink.Catalog        = (*DB)(nil)
)

// DialectName returns the dialect's name (sink.Catalog).
func (t *DB) DialectName() string { return t.dialect.Name() }

// Quote quotes one identifier in the dialect (sink.Catalog).
func (t *DB) Quote(ident string) string { return t.dialect.Quote(ident) }

// DescribeOn reads table name from the catalog through q, one connection
// of the caller's (sink.Catalog), without the shape's version: a reader
// that writes nothing needs none.
func (t *DB) DescribeOn(ctx context.Context, q Querier, name schema.Name) (*schema.Table, error) {
	tbl, err := t.dialect.Describe(ctx, q, name)
	if err != nil {
		return nil, err
	}
	if err := t.readKeys(ctx, q, tbl); err != nil {
		return nil, err
	}
	t.widened.apply(tbl)
	return tbl, nil
}

// Close gives up the partitions' locks and closes the database handle.
func (t *DB) Close() error { return errors.Join(t.closeLocks(), t.db.Close()) }

func (t *DB) wrap(op, table, key string, err error) error {
	if err == nil {
		return nil
	}
	return &sink.Error{Op: op, Table: table, Key: key, Transient: t.dialect.Transient(err), Err: err}
}

// Describe reads a table's schema from the catalog (see
// Dialect.Describe), with its shape's version when the dialect is a
// Versioner. The version is read first: an ALTER between the two readings
// leaves a version older than the shape, which the next check takes for a
// change (a needless re-description, never a missed one).
func (t *DB) Describe(ctx context.Context, name schema.Name) (*schema.Table, error) {
	v, versioned := t.dialect.(Versioner)
	var version string
	var verr error
	if versioned {
		version, verr = v.ShapeVersion(ctx, t.db, name)
	}
	tbl, err := t.dialect.Describe(ctx, t.db, name)
	if err != nil {
		// A missing table fails both; Describe says it better.
		return nil, t.wrap("describe", name.String(), "", err)
	}
	if err := t.readKeys(ctx, t.db, tbl); err != nil {
		return nil, t.wrap("describe", name.String(), "", err)
	}
	if verr != nil {
		if version, verr = v.ShapeVersion(ctx, t.db, name); verr != nil {
			return nil, t.wrap("describe", name.String(), "", verr)
		}
	}
	tbl.Version = version
	t.widened.apply(tbl)
	return tbl, nil
}

// Setup creates the progress table if it does not exist, and adds the
// position_mark column to one an older txsink created.
func (t *DB) Setup(ctx context.Context) error {
	if err := t.createIfMissing(ctx, t.dialect.ProgressSchema(), "create progress table", ProgressTable); err != nil {
		return err
	}
	return t.addMarkColumn(ctx)
}

// createIfMissing runs CREATE ... IF NOT EXISTS statements. Instances of a
// pipeline that start together (a consumer group) race to create the same
// table, and PostgreSQL's IF NOT EXISTS is not atomic against that: the
// loser fails on the catalog's unique index. Run again, the statement
// sees the winner's table and does nothing.
func (t *DB) createIfMissing(ctx context.Context, stmts []string, op, table string) error {
	for _, s := range stmts {
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			if _, err = t.db.ExecContext(ctx, s); err == nil {
				break
			}
		}
		if err != nil {
			return t.wrap(op, table, "", err)
		}
	}
	return nil
}

// Apply applies u in one transaction (see the package doc for the order).
// On any error the transaction is rolled back; the error is an *sink.Error.
//
// When the server refuses a multi-row statement for good (a value, a
// constraint), Apply finds the row at fault: after the rollback it replays
// that statement's rows one at a time in a transaction it always rolls
// back, and names the row's key and source position in the error.
//
// An error of the server's own state (Dialect.ServerCondition: a full
// disk, no memory, a read-only server) names no row: no row caused it.
//
// A refused statement of a table altered since it was described is
// sink.ErrShapeChanged, not the row's fault (see staleRefusal).
func (t *DB) Apply(ctx context.Context, u *commit.Unit) error {
	failed, err := t.apply(ctx, u)
	if err == nil {
		return nil
	}
	if t.dialect.Transient(err) {
		// A lost session or a deadlock is no row's doing: name none.
		var te *sink.Error
		if errors.As(err, &te) {
			te.Key, te.Pos = "", ""
		}
		return err
	}
	if t.dialect.ServerCondition(err) {
		return t.serverCondition(err)
	}
	if failed != nil {
		if serr := t.staleRefusal(ctx, u, err); serr != nil {
			return serr
		}
		return t.diagnose(ctx, failed, err)
	}
	return err
}

// serverCondition turns err, which the server's own state caused, into an
// error that blames no row.
func (t *DB) serverCondition(err error) error {
	e := &sink.Error{Op: "apply", Err: err}
	var te *sink.Error
	if errors.As(err, &te) {
		e.Op, e.Table, e.Err = te.Op, te.Table, te.Err
	}
	e.Hint = "the server refused the statement for a reason of its own, not for a row's values (disk or memory full, read-only, privileges); fix the server's condition, then run again (nothing of this flush was committed)"
	return e
}

// work is one kind of statement over a list of tuples: the keys to delete
// from a table, or the rows to write to it.
type work struct {
	op     string // "delete from", "write"
	table  *schema.Table
	cols   []*schema.Column
	tuples [][]any
	pos    []changelog.Position
	keyIdx []int // where the key columns sit in a tuple
	build  func(b *strings.Builder, rows int)
	kind   int // kindUpsert, kindInsert, kindDelete: which array statement fits (see ArrayDialect)
	// affected, when set, sums the rows the statements affected (the
	// guarded upserts' count of what they wrote); ver is their version
	// column.
	affected *int64
	ver      string
}

// failure is the chunk of a work whose statement failed, and the works
// the unit ran in full before it.
type failure struct {
	w          *work
	start, end int
	before     []*work
}

func (t *DB) apply(ctx context.Context, u *commit.Unit) (failed *failure, err error) {
	var unclaimed []string
	for _, p := range u.Progress {
		if _, ok := t.epochs[claimKey(u.Pipeline, p.Partition)]; !ok {
			unclaimed = append(unclaimed, p.Partition)
		}
	}
	if len(unclaimed) > 0 {
		// A library caller that feeds partitions it never claimed owns
		// them from its first commit on.
		if _, err := t.Claim(ctx, u.Pipeline, unclaimed); err != nil {
			return nil, err
		}
	}
	// The unit runs on a connection of its own, so that a Loader can reach
	// the driver's bulk path on the transaction's connection.
	conn, err := t.db.Conn(ctx)
	if err != nil {
		return nil, t.wrap("begin", "", "", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, t.wrap("begin", "", "", err)
	}
	defer func() {
		if err != nil {
			// The rollback error is not interesting next to err: the
			// transaction is gone either way.
			_ = tx.Rollback()
		}
	}()
	defer func() {
		// A panic ends the transaction too, before conn.Close: an open
		// transaction holds its connection, and Close would wait for it
		// for ever, so the process would hang instead of crashing.
		if r := recover(); r != nil {
			_ = tx.Rollback()
			panic(r)
		}
	}()
	var sb strings.Builder
	var args []any
	// done lists the works run in full, for the diagnosis of one that
	// fails (see diagnose).
	var done []*work
	exec := func(conn *sql.Conn, w *work) (*failure, error) {
		f, err := t.exec(ctx, conn, tx, &sb, &args, w)
		if f != nil {
			f.before = done
		}
		if err == nil {
			done = append(done, w)
		}
		return f, err
	}
	// Progress first: the fenced update takes the progress rows' locks, so
	// a second owner's commit waits here and then finds itself fenced,
	// before it has written anything.
	if err := t.advance(ctx, tx, u); err != nil {
		return nil, err
	}
	if err := t.deadLetters(ctx, tx, u); err != nil {
		return nil, err
	}
	// Columns the source added, where DDL is transactional: before the
	// rows that need them, committed with them.
	planned, err := t.addUnitColumns(ctx, tx, u)
	if err != nil {
		return nil, err
	}
	u.Refused = 0
	refused := 0
	counter, counts := t.dialect.(RefusalCounter)
	counts = counts && guardedRows(u)
	if counts {
		if err := counter.ResetRefused(ctx, tx); err != nil {
			return nil, t.wrap("begin", "", "", err)
		}
	}
	// Deletes and writes in the order foreign keys give them (fkorder.go),
	// guarded ones counting what their guard refused.
	if f, err := t.applyRows(ctx, conn, tx, u, exec, counts, &refused); err != nil {
		return f, err
	}
	if err := t.checkShapes(ctx, tx, u, planned); err != nil {
		return nil, err
	}
	if counts {
		n, err := counter.ReadRefused(ctx, tx)
		if err != nil {
			return nil, t.wrap("count the rows the version guard refused", "", "", err)
		}
		refused += n
	}
	// Faults a test injects (package fault); none in production.
	faults := fault.From(ctx)
	if faults != nil && faults.BeforeCommit != nil {
		if err := faults.BeforeCommit(u); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, t.wrap("commit", "", "", err)
	}
	t.notePlanned(planned)
	u.Refused = refused
	if faults != nil && faults.AfterCommit != nil {
		if err := faults.AfterCommit(u); err != nil {
			return nil, &sink.Error{Op: "commit", Transient: true, Err: err}
		}
	}
	return nil, nil
}

func (t *DB) deleteWork(b *commit.Batch) *work {
	w := &work{op: "delete from", table: b.Table, tuples: b.Deletes, pos: b.DeletePos, kind: kindDelete}
	for i, k := range b.Table.PrimaryKey {
		c, _ := b.Table.Column(k)
		w.cols = append(w.cols, c)
		w.keyIdx = append(w.keyIdx, i)
	}
	w.build = func(sb *strings.Builder, rows int) { t.dialect.Delete(sb, b.Table, rows) }
	return w
}

type builder func(b *strings.Builder, t *schema.Table, cols []string, rows int)

func (t *DB) rowWork(tbl *schema.Table, g commit.Group, build builder) *work {
	w := &work{op: "write", table: tbl, tuples: g.Rows, pos: g.Pos}
	for _, name := range g.Columns {
		c, _ := tbl.Column(name)
		w.cols = append(w.cols, c)
	}
	for _, k := range tbl.PrimaryKey {
		for i, name := range g.Columns {
			if strings.EqualFold(name, k) {
				w.keyIdx = append(w.keyIdx, i)
			}
		}
	}
	w.build = func(sb *strings.Builder, rows int) { build(sb, tbl, g.Columns, rows) }
	_, arrays := t.dialect.(ArrayDialect)
	_, loads := t.dialect.(Loader)
	if (arrays || loads) && len(g.Rows) >= minArrayRows {
		w.kind = t.rowKind(tbl, g.Columns, build)
	}
	return w
}

// exec runs w: through the dialect's bulk-load path when it takes w (see
// Loader), else in statements chunked to the server's limits: array
// statements when the dialect has them for w (see ArrayDialect), else
// multi-row statements. conn is tx's connection (nil: no bulk load).
func (t *DB) exec(ctx context.Context, conn *sql.Conn, tx *sql.Tx, sb *strings.Builder, args *[]any, w *work) (*failure, error) {
	if done, f, err := t.execLoad(ctx, conn, tx, w); done {
		return f, err
	}
	if done, f, err := t.execArrays(ctx, tx, sb, args, w); done {
		return f, err
	}
	if err := t.checkPacket(w); err != nil {
		return nil, err
	}
	// Chunks are cut by each row's own size, not the first row's: one
	// long row among short ones would carry its statement past the
	// server's packet limit, which MySQL answers by dropping the
	// connection.
	perRows := t.chunkRows(len(w.cols), 0)
	limit := t.dialect.MaxStatementBytes()
	for start := 0; start < len(w.tuples); {
		end, bytes := start, 0
		for end < len(w.tuples) && end-start < perRows {
			n := approxBytes(w.tuples[end])
			if end > start && bytes+n > limit {
				break
			}
			bytes += n
			end++
		}
		if err := t.execChunk(ctx, tx, sb, args, w, start, end); err != nil {
			return &failure{w: w, start: start, end: end}, t.wrap(w.op, w.table.String(), w.key(start), err)
		}
		start = end
	}
	return nil, nil
}

// PacketLimiter is a Dialect whose server refuses any statement over a
// packet size (MySQL/MariaDB's max_allowed_packet) by dropping the
// connection, which looks like a lost connection.
type PacketLimiter interface {
	// PacketLimit is the server's largest packet in bytes, 0 when unknown.
	PacketLimit() int
}

// checkPacket refuses a row of w that cannot fit the server's packet
// limit in a statement of its own: sent, it would drop the connection and
// be retried as if the server had gone away, forever.
func (t *DB) checkPacket(w *work) error {
	pl, ok := t.dialect.(PacketLimiter)
	if !ok || pl.PacketLimit() <= 0 {
		return nil
	}
	limit := pl.PacketLimit()
	for i, row := range w.tuples {
		n := valueBytes(row)
		if n+statementOverhead(w) <= limit {
			continue
		}
		need := n + statementOverhead(w)
		e := &sink.Error{Op: w.op, Table: w.table.String(), Key: w.key(i),
			Err: fmt.Errorf("the row's values take %d bytes, and a statement of it more than the server's max_allowed_packet of %d bytes", n, limit),
			Hint: fmt.Sprintf("raise max_allowed_packet on the server to at least %d (SET GLOBAL max_allowed_packet = %d, and in its configuration), then run again (nothing of this flush was committed)",
				roundUpKiB(2*need), roundUpKiB(2*need))}
		if i < len(w.pos) {
			e.Pos = w.pos[i].String()
		}
		return e
	}
	return nil
}

// valueBytes counts the bytes of a row's values as they go on the wire,
// escaping aside.
func valueBytes(row []any) int {
	n := 0
	for _, v := range row {
		switch x := v.(type) {
		case string:
			n += len(x)
		case []byte:
			n += len(x)
		default:
			n += 8
		}
	}
	return n
}

// statementOverhead is the statement text around one row of w: names,
// placeholders and the upsert clause, with room for the protocol.
func statementOverhead(w *work) int {
	n := 256 + len(w.table.String())
	for _, c := range w.cols {
		n += 2*len(c.Name) + 32
	}
	return n
}

// roundUpKiB rounds n up to a whole KiB, as max_allowed_packet is kept.
func roundUpKiB(n int) int { return (n + 1023) / 1024 * 1024 }

func (t *DB) execChunk(ctx context.Context, tx *sql.Tx, sb *strings.Builder, args *[]any, w *work, start, end int) error {
	sb.Reset()
	*args = (*args)[:0]
	w.build(sb, end-start)
	for _, tuple := range w.tuples[start:end] {
		for i, v := range tuple {
			*args = append(*args, t.dialect.Bind(w.cols[i], v))
		}
	}
	res, err := tx.ExecContext(ctx, sb.String(), *args...)
	if err == nil && w.affected != nil {
		n, rerr := res.RowsAffected()
		if rerr != nil {
			return rerr
		}
		*w.affected += n
	}
	return err
}

// key renders the key of tuple i.
func (w *work) key(i int) string {
	vals := make([]any, len(w.keyIdx))
	for j, k := range w.keyIdx {
		vals[j] = w.tuples[i][k]
	}
	return renderKey(vals)
}

// diagnose replays the rows of a failed chunk one at a time, in a
// transaction it rolls back, to name the row the server refuses. It
// returns the original error, sharpened when one row fails alone.
//
// The unit's writes before the chunk are replayed first, so each row
// meets the state the failed statement met: a row whose foreign key's
// parent the unit wrote before it, or whose unique value a row the unit
// deleted held, is not blamed for another's refusal.
func (t *DB) diagnose(ctx context.Context, f *failure, orig error) error {
	if f.end-f.start == 1 {
		return t.refused(f.w, f.start, orig)
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return orig
	}
	defer tx.Rollback()
	var sb strings.Builder
	var args []any
	before := f.before
	if f.start > 0 {
		head := *f.w
		head.tuples = f.w.tuples[:f.start]
		head.pos = f.w.pos[:min(f.start, len(f.w.pos))]
		before = append(before[:len(before):len(before)], &head)
	}
	for _, w := range before {
		if _, err := t.exec(ctx, nil, tx, &sb, &args, w); err != nil {
			return orig
		}
	}
	for i := f.start; i < f.end; i++ {
		if err := t.execChunk(ctx, tx, &sb, &args, f.w, i, i+1); err != nil {
			if t.dialect.Transient(err) || t.dialect.ServerCondition(err) {
				return orig
			}
			return t.refused(f.w, i, &sink.Error{Op: f.w.op, Table: f.w.table.String(), Err: err})
		}
	}
	return orig
}

// refused builds the error for row i of w, which the server refused.
func (t *DB) refused(w *work, i int, err error) error {
	var te *sink.Error
	cause := err
	if errors.As(err, &te) {
		cause = te.Err
	}
	e := &sink.Error{Op: w.op, Table: w.table.String(), Key: w.key(i), Err: cause,
		Hint: "the target refused this row; fix the value at the source or the target table's definition, then run again (nothing of this flush was committed)"}
	if i < len(w.pos) {
		e.Pos, e.At = w.pos[i].String(), w.pos[i]
		e.Refused = t.dialect.RowFault(cause)
	}
	return e
}

// chunkRows returns how many rows of width params fit one statement.
func (t *DB) chunkRows(width, rowBytes int) int {
	n := t.dialect.MaxParams() / max(width, 1)
	if rowBytes > 0 {
		n = min(n, max(1, t.dialect.MaxStatementBytes()/rowBytes))
	}
	return max(n, 1)
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

// requireRows checks that every row of w, a group of partial update
// images, is in the target, inside the unit's transaction before they are
// written: an upsert would insert a missing one with the columns its image
// lacks left NULL or defaulted, which is not what the source holds.
func (t *DB) requireRows(ctx context.Context, tx *sql.Tx, w *work) error {
	d := t.dialect
	keyCols := make([]*schema.Column, len(w.keyIdx))
	for i, j := range w.keyIdx {
		keyCols[i] = w.cols[j]
	}
	count := func(start, end int) (int, error) {
		var sb strings.Builder
		sb.WriteString("SELECT COUNT(*) FROM " + QuotedTable(d, w.table) + " WHERE ")
		WriteKeyIn(&sb, d, w.table.PrimaryKey, end-start)
		args := make([]any, 0, (end-start)*len(keyCols))
		for _, row := range w.tuples[start:end] {
			for i, j := range w.keyIdx {
				args = append(args, d.Bind(keyCols[i], row[j]))
			}
		}
		var n int
		err := tx.QueryRowContext(ctx, sb.String(), args...).Scan(&n)
		return n, err
	}
	per := t.chunkRows(len(keyCols), 64)
	for start := 0; start < len(w.tuples); start += per {
		end := min(start+per, len(w.tuples))
		n, err := count(start, end)
		if err != nil {
			return t.wrap("read the rows partial updates change in", w.table.String(), w.key(start), err)
		}
		if n == end-start {
			continue
		}
		// Rows of a group have distinct keys: one is missing. Find it.
		for i := start; i < end; i++ {
			n, err := count(i, i+1)
			if err != nil {
				return t.wrap("read the rows partial updates change in", w.table.String(), w.key(i), err)
			}
			if n == 0 {
				e := &sink.Error{Op: "update", Table: w.table.String(), Key: w.key(i), Err: sink.ErrMissingRow,
					Hint: "the source sent an update whose image lacks columns (a compressed or minimal row image, or Debezium's unavailable-value placeholder) for a row the target does not have, so those columns have no value; load the row first (a snapshot), or capture full row images; nothing of this commit was written"}
				if i < len(w.pos) {
					// Bad input of that one change: the dead-letter
					// policy quarantines it.
					e.Pos, e.At, e.Refused = w.pos[i].String(), w.pos[i], true
				}
				return e
			}
		}
	}
	return nil
}

// URLDriver is the sink.Driver of a dialect whose open takes the URL as it
// is and opens read-only as it opens for writing (mysql, postgres).
type URLDriver func(ctx context.Context, url string) (*DB, error)

// Open implements sink.Driver.
func (f URLDriver) Open(ctx context.Context, url string, _ sink.Env) (sink.Sink, error) {
	return AsSink(f(ctx, url))
}

// AsSink returns what a dialect's open returned as a sink.Sink, and no
// Sink at all (never a nil *DB inside one) when err is set: what the
// dialects' sink.Drivers return.
func AsSink(db *DB, err error) (sink.Sink, error) {
	if err != nil {
		return nil, err
	}
	return db, nil
}
