package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/txsink/txsink/internal/bulktext"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Loader = Dialect{}

// The bulk path (target.Loader) writes a large group of rows with COPY ...
// FROM STDIN, in binary format when it can (below) and in text format
// otherwise, on the unit's own connection and therefore inside its
// transaction:
//
//   - Insert (append-only tables): COPY straight into the table.
//   - Upsert, direct: SAVEPOINT, COPY straight into the table, RELEASE, all
//     in one query and so one round trip. When no row's key exists yet —
//     every insert-only workload — that is the upsert's whole effect, at
//     COPY's speed: COPY batches heap and index insertions, which no INSERT
//     does, and costs the server half the CPU of the array statement per
//     row. A key that exists makes the COPY fail with unique_violation at
//     that row, and the server skips the rest of the query; the load rolls
//     back to the savepoint, keeping nothing of the attempt, and the group
//     goes on by one of the next two paths.
//   - Upsert over existing keys, when the array statement can write the
//     group: Load declines it and Apply runs that statement. Measured, it
//     costs the server no more than the staged merge below (within 10%
//     either way up to 10,000 rows), and saves a temporary table.
//   - Upsert, staged, for groups with a column the array statement cannot
//     carry (uuid, enums, arrays, citext: types txsink does not know):
//     COPY into a temporary table of the session's, then INSERT INTO t
//     (cols) SELECT cols FROM stage followed by exactly the ON CONFLICT tail
//     of the dialect's Upsert statement, all in one round trip. It beats
//     the multi-row VALUES statements those groups would otherwise take
//     from stageMinRows rows on.
//
// A table's upserts try the direct path until one meets an existing key;
// then the table's next 1, 2, 4, ... up to 64 groups skip the try (it is
// learnt per session, see tableState), so an update-heavy table pays a
// failed COPY — which stops at its first existing key — at most once in
// 64 groups, and a direct success starts the count afresh.
//
// In text format, values are written as the statement path binds them, in
// the text form each type's input function reads (the forms the array
// path already sends): the server parses them exactly as it parses a
// bound text parameter, and COPY applies the column's type modifier as an
// INSERT's assignment does, so a value too long for varchar(n) is an
// error, never cut, and a refused value fails the unit like a refused
// statement (Apply then names the row by replaying the group row by row).
//
// Binary format (binary.go) takes groups whose every column has a type
// with a binary encoding here — int2/4/8, float4/8, bool, text, varchar,
// bpchar, json, jsonb, bytea, numeric, date, timestamp, timestamptz,
// time, uuid, told by the column's type OID in the catalog — and whose
// every value is in the form that encoding writes exactly (coerce's Go
// type for the column's class, in the range text would send); any other
// group goes as text. The types' receive functions apply the column's
// modifier as their input functions do (varchar(n) and char(n) refuse
// what is too long, char(n) pads, numeric(p,s), timestamp(p) and time(p)
// round) and text's verifies UTF-8, so the server stores and refuses
// exactly what it does for text; TestBinaryCopyMatchesText and
// TestBinaryCopyRefuses compare the two on the server, type by type.
// Measured on the bench's tables (docs/performance.md): the server spends
// about a fifth less CPU per row on groups of 1,000 orders and more, a
// tenth less on the bench's units, the same on groups of 100 (no numeric,
// timestamp or integer to parse; the rest of a row's cost, its heap and
// index insertion, stays), and txsink 30 to 60% less encoding a row. A
// binary value is right only for the type it was encoded for, so the
// session's catalog read is tied to the table description's shape version
// (see table): a type changed after it fails the unit's shape check, as
// it does for text, and one type's bytes read as another's are never
// committed.

// loadMinRows is the fewest rows of a group Load takes. Measured with
// BenchmarkLoadGroup (server CPU per row, PostgreSQL 15): COPY into the
// table costs the server 20% less than the array statement at 30 rows and
// 30-50% less from 100 rows on; below 100 rows the wall time is the same,
// the fixed cost of the savepoint and the extra round trip eating the
// gain.
var loadMinRows = 100

// stageMinRows is the fewest rows of a group that goes through the
// staging table (only groups the array statement cannot write do). Against
// the multi-row VALUES statements the staged merge costs the server 25%
// more at 100 rows, the same from 300 to 1000, and 25-45% less from 3000
// on: the staging table's creation check, COPY and truncation at commit
// are a fixed cost per group.
var stageMinRows = 1000

// strategy forces a path for upserts, for tests and benchmarks.
type strategy int

