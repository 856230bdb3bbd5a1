//go:build unix

package main

// These tests run the real txsink binary as a child process, stop it with
// real signals (SIGINT, SIGTERM, SIGKILL), run it again, and prove the target's
// final state exact: every row of the workload's final state, and exactly
// as many append-only order_events rows as the changelog inserts (a replay
// would duplicate them). Between runs, the committed state must equal the
// changelog replayed up to the committed progress, line for line: progress
// and data are committed in one transaction.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"

	_ "modernc.org/sqlite" // the SQLite driver, to make a target file by hand
)

// Deadlines of the waits below. They bound the loops; nothing sleeps for
// them: every wait returns as soon as its condition holds.
const (
	startDeadline = 60 * time.Second // until a started run commits (or a run ends)
	exitDeadline  = 60 * time.Second // until a signalled or finished run exits
)

// ---------------------------------------------------------------------------
// The binary

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildSkip string
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// txsinkBinary builds the txsink binary once per test process ("go build"
// of this package) and returns its path. Without a go command the test is
// skipped, except under CI=true, where it fails.
func txsinkBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			if root := os.Getenv("GOROOT"); root != "" {
				if p := filepath.Join(root, "bin", "go"); fileExists(p) {
					goCmd, err = p, nil
				}
			}
		}
		if err != nil {
			buildSkip = fmt.Sprintf("the go command is not available (%v): cannot build the txsink binary to run as a child process", err)
			return
		}
		binDir, buildErr = os.MkdirTemp("", "txsink-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "txsink")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goCmd, "build", "-o", binPath, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build -o %s .: %v\n%s", binPath, err, out)
		}
	})
	if buildSkip != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(buildSkip + " (CI=true: these tests must run)")
		}
		t.Skip(buildSkip)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ---------------------------------------------------------------------------
// Child processes

// childAttr gives each child process its attributes: on Linux, the child
// is killed when the test process dies (a test binary that times out runs
// no cleanup, and a following txsink would otherwise run on).
var childAttr = func() *syscall.SysProcAttr { return nil }

// proc is one running txsink child process. Its stderr is kept whole and
// scanned for the debug log's "committed" lines as they come.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and its output is read

	mu      sync.Mutex
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	partial []byte // stderr after its last '\n'
	commits int    // "committed" log lines seen
	notify  chan struct{}
}

// procWriter feeds a stream of the child into p.
type procWriter struct {
	p      *proc
	stderr bool
}

func (w procWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	if !w.stderr {
		p.stdout.Write(b)
		p.mu.Unlock()
		return len(b), nil
	}
	p.stderr.Write(b)
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(p.partial[:i], []byte(" msg=committed ")) {
			p.commits++
		}
		p.partial = p.partial[i+1:]
	}
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return len(b), nil
}

// start starts the binary with args. The process is killed, if still
// running, when the test ends.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, done: make(chan struct{}), notify: make(chan struct{}, 1)}
	p.cmd = exec.Command(txsinkBinary(t), args...)
	p.cmd.SysProcAttr = childAttr()
	p.cmd.Stdout = procWriter{p: p}
	p.cmd.Stderr = procWriter{p: p, stderr: true}
	// The test's environment, without the TXSINK_* variables: the child
	// gets its target from the config only.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TXSINK_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start txsink %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(exitDeadline):
			t.Errorf("txsink (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
		}
	})
	return p
}

func (p *proc) Commits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commits
}

func (p *proc) Stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

func (p *proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitCommits waits until the child has logged at least n commits. It
// fails the test if the child exits first or the deadline passes.
func (p *proc) waitCommits(n int) {
	p.t.Helper()
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	for {
		if p.Commits() >= n {
			return
		}
		select {
		case <-p.notify:
		case <-p.done:
			if p.Commits() >= n {
				return
			}
			p.t.Fatalf("txsink exited (%v) after %d commits, before the %d awaited\nstdout:\n%s\nstderr:\n%s",
				p.cmd.ProcessState, p.Commits(), n, p.Stdout(), tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink logged %d commits in %s, want %d\nstderr:\n%s", p.Commits(), startDeadline, n, tail(p.Stderr()))
		}
	}
}

// wait waits for the child to exit and returns its exit code (-1 when a
// signal ended it).
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(exitDeadline):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("txsink did not exit within %s; killed it\nstderr:\n%s", exitDeadline, tail(p.Stderr()))
	}
	return p.cmd.ProcessState.ExitCode()
}

// signal sends sig to the child.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("send %v to txsink: %v\nstderr:\n%s", sig, err, tail(p.Stderr()))
	}
}

