package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// TestDiskFullBlamesNoRow fills a database bounded by max_page_count
// (SQLITE_FULL, "database or disk is full"): the error names no row and
// says to fix the server's condition, no row is marked refused (the
// dead-letter policy quarantines none), and nothing is committed, at one
// row per statement and at many.
func TestDiskFullBlamesNoRow(t *testing.T) {
	for _, rows := range []int{1, 40} {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "t.db")
		setup, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := setup.DB().ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		var pages int
		if err := setup.DB().QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		setup.Close()
		// Room for the progress table and a few pages more, not for the rows.
		db, err := open(ctx, path, "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=max_page_count("+strconv.Itoa(pages+4)+")&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		tbl, err := db.Describe(ctx, schema.Name{Name: "t"})
		if err != nil {
			t.Fatal(err)
		}
		g := commit.Group{Columns: []string{"id", "v"}}
		for i := range rows {
			g.Rows = append(g.Rows, []any{int64(i + 1), strings.Repeat("x", 64<<10/rows)})
			g.Pos = append(g.Pos, changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)})
		}
		err = db.Apply(ctx, &commit.Unit{Pipeline: "full", Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{g}}}})
		var te *sink.Error
		if !errors.As(err, &te) || te.Transient || te.Key != "" || te.Pos != "" ||
			!strings.Contains(err.Error(), "full") || !strings.Contains(err.Error(), "reason of its own") || strings.Contains(err.Error(), "fix the value") {
			t.Fatalf("%d rows into a full database: got %v, want a permanent error of the server that names no row", rows, err)
		}
		if _, refused := sink.RefusedRow(err); refused {
			t.Errorf("%d rows into a full database: the error marks a row refused, which bad-input: dead-letter would quarantine", rows)
		}
		t.Logf("%d rows: %v", rows, err)
		var n int
		if err := db.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 0 {
			t.Errorf("%d rows committed into a full database (err %v)", n, err)
		}
	}
}
