package sqlsink_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

// extraCol is the column the source adds in these tests.
var extraCol = coltype.Column{Name: "extra", Type: coltype.Type{Kind: coltype.String, Length: 5}, Nullable: true}

// evolver is a sink that adds columns in the unit's transaction.
type evolver interface {
	sink.Sink
	sink.UnitEvolver
}

// openEvolver opens a sink of its own on db, which adds columns in the
// unit's transaction.
func openEvolver(t *testing.T, db *testdb.DB) evolver {
	t.Helper()
	s, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	ue, ok := s.(evolver)
	if !ok || !ue.EvolvesInUnit() {
		t.Fatalf("the %s sink does not add columns in the unit", db.Dialect)
	}
	return ue
}

// evolvingUnit plans orders with column extra on s and returns a unit of
// pipeline that writes row id with extra and adds the column in its
// transaction.
func evolvingUnit(t *testing.T, s evolver, pipeline string, id int) *commit.Unit {
	t.Helper()
	planned, err := s.PlanColumns(context.Background(), schema.Name{Name: "orders"}, []coltype.Column{extraCol})
	if err != nil {
		t.Fatal(err)
	}
	return unitOf(t, planned, pipeline, id)
}

// unitOf is a unit of pipeline writing row id (with extra) into planned,
// adding column extra in its transaction.
func unitOf(t *testing.T, planned *schema.Table, pipeline string, id int) *commit.Unit {
	t.Helper()
	tbl, err := reduce.NewTable(planned, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl.AddColumns = []coltype.Column{extraCol}
	buf := reduce.NewBuffer(pipeline)
	c := changelog.Change{Kind: changelog.Insert, Table: changelog.Table{Name: "orders"},
		After: changelog.RowOf("id", changelog.Number(fmt.Sprint(id)), "name", "n", "extra", fmt.Sprint("e", id)),
		Pos:   changelog.Position{Partition: "p0", Offset: int64(id), Seq: int64(id)}, Size: 100}
	if err := buf.Add(tbl, &c, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	return buf.Take()
}

// TestAddColumnsInUnitConcurrently applies, from two instances (two
// pipelines, each its own sink), two units that add the same column to
// the same PostgreSQL table at once: the second one's ADD COLUMN IF NOT
// EXISTS waits for the first's lock, then finds the column, and both
// units commit.
func TestAddColumnsInUnitConcurrently(t *testing.T) {
	db := testdb.Open(t, "postgres")
	db.Exec(t, `CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, name TEXT)`)
	ctx := context.Background()
	a, b := openEvolver(t, db), openEvolver(t, db)
	ua, ub := evolvingUnit(t, a, "a", 1), evolvingUnit(t, b, "b", 2)

	inside, release := make(chan struct{}), make(chan struct{})
	hold := fault.With(ctx, &fault.Hooks{BeforeCommit: func(*commit.Unit) error {
		close(inside)
		<-release
		return nil
	}})
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { errA <- a.Apply(hold, ua) }()
	<-inside // a's unit added the column and holds the table's lock
	go func() { errB <- b.Apply(ctx, ub) }()
	waiting := func() bool {
		var n int
		if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'orders' AND c.relnamespace = current_schema()::regnamespace AND NOT l.granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	for deadline := time.Now().Add(time.Minute); !waiting(); {
		if time.Now().After(deadline) {
			t.Fatal("the second unit never waited for the first one's lock")
		}
		select {
		case err := <-errB:
			t.Fatalf("the second unit ended before the first committed: %v", err)
		default:
		}
	}
	close(release)
	if err := <-errA; err != nil {
		t.Fatalf("the first unit: %v", err)
	}
	if err := <-errB; err != nil {
		t.Fatalf("the second unit: %v", err)
	}
	if got, want := rows(t, db, `SELECT id, extra FROM orders ORDER BY id`), "1|e1\n2|e2"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := rows(t, db, `SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'orders' AND column_name = 'extra'`); got != "1" {
		t.Errorf("%s columns extra, want 1", got)
	}
}

// TestAddColumnsInUnitThenAltered applies a unit that adds a column in
// its transaction, then more units of the same planned table, which go
// on (the shape the unit left is the planned one), until a DBA alters
// the table: the next unit fails with sink.ErrShapeChanged and writes
// nothing.
func TestAddColumnsInUnitThenAltered(t *testing.T) {
	for _, d := range []string{"postgres", "sqlite"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := testdb.Open(t, d)
			db.Exec(t, `CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, name TEXT)`)
			ctx := context.Background()
			s := openEvolver(t, db)
			planned, err := s.PlanColumns(ctx, schema.Name{Name: "orders"}, []coltype.Column{extraCol})
			if err != nil {
				t.Fatal(err)
			}
			if got := rows(t, db, `SELECT COUNT(*) FROM orders`); got != "0" {
				t.Fatalf("the plan wrote rows: %s", got)
			}
			if st, err := s.Describe(ctx, schema.Name{Name: "orders"}); err != nil {
				t.Fatal(err)
			} else if _, ok := st.Column("extra"); ok {
				t.Fatal("the plan added the column")
			}
			for id := 1; id <= 3; id++ {
				if err := s.Apply(ctx, unitOf(t, planned, "p", id)); err != nil {
					t.Fatalf("unit %d: %v", id, err)
				}
			}
			db.Exec(t, `ALTER TABLE orders ADD COLUMN other INTEGER`)
			err = s.Apply(ctx, unitOf(t, planned, "p", 4))
			if !errors.Is(err, sink.ErrShapeChanged) {
				t.Fatalf("after the DBA's ALTER: got %v, want sink.ErrShapeChanged", err)
			}
			if got, want := rows(t, db, `SELECT id, extra FROM orders ORDER BY id`), "1|e1\n2|e2\n3|e3"; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
