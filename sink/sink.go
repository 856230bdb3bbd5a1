// Package sink defines what txsink writes changes to, in the manner of
// database/sql/driver: a Driver per URL scheme, registered by name; the
// Sink it opens; and the optional capabilities a Sink may have, which the
// engine, txsink check and the commands find by type assertion.
//
// A Sink owns the target's side of exactly-once delivery. The engine hands
// it commit units (package commit): the reduced rows of whole source
// transactions together with the source positions they reach. Guarantees
// every Sink must give:
//
//   - Apply is atomic: the unit's rows and its progress (the positions in
//     Unit.Progress, and Unit.Marks and Unit.DeadLetters) become visible
//     together or not at all. A reader never sees part of a unit.
//   - Progress lives in the target, written by Apply in the same atomic
//     step as the data, so the target's own state is the checkpoint:
//     Progress and Claim return exactly what has been applied.
//   - Claim fences: once an instance has claimed a partition, an Apply of
//     any earlier owner of it fails with an error wrapping ErrFenced and
//     writes nothing.
//   - After an Apply error, nothing of the unit was applied — unless the
//     error hid the commit's answer (a connection lost during COMMIT), in
//     which case Committed tells, from the progress, whether it landed.
//   - Errors are *Error (errors.As), classified through package errkind:
//     Transient (retry the unit), BadInput (a row the target refuses for
//     its own values, Error.Refused: the dead-letter policy quarantines
//     its change) or Permanent (stop).
//
// The required interface (Sink) is small; what only some targets can do is
// an optional interface:
//
//   - Locker: session locks that tell a running instance apart from a
//     stopped one (txsink reset refuses to run beside it);
//   - DeadLetterer: the dead-letter table (the bad-input: dead-letter
//     policy needs it);
//   - ShapeChecker: a table altered since it was described is detected;
//   - ProgressKeeper: the stored progress rows with their marks, rewound
//     and forgotten (stream sources, txsink reset, marks of file sources);
//   - Catalog: the target's catalog is read through SQL on a connection
//     of the caller's (txsink check);
//   - Creator: a missing table is created from the source's declaration
//     of it (schema: {create: missing});
//   - Evolver: a column the source adds is added (schema: {evolve:
//     add-columns}); UnitEvolver: inside the unit that needs it, where
//     the target's DDL is transactional.
//   - Truncater: a source's TRUNCATE is applied (commit.Batch.Truncate:
//     every row of the table deleted inside the unit's transaction).
//   - Streamer: a unit's pieces are loaded into a target transaction left
//     open for it while the next ones are read, and committed with the
//     progress at the unit's Apply (commit.Unit.Parts).
//
// Sinks register themselves (Register) from their package's init; the
// command imports package sink/sinks, which imports them all. To add a
// sink: one package implementing Driver and Sink (and whatever capability
// its target has), registering its URL schemes, one import line in
// sink/sinks, and a test that runs the conformance suite
// (sink/sinktest.Run) against its real server.
//
// A sink may import changelog, commit, schema (and schema/coltype),
// coerce, collate, errkind and this package; never engine, config,
// diagnose or a source.
package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/observe"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
)

// ProgressTable is the name of the table that holds each pipeline's
// positions in the target. Changes never write it: see schema.Reserved.
const ProgressTable = schema.ProgressTable

// DeadLetterTable is the name of the table that holds quarantined source
// transactions under the dead-letter policy. Changes never write it.
const DeadLetterTable = schema.DeadLetterTable