const (
	adaptive   strategy = iota // learn per table (see tableState)
	directOnly                 // always try COPY into the table first
	stagedOnly                 // always COPY into the staging table
)

var loadStrategy = adaptive

// loads counts the loads each path ran, so tests can tell which one did:
// COPY into the table (direct, inserts included), COPY through the
// staging table (staged), and direct tries that met an existing key
// (retried), whose group then went staged or back to the statements.
// binary counts the loads that went in COPY's binary format.
var loads struct{ direct, staged, retried, binary atomic.Int64 }

// binaryCopy turns the binary format on for the groups it can write; off,
// every group goes as text (for tests and benchmarks comparing the two).
var binaryCopy = true

// The COPY formats, indexing groupState's statements, and what each
// statement ends with.
const (
	textFormat   = 0
	binaryFormat = 1
)

var copyWith = [2]string{"", " (FORMAT binary)"}

// maxBackoff bounds how many groups of a table that met an existing key
// skip the direct try before the next one.
const maxBackoff = 64

// savepoint is the savepoint a direct upsert COPY runs under.
const savepoint = "txsink_load"

// stateKey is where a connection's load state lives in pgconn's
// per-connection CustomData: it lives and dies with the server session,
// as the temporary staging tables do, so a new connection (after a
// reconnect) starts afresh and creates what it needs.
const stateKey = "github.com/txsink/txsink/sink/sqlsink/postgres.load"

// connState is what Load knows about one server session. Only the
// goroutine holding the connection (inside sql.Conn.Raw) touches it.
type connState struct {
	tables map[string]*tableState // by quoted table name
	stages int                    // staging tables named on this session
}

// tableState is what Load knows about one table on one session.
type tableState struct {
	// copyable reports that COPY FROM writes what INSERT would: a plain
	// or partitioned table without rules (COPY ignores rules) and without
	// row-level security (COPY FROM refuses it).
	copyable bool
	// temp reports that the session may create temporary tables (the
	// staging path needs one).
	temp bool
	// types holds the type of each column, without its modifier
	// (varchar, not varchar(20)), as the staging table's columns have it.
	types map[string]string
	// oids holds the type OID of each column, which decides its binary
	// encoding (binKinds).
	oids map[string]uint32
	// version is the shape version (schema.Table.Version) of the table
	// description the state was read for; a load of another version reads
	// the catalog again.
	version string
	// backoff is how many groups skip the direct try after the next
	// failed one; wait counts down the ones still to skip it.
	backoff, wait int
	groups        map[string]*groupState // by column list
}

// groupState holds the statements for one table and column list.
type groupState struct {
	// The COPY statements, by format (textFormat, binaryFormat).
	copyDirect  [2]string // COPY "ns"."t" ("a","b") FROM STDIN
	copyUnder   [2]string // copyDirect between SAVEPOINT and RELEASE SAVEPOINT
	copyStage   [2]string // COPY pg_temp."txsink_stage_N" FROM STDIN
	createStage string    // CREATE TEMP TABLE IF NOT EXISTS "txsink_stage_N" (...) ON COMMIT DELETE ROWS
	stage       string    // pg_temp."txsink_stage_N"; "" when the group cannot be staged
	mergeStage  string    // INSERT INTO ... SELECT ... FROM stage ON CONFLICT ...
	arrays      bool      // every column has an array form: the array statement can write the group
	// kinds is each column's binary encoding; nil when some column has
	// none, and the group always goes as text.
	kinds []binKind
	// filledIn is the transaction that last filled the staging table. The
	// table is empty at the start of every other one: ON COMMIT DELETE
	// ROWS empties it at commit, and a rollback takes its rows away. A
	// stale pointer equal to a new transaction's only costs a TRUNCATE.
	filledIn *sql.Tx
}

// Load implements target.Loader: it writes req.Rows with COPY within tx
// (see above). It declines, having written nothing, groups below
// loadMinRows, tables COPY would write differently from INSERT, values it
// does not send as text, connections that are not pgx's, and upserts that
// may meet existing keys when the statements write them as cheaply.
func (d Dialect) Load(ctx context.Context, conn *sql.Conn, tx *sql.Tx, req *sqlsink.LoadRequest) (bool, error) {
	if len(req.Rows) < loadMinRows || !textValues(req) {
		return false, nil
	}
	done := false
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return nil
		}
		pc := sc.Conn().PgConn()
		ts, err := d.table(ctx, pc, req.Table)
		if err != nil || !ts.copyable {
			return err
		}
		g := d.group(pc, ts, req)
		if g == nil {
			return nil
		}
		// Only a versioned description (sqlsink.DB.Describe's) is
		// binary: its unit's shape check is what makes a type changed
		// after the catalog read roll the unit back.
		var kinds []binKind
		if binaryCopy && g.kinds != nil && req.Table.Version != "" && binaryValues(g.kinds, req.Rows) {
			kinds = g.kinds
		}
		done, err = d.load(ctx, pc, tx, ts, g, req, kinds)
		return err
	})
	return done, err
}