// runTxsink runs the binary to its end and returns its exit code, stdout
// and stderr.
func runTxsink(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := start(t, args...)
	code = p.wait()
	return code, p.Stdout(), p.Stderr()
}

// tail returns the last lines of a log, for failure messages.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 30 {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-30)}, lines[len(lines)-30:]...)
	}
	return strings.Join(lines, "\n")
}

// summaryRE matches the one line 'txsink run' prints on stdout when it ends.
var summaryRE = regexp.MustCompile(`^([\w.-]+): (?:stopped by a signal, a rerun resumes after the last commit; )?(\d+) events?(?: \([^)]*\))? -> (\d+) rows? written \((\d+) upserted, (\d+) deleted, (\d+) inserted\) in (\d+) commits?(?:, \d+ skipped)?(?:, \d+ schema change records? skipped)?(?:, \d+ logical decoding messages? skipped)?(?:, \d+ dead-lettered \(txsink dead-letters lists them\))?(?:, \d+ refused by the version guard \(the stored row was newer\))?(?:, \d+ deletes? ignored)?(?:, \d+ (?:copy|copies) dropped \(published again, applied before\))?(?:, \d+ (?:retries|retry))?, \S+, \d+ events/s\n$`)

type summary struct {
	events, inserted, commits int64
}

// parseSummary checks that stdout is exactly the one-line summary of
// pipeline name and returns its counts.
func parseSummary(t *testing.T, name, stdout string) summary {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stdout)
	if m == nil || m[1] != name {
		t.Fatalf("stdout is not the one-line summary of pipeline %s:\n%q", name, stdout)
	}
	n := func(i int) int64 {
		v, _ := strconv.ParseInt(m[i], 10, 64)
		return v
	}
	return summary{events: n(2), inserted: n(6), commits: n(7)}
}

// ---------------------------------------------------------------------------
// The workload, as files

// feed is a workload encoded as txsink-json lines, one slice per partition.
type feed struct {
	res   *workload.Result
	lines [][][]byte // lines[p][i]: line i+1 of partition p, with its '\n'
	ends  [][]int64  // ends[p][i]: the byte offset just past line i+1
}

func newFeed(t *testing.T, res *workload.Result) *feed {
	t.Helper()
	f := &feed{res: res, lines: make([][][]byte, len(res.Partitions)), ends: make([][]int64, len(res.Partitions))}
	for p, changes := range res.Partitions {
		var off int64
		for i := range changes {
			line, err := native.Append(nil, &changes[i])
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("native.Append gave %q, want one line ending in a newline", line)
			}
			off += int64(len(line))
			f.lines[p] = append(f.lines[p], line)
			f.ends[p] = append(f.ends[p], off)
		}
	}
	return f
}

// fileName is partition p's file name, relative to the config's folder.
func fileName(p int) string { return fmt.Sprintf("p%d.jsonl", p) }