// Sink is one opened target. The engine never runs Claim, Apply and
// Committed (nor Rewind) beside each other: a Claim waits for the unit in
// flight, so a sink may keep its claims' epochs unguarded. Describe may run
// beside Apply (the next unit's tables are described while one commits).
type Sink interface {
	// Describe reads table name from the target's catalog: its columns,
	// their types and collations, and its primary key. A name without a
	// namespace is looked up in the connection's own database or schema;
	// name's parts are taken as they are (never split at a dot). A
	// missing table is an error naming it.
	Describe(ctx context.Context, name schema.Name) (*schema.Table, error)
	// Setup creates txsink's progress table if it does not exist (and
	// brings one an older txsink created to the current shape). It is
	// safe when instances of a pipeline start together.
	Setup(ctx context.Context) error
	// Progress returns the positions stored for pipeline, by partition.
	// A pipeline that never committed has none.
	Progress(ctx context.Context, pipeline string) (map[string]changelog.Position, error)
	// Claim makes this instance the owner of partitions of pipeline and
	// returns the positions stored for them (position 0 for one never
	// committed). From then on an Apply of any earlier owner of them
	// fails with ErrFenced. The positions include a commit of an earlier
	// owner that was in flight when Claim ran.
	Claim(ctx context.Context, pipeline string, partitions []string) (map[string]changelog.Position, error)
	// Apply writes u atomically with its progress (see the package doc).
	// A partition of u this instance never claimed is claimed first.
	// Deletes of a unit come before its writes, except where the
	// target's foreign keys order them otherwise; a partial image
	// (commit.Group.Partial) of a row the target lacks fails the unit
	// with ErrMissingRow, Refused.
	Apply(ctx context.Context, u *commit.Unit) error
	// Committed reports whether u is already in the target: every
	// partition of u stands at or past u's position under this
	// instance's claim. It is asked after an Apply error whose outcome is
	// unknown, so a retry never applies a unit twice. It fails with
	// ErrFenced when another instance claimed a partition of u.
	Committed(ctx context.Context, u *commit.Unit) (bool, error)
	// Close gives up what the Sink holds (locks, connections).
	Close() error
}

// Locker is a Sink that holds a lock for each partition a running
// pipeline reads, for as long as its session lives, so that a command that
// must not run beside the pipeline can tell and refuse. Safety never rests
// on these locks — Claim's fencing does not need them.
type Locker interface {
	// Hold takes the locks of pipeline's partitions and returns those
	// another session holds already. A target that cannot hold locks
	// (an in-memory database) holds none and returns none.
	Hold(ctx context.Context, pipeline string, partitions []string) (busy []string, err error)
	// Release gives up the locks Hold took for pipeline's partitions.
	Release(ctx context.Context, pipeline string, partitions []string) error
	// Held returns which of pipeline's partitions another session holds;
	// known is false when the target cannot tell.
	Held(ctx context.Context, pipeline string, partitions []string) (held []string, known bool, err error)
}

// DeadLetterer is a Sink that keeps quarantined source transactions
// (commit.Unit.DeadLetters) in a table of its own, written in the unit's
// atomic step. The bad-input: dead-letter policy requires it.
type DeadLetterer interface {
	// SetupDeadLetters creates the dead-letter table if it does not
	// exist (and widens the columns of an older one).
	SetupDeadLetters(ctx context.Context) error
	// DeadLetters lists the quarantined transactions of pipeline, oldest
	// first. A target without the table has none.
	DeadLetters(ctx context.Context, pipeline string) ([]DeadLetter, error)
}

// ShapeChecker is a Sink whose catalog can tell that a table was altered
// since it was described (schema.Table.Version). Apply of such a sink
// fails a unit written for an old shape with ErrShapeChanged.
type ShapeChecker interface {
	// ShapeChanged reports whether tbl was altered since it was
	// described (false when the target cannot tell).
	ShapeChanged(ctx context.Context, tbl *schema.Table) (bool, error)
}