// load runs the COPY for req and reports whether it wrote the rows; false
// (nil error) means it kept nothing and the caller's statements must.
//
// kinds, when not nil, makes the COPY binary.
func (d Dialect) load(ctx context.Context, pc *pgconn.PgConn, tx *sql.Tx, ts *tableState, g *groupState, req *sqlsink.LoadRequest, kinds []binKind) (bool, error) {
	format := textFormat
	if kinds != nil {
		format = binaryFormat
		loads.binary.Add(1)
	}
	if !req.Upsert {
		loads.direct.Add(1)
		return true, copyRows(ctx, pc, g.copyDirect[format], req, kinds)
	}
	// Where a group goes when its keys may exist (see above): the staging
	// table when the array statement cannot write it and it is large
	// enough, and the session may create temporary tables; else back to
	// the statements.
	staged := ts.temp && g.stage != "" && (loadStrategy != adaptive || (!g.arrays && len(req.Rows) >= stageMinRows))
	var b strings.Builder
	if ts.tryDirect() {
		loads.direct.Add(1)
		// The savepoint, the COPY and the release go in one query, one
		// round trip: the server runs the RELEASE only if the COPY
		// succeeded (an error skips the rest of a query string), and
		// leaves the savepoint for the rollback below otherwise.
		err := copyRows(ctx, pc, g.copyUnder[format], req, kinds)
		if err == nil {
			ts.backoff = 0
			return true, nil
		}
		if !isUniqueViolation(err) {
			return false, err
		}
		// Some key exists: nothing of the attempt stays.
		loads.retried.Add(1)
		ts.backoff = min(max(1, 2*ts.backoff), maxBackoff)
		ts.wait = ts.backoff
		rollback := "ROLLBACK TO SAVEPOINT " + savepoint + "; RELEASE SAVEPOINT " + savepoint
		if !staged {
			return false, exec(ctx, pc, rollback)
		}
		b.WriteString(rollback)
		b.WriteString("; ")
	} else if !staged {
		return false, nil
	}
	loads.staged.Add(1)
	// One round trip: create the staging table if this session has none
	// (its creation may have been rolled back with an earlier unit),
	// empty it if this transaction filled it already, fill it, merge it.
	b.WriteString(g.createStage)
	b.WriteString("; ")
	if g.filledIn == tx {
		b.WriteString("TRUNCATE " + g.stage + "; ")
	}
	g.filledIn = tx
	b.WriteString(g.copyStage[format])
	b.WriteString("; ")
	b.WriteString(g.mergeStage)
	return true, copyRows(ctx, pc, b.String(), req, kinds)
}

// tryDirect reports whether the next upsert of the table tries COPY into
// the table first, counting down the groups that skip the try after a
// failed one.
func (ts *tableState) tryDirect() bool {
	switch loadStrategy {
	case directOnly:
		return true
	case stagedOnly:
		return false
	}
	if ts.wait > 0 {
		ts.wait--
		return false
	}
	return true
}

// isUniqueViolation reports a unique_violation: a direct COPY met a key
// that exists.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// state returns the session's load state, creating it on first use.
func state(pc *pgconn.PgConn) *connState {
	data := pc.CustomData()
	if st, ok := data[stateKey].(*connState); ok {
		return st
	}
	st := &connState{tables: map[string]*tableState{}}
	data[stateKey] = st
	return st
}

