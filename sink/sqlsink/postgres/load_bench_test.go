package postgres_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

// The load benchmarks report the server backend's CPU time beside the
// wall time: on a busy host it is the steadier figure, and on the bench's
// two cores the server's CPU is taken from the decoder's.

// BenchmarkLoadGroup applies units of one group of rows of the bench's
// orders table by each path — multi-row VALUES statements, the array
// statement, COPY into the table, COPY through the staging table — for new
// keys and for keys that all exist, at several group sizes. loadMinRows
// and stageMinRows are where COPY starts to win.
func BenchmarkLoadGroup(b *testing.B) {
	paths := []struct {
		name     string
		minRows  int
		strategy postgres.Strategy
		binary   bool // COPY in binary format
	}{
		{"values", -1, postgres.Adaptive, false},
		{"arrays", math.MaxInt, postgres.Adaptive, false},
		{"direct", 1, postgres.DirectOnly, false},
		{"direct-binary", 1, postgres.DirectOnly, true},
		{"staged", 1, postgres.StagedOnly, false},
		{"staged-binary", 1, postgres.StagedOnly, true},
	}
	for _, size := range []int{30, 100, 300, 1000, 3000, 10000} {
		for _, existing := range []bool{false, true} {
			for _, p := range paths {
				if existing && p.strategy == postgres.DirectOnly {
					continue // a failed direct try, then staged
				}
				keys := "new"
				if existing {
					keys = "existing"
				}
				b.Run(fmt.Sprintf("%s/%d/%s", keys, size, p.name), func(b *testing.B) {
					bt := newBenchTarget(b, p.minRows, p.strategy)
					postgres.SetBinary(b, p.binary)
					next := 0
					bt.run(b, size, existing, func() *commit.Unit {
						if existing {
							next = 0
						}
						return &commit.Unit{Pipeline: "bench", Batches: []*commit.Batch{bt.orders(size, &next)}}
					})
				})
			}
		}
	}
}

// BenchmarkLoadUnit applies units shaped as the insert-only bench's are:
// 1,250 new orders and their 3,750 items, with a progress row, by the
// array statements and by COPY in text and in binary format.
func BenchmarkLoadUnit(b *testing.B) {
	for _, p := range []struct {
		name    string
		minRows int
		binary  bool
	}{{"arrays", math.MaxInt, false}, {"copy", 100, false}, {"copy-binary", 100, true}} {
		b.Run(p.name, func(b *testing.B) {
			bt := newBenchTarget(b, p.minRows, postgres.Adaptive)
			postgres.SetBinary(b, p.binary)
			if err := bt.tdb.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			next, pos := 0, int64(0)
			bt.run(b, 5000, false, func() *commit.Unit {
				first := next
				o := bt.orders(1250, &next)
				var items [][]any
				for id := first + 1; id <= next; id++ {
					for line := 1; line <= 3; line++ {
						items = append(items, []any{int64(id), int64(line), "SKU-12345", int64(2), "19.99"})
					}
				}
				pos += 5000
				return &commit.Unit{Pipeline: "bench", Progress: []changelog.Position{{Partition: "p0", Offset: pos}}, Batches: []*commit.Batch{o,
					{Table: bt.items, Upserts: []commit.Group{{Columns: []string{"order_id", "line_no", "sku", "qty", "price"}, Rows: items, Pos: positions(len(items))}}},
				}}
			})
		})
	}
}

// BenchmarkLoadFormats applies units by COPY in text and in binary format
// by turns, on one session, and reports each format's server CPU and wall
// time per row: taking turns unit by unit cancels the drift of a shared
// machine, which two separate runs do not. "unit" is BenchmarkLoadUnit's
// (1,250 new orders and their 3,750 items), "orders/N" a group of N new
// orders, "staged/N" N orders that all exist, through the staging table.
func BenchmarkLoadFormats(b *testing.B) {
	shapes := []struct {
		name     string
		orders   int
		items    bool
		existing bool // the same keys every time, upserted through the staging table
	}{{"unit", 1250, true, false}, {"orders/100", 100, false, false}, {"orders/1000", 1000, false, false},
		{"orders/10000", 10000, false, false}, {"staged/1000", 1000, false, true}, {"staged/10000", 10000, false, true}}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			strategy := postgres.Adaptive
			if sh.existing {
				strategy = postgres.StagedOnly
			}
			bt := newBenchTarget(b, 100, strategy)
			b.Cleanup(func() { *postgres.BinaryCopy = true })
			ctx := context.Background()
			if err := bt.tdb.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			next, pos, rows := 0, int64(0), sh.orders
			if sh.items {
				rows *= 4
			}
			unit := func() *commit.Unit {
				if sh.existing {
					next = 0
				}
				first := next
				u := &commit.Unit{Pipeline: "bench", Batches: []*commit.Batch{bt.orders(sh.orders, &next)}}
				if sh.items {
					var items [][]any
					for id := first + 1; id <= next; id++ {
						for line := 1; line <= 3; line++ {
							items = append(items, []any{int64(id), int64(line), "SKU-12345", int64(2), "19.99"})
						}
					}
					pos += int64(rows)
					u.Progress = []changelog.Position{{Partition: "p0", Offset: pos}}
					u.Batches = append(u.Batches, &commit.Batch{Table: bt.items, Upserts: []commit.Group{{
						Columns: []string{"order_id", "line_no", "sku", "qty", "price"}, Rows: items, Pos: positions(len(items))}}})
				}
				return u
			}
			var server, wall [2]time.Duration
			for b.Loop() {
				for f := range 2 {
					b.StopTimer()
					u := unit()
					*postgres.BinaryCopy = f == 1
					b.StartTimer()
					cpu, start := backendCPU(b, bt.pid), time.Now()
					if err := bt.apply.Apply(ctx, u); err != nil {
						b.Fatal(err)
					}
					wall[f] += time.Since(start)
					server[f] += backendCPU(b, bt.pid) - cpu
				}
			}
			n := float64(b.N * rows)
			for f, name := range []string{"text", "binary"} {
				b.ReportMetric(float64(server[f].Nanoseconds())/n, name+"-server-ns/row")
				b.ReportMetric(float64(wall[f].Nanoseconds())/n, name+"-ns/row")
			}
		})
	}
}

