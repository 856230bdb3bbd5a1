package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// TestTruncatePlainMode feeds TRUNCATEs in plain mode on every server:
// the rows before one are gone, in the flush of the TRUNCATE and in
// earlier ones, and the changes after it in its flush are applied after
// it; Stats counts them.
func TestTruncatePlainMode(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE kv (id INT NOT NULL PRIMARY KEY, v VARCHAR(16) NULL)`)
		f := &feeder{t: t, e: newEngine(t, pipeline(db, config.Table{Source: "shop.kv", Target: "kv"}))}
		kv := func(id int, v string) changelog.Row { return row("id", changelog.Number(fmt.Sprint(id)), "v", v) }
		f.must(changelog.Insert, "shop.kv", changelog.Row{}, kv(1, "a"))
		f.must(changelog.Insert, "shop.kv", changelog.Row{}, kv(2, "b"))
		f.flush()
		f.must(changelog.Insert, "shop.kv", changelog.Row{}, kv(3, "c"))
		f.must(changelog.Truncate, "shop.kv", changelog.Row{}, changelog.Row{})
		f.must(changelog.Insert, "shop.kv", changelog.Row{}, kv(4, "d"))
		f.must(changelog.Insert, "shop.kv", changelog.Row{}, kv(2, "bb"))
		f.flush()
		if got, want := query(t, db, "SELECT id, v FROM kv ORDER BY id"), "2|bb\n4|d"; got != want {
			t.Errorf("kv:\n%s\nwant\n%s", got, want)
		}
		f.must(changelog.Truncate, "shop.kv", changelog.Row{}, changelog.Row{})
		f.flush()
		if got := query(t, db, "SELECT count(*) FROM kv"); got != "0" {
			t.Errorf("kv holds %s rows after a TRUNCATE alone", got)
		}
		if n := f.e.Stats().Events[changelog.Truncate]; n != 2 {
			t.Errorf("Stats counts %d TRUNCATEs, want 2", n)
		}
	})
}

// TestTruncateRefused: a TRUNCATE the pipeline cannot honour stops it at
// the change, naming its position, its tables and what to do: a target
// without sink.Truncater, and a target table that takes the rows of other
// source tables too (through a wildcard entry with a target, or two
// entries naming one target).
func TestTruncateRefused(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE kv (id INT NOT NULL PRIMARY KEY, v VARCHAR(16) NULL)`)
	target, err := sink.Open(context.Background(), db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	for _, tc := range []struct {
		name   string
		tables []config.Table
		opts   []engine.Option
		want   string
	}{
		{"a target that cannot", []config.Table{{Source: "shop.kv", Target: "kv"}}, []engine.Option{engine.WithTarget(struct{ sink.Sink }{target})},
			"p0:1: TRUNCATE of table shop.kv (target table kv): the target (struct { sink.Sink }) cannot empty a table inside a unit's transaction; set source.truncate: refuse"},
		{"a wildcard to one target", []config.Table{{Source: "shop.kv*", Target: "kv"}}, nil,
			"p0:1: TRUNCATE of table shop.kv (target table kv): its tables entry (source shop.kv*, target kv) routes every table it matches to one target table"},
		{"two entries to one target", []config.Table{{Source: "shop.kv", Target: "kv"}, {Source: "old.kv", Target: "kv"}}, nil,
			"p0:1: TRUNCATE of table shop.kv (target table kv): tables entries shop.kv and old.kv both route to it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &feeder{t: t, e: newEngine(t, pipeline(db, tc.tables...), tc.opts...)}
			err := f.add(changelog.Truncate, "shop.kv", changelog.Row{}, changelog.Row{})
			var te *engine.TruncateError
			if !errors.As(err, &te) || errkind.Of(err) != errkind.Permanent {
				t.Fatalf("got %v, want a permanent *engine.TruncateError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n%s\nwant it to start\n%s", err, tc.want)
			}
		})
	}
}