// ProgressKeeper is a Sink whose progress rows can be read whole, with the
// marks stored with them, and moved by the commands.
type ProgressKeeper interface {
	// Stored returns pipeline's progress rows, ordered by partition.
	Stored(ctx context.Context, pipeline string) ([]Stored, error)
	// Marks returns the marks stored for pipeline, by partition; a
	// partition stored without one is absent.
	Marks(ctx context.Context, pipeline string) (map[string]string, error)
	// Rewind moves a partition this instance claimed back to its start,
	// with no mark (a stream is read from its start on every run). It
	// fails with ErrFenced when another instance claimed it since.
	Rewind(ctx context.Context, pipeline, partition string) error
	// Forget deletes the progress rows of pipeline's partitions (all of
	// them for nil), atomically, and returns the rows it deleted. An
	// instance still running for one of them is fenced.
	Forget(ctx context.Context, pipeline string, partitions []string) ([]Stored, error)
}

// Querier is what reading a SQL catalog needs: a *sql.DB, *sql.Conn or
// *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Catalog is a Sink whose catalog is read through SQL over database/sql,
// also on a connection of the caller's: txsink check runs every query on
// one read-only connection, and resolves tables on it as a run does.
type Catalog interface {
	// DB returns the handle the catalog is read through.
	DB() *sql.DB
	// DialectName names the catalog's SQL ("mysql", "mariadb", "postgres",
	// "sqlite"); check chooses its catalog queries by it.
	DialectName() string
	// Quote quotes one identifier for that SQL.
	Quote(ident string) string
	// DescribeOn is Describe through q.
	DescribeOn(ctx context.Context, q Querier, name schema.Name) (*schema.Table, error)
	// StoredOn is ProgressKeeper.Stored through q.
	StoredOn(ctx context.Context, q Querier, pipeline string) ([]Stored, error)
}

// Stored is one partition's progress row.
type Stored struct {
	changelog.Position
	// Mark is the position's fingerprint, "" when none was stored.
	Mark string
	// Epoch counts the claims of the partition (see Sink.Claim).
	Epoch int64
	// UpdatedAt is when the row last changed, as the server wrote it.
	UpdatedAt string
}

// MarksOf returns the marks of rows, by partition: what
// ProgressKeeper.Marks returns from the rows Stored returns. A row stored
// without a mark is absent.
func MarksOf(rows []Stored) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		if r.Mark != "" {
			out[r.Partition] = r.Mark
		}
	}
	return out
}

// DeadLetter is one row of the dead-letter table.
type DeadLetter struct {
	ID        int64
	Pipeline  string
	Partition string
	Offset    int64
	Seq       int64
	TxnID     string
	Raw       []byte
	Reason    string
	CreatedAt string
}

// ErrFenced is wrapped by the *Error Apply (and Committed, Rewind) returns
// when another instance has claimed one of the unit's partitions since this
// one did: this instance is a zombie and must stop. Nothing of the unit was
// written.
var ErrFenced = errors.New("another txsink instance has taken over the partition")

// ErrMissingRow is wrapped by the error Apply returns when a partial
// update's row (see commit.Group.Partial) is not in the target: the
// columns its image lacks have no value to keep.
var ErrMissingRow = errors.New("the row a partial update image changes is not in the target")

// UnreachableError is what a sink's Open returns, wrapped, when the
// target server did not answer (the connection was refused or timed out,
// its name did not resolve): waiting may help, so it is Transient, and
// txsink run waits for the server up to startup-timeout. An answer that
// refuses (a wrong password, an unknown database) is no UnreachableError.
type UnreachableError struct{ Err error }