// benchTarget is a private schema with the bench's orders and order_items
// tables and a target over it, on one session whose backend is pid.
type benchTarget struct {
	tdb, apply     *sqlsink.DB
	ordersT, items *schema.Table
	pid            int
}

// newBenchTarget makes Load take groups of minRows rows or more by s; a
// negative minRows means the multi-row VALUES statements, which groups
// take when some column has no array form.
func newBenchTarget(b *testing.B, minRows int, s postgres.Strategy) *benchTarget {
	db := testdb.Postgres(b)
	db.Exec(b, `CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR(64) NOT NULL,
		status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, created_at TIMESTAMP(3) NOT NULL, note VARCHAR(200) NULL)`,
		`CREATE TABLE order_items (order_id BIGINT NOT NULL, line_no INT NOT NULL, sku VARCHAR(32) NOT NULL,
		qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line_no))`)
	ctx := context.Background()
	tdb, err := postgres.Open(ctx, db.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tdb.Close() })
	bt := &benchTarget{tdb: tdb, apply: tdb}
	if minRows < 0 {
		bt.apply, minRows = sqlsink.New(tdb.DB(), plain{tdb.Dialect()}), math.MaxInt
	}
	postgres.SetLoad(b, minRows, s)
	tdb.DB().SetMaxOpenConns(1)
	if err := tdb.DB().QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&bt.pid); err != nil {
		b.Fatal(err)
	}
	if bt.ordersT, err = tdb.Describe(ctx, schema.Name{Name: "orders"}); err != nil {
		b.Fatal(err)
	}
	if bt.items, err = tdb.Describe(ctx, schema.Name{Name: "order_items"}); err != nil {
		b.Fatal(err)
	}
	return bt
}

// orders returns a batch of n orders with the keys after *next.
func (bt *benchTarget) orders(n int, next *int) *commit.Batch {
	rows := make([][]any, n)
	for i := range rows {
		*next++
		rows[i] = []any{int64(*next), "Margaret Hamilton", "SHIPPED", "1234.50", time.Date(2026, 11, 1, 8, 0, *next%60, 123000000, time.UTC), nil}
	}
	return &commit.Batch{Table: bt.ordersT, Upserts: []commit.Group{{
		Columns: []string{"id", "customer", "status", "amount", "created_at", "note"}, Rows: rows, Pos: positions(n)}}}
}

// run applies the units unit makes, rows rows each (once beforehand when
// existing, so that their keys exist), and reports the costs per row.
func (bt *benchTarget) run(b *testing.B, rows int, existing bool, unit func() *commit.Unit) {
	ctx := context.Background()
	if existing {
		if err := bt.apply.Apply(ctx, unit()); err != nil {
			b.Fatal(err)
		}
	}
	server := backendCPU(b, bt.pid)
	for b.Loop() {
		b.StopTimer()
		u := unit()
		b.StartTimer()
		if err := bt.apply.Apply(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N * rows)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/row")
	b.ReportMetric(float64(backendCPU(b, bt.pid)-server)/n, "server-ns/row")
}

// backendCPU returns the CPU time the server process pid has used (user
// and system, from /proc: the server must run on this host).
func backendCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("server CPU time: %v (the server must run on this host)", err)
	}
	// The fields after the command name, which is in parentheses: utime
	// is the 12th and stime the 13th, in clock ticks.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on every Linux architecture Go runs on.
const clockTicks = 100