// table returns what the session knows about t, asking the catalog the
// first time and whenever t's shape version is another. The answer is
// cached for the session: it reads no table data and creates nothing, so
// a rolled-back unit does not invalidate it.
//
// Reading again with each new version keeps the column types the binary
// encoders follow no older than the description the values were converted
// for: an ALTER after the read changes the version, which the unit's
// shape check (sqlsink.Versioner) sees before it commits, and the next
// description is read again here.
func (d Dialect) table(ctx context.Context, pc *pgconn.PgConn, t *schema.Table) (*tableState, error) {
	st := state(pc)
	name := sqlsink.QuotedTable(d, t)
	if ts, ok := st.tables[name]; ok && ts.version == t.Version {
		return ts, nil
	}
	res := pc.ExecParams(ctx, `SELECT c.relkind IN ('r','p') AND NOT c.relrowsecurity AND NOT c.relhasrules,
		has_database_privilege(current_database(), 'TEMP'),
		(SELECT json_object_agg(a.attname, format_type(a.atttypid, -1)) FROM pg_attribute a
		 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
		(SELECT json_object_agg(a.attname, a.atttypid::int8) FROM pg_attribute a
		 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
		FROM pg_class c WHERE c.oid = $1::regclass`, [][]byte{[]byte(name)}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("read %s from pg_class: %w", name, res.Err)
	}
	ts := &tableState{groups: map[string]*groupState{}, version: t.Version}
	if len(res.Rows) == 1 && len(res.Rows[0]) == 4 {
		ts.copyable = string(res.Rows[0][0]) == "t"
		ts.temp = string(res.Rows[0][1]) == "t"
		if err := json.Unmarshal(res.Rows[0][2], &ts.types); err != nil {
			return nil, fmt.Errorf("read the column types of %s: %w", name, err)
		}
		if err := json.Unmarshal(res.Rows[0][3], &ts.oids); err != nil {
			return nil, fmt.Errorf("read the column type OIDs of %s: %w", name, err)
		}
	}
	st.tables[name] = ts
	return ts, nil
}

// group returns the statements for req's table and columns, writing them
// the first time; nil when the dialect's Upsert is not its Insert followed
// by a tail the staged merge can reuse.
func (d Dialect) group(pc *pgconn.PgConn, ts *tableState, req *sqlsink.LoadRequest) *groupState {
	cols := names(req.Columns)
	var key strings.Builder
	sqlsink.QuoteList(&key, d, cols)
	list := key.String()
	if g, ok := ts.groups[list]; ok {
		return g
	}
	// The merge is the dialect's own Upsert with SELECT in place of
	// VALUES, so it has every condition the statement path has.
	var ins, ups strings.Builder
	d.Insert(&ins, req.Table, cols, 1)
	d.Upsert(&ups, req.Table, cols, 1)
	tail, ok := strings.CutPrefix(ups.String(), ins.String())
	if !ok {
		return nil
	}
	tbl := sqlsink.QuotedTable(d, req.Table)
	g := &groupState{arrays: true, kinds: make([]binKind, len(cols))}
	for f, with := range copyWith {
		g.copyDirect[f] = "COPY " + tbl + " (" + list + ") FROM STDIN" + with
		g.copyUnder[f] = "SAVEPOINT " + savepoint + "; " + g.copyDirect[f] + "; RELEASE SAVEPOINT " + savepoint
	}
	for i, c := range req.Columns {
		if _, ok := arrayType(c); !ok {
			g.arrays = false
		}
		// A column added since the session read the catalog has no OID
		// here, so no binary encoding.
		if g.kinds != nil {
			g.kinds[i] = binKinds[ts.oids[c.Name]]
			if g.kinds[i] == binNone {
				g.kinds = nil
			}
		}
	}
	// The staging table's columns have the base types of the table's,
	// without their modifiers and constraints: COPY reads each value as
	// the server reads a bound parameter of the column's type, and the
	// merge's assignment to the column applies its length, precision and
	// NOT NULL, exactly as the statement path's INSERT does. So a later
	// ALTER of a length or precision never makes the session's staging
	// table disagree with the table.
	var def strings.Builder
	for i, c := range cols {
		typ, ok := ts.types[c]
		if !ok {
			// Added since the session read the catalog: no staging.
			ts.groups[list] = g
			return g
		}
		if i > 0 {
			def.WriteByte(',')
		}
		def.WriteString(d.Quote(c) + " " + typ)
	}
	st := state(pc)
	st.stages++
	stageName := d.Quote("txsink_stage_" + strconv.Itoa(st.stages))
	g.stage = "pg_temp." + stageName
	g.createStage = "CREATE TEMP TABLE IF NOT EXISTS " + stageName + " (" + def.String() + ") ON COMMIT DELETE ROWS"
	for f, with := range copyWith {
		g.copyStage[f] = "COPY " + g.stage + " FROM STDIN" + with
	}
	g.mergeStage = "INSERT INTO " + tbl + " (" + list + ") SELECT " + list + " FROM " + g.stage + tail
	ts.groups[list] = g
	return g
}