// Error returns Err's text: the wrapping says nothing a person needs.
func (e *UnreachableError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Kind implements errkind.Classifier: Transient.
func (e *UnreachableError) Kind() errkind.Kind { return errkind.Transient }

// ErrShapeChanged is wrapped by the error Apply returns when a table of the
// unit was altered after it was described: nothing of the unit was
// written. Describe the tables again and convert the unit's changes anew
// (the engine starts again from the last commit).
var ErrShapeChanged = errors.New("the target table was altered after txsink read its definition")

// Error is a failure of the target. Every Sink returns its failures as
// *Error, so that the engine can classify them (errkind) and mark a
// transient one it gave up on (GaveUp).
type Error struct {
	// Op is what was being done ("apply", "describe", "read progress", ...).
	Op string
	// Table is the table the failing statement wrote, when one did.
	Table string
	// Key is the key of the row at fault, rendered; when txsink could not
	// tell which row of a multi-row statement it was, the first row's.
	Key string
	// Pos is the source position ("path:line") of the change that made the
	// row at fault, when known.
	Pos string
	// At is that change's position itself, when known (Pos renders it).
	At changelog.Position
	// Refused says the server refused the row at fault for its own values
	// (a value its column cannot hold, a CHECK constraint, a NOT NULL
	// column left without a value), or that the row is a partial update of
	// a row the target lacks (ErrMissingRow): the change at At is bad
	// input, and no retry or other row can make the target take it. The
	// dead-letter policy quarantines it.
	Refused bool
	// Hint says what to do, for errors retrying cannot fix.
	Hint string
	// Transient says retrying the whole unit may succeed: the
	// transaction was lost or refused as a whole (a deadlock, a lost
	// connection) and nothing of it was committed.
	Transient bool
	// GaveUp says a transient error persisted through Retries retries
	// of the unit and the caller stopped retrying it.
	GaveUp  bool
	Retries int
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos != "" {
		b.WriteString(e.Pos)
		b.WriteString(": ")
	}
	b.WriteString(e.Op)
	if e.Table != "" {
		b.WriteString(" ")
		b.WriteString(e.Table)
	}
	if e.Key != "" {
		b.WriteString(" key ")
		b.WriteString(e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Transient && e.GaveUp {
		fmt.Fprintf(&b, " (transient, but it persisted through %d retries (sink.max-retries) and txsink gave up; check the server, then run again)", e.Retries)
	} else if e.Transient {
		b.WriteString(" (transient: txsink retries)")
	} else if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Kind implements errkind.Classifier: Transient for a transient error (also
// once the engine gave up on it: GaveUp, and the message, say so, and
// retrying later may still succeed), BadInput for a refused row, Permanent
// for anything else.
func (e *Error) Kind() errkind.Kind {
	switch {
	case e.Transient:
		return errkind.Transient
	case e.Refused:
		return errkind.BadInput
	}
	return errkind.Permanent
}

// Where implements errkind.Locator: the table, the key and the change's
// position the error names.
func (e *Error) Where() errkind.Where {
	return errkind.Where{Pos: e.At, Table: e.Table, Key: e.Key}
}

// RefusedRow returns the change whose row the target refused for its own
// values (see Error.Refused), when err, or an error it wraps, says so and
// names the change's position.
func RefusedRow(err error) (*Error, bool) {
	var te *Error
	if errors.As(err, &te) && te.Refused && !te.Transient && te.At.Partition != "" {
		return te, true
	}
	return nil, false
}

// Reporter is a Sink with figures of its own protocol (a StarRocks
// target's loads and label states), which the engine adds to its Status at
// every call and package metrics exports. Report must be quick and safe
// beside Apply.
type Reporter interface {
	Report(st *observe.Status)
}

// Note is something a target tells txsink check of itself or of one of
// its tables: what it is (a server version, a table's kind and key), or a
// warning of how a run would behave there.
type Note struct {
	// Warning is false for information.
	Warning bool
	// Message is a plain sentence; Fix says what to do ("nothing" for
	// information).
	Message, Fix string
}

// Noter is a Sink with notes of its own for txsink check, beyond what a
// SQL catalog shows: a StarRocks target's server and table kinds.
// Refusals are not notes: a run's refusal to start is reported by check
// from the run's own resolution of the tables.
type Noter interface {
	// ServerNotes are notes of the server.
	ServerNotes() []Note
	// TableNotes are notes of table name, described before through
	// Catalog.DescribeOn, which the pipeline writes as append-only or
	// not.
	TableNotes(name schema.Name, appendOnly bool) []Note
}

// Creator is a Sink that creates a target table from the source's own
// declaration of it (schema: {create: missing}).
type Creator interface {
	// CreateStatements returns the statements that create table name as
	// tbl declares it (its key given), running nothing: txsink check and
	// txsink schema print them. An error names the column the target
	// has no type for.
	CreateStatements(name schema.Name, tbl *coltype.Table) ([]string, error)
	// Create runs them. It is safe beside another instance creating the
	// same table: a table that exists is left as it is.
	Create(ctx context.Context, name schema.Name, tbl *coltype.Table) error
}

// Evolver is a Sink that adds a column the source declares to an
// existing table (schema: {evolve: add-columns}).
type Evolver interface {
	// AddColumn adds col to table name, NULL-able, unless the table has
	// a column of that name already (another instance added it): then
	// it does nothing. DDL of its own, committed before it returns.
	AddColumn(ctx context.Context, name schema.Name, col coltype.Column) error
}

// UnitEvolver is an Evolver whose target can add a column inside a
// unit's own transaction (transactional DDL: PostgreSQL, SQLite), so the
// column and the rows that need it commit together: a crash or a
// rollback leaves neither, and a retry of the unit adds it again.
type UnitEvolver interface {
	Evolver
	// EvolvesInUnit reports whether this target adds columns in the unit
	// (false: AddColumn, in a step of its own).
	EvolvesInUnit() bool
	// PlanColumns returns table name as the target will describe it
	// once cols are added (NULL-able), writing nothing: the ALTER runs
	// in a transaction that is rolled back. A unit whose batch of the
	// table carries cols (commit.Batch.AddColumns) and this table adds
	// them in its transaction before its rows, and fails with
	// ErrShapeChanged if the table it then finds is not this one.
	PlanColumns(ctx context.Context, name schema.Name, cols []coltype.Column) (*schema.Table, error)
}

// Truncater is a Sink that applies a batch's commit.Batch.Truncate: it
// deletes every row of the table inside the unit's own transaction,
// before the batch's deletes and writes and before the writes of the
// tables referencing it, so the unit commits the empty table and the rows
// after the TRUNCATE together or not at all. A Sink that is not one
// refuses a unit with such a batch.
type Truncater interface {
	// TruncatesInUnit reports whether the target empties a table inside
	// a unit (false: it refuses such a unit).
	TruncatesInUnit() bool
}

// Streamer is a Sink that takes a unit in pieces ahead of its commit
// (transaction mode's autonomous flush): Stream loads a piece into a
// target transaction it keeps open for the pipeline's next unit, while the
// engine reads on; the unit's Apply, whose commit.Unit.Parts are those
// pieces in order, loads what the open transaction lacks, its own rows and
// its progress, and commits. What every Sink guarantees holds unchanged:
// nothing of a piece is visible before its unit commits, and Apply applies
// the whole unit — its Parts included — or nothing.
//
// Stream's error is advice, never the unit's outcome: after one, the open
// transaction is rolled back and the unit's Apply loads every part again
// in a new one, and fails as Apply does if the target still refuses. The
// engine runs Stream beside none of Claim, Apply and Committed, and
// streams nothing while a unit is applied.
type Streamer interface {
	// Stream loads part (its Batches and DeadLetters; it has no
	// Progress) into the transaction open for part.Pipeline's next unit,
	// beginning one first if none is open. A part's keys are reduced
	// within it; a later part's write of a key replaces an earlier one's,
	// as the target applies the loads of a transaction in order.
	Stream(ctx context.Context, part *commit.Unit) error
	// StreamTimeout is how long the target keeps an open transaction
	// before it aborts it: the engine commits a transaction kept open
	// for 80% of it at the next clean boundary, so none times out.
	StreamTimeout() time.Duration
}
