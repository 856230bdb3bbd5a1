package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// TestSmallMaxAllowedPacket writes to a private MariaDB whose
// max_allowed_packet (8 KiB) is below the 16 KiB packets LOAD DATA LOCAL
// is streamed in: a group large enough for the bulk path is written with
// statements instead, in chunks that each fit; and a row no statement can
// carry is refused by its own key and position, with the value
// max_allowed_packet needs, not retried as a lost connection.
func TestSmallMaxAllowedPacket(t *testing.T) {
	db := testdb.PrivateMariaDB(t, "--max-allowed-packet=8192")
	db.Exec(t, "CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v LONGTEXT NOT NULL)")
	ctx := context.Background()
	tdb, err := mysql.Open(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tdb.Close() })
	tbl, err := tdb.Describe(ctx, schema.Name{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	group := func(rows int, value func(i int) string) commit.Group {
		g := commit.Group{Columns: []string{"id", "v"}}
		for i := range rows {
			g.Rows = append(g.Rows, []any{int64(i + 1), value(i)})
			g.Pos = append(g.Pos, changelog.Position{Partition: "p", Offset: int64(i + 1), Seq: int64(i + 1)})
		}
		return g
	}
	for _, rows := range []int{1, 7, 300} {
		g := group(rows, func(i int) string { return strings.Repeat(fmt.Sprint(i%10), 100) })
		if err := tdb.Apply(ctx, &commit.Unit{Pipeline: "packet", Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{g}}}}); err != nil {
			t.Fatalf("%d short rows through an 8 KiB packet: %v", rows, err)
		}
	}
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 300 {
		t.Fatalf("rows = %d (err %v), want 300", n, err)
	}

	// Row 2 of 3 is too long for any statement: it is named, not row 1.
	for _, rows := range []int{3, 300} {
		g := group(rows, func(i int) string {
			if i == 1 {
				return strings.Repeat("x", 10000)
			}
			return "short"
		})
		err = tdb.Apply(ctx, &commit.Unit{Pipeline: "packet", Batches: []*commit.Batch{{Table: tbl, Upserts: []commit.Group{g}}}})
		var te *sink.Error
		if !errors.As(err, &te) || te.Transient || te.Key != "(2)" || te.Pos != "p:2" ||
			!strings.Contains(err.Error(), "max_allowed_packet") || !strings.Contains(err.Error(), "at least") {
			t.Fatalf("%d rows, row 2 over max_allowed_packet: got %v, want a permanent error naming key (2) at p:2 and max_allowed_packet", rows, err)
		}
		t.Logf("%d rows: %v", rows, err)
	}
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM t WHERE v = 'short'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows of a refused unit committed (err %v)", n, err)
	}
}
