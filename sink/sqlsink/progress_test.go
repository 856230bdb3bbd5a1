package sqlsink_test

import (
	"context"
	"errors"
	_ "github.com/txsink/txsink/sink/sinks"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

func openTarget(t testing.TB, db *testdb.DB) *sqlsink.DB {
	t.Helper()
	tdb, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tdb.Close() })
	return tdb.(*sqlsink.DB)
}

// setupTarget opens a target on db with its progress table set up, and
// returns it with a function that describes one of its tables.
func setupTarget(t *testing.T, db *testdb.DB) (*sqlsink.DB, func(name string) *schema.Table) {
	t.Helper()
	tdb := openTarget(t, db)
	ctx := context.Background()
	if err := tdb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return tdb, func(name string) *schema.Table {
		t.Helper()
		tbl, err := tdb.Describe(ctx, schema.Name{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
}

// group is a group of rows of cols, each read at pos.
func group(cols []string, pos changelog.Position, rows ...[]any) commit.Group {
	g := commit.Group{Columns: cols, Rows: rows}
	for range rows {
		g.Pos = append(g.Pos, pos)
	}
	return g
}

// TestProgressMarkColumnAdded starts from a progress table an older txsink
// created, without position_mark: Setup adds the column, keeps the rows,
// and can run again.
func TestProgressMarkColumnAdded(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			db.Exec(t, `CREATE TABLE txsink_progress (pipeline VARCHAR(128) NOT NULL, source_partition VARCHAR(512) NOT NULL,
				position BIGINT NOT NULL, seq BIGINT NOT NULL, epoch BIGINT NOT NULL DEFAULT 0,
				updated_at VARCHAR(40) NOT NULL DEFAULT '2026-01-01', PRIMARY KEY (pipeline, source_partition))`,
				`INSERT INTO txsink_progress (pipeline, source_partition, position, seq, epoch) VALUES ('p', 'a.jsonl', 42, 3, 1)`)
			tdb := openTarget(t, db)
			ctx := context.Background()
			for range 2 {
				if err := tdb.Setup(ctx); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := tdb.Stored(ctx, "p")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Partition != "a.jsonl" || rows[0].Offset != 42 || rows[0].Seq != 3 || rows[0].Mark != "" {
				t.Fatalf("Stored = %#v", rows)
			}
		})
	}
}

// TestProgressLocksAndForget holds a partition's lock in one session and
// sees it from another; Forget deletes the row, and the instance that
// held it is fenced at its next commit.
func TestProgressLocksAndForget(t *testing.T) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			ctx := context.Background()
			runner, other := openTarget(t, db), openTarget(t, db)
			if err := runner.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := runner.Claim(ctx, "p", []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			if busy, err := runner.Hold(ctx, "p", []string{"a", "b"}); err != nil || len(busy) != 0 {
				t.Fatalf("Hold = %v, %v", busy, err)
			}
			if busy, err := other.Hold(ctx, "p", []string{"a", "c"}); err != nil || !slices.Equal(busy, []string{"a"}) {
				t.Fatalf("a second session's Hold = %v, %v; want [a] busy", busy, err)
			}
			if err := other.Release(ctx, "p", []string{"c"}); err != nil {
				t.Fatal(err)
			}
			held, known, err := other.Held(ctx, "p", []string{"a", "b", "c", "d"})
			if err != nil || !known || !slices.Equal(held, []string{"a", "b"}) {
				t.Fatalf("Held = %v, %v, %v; want [a b] held", held, known, err)
			}
			if err := runner.Release(ctx, "p", []string{"b"}); err != nil {
				t.Fatal(err)
			}
			if held, _, _ := other.Held(ctx, "p", []string{"a", "b"}); !slices.Equal(held, []string{"a"}) {
				t.Fatalf("after releasing b, Held = %v; want [a]", held)
			}
			unit := &commit.Unit{Pipeline: "p", Progress: []changelog.Position{{Partition: "a", Offset: 10, Seq: 1}},
				Marks: map[string]string{"a": "v1 {}"}}
			if err := runner.Apply(ctx, unit); err != nil {
				t.Fatal(err)
			}
			if marks, err := other.Marks(ctx, "p"); err != nil || marks["a"] != "v1 {}" {
				t.Fatalf("Marks = %v, %v", marks, err)
			}
			gone, err := other.Forget(ctx, "p", []string{"a"})
			if err != nil || len(gone) != 1 || gone[0].Offset != 10 {
				t.Fatalf("Forget = %+v, %v", gone, err)
			}
			unit.Progress[0].Offset = 20
			if err := runner.Apply(ctx, unit); !errors.Is(err, sink.ErrFenced) {
				t.Fatalf("a commit after Forget = %v, want ErrFenced", err)
			}
			// Locks go with their session, once the server has seen it
			// close (MariaDB ends the session on its own thread).
			runner.Close()
			deadline := time.Now().Add(30 * time.Second)
			for {
				held, _, err := other.Held(ctx, "p", []string{"a", "b"})
				if err != nil {
					t.Fatal(err)
				}
				if len(held) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("30s after the holder closed, Held = %v; want none", held)
				}
				runtime.Gosched()
			}
		})
	}
}

// TestLocksAreTheDatabases holds a partition of one pipeline name in two
// databases of one server (two schemas of one database on PostgreSQL,
// where the progress table is a schema's): each is its own, though
// GET_LOCK's names are the server's and advisory locks a database's.
func TestLocksAreTheDatabases(t *testing.T) {
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			one, two := openTarget(t, testdb.Open(t, d)), openTarget(t, testdb.Open(t, d))
			if busy, err := one.Hold(ctx, "p", []string{"a"}); err != nil || len(busy) != 0 {
				t.Fatalf("Hold in the first database = %v, %v", busy, err)
			}
			if busy, err := two.Hold(ctx, "p", []string{"a"}); err != nil || len(busy) != 0 {
				t.Fatalf("Hold in the second database = %v, %v; want it free", busy, err)
			}
		})
	}
}
