package benchrun

import (
	"bufio"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// TestLineCuts cuts a dump into the bench's transactions: whole lines,
// in order, the first parts one line longer when they cannot be equal,
// lines longer than the read buffer included.
func TestLineCuts(t *testing.T) {
	long := strings.Repeat("x", 40) + "\n"
	tests := []struct {
		data string
		n    int
		want []string
	}{
		{"a\nb\nc\nd\ne\n", 3, []string{"a\nb\n", "c\nd\n", "e\n"}},
		{"a\nb\n", 3, []string{"a\n", "b\n", ""}},
		{"a\nb\nc\n", 1, []string{"a\nb\nc\n"}},
		{"", 2, []string{"", ""}},
		{"a\tx\n" + long + "bb\n", 2, []string{"a\tx\n" + long, "bb\n"}},
	}
	for _, tc := range tests {
		lines := int64(strings.Count(tc.data, "\n"))
		cuts, err := lineCuts(bufio.NewReaderSize(strings.NewReader(tc.data), 16), lines, tc.n)
		if err != nil {
			t.Fatalf("lineCuts(%q, %d): %v", tc.data, tc.n, err)
		}
		var got []string
		for c := range tc.n {
			got = append(got, tc.data[cuts[c]:cuts[c+1]])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("lineCuts(%q, %d) cut %q, want %q", tc.data, tc.n, got, tc.want)
		}
	}
	if _, err := lineCuts(bufio.NewReader(strings.NewReader("a\n")), 2, 1); err == nil {
		t.Error("lineCuts of a dump shorter than its rows: no error")
	}
}

// TestAppendBulkText writes each value a driver scans as one field of
// the bulk loaders' text format.
func TestAppendBulkText(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.FixedZone("x", 3600))
	tests := []struct {
		v    any
		want string
	}{
		{nil, `\N`},
		{[]byte("a\tb"), `a\tb`},
		{"line\nback\\", `line\nback\\`},
		{int64(-42), "-42"},
		{2.5, "2.5"},
		{at, "2026-01-02 02:04:05.12"},
		{true, "true"},
	}
	for _, tc := range tests {
		if got := string(appendBulkText([]byte(">"), tc.v)); got != ">"+tc.want {
			t.Errorf("appendBulkText(%#v) = %q, want %q", tc.v, got, ">"+tc.want)
		}
	}
}

// TestBulkLoad dumps the bench tables and loads the dump with each
// database's bulk path into the empty copies, in one transaction and cut
// into more transactions than a table has rows: the copies then hold
// exactly the rows of the originals, tabs, newlines, backslashes, NULLs,
// multi-byte text and fractional seconds included.
func TestBulkLoad(t *testing.T) {
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			s, err := sink.Open(t.Context(), db.URL, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			tdb := s.(*sqlsink.DB)
			r := &Result{opts: &Options{Dir: t.TempDir()}, dialect: tdb.Dialect().Name(), prefix: "b_", bulkPrefix: "c_"}
			for _, prefix := range []string{r.prefix, r.bulkPrefix} {
				for _, st := range workload.SchemaPrefixed(dialect, prefix) {
					if !strings.Contains(st, "order_events") {
						db.Exec(t, st)
					}
				}
			}
			db.Exec(t,
				`INSERT INTO b_orders (id, customer, status, amount, created_at, note) VALUES
					(1, 'tab`+"\t"+`here', 'new', 12.50, '2026-01-02 03:04:05.120', 'line`+"\n"+`break \ and \\N'),
					(2, '日本語', 'paid', 0.01, '2026-12-31 23:59:59.999', NULL),
					(3, 'c3', 'shipped', 9999999999.99, '2026-06-01 00:00:00', '')`,
				`INSERT INTO b_order_items (order_id, line_no, sku, qty, price) VALUES
					(1, 1, 'sku-1', 2, 1.25), (1, 2, 'sku\r2', 1, 0.00)`,
			)
			dumps, err := r.dump(t.Context(), tdb.DB())
			if err != nil {
				t.Fatal(err)
			}
			if r.finalRows != 5 {
				t.Fatalf("dumped %d rows, want 5", r.finalRows)
			}
			for _, n := range []int{1, 3} {
				if err := emptyTables(t.Context(), tdb.DB(), r.dialect, tables, r.bulkPrefix); err != nil {
					t.Fatal(err)
				}
				took, _, err := r.bulkLoad(t.Context(), tdb.DB(), dumps, n)
				if err != nil {
					t.Fatalf("bulk load in %d transactions: %v", n, err)
				}
				if took <= 0 {
					t.Errorf("bulk load in %d transactions took %v", n, took)
				}
				for _, tb := range tables {
					want, err := workload.ReadDigest(t.Context(), db.SQL, r.prefix+tb.name)
					if err != nil {
						t.Fatal(err)
					}
					got, err := workload.ReadDigest(t.Context(), db.SQL, r.bulkPrefix+tb.name)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("after the bulk load in %d transactions %s has %d rows (digest %x), the original %d (digest %x)", n, tb.name, got.Rows, got.Sum, want.Rows, want.Sum)
					}
				}
			}
			// A copy that does not end with exactly the dump's rows is an
			// error, not a figure.
			if err := emptyTables(t.Context(), tdb.DB(), r.dialect, tables, r.bulkPrefix); err != nil {
				t.Fatal(err)
			}
			db.Exec(t, "INSERT INTO c_order_items (order_id, line_no, sku, qty, price) VALUES (99, 1, 'x', 1, 1)")
			if _, _, err := r.bulkLoad(t.Context(), tdb.DB(), dumps, 1); err == nil || !strings.Contains(err.Error(), "loaded 3 rows of 2") {
				t.Errorf("bulk load into a copy holding a row already: %v, want it to say it loaded 3 rows of 2", err)
			}
			if err := dropTables(t.Context(), tdb.DB(), r.prefix, r.bulkPrefix); err != nil {
				t.Fatal(err)
			}
			if err := dropTables(t.Context(), tdb.DB(), r.prefix); err != nil {
				t.Errorf("dropping tables that are gone: %v", err)
			}
		})
	}
}

// TestBulkMethods names the bulk path of every dialect a target can have.
func TestBulkMethods(t *testing.T) {
	for _, d := range []string{"mysql", "mariadb", "postgres", "sqlite"} {
		if bulkMethods[d] == "" {
			t.Errorf("no bulk method named for %s", d)
		}
	}
	if _, err := loadChunks(t.Context(), nil, "oracle", "p_", nil, nil, 0); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("loadChunks for an unknown dialect: %v", err)
	}
}