// appendLines appends lines [from, to) of partition p to its file in dir.
func (f *feed) appendLines(t *testing.T, dir string, p, from, to int) {
	t.Helper()
	fh, err := os.OpenFile(filepath.Join(dir, fileName(p)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, l := range f.lines[p][from:to] {
		buf.Write(l)
	}
	if _, err := fh.Write(buf.Bytes()); err != nil {
		fh.Close()
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// linesAt converts a committed byte offset of partition p into the number
// of lines it covers; ok is false when the offset is not a line end.
func (f *feed) linesAt(p int, offset int64) (int, bool) {
	if offset == 0 {
		return 0, true
	}
	i, ok := slices.BinarySearch(f.ends[p], offset)
	return i + 1, ok
}

// prefixState replays the first counts[p] changes of each partition, the
// way the target must hold them: the keyed tables' rows (as
// workload.Result.Final holds them) and the number of order_events rows.
func (f *feed) prefixState(counts []int) (map[string]map[string]workload.Row, int) {
	state := map[string]map[string]workload.Row{"orders": {}, "order_items": {}}
	events := 0
	render := func(r changelog.Row) workload.Row {
		out := workload.Row{}
		for i, n := range r.Names {
			out[n] = workload.Render(r.Values[i])
		}
		return out
	}
	key := func(table string, r changelog.Row) string {
		get := func(c string) string {
			v, _ := r.Get(c)
			return workload.Render(v)
		}
		if table == "orders" {
			return get("id")
		}
		return get("order_id") + "|" + get("line_no")
	}
	for p, n := range counts {
		for _, c := range f.res.Partitions[p][:n] {
			if c.Table.Name == "order_events" {
				if c.Kind == changelog.Insert {
					events++
				}
				continue
			}
			m := state[c.Table.Name]
			switch c.Kind {
			case changelog.Insert, changelog.UpdateAfter:
				if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
					delete(m, key(c.Table.Name, c.Before))
				}
				m[key(c.Table.Name, c.After)] = render(c.After)
			case changelog.Delete:
				delete(m, key(c.Table.Name, c.Before))
			}
		}
	}
	for table, rows := range state {
		state[table] = workload.NormalizeState(rows)
	}
	return state, events
}

func (f *feed) totalLines() int {
	n := 0
	for _, l := range f.lines {
		n += len(l)
	}
	return n
}

// TestFeedPrefixState checks the replay the other tests judge txsink by:
// the whole changelog replayed must be the workload's final state.
func TestFeedPrefixState(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 300, Partitions: 2, Seed: 5, Events: true})
	f := newFeed(t, res)
	all := make([]int, len(res.Partitions))
	for p := range all {
		all[p] = len(res.Partitions[p])
	}
	state, events := f.prefixState(all)
	for _, table := range []string{"orders", "order_items"} {
		if d := workload.Diff(table, workload.NormalizeState(res.Final[table]), state[table], 10); d != "" {
			t.Errorf("replaying the whole changelog does not give the final state:\n%s", d)
		}
	}
	if events != res.Events {
		t.Errorf("replay counts %d order_events rows, want %d", events, res.Events)
	}
	if n, ok := f.linesAt(1, f.ends[1][9]); !ok || n != 10 {
		t.Errorf("linesAt(end of line 10) = %d, %v; want 10, true", n, ok)
	}
	if _, ok := f.linesAt(1, f.ends[1][9]-1); ok {
		t.Error("linesAt accepted an offset inside a line")
	}
}

// ---------------------------------------------------------------------------
// Pipelines and the target

type pipelineSpec struct {
	name    string
	url     string
	paths   []string
	follow  bool
	maxRows int
	// interval is buffer-flush.interval (default 1s).
	interval string
	// itemsKey overrides shop.order_items' primary-key (default
	// [order_id, line_no]).
	itemsKey []string
	// extraTables are more tables entries, as YAML list items.
	extraTables string
	// wait sets buffer-flush.coalesce: false, so that commits come at
	// every max-rows however fast the target is.
	wait bool
}

// writeConfig writes a pipeline config to dir/file and returns its path.
func writeConfig(t *testing.T, dir, file string, s pipelineSpec) string {
	t.Helper()
	if s.maxRows == 0 {
		s.maxRows = 50
	}
	if s.interval == "" {
		s.interval = "1s"
	}
	if s.itemsKey == nil {
		s.itemsKey = []string{"order_id", "line_no"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", s.name)
	b.WriteString("source:\n  type: file\n")
	// Each file is a partition of its own, read concurrently.
	fmt.Fprintf(&b, "  partitions: [[%s]]\n", strings.Join(s.paths, "], ["))
	b.WriteString("  format: txsink-json\n")
	fmt.Fprintf(&b, "  follow: %t\n", s.follow)
	fmt.Fprintf(&b, "target:\n  url: %s\n", strconv.Quote(s.url))
	b.WriteString("tables:\n")
	b.WriteString("  - source: shop.orders\n")
	fmt.Fprintf(&b, "  - source: shop.order_items\n    primary-key: [%s]\n", strings.Join(s.itemsKey, ", "))
	b.WriteString("  - source: shop.order_events\n    append-only: true\n")
	b.WriteString(s.extraTables)
	fmt.Fprintf(&b, "sink:\n  buffer-flush.max-rows: %d\n  buffer-flush.interval: %s\n", s.maxRows, s.interval)
	if s.wait {
		b.WriteString("  buffer-flush.coalesce: false\n")
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// progressRows reads the pipeline's progress: partition -> (offset, seq).
// A missing progress table reads as no progress.
func progressRows(t *testing.T, db *testdb.DB, pipeline string) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	if !tableExists(t, db, "txsink_progress") {
		return out
	}
	q := "SELECT source_partition, position, seq FROM txsink_progress WHERE pipeline = ?"
	if db.Dialect == "postgres" {
		q = "SELECT source_partition, position, seq FROM txsink_progress WHERE pipeline = $1"
	}
	rows, err := db.SQL.Query(q, pipeline)
	if err != nil {
		t.Fatalf("read progress: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var part string
		var pos, seq int64
		if err := rows.Scan(&part, &pos, &seq); err != nil {
			t.Fatal(err)
		}
		out[part] = [2]int64{pos, seq}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tables lists the tables of the test's private database or schema.
func tables(t *testing.T, db *testdb.DB) []string {
	t.Helper()
	var q string
	switch db.Dialect {
	case "sqlite":
		q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	case "mysql":
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	case "postgres":
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	default:
		t.Fatalf("unknown dialect %s", db.Dialect)
	}
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.ToLower(n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func tableExists(t *testing.T, db *testdb.DB, name string) bool {
	t.Helper()
	return slices.Contains(tables(t, db), name)
}

func count(t *testing.T, db *testdb.DB, table string) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// observation is what the target holds after a run: the lines committed
// per partition (by its progress) and the tables' contents.
type observation struct {
	lines  []int
	state  map[string]map[string]workload.Row
	events int
}

func (o observation) total() int {
	n := 0
	for _, l := range o.lines {
		n += l
	}
	return n
}

// observe reads the pipeline's progress and the tables, and checks they
// agree: the tables must hold exactly the changelog replayed up to the
// committed progress, and every progress row must sit at a line end, with
// the line number it names. A stopped run's last transaction may still be
// finishing on a server (a SIGKILLed client's COMMIT in flight), so the
// progress is read before and after the tables, until it is the same.
func observe(t *testing.T, db *testdb.DB, f *feed, dir, pipeline string) observation {
	t.Helper()
	read := func() []int {
		rows := progressRows(t, db, pipeline)
		lines := make([]int, len(f.lines))
		for p := range lines {
			// A partition is named by its path relative to the config's
			// folder (older builds used the absolute path).
			part := fileName(p)
			r, ok := rows[part]
			if !ok {
				part = filepath.Join(dir, fileName(p))
				if r, ok = rows[part]; !ok {
					continue
				}
			}
			delete(rows, part)
			n, ok := f.linesAt(p, r[0])
			if !ok || int64(n) != r[1] {
				t.Fatalf("progress of %s is byte %d, line %d: not the end of that line (line ends: %v...)", part, r[0], r[1], f.ends[p][:min(5, len(f.ends[p]))])
			}
			lines[p] = n
		}
		if len(rows) > 0 {
			t.Fatalf("progress rows of unknown partitions: %v", rows)
		}
		return lines
	}
	for try := 0; try < 20; try++ {
		before := read()
		o := observation{lines: before, state: map[string]map[string]workload.Row{}}
		for table, key := range map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}} {
			got, err := workload.ReadState(context.Background(), db.SQL, table, key)
			if err != nil {
				t.Fatal(err)
			}
			o.state[table] = got
		}
		o.events = count(t, db, "order_events")
		if !slices.Equal(before, read()) {
			continue // a commit landed while reading; read again
		}
		want, wantEvents := f.prefixState(o.lines)
		for _, table := range []string{"orders", "order_items"} {
			if d := workload.Diff(table, want[table], o.state[table], 10); d != "" {
				t.Errorf("the target is not the changelog replayed up to its progress %v (lines per partition):\n%s", o.lines, d)
			}
		}
		if o.events != wantEvents {
			t.Errorf("order_events has %d rows, want exactly %d for progress %v (more: changes applied twice; fewer: changes lost)", o.events, wantEvents, o.lines)
		}
		return o
	}
	t.Fatal("the progress kept changing while the test read the target: is a txsink still running?")
	return observation{}
}

// checkFinal checks the target holds the workload's final state exactly,
// with every order_events row once, and progress at the end of each file.
func checkFinal(t *testing.T, db *testdb.DB, f *feed, dir, pipeline string) {
	t.Helper()
	o := observe(t, db, f, dir, pipeline)
	for p, n := range o.lines {
		if n != len(f.lines[p]) {
			t.Errorf("progress of %s covers %d lines, want all %d", fileName(p), n, len(f.lines[p]))
		}
	}
	for _, table := range []string{"orders", "order_items"} {
		if d := workload.Diff(table, workload.NormalizeState(f.res.Final[table]), o.state[table], 10); d != "" {
			t.Errorf("final state differs:\n%s", d)
		}
	}
	if o.events != f.res.Events {
		t.Errorf("order_events has %d rows, want exactly %d (a replay would duplicate them)", o.events, f.res.Events)
	}
}

// checkMonotonic fails if any partition's progress went back from prev to
// next.
func checkMonotonic(t *testing.T, prev, next []int) {
	t.Helper()
	for p := range next {
		if next[p] < prev[p] {
			t.Errorf("progress of %s went backwards: line %d after line %d", fileName(p), next[p], prev[p])
		}
	}
}

func forEachDialect(t *testing.T, f func(t *testing.T, db *testdb.DB)) {
	for _, d := range testdb.Dialects {
		t.Run(d, func(t *testing.T) {
			f(t, testdb.Open(t, d))
		})
	}
}

// ---------------------------------------------------------------------------
// The tests

// TestSIGINTThenResume stops a following run with SIGINT (and, as the
// command's help promises the same for it, SIGTERM) after its first commit,
// moves the pipeline's folder, appends the rest of the changelog and runs
// again to the end. The signal must commit what was read and exit 0 with
// the one-line summary; the second run must resume exactly after that
// commit.
func TestSIGINTThenResume(t *testing.T) {
	txsinkBinary(t) // build (or skip) before the servers are set up
	res := workload.Generate(workload.Spec{Orders: 2000, Partitions: 2, Seed: 21, Events: true})
	for _, dialect := range testdb.Dialects {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(dialect+"/"+sigName(sig), func(t *testing.T) {
				db := testdb.Open(t, dialect)
				signalThenResume(t, db, res, sig)
			})
		}
	}
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

func signalThenResume(t *testing.T, db *testdb.DB, res *workload.Result, sig syscall.Signal) {
	db.Exec(t, workload.Schema(db.Dialect)...)
	f := newFeed(t, res)
	dir := t.TempDir()
	// Only the first half of each partition is there at first: the
	// following run can never reach the end of the files, so the signal
	// is what stops it.
	half := make([]int, len(f.lines))
	for p := range f.lines {
		half[p] = len(f.lines[p]) / 2
		f.appendLines(t, dir, p, 0, half[p])
	}
	const name = "interrupted"
	spec := pipelineSpec{name: name, url: db.URL, paths: []string{fileName(0), fileName(1)}, follow: true}
	followCfg := writeConfig(t, dir, "follow.yaml", spec)
	spec.follow = false
	writeConfig(t, dir, "pipeline.yaml", spec)

	p := start(t, "run", "--config", followCfg, "--log-level", "debug")
	p.waitCommits(1)
	p.signal(sig)
	if code := p.wait(); code != 0 {
		t.Fatalf("txsink run after %s exited %d (%v), want 0\nstderr:\n%s", sigName(sig), code, p.cmd.ProcessState, tail(p.Stderr()))
	}
	sum := parseSummary(t, name, p.Stdout())
	if sum.commits != int64(p.Commits()) || sum.commits < 1 {
		t.Errorf("the summary says %d commits, the debug log shows %d", sum.commits, p.Commits())
	}
	if !strings.Contains(p.Stderr(), "msg=stopped") {
		t.Errorf("no 'stopped' log line after %s:\n%s", sigName(sig), tail(p.Stderr()))
	}
	first := observe(t, db, f, dir, name)
	if first.total() == 0 {
		t.Fatalf("nothing committed before %s, though the log shows %d commits", sigName(sig), p.Commits())
	}
	// A -U read last is held, by design, until its +U is read (the pair is
	// one change): in each partition whose next uncommitted line is a -U,
	// that one line may be read and not committed.
	held := 0
	for p, n := range first.lines {
		if n < len(res.Partitions[p]) && res.Partitions[p][n].Kind == changelog.UpdateBefore {
			held++
		}
	}
	if read, got := sum.events, int64(first.total()); got > read || got < read-int64(held) {
		t.Errorf("the interrupted run read %d events but committed %d lines (%d partitions end on a held -U): on %s it must commit what it read", read, got, held, sigName(sig))
	}
	if sum.inserted != int64(first.events) {
		t.Errorf("the interrupted run says it inserted %d order_events rows, the table has %d", sum.inserted, first.events)
	}
	for i, n := range first.lines {
		if n > half[i] {
			t.Fatalf("progress of %s covers %d lines, but only %d were written", fileName(i), n, half[i])
		}
	}
	t.Logf("%s after %d commits: %v of %v lines committed (of %d in all)", sigName(sig), sum.commits, first.lines, half, f.totalLines())

	// The pipeline's folder moves: progress names the files relative to
	// it, so the run resumes instead of starting over.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	for i := range f.lines {
		f.appendLines(t, moved, i, half[i], len(f.lines[i]))
	}
	code, stdout, stderr := runTxsink(t, "run", "--config", filepath.Join(moved, "pipeline.yaml"))
	if code != 0 {
		t.Fatalf("resumed txsink run exited %d, want 0\nstderr:\n%s", code, tail(stderr))
	}
	sum2 := parseSummary(t, name, stdout)
	if want := int64(f.totalLines() - first.total()); sum2.events != want {
		t.Errorf("the resumed run read %d events, want exactly the %d after the committed progress", sum2.events, want)
	}
	checkFinal(t, db, f, moved, name)
}

// TestSIGKILLThenResume kills a following run with SIGKILL several times,
// each time after a random number of commits (and a random few
// milliseconds more, so that the kill lands anywhere: between commits or
// inside one), then runs the pipeline to the end. After every kill the
// target must hold exactly the changelog up to its committed progress, and
// progress must never go back.
func TestSIGKILLThenResume(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 3000, Partitions: 2, Seed: 33, Events: true})
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill schedule seed %d", seed)
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		f := newFeed(t, res)
		dir := t.TempDir()
		for p := range f.lines {
			f.appendLines(t, dir, p, 0, len(f.lines[p]))
		}
		const name = "sigkill"
		// Commits at every max-rows, so that each run makes the commits
		// the kill waits for (the chaos test kills coalescing runs).
		spec := pipelineSpec{name: name, url: db.URL, paths: []string{fileName(0), fileName(1)}, follow: true, wait: true}
		followCfg := writeConfig(t, dir, "follow.yaml", spec)
		spec.follow = false
		cfg := writeConfig(t, dir, "pipeline.yaml", spec)

		rng := rand.New(rand.NewPCG(seed, 7))
		kills := 3 + rng.IntN(3)
		prev := observation{lines: make([]int, len(f.lines))}
		for k := 0; k < kills; k++ {
			n := 1 + rng.IntN(8)
			jitter := time.Duration(rng.IntN(15)) * time.Millisecond
			p := start(t, "run", "--config", followCfg, "--log-level", "debug")
			p.waitCommits(n)
			if jitter > 0 {
				// Not a wait for anything: it moves the kill to a random
				// point of the run's work.
				select {
				case <-time.After(jitter):
				case <-p.done:
				}
			}
			p.signal(syscall.SIGKILL)
			p.wait()
			if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("kill %d: txsink ended with %v, not by SIGKILL\nstderr:\n%s", k+1, p.cmd.ProcessState, tail(p.Stderr()))
			}
			if out := p.Stdout(); out != "" {
				t.Errorf("kill %d: a SIGKILLed run printed %q", k+1, out)
			}
			o := observe(t, db, f, dir, name)
			checkMonotonic(t, prev.lines, o.lines)
			if o.total() <= prev.total() {
				t.Errorf("kill %d: the run logged %d commits but progress did not move past %v", k+1, p.Commits(), prev.lines)
			}
			if o.total() == f.totalLines() {
				t.Fatalf("kill %d: the run consumed the whole changelog before it was killed; make the workload larger", k+1)
			}
			t.Logf("kill %d after %d logged commits (+%s): %v of %d lines committed", k+1, p.Commits(), jitter, o.lines, f.totalLines())
			prev = o
		}

		code, stdout, stderr := runTxsink(t, "run", "--config", cfg)
		if code != 0 {
			t.Fatalf("final txsink run exited %d, want 0\nstderr:\n%s", code, tail(stderr))
		}
		sum := parseSummary(t, name, stdout)
		if want := int64(f.totalLines() - prev.total()); sum.events != want {
			t.Errorf("the final run read %d events, want exactly the %d after the committed progress", sum.events, want)
		}
		checkFinal(t, db, f, dir, name)
		final := observe(t, db, f, dir, name)
		checkMonotonic(t, prev.lines, final.lines)
	})
}

// TestBadInputExitCode feeds a changelog whose line 3 is bad in three ways.
// txsink must exit 1 naming file:3 (and the table, where known), with
// lines 1 and 2 committed (max-rows 1 commits each line) and nothing after
// them. Then line 3 is written correctly and a new run completes.
func TestBadInputExitCode(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 25, Partitions: 1, Seed: 9, Events: true})
	good := res.Partitions[0][2]
	if good.Table.Name != "order_items" || good.Kind != changelog.Insert {
		t.Fatalf("line 3 of the workload is a %s of %s; the cases below expect an insert into order_items", good.Kind, good.Table)
	}
	encode := func(c changelog.Change) []byte {
		line, err := native.Append(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	goodLine := encode(good)
	cases := []struct {
		name  string
		line  []byte
		table string   // named in the error
		want  []string // more text the error must hold
		skip  string   // the dialect the case does not apply to
	}{
		{
			name:  "malformed-json",
			line:  append(goodLine[:len(goodLine)-8:len(goodLine)-8], '\n'), // cut short: the object is never closed
			table: "shop.order_items",
			want:  []string{"invalid JSON"},
		},
		{
			name: "value-too-long",
			line: func() []byte {
				c := good
				c.After = changelog.Row{Names: slices.Clone(good.After.Names), Values: slices.Clone(good.After.Values)}
				c.After.Set("sku", strings.Repeat("X", 33)) // sku is VARCHAR(32)
				return encode(c)
			}(),
			table: "order_items",
			want:  []string{"sku"},
			// SQLite keeps text of any length in a VARCHAR(n) column, so
			// txsink does not enforce n there (sink/sqlsink/sqlite: classify).
			skip: "sqlite",
		},
		{
			name: "fractional-integer",
			line: func() []byte {
				c := good
				c.After = changelog.Row{Names: slices.Clone(good.After.Names), Values: slices.Clone(good.After.Values)}
				c.After.Set("qty", changelog.Number("2.5")) // qty is INT
				return encode(c)
			}(),
			table: "order_items",
			want:  []string{"qty"},
		},
		{
			name: "unknown-table",
			line: func() []byte {
				c := good
				c.Table = changelog.Table{Namespace: "shop", Name: "refunds"}
				return encode(c)
			}(),
			table: "shop.refunds",
			want:  []string{"unknown table"},
		},
	}
	// With max-rows 1, lines 1 and 2 are committed one by one before line
	// 3 fails; with max-rows 50 (and no interval) they are still buffered
	// when it fails, and must not be committed.
	flushes := []struct {
		maxRows   int
		committed int
	}{{1, 2}, {50, 0}}
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			for _, tc := range cases {
				for _, fl := range flushes {
					t.Run(fmt.Sprintf("%s/max-rows-%d", tc.name, fl.maxRows), func(t *testing.T) {
						if tc.skip == dialect {
							t.Skipf("does not apply to %s", dialect)
						}
						badInput(t, dialect, res, tc.line, goodLine, fl.maxRows, fl.committed, append([]string{fileName(0) + ":3:", tc.table}, tc.want...))
					})
				}
			}
		})
	}
}

