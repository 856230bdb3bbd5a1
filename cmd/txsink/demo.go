package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/txsink/txsink/sink"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
)

// demoMarker marks a folder as the demo's own, so a second demo run may
// clear it and nothing else.
const demoMarker = ".txsink-demo"

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", `txsink demo [--dir txsink-demo] [--orders 20000]

Generates a realistic orders / order_items / order_events changelog (inserts,
updates, deletes, -D/+I pairs of one key) as txsink-json files, applies it to
an embedded SQLite database with the same engine 'txsink run' uses, checks
the result row by row against the changelog's final state, and tells you
how to look at it. Needs no server. The changelog is written as it is
generated, never held whole, so the demo's memory stays within the bound a
run keeps. Ctrl-C stops it with what it applied committed; it says how far
it got, and txsink run --config DIR/pipeline.yaml resumes.

Example:
  go run ./cmd/txsink demo --orders 50000`, stdout)
	dir := fs.String("dir", "txsink-demo", "folder for the changelog files, the pipeline config and the SQLite database (recreated on each run)")
	orders := fs.Int("orders", 20000, "orders to generate")
	partitions := fs.Int("partitions", 2, "changelog files (partitions) to spread the orders over")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *orders < 1 || *partitions < 1 {
		return usageError{msg: "--orders and --partitions must be at least 1"}
	}
	if err := prepareDemoDir(*dir); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "txsink demo: generating %s over %s in %s\n", countOf(*orders, "order"), countOf(*partitions, "partition"), *dir)
	paths := make([]string, *partitions)
	for p := range paths {
		paths[p] = fmt.Sprintf("changelog-p%d.jsonl", p)
	}
	// The changelog goes to its files as it is generated, never whole in
	// memory: the demo stays within the bound a run keeps.
	want, err := generateDemo(abs, paths, *orders, newStatusLine(stderr))
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(abs, "pipeline.yaml")
	if err := os.WriteFile(cfgPath, []byte(demoConfig(paths)), 0o644); err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	// The generator's garbage, collected under Go's defaults, goes back
	// to the system before the run's memory limit applies.
	debug.FreeOSMemory()
	tuneGC(cfg) // as txsink run does
	dbPath := filepath.Join(abs, "demo.db")
	if err := createDemoSchema(ctx, dbPath); err != nil {
		return err
	}

	e, err := engine.New(ctx, cfg, engine.WithBaseDir(abs))
	if err != nil {
		return err
	}
	defer e.Close()
	fmt.Fprintf(stdout, "txsink demo: applying it to %s\n", filepath.Join(*dir, "demo.db"))
	bar := newIdleBar(stderr)
	bar.begin(totalSize(abs, paths), func() int64 { return sumEvents(e.Stats()) })
	runErr := e.Run(ctx, engine.RunOptions{Progress: bar})
	bar.done()
	if runErr != nil {
		return runErr
	}
	st := e.Stats()
	took := time.Since(st.Started)
	rel := *dir
	rerun := fmt.Sprintf("  go run ./cmd/txsink run --config %s\n", filepath.Join(rel, "pipeline.yaml"))
	if ctx.Err() != nil && !st.EndOfInput {
		fmt.Fprintf(stdout, "\n%s:\n%s", interruptedAt(bar), rerun)
		return nil
	}
	fmt.Fprint(stdout, demoReport(st, took, len(paths)))
	// What the run buffered is garbage now: collected and given back
	// before verifying reads every table, whose garbage would otherwise
	// pile on top of it. Without this the demo's peak RSS came in the
	// verification, above txsink run's on the same changelog (up to 92 MB
	// for 20,000 orders on a loaded two-core machine); with it the peak
	// is the run's own.
	debug.FreeOSMemory()
	diff, err := verifyDemo(ctx, e, want)
	if err != nil {
		return err
	}
	if diff != "" {
		return fmt.Errorf("the database differs from the changelog's final state:\n%s", diff)
	}
	fmt.Fprintf(stdout, "verified %s, %s, %s, row by row\n\n",
		countOf(want.digest["orders"].Rows, "order"), countOf(want.digest["order_items"].Rows, "order item"), countOf(want.events, "event"))
	fmt.Fprintf(stdout, "Look at the result:\n")
	fmt.Fprintf(stdout, "  sqlite3 %s 'SELECT status, COUNT(*), SUM(amount) FROM orders GROUP BY status'\n", filepath.Join(rel, "demo.db"))
	fmt.Fprintf(stdout, "  sqlite3 %s 'SELECT * FROM txsink_progress'\n", filepath.Join(rel, "demo.db"))
	fmt.Fprintf(stdout, "Run it again: it resumes after its last commit and applies nothing twice:\n%s", rerun)
	return nil
}

// demoReport is what the demo read, wrote and how fast, in lines that fit
// 80 columns whatever the counts.
func demoReport(st engine.Stats, took time.Duration, files int) string {
	events := sumEvents(st)
	written := st.Upserted + st.Deleted + st.Inserted
	secs := max(took.Seconds(), 1e-9)
	var b strings.Builder
	fmt.Fprintf(&b, "\nread     %s from %s\n", countOf(events, "event"), countOf(files, "file"))
	fmt.Fprintf(&b, "         %d +I, %d -U, %d +U, %d -D\n",
		st.Events[changelog.Insert], st.Events[changelog.UpdateBefore], st.Events[changelog.UpdateAfter], st.Events[changelog.Delete])
	fmt.Fprintf(&b, "wrote    %s after per-key reduction\n", countOf(written, "row"))
	fmt.Fprintf(&b, "         %d upserted, %d deleted, %d appended\n", st.Upserted, st.Deleted, st.Inserted)
	fmt.Fprintf(&b, "reduced  %.1f events per row written\n", float64(events)/float64(max(written, 1)))
	fmt.Fprintf(&b, "commits  %s, each with its progress rows\n", countOf(st.Commits, "atomic transaction"))
	fmt.Fprintf(&b, "speed    %.0f events/s, %.0f rows/s, %s in all\n", float64(events)/secs, float64(written)/secs, took.Round(time.Millisecond))
	return b.String()
}

// demoState is what the demo's changelog leaves, small enough to keep
// while the pipeline runs: the keyed tables' digests (row counts and
// hashes), the order_events rows, and the spec that made it, to generate
// it again for a row-by-row diff should the digests differ.
type demoState struct {
	spec   workload.Spec
	digest workload.Digest
	events int
}

// generateDemo generates the demo's changelog of orders into the files
// paths (one per partition) under dir, telling status how far it got, and
// returns the state it leaves.
func generateDemo(dir string, paths []string, orders int, status *statusLine) (*demoState, error) {
	spec := workload.Spec{Orders: orders, Partitions: len(paths), Seed: 1, Events: true}
	ws := make([]*bufio.Writer, len(paths))
	files := make([]*os.File, len(paths))
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for p, name := range paths {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			closeAll()
			return nil, err
		}
		files[p], ws[p] = f, bufio.NewWriterSize(f, 1<<20)
	}
	var line []byte
	var events int64
	res, err := workload.Stream(spec,
		func(p int, txn []changelog.Change) error {
			for i := range txn {
				var err error
				if line, err = native.Append(line[:0], &txn[i]); err != nil {
					return fmt.Errorf("write %s: %w", paths[p], err)
				}
				if _, err = ws[p].Write(line); err != nil {
					return err
				}
			}
			events += int64(len(txn))
			return nil
		},
		func(n int) {
			status.show(fmt.Sprintf("generated %d of %d orders, %s", n, orders, countOf(events, "event")))
		})
	status.clear()
	if err != nil {
		closeAll()
		return nil, err
	}
	for p, w := range ws {
		if err := w.Flush(); err != nil {
			closeAll()
			return nil, fmt.Errorf("write %s: %w", paths[p], err)
		}
		if err := files[p].Close(); err != nil {
			files[p] = nil
			closeAll()
			return nil, fmt.Errorf("write %s: %w", paths[p], err)
		}
		files[p] = nil
	}
	return &demoState{spec: spec, digest: res.Digest, events: res.Events}, nil
}

func prepareDemoDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		if _, err := os.Stat(filepath.Join(dir, demoMarker)); err != nil {
			return fmt.Errorf("%s exists and was not made by txsink demo; choose another --dir", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, demoMarker), []byte("made by txsink demo; the demo deletes this folder when it runs again\n"), 0o644)
}

func demoConfig(paths []string) string {
	return `# Made by txsink demo. Run it again with:
