// Package sinktest is the conformance suite every sink runs against its
// real server, in the manner of pgx's and cockroachdb/replicator's shared
// suites: Run(t, open) checks, through package sink's interface alone, the
// guarantees package sink states — values of every type written and read
// back exactly, keys compared as the server compares them, a unit too
// large for one statement still one transaction, identifiers quoted, a
// unit applied whole or not at all, progress stored with the rows, a
// zombie fenced, a lost commit answer told apart by Committed — and the
// errors' classification (errkind).
//
// The suite feeds a sink as the engine does, without the engine: changes
// go through the pure core (reduce.Buffer) into commit units, and each
// flush is one Apply. A test sets up its tables and reads the result
// through Server.SQL, a connection of its own outside the sink, in the
// SQL of Server.Dialect; a sink of another SQL adds its DDL to the
// suite's tables (ddl maps) under a dialect name of its own.
//
// Faults are injected as the engine's own tests inject them, through the
// context of Apply (package internal/fault): a sink under test honours
// fault.From's hooks just before and just after its commit.
package sinktest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Server is one fresh, empty database on the real server a sink writes to.
// Dialect "starrocks" is StarRocks (its DDL: PRIMARY KEY tables; its
// reads through the MySQL protocol); tests of what StarRocks has no
// equivalent for (CHECK constraints, quoted table names) say so and
// test its counterpart, or skip.
type Server struct {
	// Dialect names the server's SQL, which chooses the suite's DDL and
	// quoting: "mysql" (MySQL and MariaDB), "postgres" or "sqlite".
	Dialect string
	// SQL is an administrative connection to the database, outside any
	// sink: tests create their tables and read their results through it.
	SQL *sql.DB
	// Open opens a new sink on the database, closed when t ends. Tests
	// that need two instances of a pipeline call it twice.
	Open func(t *testing.T) sink.Sink
	// Exec, when set, runs the tests' DDL and starting INSERTs instead of
	// SQL (a server whose tables are made elsewhere than where they are
	// read, as the StarRocks fake's).
	Exec func(ctx context.Context, stmt string) error
}

// Run runs the conformance suite, each test on a fresh database open
// returns.
func Run(t *testing.T, open func(t *testing.T) *Server) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s *Server)
	}{
		{"Types", testTypes},
		{"KeyCollation", testKeyCollation},
		{"LargeUnitIsChunked", testLargeUnitIsChunked},
		{"QuotedIdentifiers", testQuotedIdentifiers},
		{"UnitIsOneTransaction", testUnitIsOneTransaction},
		{"Progress", testProgress},
		{"ZombieIsFenced", testZombieIsFenced},
		{"LostCommitAnswer", testLostCommitAnswer},
		{"FailedCommit", testFailedCommit},
		{"MissingTable", testMissingTable},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// pipeline is the name the suite's units carry.
const pipeline = "sinktest"

// exec runs statements on the server, failing t on error.
func (s *Server) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		var err error
		if s.Exec != nil {
			err = s.Exec(context.Background(), q)
		} else {
			_, err = s.SQL.Exec(q)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Dialect, err, q)
		}
	}
}

// ddl returns the statement of s's dialect among byDialect, failing t
// when the suite has none for it.
func (s *Server) ddl(t *testing.T, byDialect map[string]string) string {
	t.Helper()
	q, ok := byDialect[s.Dialect]
	if !ok {
		t.Fatalf("sinktest has no DDL for dialect %q: add the server's to this test", s.Dialect)
	}
	return q
}

// pick returns sql, or starrocks on a StarRocks server.
func (s *Server) pick(sql, starrocks string) string {
	if s.Dialect == "starrocks" {
		return starrocks
	}
	return sql
}

// quote quotes an identifier in s's dialect.
func (s *Server) quote(ident string) string {
	if s.Dialect == "mysql" || s.Dialect == "starrocks" {
		return "`" + strings.ReplaceAll(ident, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"`
}

// query returns the rows of q on s (see Rows).
func (s *Server) query(t *testing.T, q string) string {
	t.Helper()
	return Rows(t, s.SQL, q)
}

// Rows returns the rows of query q on db rendered as "a|b" lines, values
// normalized across servers (workload.Normalize), failing t on error.
func Rows(t testing.TB, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = workload.Normalize(workload.Render(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// feeder feeds one sink as the engine does: changes of partition p0 are
// reduced into a buffer, and each flush applies the buffer as one unit.
type feeder struct {
	t      *testing.T
	s      sink.Sink
	buf    *reduce.Buffer
	tables map[string]*reduce.Table
	seq    int64
	// applies counts the units applied; upserted and deleted their rows.
	applies           int
	upserted, deleted int
}

// newFeeder opens a sink on s and sets it up.
func newFeeder(t *testing.T, s *Server) *feeder {
	t.Helper()
	f := &feeder{t: t, s: s.Open(t), buf: reduce.NewBuffer(pipeline), tables: map[string]*reduce.Table{}}
	if err := f.s.Setup(context.Background()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return f
}

var row = changelog.RowOf

// epoch is the suite's clock: nothing it checks depends on time.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// table returns the target table name, described once.
func (f *feeder) table(name string) (*reduce.Table, error) {
	if t, ok := f.tables[name]; ok {
		return t, nil
	}
	st, err := f.s.Describe(context.Background(), schema.Name{Name: name})
	if err != nil {
		return nil, err
	}
	t, err := reduce.NewTable(st, nil, false)
	if err != nil {
		return nil, err
	}
	f.tables[name] = t
	return t, nil
}

// add buffers one change of the source table s.<table>, written to the
// target table table, at the next position of p0.
func (f *feeder) add(kind changelog.Kind, table string, before, after changelog.Row) error {
	f.seq++
	t, err := f.table(table)
	if err != nil {
		return err
	}
	c := changelog.Change{Kind: kind, Table: changelog.Table{Namespace: "s", Name: table}, Before: before, After: after,
		Pos: changelog.Position{Partition: "p0", Offset: f.seq * 100, Seq: f.seq}, Size: 100}
	return f.buf.Add(t, &c, epoch)
}

func (f *feeder) must(kind changelog.Kind, table string, before, after changelog.Row) {
	f.t.Helper()
	if err := f.add(kind, table, before, after); err != nil {
		f.t.Fatal(err)
	}
}

// take returns the buffer as one unit (nil when empty).
func (f *feeder) take() *commit.Unit { return f.buf.Take() }

// apply applies u with ctx, counting it when it commits.
func (f *feeder) apply(ctx context.Context, u *commit.Unit) error {
	if err := f.s.Apply(ctx, u); err != nil {
		return err
	}
	d, up, _ := u.Rows()
	f.applies++
	f.upserted += up
	f.deleted += d
	return nil
}

// tryFlush applies what is buffered as one unit.
func (f *feeder) tryFlush() error {
	u := f.take()
	if u == nil {
		return nil
	}
	return f.apply(context.Background(), u)
}

func (f *feeder) flush() {
	f.t.Helper()
	if err := f.tryFlush(); err != nil {
		f.t.Fatal(err)
	}
}