// exec runs sql, statements that return no rows, on pc.
func exec(ctx context.Context, pc *pgconn.PgConn, sql string) error {
	if _, err := pc.Exec(ctx, sql).ReadAll(); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// copyRows runs query, whose last or only COPY reads req.Rows from STDIN.
// The rows are encoded as pgconn reads them, on its sending goroutine, so
// encoding overlaps with the server's work and no copy of the whole group
// is ever built.
//
// kinds, when not nil, encodes the rows in binary (the query's COPY must
// say FORMAT binary).
func copyRows(ctx context.Context, pc *pgconn.PgConn, query string, req *sqlsink.LoadRequest, kinds []binKind) error {
	r := &copyReader{cols: req.Columns, rows: req.Rows, kinds: kinds}
	if kinds != nil {
		r.buf = append(r.buf, copyBinaryHeader...)
	}
	if _, err := pc.CopyFrom(ctx, r, query); err != nil {
		var pe *pgconn.PgError
		if kinds != nil && errors.As(err, &pe) && pe.Code == "08P01" {
			// The server read a binary field shorter than its column's
			// type: not a lost connection (the session goes on), but a
			// column whose type is no longer the one the session read,
			// which the unit's shape check tells (sqlsink.Versioner).
			return fmt.Errorf("copy %d rows into %s in binary format: %w", len(req.Rows), req.Table, binaryMismatch{pe})
		}
		return fmt.Errorf("copy %d rows into %s: %w", len(req.Rows), req.Table, err)
	}
	return nil
}

// binaryMismatch is a binary COPY's protocol_violation, which is not
// transient as the class 08 errors of a lost connection are: it does not
// unwrap to the *pgconn.PgError, so Transient does not see its code.
type binaryMismatch struct{ err *pgconn.PgError }

func (e binaryMismatch) Error() string { return e.err.Error() }

// textValues reports whether every value of req has a text form Load
// trusts to read as the statement path's bound value does. Columns of
// types txsink does not know (uuid, enums, arrays, ...) take strings,
// which the server reads with the type's input function either way; any
// other Go value there is left to the statements.
func textValues(req *sqlsink.LoadRequest) bool {
	for i, c := range req.Columns {
		if c.Class != schema.Unknown {
			continue
		}
		for _, row := range req.Rows {
			switch row[i].(type) {
			case nil, string:
			default:
				return false
			}
		}
	}
	return true
}

// copyReader streams rows in COPY's text format: tab between fields,
// newline after each row, \N for NULL, and backslash, tab, newline and
// carriage return escaped in values.
type copyReader struct {
	cols  []*schema.Column
	rows  [][]any
	kinds []binKind // each column's binary encoding; nil for text
	next  int       // the next row to encode
	buf   []byte    // encoded rows not yet read
	off   int       // how much of buf was read
}

// Read encodes rows until p could be filled (a row is never split across
// encodings, only across reads) and copies out what it can.
func (r *copyReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.next > len(r.rows) {
			return 0, io.EOF
		}
		r.buf, r.off = r.buf[:0], 0
		if r.kinds != nil {
			for r.next < len(r.rows) && len(r.buf) < len(p) {
				r.buf = appendBinaryRow(r.buf, r.kinds, r.rows[r.next])
				r.next++
			}
		} else {
			for r.next < len(r.rows) && len(r.buf) < len(p) {
				r.buf = appendCopyRow(r.buf, r.cols, r.rows[r.next])
				r.next++
			}
		}
		if r.next == len(r.rows) && len(r.buf) < len(p) {
			// The end: binary COPY's trailer, a field count of -1.
			if r.kinds != nil {
				r.buf = append(r.buf, 0xff, 0xff)
			}
			r.next++
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// appendCopyRow appends one row of COPY text.
func appendCopyRow(dst []byte, cols []*schema.Column, row []any) []byte {
	for i, v := range row {
		if i > 0 {
			dst = append(dst, '\t')
		}
		dst = appendCopyValue(dst, cols[i], v)
	}
	return append(dst, '\n')
}

// appendCopyValue appends one field of COPY text: the value's text form
// as the array path writes it, unquoted, and escaped for COPY.
func appendCopyValue(dst []byte, col *schema.Column, v any) []byte {
	if out, ok := appendBare(dst, v); ok {
		return out
	}
	switch v := v.(type) {
	case nil:
		return append(dst, `\N`...)
	case string:
		return bulktext.AppendEscaped(dst, v, false)
	case []byte:
		// bytea's hex input form, \x..., its backslash escaped.
		return appendHex(append(dst, `\\x`...), v)
	case time.Time:
		return appendTime(dst, col, v)
	}
	return bulktext.AppendEscaped(dst, fmt.Sprint(v), false)
}