// badInput writes the workload with line 3 replaced by bad, runs txsink,
// and expects exit 1 with an error holding want and the first committed
// lines committed; then writes line 3 as good and expects a complete run.
func badInput(t *testing.T, dialect string, res *workload.Result, bad, good []byte, maxRows, committed int, want []string) {
	db := testdb.Open(t, dialect)
	db.Exec(t, workload.Schema(db.Dialect)...)
	f := newFeed(t, res)
	dir := t.TempDir()
	path := filepath.Join(dir, fileName(0))
	write := func(line3 []byte) {
		t.Helper()
		var b bytes.Buffer
		for i, l := range f.lines[0] {
			if i == 2 {
				l = line3
			}
			b.Write(l)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(bad)
	const name = "badinput"
	cfg := writeConfig(t, dir, "pipeline.yaml", pipelineSpec{name: name, url: db.URL, paths: []string{fileName(0)}, maxRows: maxRows, interval: "0"})

	code, stdout, stderr := runTxsink(t, "run", "--config", cfg)
	if code != 1 {
		t.Fatalf("txsink run exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	msg := lastLine(stderr)
	if !strings.HasPrefix(msg, "txsink run: ") {
		t.Errorf("the last stderr line is not the error: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the error does not name %q:\n%s", w, msg)
		}
	}
	o := observe(t, db, f, dir, name)
	if !slices.Equal(o.lines, []int{committed}) {
		t.Errorf("after the failed run, progress covers %v lines, want [%d]: what the flushes before line 3 committed, nothing more", o.lines, committed)
	}

	write(good)
	code, stdout, stderr = runTxsink(t, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("txsink run after fixing line 3 exited %d, want 0\nstderr:\n%s", code, tail(stderr))
	}
	if sum := parseSummary(t, name, stdout); sum.events != int64(len(f.lines[0])-committed) {
		t.Errorf("the run after the fix read %d events, want the %d after line %d", sum.events, len(f.lines[0])-committed, committed)
	}
	checkFinal(t, db, f, dir, name)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestCheckCommand runs 'txsink check' on a good config, on configs that
// disagree with the target, and checks it writes nothing.
func TestCheckCommand(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		dir := t.TempDir()
		before := tables(t, db)
		spec := pipelineSpec{name: "check", url: db.URL, paths: []string{fileName(0)}}
		// The source file must be there: run refuses to start without it,
		// and check says so.
		if err := os.WriteFile(filepath.Join(dir, fileName(0)), nil, 0o644); err != nil {
			t.Fatal(err)
		}

		good := writeConfig(t, dir, "good.yaml", spec)
		code, stdout, stderr := runTxsink(t, "check", "--config", good)
		if code != 0 {
			t.Fatalf("txsink check on a good config exited %d, want 0\nstderr:\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "check: configuration OK") || !strings.Contains(stdout, "shop.order_items") {
			t.Errorf("txsink check printed %q, want the OK line naming the tables", stdout)
		}

		spec.itemsKey = []string{"order_id"} // the target's key is (order_id, line_no)
		badKey := writeConfig(t, dir, "badkey.yaml", spec)
		code, stdout, stderr = runTxsink(t, "check", "--config", badKey)
		if code != 1 {
			t.Fatalf("txsink check with a wrong primary-key exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "shop.order_items") || !strings.Contains(stderr, "line_no") {
			t.Errorf("the error does not name the table shop.order_items and its key column line_no:\n%s", stderr)
		}
		if strings.Contains(stderr, "shop.orders ") || strings.Contains(stderr, "order_events") {
			t.Errorf("the error names tables that are fine:\n%s", stderr)
		}

		spec.extraTables = "  - source: shop.refunds\n"
		twoProblems := writeConfig(t, dir, "two.yaml", spec)
		code, _, stderr = runTxsink(t, "check", "--config", twoProblems)
		if code != 1 {
			t.Fatalf("txsink check with two problems exited %d, want 1\nstderr:\n%s", code, stderr)
		}
		for _, w := range []string{"shop.order_items", "shop.refunds"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("txsink check did not report %s:\n%s", w, stderr)
			}
		}

		if after := tables(t, db); !slices.Equal(before, after) {
			t.Errorf("txsink check changed the target's tables: %v before, %v after", before, after)
		}
		if tableExists(t, db, "txsink_progress") {
			t.Error("txsink check created txsink_progress")
		}
		for _, table := range workload.Tables {
			if n := count(t, db, table); n != 0 {
				t.Errorf("txsink check wrote %d rows into %s", n, table)
			}
		}
	})

	// A SQLite target is a file: 'txsink check' must neither create it nor
	// change it (not even its journal mode, which is stored in the file).
	t.Run("sqlite-file-untouched", func(t *testing.T) {
		dir := t.TempDir()
		existing := filepath.Join(dir, "existing.db")
		db, err := sql.Open("sqlite", "file:"+existing)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range workload.Schema("sqlite") {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		files := func() map[string]string {
			t.Helper()
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				out[e.Name()] = string(b)
			}
			return out
		}
		spec := pipelineSpec{name: "check", url: "sqlite://existing.db", paths: []string{fileName(0)}}
		if err := os.WriteFile(filepath.Join(dir, fileName(0)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		good := writeConfig(t, dir, "good.yaml", spec)
		spec.url = "sqlite://missing.db"
		missing := writeConfig(t, dir, "missing.yaml", spec)
		before := files()

		code, _, stderr := runTxsink(t, "check", "--config", good)
		if code != 0 {
			t.Fatalf("txsink check on a good SQLite config exited %d, want 0\nstderr:\n%s", code, stderr)
		}
		code, _, stderr = runTxsink(t, "check", "--config", missing)
		if code != 1 {
			t.Errorf("txsink check on a missing SQLite file exited %d, want 1\nstderr:\n%s", code, stderr)
		}
		after := files()
		for name := range after {
			if _, ok := before[name]; !ok {
				t.Errorf("txsink check created %s", name)
			}
		}
		for name, b := range before {
			if after[name] != b {
				t.Errorf("txsink check changed %s", name)
			}
		}
	})
}

// TestUsage checks the exit codes of the command line itself.
func TestUsage(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout string // text stdout must hold
		stderr string // text stderr must hold
	}{
		{args: nil, code: 2, stderr: "Usage:"},
		{args: []string{"version"}, code: 0, stdout: "txsink "},
		{args: []string{"--help"}, code: 0, stdout: "Usage:"},
		{args: []string{"run", "--help"}, code: 0, stdout: "txsink run --config pipeline.yaml"},
		{args: []string{"run"}, code: 2, stderr: "txsink run: --config is required"},
		{args: []string{"check"}, code: 2, stderr: "txsink check: --config is required"},
		{args: []string{"run", "--config", "x.yaml", "--log-level", "loud"}, code: 2, stderr: "--log-level"},
		{args: []string{"run", "--no-such-flag"}, code: 2, stderr: "flag provided but not defined: --no-such-flag (see txsink run --help)\n"},
		{args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{args: []string{"run", "--config", "/nonexistent/pipeline.yaml"}, code: 1, stderr: "/nonexistent/pipeline.yaml"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(append([]string{"txsink"}, tc.args...), " "), func(t *testing.T) {
			code, stdout, stderr := runTxsink(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout does not hold %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr does not hold %q:\n%s", tc.stderr, stderr)
			}
			if tc.code == 0 && tc.stderr == "" && stderr != "" {
				t.Errorf("a successful command wrote to stderr:\n%s", stderr)
			}
		})
	}
}