#   txsink run --config pipeline.yaml
name: demo
source:
  type: file
  partitions: [` + strings.Join(paths, ", ") + `]    # each file a partition, read concurrently
  format: txsink-json
target:
  url: sqlite://demo.db
tables:
  - source: shop.orders
  - source: shop.order_items
    primary-key: [order_id, line_no]
  - source: shop.order_events
    append-only: true
sink:
  buffer-flush.max-rows: 5000
  buffer-flush.max-bytes: 16MiB
  buffer-flush.interval: 1s
`
}

func createDemoSchema(ctx context.Context, path string) error {
	t, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer t.Close()
	for _, s := range workload.Schema("sqlite") {
		if _, err := t.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create demo schema: %w", err)
		}
	}
	return nil
}

// verifyDemo compares the target with the state the changelog leaves:
// the keyed tables by digest, read row by row without holding them, and
// order_events by count. Should a digest differ, it generates the
// changelog again and diffs the table row by row, to say which rows.
func verifyDemo(ctx context.Context, e *engine.Engine, want *demoState) (string, error) {
	cat, ok := e.Target().(sink.Catalog)
	if !ok {
		return "", fmt.Errorf("verify the demo: its target (%T) is no SQL database", e.Target())
	}
	db := cat.DB()
	var diff strings.Builder
	for _, table := range []string{"orders", "order_items"} {
		got, err := workload.ReadDigest(ctx, db, table)
		if err != nil {
			return "", err
		}
		if got == want.digest[table] {
			continue
		}
		key := map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}}[table]
		rows, err := workload.ReadState(ctx, db, table, key)
		if err != nil {
			return "", err
		}
		final := workload.Generate(want.spec).Final[table]
		diff.WriteString(workload.Diff(table, workload.NormalizeState(final), rows, 10))
	}
	var events int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM order_events").Scan(&events); err != nil {
		return "", err
	}
	if events != want.events {
		fmt.Fprintf(&diff, "order_events: %s, want %d\n", countOf(events, "row"), want.events)
	}
	return diff.String(), nil
}

func totalSize(dir string, paths []string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(filepath.Join(dir, p)); err == nil {
			n += fi.Size()
		}
	}
	return n
}
