package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/txsink/txsink/sink"
	"io"
	"os"
	"path/filepath"
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
how to look at it. Needs no server.

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
	res := workload.Generate(workload.Spec{Orders: *orders, Partitions: *partitions, Seed: 1, Events: true})
	var paths []string
	for p, changes := range res.Partitions {
		path := filepath.Join(abs, fmt.Sprintf("changelog-p%d.jsonl", p))
		if err := writeNative(path, changes); err != nil {
			return err
		}
		paths = append(paths, filepath.Base(path))
	}
	cfgPath := filepath.Join(abs, "pipeline.yaml")
	if err := os.WriteFile(cfgPath, []byte(demoConfig(paths)), 0o644); err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	dbPath := filepath.Join(abs, "demo.db")
	if err := createDemoSchema(ctx, dbPath); err != nil {
		return err
	}

	e, err := engine.New(ctx, cfg, engine.WithBaseDir(abs))
	if err != nil {
		return err
	}
	defer e.Close()
	bar := newProgressBar(stderr, totalSize(abs, paths))
	runErr := e.Run(ctx, engine.RunOptions{Progress: bar})
	bar.done()
	if runErr != nil {
		return runErr
	}
	st := e.Stats()
	took := time.Since(st.Started)

	diff, err := verifyDemo(ctx, e, res)
	if err != nil {
		return err
	}
	var events int64
	for _, n := range st.Events {
		events += n
	}
	written := st.Upserted + st.Deleted + st.Inserted
	fmt.Fprintf(stdout, "\nread     %s (%d +I, %d -U, %d +U, %d -D) from %s\n", countOf(events, "event"),
		st.Events[1], st.Events[2], st.Events[3], st.Events[4], countOf(len(paths), "file"))
	fmt.Fprintf(stdout, "wrote    %s after per-key reduction: %d upserted, %d deleted, %d appended (%.1f events per row written)\n",
		countOf(written, "row"), st.Upserted, st.Deleted, st.Inserted, float64(events)/float64(max(written, 1)))
	fmt.Fprintf(stdout, "commits  %s, each with its progress rows\n", countOf(st.Commits, "atomic transaction"))
	fmt.Fprintf(stdout, "speed    %.0f events/s, %.0f rows written/s, %s in all\n", float64(events)/took.Seconds(), float64(written)/took.Seconds(), took.Round(time.Millisecond))
	if diff != "" {
		return fmt.Errorf("the database differs from the changelog's final state:\n%s", diff)
	}
	fmt.Fprintf(stdout, "verified the target equals the changelog's final state: %s, %s, %s\n\n",
		countOf(len(res.Final["orders"]), "order"), countOf(len(res.Final["order_items"]), "order item"), countOf(res.Events, "event"))
	rel := *dir
	fmt.Fprintf(stdout, "Look at the result:\n")
	fmt.Fprintf(stdout, "  sqlite3 %s 'SELECT status, COUNT(*), SUM(amount) FROM orders GROUP BY status'\n", filepath.Join(rel, "demo.db"))
	fmt.Fprintf(stdout, "  sqlite3 %s 'SELECT * FROM txsink_progress'\n", filepath.Join(rel, "demo.db"))
	fmt.Fprintf(stdout, "Run the same pipeline again: it resumes after its last commit and applies nothing twice:\n")
	fmt.Fprintf(stdout, "  go run ./cmd/txsink run --config %s\n", filepath.Join(rel, "pipeline.yaml"))
	return nil
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

func writeNative(path string, changes []changelog.Change) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for i := range changes {
		line, err = native.Append(line[:0], &changes[i])
		if err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
		if _, err := w.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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

func verifyDemo(ctx context.Context, e *engine.Engine, res *workload.Result) (string, error) {
	cat, ok := e.Target().(sink.Catalog)
	if !ok {
		return "", fmt.Errorf("verify the demo: its target (%T) is no SQL database", e.Target())
	}
	db := cat.DB()
	var diff strings.Builder
	for table, key := range map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}} {
		got, err := workload.ReadState(ctx, db, table, key)
		if err != nil {
			return "", err
		}
		diff.WriteString(workload.Diff(table, workload.NormalizeState(res.Final[table]), got, 10))
	}
	var events int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM order_events").Scan(&events); err != nil {
		return "", err
	}
	if events != res.Events {
		fmt.Fprintf(&diff, "order_events: %s, want %d\n", countOf(events, "row"), res.Events)
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
