package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source/postgres"
)

// truncTables are a parent and a child table, joined by a foreign key,
// in the source and in each target.
var truncTables = map[string][]string{
	"source": {"CREATE TABLE tparent (id int PRIMARY KEY, v text)",
		"CREATE TABLE tchild (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES tparent (id))"},
	"sqlite": {"CREATE TABLE tparent (id INTEGER PRIMARY KEY, v TEXT)",
		"CREATE TABLE tchild (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL, CONSTRAINT tchild_parent FOREIGN KEY (parent_id) REFERENCES tparent (id))"},
	"mysql": {"CREATE TABLE tparent (id INT PRIMARY KEY, v VARCHAR(40))",
		"CREATE TABLE tchild (id INT PRIMARY KEY, parent_id INT NOT NULL, CONSTRAINT tchild_parent FOREIGN KEY (parent_id) REFERENCES tparent (id))"},
	"postgres": {"CREATE TABLE tparent (id int PRIMARY KEY, v text)",
		"CREATE TABLE tchild (id int PRIMARY KEY, parent_id int NOT NULL, CONSTRAINT tchild_parent FOREIGN KEY (parent_id) REFERENCES tparent (id))"},
}

// truncCompared are the queries whose results must agree.
var truncCompared = []string{
	"SELECT id, v FROM kvdef ORDER BY id",
	"SELECT id, v FROM tparent ORDER BY id",
	"SELECT id, parent_id FROM tchild ORDER BY id",
}

// TestTruncateDeleteAll streams, under source.truncate: delete-all, into
// each target: rows, then TRUNCATEs with changes before and after them in
// their transactions (one table; RESTART IDENTITY; a parent and its
// child named together; a parent with CASCADE, which names the child),
// and rows in later transactions, with a stop and a start between them.
// The target ends as the source, row for row, its foreign key never
// broken on the way.
func TestTruncateDeleteAll(t *testing.T) {
	src := source(t)
	src.Exec(t, truncTables["source"]...)
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dst := testdb.Open(t, dialect)
			dst.Exec(t, targetTables[dialect]...)
			dst.Exec(t, truncTables[dialect]...)
			cfg := pipeline("truncate_"+dialect, src, dst)
			cfg.Source.Set("tables", append([]string{"public.tparent", "public.tchild"}, published...))
			cfg.Source.Set("truncate", postgres.TruncateDeleteAll)
			slot := postgres.DefaultSlot(cfg.Name)
			src.Exec(t, "TRUNCATE kvdef, tparent, tchild")
			t.Cleanup(func() { src.SQL.Exec("SELECT pg_drop_replication_slot($1)", slot) })

			r := pipelinetest.Start(t, cfg)
			waitSlot(t, src, slot)
			caught := func(what string) {
				t.Helper()
				want := dumpOf(t, src, truncCompared)
				r.Until(t, 2*time.Minute, what, func() (bool, string) {
					got := dumpOf(t, dst, truncCompared)
					return got == want, diff(want, got)
				})
			}
			src.Exec(t,
				"BEGIN; INSERT INTO kvdef VALUES (1, 'a'), (2, 'b'); INSERT INTO tparent VALUES (1, 'p1'), (2, 'p2'); INSERT INTO tchild VALUES (10, 1), (11, 2); COMMIT",
				"BEGIN; INSERT INTO kvdef VALUES (3, 'c'); TRUNCATE kvdef; INSERT INTO kvdef VALUES (4, 'd'); UPDATE kvdef SET v = 'dd' WHERE id = 4; COMMIT")
			caught("the target applied the first TRUNCATE")
			r.Stop(t)
			src.Exec(t,
				"BEGIN; UPDATE kvdef SET v = 'ddd' WHERE id = 4; TRUNCATE kvdef RESTART IDENTITY; INSERT INTO kvdef VALUES (5, 'e'); COMMIT",
				"BEGIN; INSERT INTO tchild VALUES (12, 1); TRUNCATE tparent, tchild; INSERT INTO tparent VALUES (3, 'p3'); INSERT INTO tchild VALUES (13, 3); COMMIT",
				"INSERT INTO kvdef VALUES (6, 'f')",
				"BEGIN; INSERT INTO tparent VALUES (4, 'p4'); TRUNCATE tparent CASCADE; INSERT INTO tparent VALUES (5, 'p5'); INSERT INTO tchild VALUES (14, 5); COMMIT",
				"INSERT INTO tchild VALUES (15, 5)")
			r = pipelinetest.Start(t, cfg)
			caught("the target applied every TRUNCATE")
			if got, want := dumpOf(t, dst, truncCompared), "5|e\n6|f\n--\n5|p5\n--\n14|5\n15|5\n--\n"; got != want {
				t.Errorf("target:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// hiddenTruncates is a target without sink.Truncater, as StarRocks.
type hiddenTruncates struct{ sink.Sink }

// TestTruncateTargetRefusedAtStart: source.truncate: delete-all with a
// target that cannot empty a table inside a unit is refused when the
// pipeline starts, and by txsink check's engine.Check, naming the setting
// and what to do, before anything is read.
func TestTruncateTargetRefusedAtStart(t *testing.T) {
	dst := testdb.SQLite(t)
	cfg := pipeline("truncate_refused", &testdb.DB{URL: "postgres://postgres@127.0.0.1:1/test?sslmode=disable"}, dst)
	cfg.Source.Set("truncate", postgres.TruncateDeleteAll)
	target, err := sink.Open(context.Background(), dst.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	_, err = engine.New(context.Background(), cfg, engine.WithTarget(hiddenTruncates{target}))
	checkTruncateError(t, "engine.New", err)
	err = engine.Check(context.Background(), cfg, engine.WithTarget(hiddenTruncates{target}))
	checkTruncateError(t, "engine.Check", err)
}

func checkTruncateError(t *testing.T, what string, err error) {
	t.Helper()
	var te *engine.TruncateError
	if !errors.As(err, &te) {
		t.Fatalf("%s = %v, want a *engine.TruncateError", what, err)
	}
	for _, want := range []string{"source.truncate: delete-all", "cannot empty a table inside a unit's transaction", "set source.truncate: refuse"} {
		if !strings.Contains(te.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", what, te, want)
		}
	}
}
