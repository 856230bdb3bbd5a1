package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/starrocks"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
	"github.com/txsink/txsink/sink/starrocks/starrockstest"
)

// starrocksWorkload is workload.Schema in StarRocks' DDL.
var starrocksWorkload = workload.Schema("starrocks")

// starrocksCluster returns the test's StarRocks cluster (starrockstest:
// the fake, or the real cluster TXSINK_TEST_STARROCKS_URL names) with
// txsink's tables and ddl made, and a testdb.DB whose URL is its target
// URL and whose SQL reads its committed rows over the MySQL protocol.
// The tests below are told against "the fake"; all but those injecting
// faults run unchanged against a real cluster, leaving out (and logging)
// only their checks of the requests the fake received.
func starrocksCluster(t *testing.T, ddl ...string) (*starrockstest.Cluster, *testdb.DB) {
	t.Helper()
	c := starrockstest.New(t, starrocksfake.Options{}, append([]string{starrocks.ProgressDDL, starrocks.ClaimsDDL}, ddl...)...)
	return c, c.TestDB()
}

// starrocksFake starts the fake itself, for a test that needs it whatever
// TXSINK_TEST_STARROCKS_URL says (its request log, its fake clock): the
// autonomous flush's tests count the loads of each commit.
func starrocksFake(t *testing.T, ddl ...string) (*starrocksfake.Fake, *testdb.DB) {
	t.Helper()
	f := starrocksfake.NewWithTables(t, starrocksfake.Options{}, append([]string{starrocks.ProgressDDL, starrocks.ClaimsDDL}, ddl...)...)
	return f, &testdb.DB{Dialect: "mysql", URL: f.SinkURL(), SQL: f.SQL()}
}

// loads counts the Stream Load transaction loads the fake received.
func loads(f *starrocksfake.Fake) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Role == "BE" && strings.HasPrefix(r.Path, "/api/transaction/load") {
			n++
		}
	}
	return n
}

// loadsPerCommit says how many Stream Load transaction loads the fake
// received per commit, for the log; a real cluster's are not seen.
func loadsPerCommit(c *starrockstest.Cluster, commits int64) string {
	if c.Fake == nil {
		return "loads not counted on a real cluster"
	}
	return fmt.Sprintf("%.1f loads per commit", float64(loads(c.Fake))/float64(max(commits, 1)))
}

// fakeRequests is the requests the fake received, for a test checking
// what was sent besides what landed; against a real cluster, whose
// requests are not seen, it logs that the check is left out and returns
// false.
func fakeRequests(t *testing.T, c *starrockstest.Cluster, check string) ([]starrocksfake.Request, bool) {
	t.Helper()
	if c.Fake == nil {
		t.Logf("not checked on a real cluster (only the fake logs requests): %s", check)
		return nil, false
	}
	return c.Fake.Requests(), true
}

// TestStarRocksEndToEnd runs a pipeline from files (4 partitions of a
// multi-table workload) into the StarRocks fake, as `txsink run` would,
// through lost commit answers, a publish timeout, a commit and a load
// answered 5xx and a leader change: the final state is exact, every
// append-only event is there once, and a second run applies nothing again.
func TestStarRocksEndToEnd(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 600, Partitions: 4, Seed: 3, Events: true})
	c, db := starrocksCluster(t, starrocksWorkload...)
	f := c.NeedFake(t, "injects lost commit answers, 5xx answers and a leader change")
	paths := writeWorkload(t, res)
	cfg := workloadPipeline(db, paths)
	cfg.Name = "starrocks-e2e"
	cfg.Sink.FlushMaxRows = 100
	cfg.Sink.FlushCoalesce = false
	var commits atomic.Int64
	start := time.Now()
	e := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) { commits.Add(1) }))
	// The units' first requests meet the faults (the claim at New is past).
	f.Inject(starrocksfake.OpCommit, starrocksfake.DropAnswer, starrocksfake.HTTP503, starrocksfake.PublishTimeout, starrocksfake.DropAnswer, starrocksfake.LeaderChange)
	f.Inject(starrocksfake.OpLoad, starrocksfake.HTTP500)
	if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	st := e.Stats()
	checkFinal(t, db, res)
	// Progress and claims are loads too: each commit carries its
	// tables' loads and one of txsink_progress.
	t.Logf("%d changes in %d commits, %s, %.0f changes/s through the fake (a loaded machine; the fake is MariaDB underneath, not StarRocks)",
		res.Changes(), commits.Load(), loadsPerCommit(c, commits.Load()), float64(res.Changes())/elapsed.Seconds())
	if commits.Load() < 2 || st.Commits != commits.Load() {
		t.Errorf("%d commits (stats %d), want several", commits.Load(), st.Commits)
	}
	if st.Retries == 0 {
		t.Errorf("no unit was retried: the injected faults did not bite")
	}
	e.Close()

	again := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) { commits.Add(1) }))
	before := commits.Load()
	if err := again.Run(context.Background(), engine.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := commits.Load() - before; n != 0 {
		t.Errorf("the second run committed %d units, want none", n)
	}
	checkFinal(t, db, res)
}

// TestStarRocksTransactionModeInvariant is TestTransactionModeInvariant
// against the StarRocks fake: in transaction mode a reader polling the
// cross-table invariant over the MySQL protocol never sees a source
// transaction in part.
func TestStarRocksTransactionModeInvariant(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 800, Partitions: 4, Seed: 9, Events: true})
	c, db := starrocksCluster(t, starrocksWorkload...)
	cfg := workloadPipeline(db, writeWorkload(t, res))
	cfg.Name = "starrocks-invariant"
	txnPipeline(cfg)
	cfg.Sink.TxnBufferSize = 64 << 10
	r := runPolled(t, cfg, db)
	t.Logf("%d source transactions in %d commits (%s); reader polled %d times, saw %d invariant violations",
		r.stats.Txns, r.commits, loadsPerCommit(c, int64(r.commits)), r.polls, r.violations)
	checkFinal(t, db, res)
	r.checkInvariant(t)
	if r.stats.Txns != int64(res.Txns) {
		t.Errorf("committed %d source transactions, want %d", r.stats.Txns, res.Txns)
	}
}

// TestStarRocksRefusesChangesIntoDuplicateKey: a stream that may carry
// updates and deletes into a Duplicate Key table (StarRocks deletes rows
// of Primary Key tables only) is refused at start, before anything is
// read; declared append-only, it starts.
func TestStarRocksRefusesChangesIntoDuplicateKey(t *testing.T) {
	_, db := starrocksCluster(t, `CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)`)
	cfg := pipeline(db, config.Table{Source: "shop.events"})
	cfg.Name = "starrocks-dup"
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "e.jsonl", nil)})
	_, err := engine.New(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "events") || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("engine.New: %v, want a refusal naming the table and append-only", err)
	}
	cfg.Tables[0].AppendOnly = true
	newEngine(t, cfg)
}

// TestStarRocksDeadLetterPlain is TestDeadLetterPlain against the
// StarRocks fake: each bad record — one cut short, one with a value
// longer in bytes than its VARCHAR, one of an unknown table, one of a
// source transaction whose id is 140,000 bytes long — goes to
// txsink_dead_letters in the commit that moves the progress past it, the
// good ones are applied, and a second run changes nothing.
func TestStarRocksDeadLetterPlain(t *testing.T) {
	long := strings.Repeat("é", 70000)
	lines := []string{
		`{"op":"+I","table":"s.items","row":{"id":1,"name":"ok-1"}}`,
		`{"op":"+I","table":"s.items","row":{"id":2,"name":"ok-2"`,     // cut short
		`{"op":"+I","table":"s.items","row":{"id":3,"name":"ÄÖÜßÄÖ"}}`, // 6 characters, 12 bytes
		`{"op":"+I","table":"s.nowhere","row":{"id":4}}`,
		`{"op":"+I","table":"s.items","row":{"id":5,"name":"far too long for the column"},"txn":"` + long + `"}`,
		`{"op":"+U","table":"s.items","row":{"id":1,"name":"ok-1b"}}`,
	}
	_, db := starrocksCluster(t, starrocks.DeadLetterDDL,
		`CREATE TABLE items (id INT NOT NULL, name VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
	cfg := pipeline(db, config.Table{Source: "s.items"})
	cfg.Name = "starrocks-dead-letters"
	cfg.Source.Set("paths", []string{writeLines(t, t.TempDir(), "in.jsonl", lines)})
	cfg.BadInput = config.BadInputDeadLetter
	for run := 1; run <= 2; run++ {
		e := newEngine(t, cfg)
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("run %d with the dead-letter policy: %v", run, err)
		}
		if got := query(t, db, "SELECT id, name FROM items ORDER BY id"); got != "1|ok-1b" {
			t.Errorf("run %d: items = %q, want 1|ok-1b", run, got)
		}
		rows, err := e.Target().(sink.DeadLetterer).DeadLetters(context.Background(), cfg.Name)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []string
		for _, r := range rows {
			seqs = append(seqs, fmt.Sprint(r.Seq))
		}
		if got := strings.Join(seqs, ","); got != "2,3,4,5" {
			t.Fatalf("run %d: dead letters at lines %s, want 2,3,4,5: %+v", run, got, rows)
		}
		if string(rows[0].Raw) != lines[1] || !strings.Contains(rows[0].Reason, "in.jsonl:2") || rows[0].ID != 1 {
			t.Errorf("run %d: the cut-short record's dead letter: %+v", run, rows[0])
		}
		if !strings.Contains(rows[1].Reason, "bytes") || !strings.Contains(rows[1].Reason, "(3)") {
			t.Errorf("run %d: the 12-byte name's reason %q, want one naming key (3) and bytes", run, rows[1].Reason)
		}
		if rows[3].TxnID != long || string(rows[3].Raw) != lines[4] {
			t.Errorf("run %d: the long transaction id came back %d bytes, raw %d bytes; want %d and %d", run, len(rows[3].TxnID), len(rows[3].Raw), len(long), len(lines[4]))
		}
		if got := query(t, db, "SELECT seq FROM txsink_progress WHERE pipeline = '"+cfg.Name+"'"); got != "6" {
			t.Errorf("run %d: progress seq = %s, want 6 (past every record)", run, got)
		}
		want := int64(4)
		if run == 2 {
			want = 0 // nothing is read again
		}
		if st := e.Stats(); st.DeadLetters != want {
			t.Errorf("run %d: Stats.DeadLetters = %d, want %d", run, st.DeadLetters, want)
		}
	}
}

// starrocksRefusalCases are rows the StarRocks fake filters in strict
// mode (its ErrorURL names them) that txsink's own checks let through:
// the server's refusal, bisected to the row, is quarantined.
var starrocksRefusalCases = []refusalCase{
	{name: "not-null-without-default",
		table: `CREATE TABLE items (id INT NOT NULL, name VARCHAR(20), note VARCHAR(20) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		bad:   `{"id":4,"name":"no note"}`, reason: "note is not null"},
	// LARGEINT holds 39 digits below 2^127: txsink checks the digits,
	// the server the range. The rows around it lack big: they are loaded
	// with partial_update (the update) or take its default (the inserts).
	{name: "largeint-out-of-range",
		table: `CREATE TABLE items (id INT NOT NULL, name VARCHAR(20), note VARCHAR(20) NOT NULL, big LARGEINT) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		bad:   `{"id":4,"name":"big","note":"n","big":"170141183460469231731687303715884105728"}`, reason: "largeint"},
	// StarRocks' partial_update would insert the row with the columns the
	// image lacks at their defaults: txsink looks the key up first.
	{name: "partial-update-of-a-missing-row", op: "+U",
		table: `CREATE TABLE items (id INT NOT NULL, name VARCHAR(20), note VARCHAR(20) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		bad:   `{"id":4,"name":"partial"}`, reason: "not in the target"},
}

// TestStarRocksDeadLetterServerRefusals is TestDeadLetterServerRefusals
// against the StarRocks fake: a row the server filters stops the pipeline
// under bad-input: fail, naming its key; under dead-letter its record
// (plain) or source transaction (transaction mode) is quarantined with the
// server's reason, exactly once, a flush per change and all in one.
func TestStarRocksDeadLetterServerRefusals(t *testing.T) {
	for _, tc := range starrocksRefusalCases {
		t.Run(tc.name, func(t *testing.T) {
			_, db := starrocksCluster(t, starrocks.DeadLetterDDL, tc.table)
			lines := refusalLines(tc.op, tc.bad)
			path := writeLines(t, t.TempDir(), "in.jsonl", lines)
			for _, txn := range []bool{false, true} {
				for _, maxRows := range []int{1, 10000} {
					name := fmt.Sprintf("refusal-txn-%v-rows-%d", txn, maxRows)
					t.Run(name, func(t *testing.T) { serverRefusal(t, db, tc, path, lines, name, txn, maxRows) })
				}
			}
		})
	}
}

// TestStarRocksVersionColumn is TestVersionGuardCounts against the
// StarRocks fake: a table with version-column is loaded with
// merge_condition on it, so an upsert older than the stored row is kept
// out, one as old or newer lands, a new key is inserted and a stored NULL
// is older than any version. StarRocks does not say which rows it kept:
// nothing is counted as refused. A NULL version is refused, naming the
// row, and so is a hard delete (StarRocks does not condition deletes),
// the pipeline stopping with nothing of the unit written.
func TestStarRocksVersionColumn(t *testing.T) {
	sr, db := starrocksCluster(t, `CREATE TABLE vg (id INT NOT NULL, v BIGINT NULL, val VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		`INSERT INTO vg VALUES (1, 10, 'a'), (2, 10, 'b'), (3, 10, 'c'), (7, NULL, 'g')`)
	cfg := pipeline(db, config.Table{Source: "s.vg", VersionColumn: "v"})
	cfg.Name = "starrocks-version"
	e := newEngine(t, cfg)
	f := &feeder{t: t, e: e}
	r := func(id int, v any, val string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "v", v, "val", val)
	}
	n := func(v int) changelog.Number { return changelog.Number(strconv.Itoa(v)) }
	f.must(changelog.UpdateAfter, "s.vg", changelog.Row{}, r(1, n(5), "older"))    // kept out
	f.must(changelog.UpdateAfter, "s.vg", changelog.Row{}, r(2, n(10), "same"))    // lands: not older
	f.must(changelog.UpdateAfter, "s.vg", changelog.Row{}, r(3, n(11), "newer"))   // lands
	f.must(changelog.Insert, "s.vg", changelog.Row{}, r(6, n(1), "new"))           // inserted
	f.must(changelog.UpdateAfter, "s.vg", changelog.Row{}, r(7, n(1), "fromnull")) // NULL is older
	f.flush()
	if got, want := query(t, db, "SELECT id, v, val FROM vg ORDER BY id"), "1|10|a\n2|10|same\n3|11|newer\n6|1|new\n7|1|fromnull"; got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	if reqs, ok := fakeRequests(t, sr, "one load into vg with merge_condition: v"); ok {
		conditioned := 0
		for _, r := range reqs {
			if r.Role == "BE" && r.Header.Get("table") == "vg" && r.Header.Get("merge_condition") == "v" {
				conditioned++
			}
		}
		if conditioned != 1 {
			t.Errorf("%d loads into vg with merge_condition: v, want 1", conditioned)
		}
	}
	if got := e.Stats().GuardRefused; got != 0 {
		t.Errorf("GuardRefused = %d, want 0: StarRocks does not tell which rows merge_condition kept out", got)
	}
	for _, c := range []struct {
		name       string
		kind       changelog.Kind
		before, at changelog.Row
		says       string
	}{
		{"a NULL version", changelog.UpdateAfter, changelog.Row{}, r(3, nil, "nullv"), "NULL"},
		{"a delete", changelog.Delete, r(2, n(20), "same"), changelog.Row{}, "does not condition deletes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := *cfg
			cfg.Name += "-" + strings.ReplaceAll(c.name, " ", "-")
			e := newEngine(t, &cfg)
			f := &feeder{t: t, e: e}
			f.must(changelog.Insert, "s.vg", changelog.Row{}, r(8, n(1), "eight"))
			f.must(c.kind, "s.vg", c.before, c.at)
			err := e.Flush(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "vg") {
				t.Fatalf("flush: %v, want a refusal naming the table and saying %q", err, c.says)
			}
			if got := query(t, db, "SELECT COUNT(*) FROM vg WHERE id = 8"); got != "0" {
				t.Errorf("the refused unit's insert is there")
			}
		})
	}
}

// TestStarRocksVersionGuardReplay is TestVersionGuardReplay against the
// StarRocks fake: the changelog applied, then replayed from its start
// while a second writer moves rows ahead, small flushes, plain and
// transaction mode: a reader never sees a row's version go down, and the
// end state is each row's newest. Deletes are soft (a partial update of
// the soft-delete column and the version, which merge_condition guards),
// so a replay cannot resurrect a deleted row either.
func TestStarRocksVersionGuardReplay(t *testing.T) {
	const n = 60
	for _, txn := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "txn"}[txn], func(t *testing.T) {
			_, db := starrocksCluster(t, `CREATE TABLE vs (id INT NOT NULL, v BIGINT NOT NULL, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT "false") PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
			path := writeLines(t, t.TempDir(), "in.jsonl", guardLines(n, txn))
			run := replayRunner(t, db, config.Table{Source: "s.vs", VersionColumn: "v", Delete: "soft:deleted"}, txn, path)
			run("first")
			want := map[int]string{}
			for id := 1; id <= n; id++ {
				want[id] = fmt.Sprintf("4|v4|%v", id%10 == 0)
			}
			checkRows(t, db, want)
			reader := startVersionReader(t, db)
			w := &aheadWriter{t: t, db: db, every: 1}
			for id := 3; id <= n; id += 3 {
				w.ids = append(w.ids, id)
				want[id] = fmt.Sprintf("1004|w2|%v", id%10 == 0)
			}
			run("replay", w)
			polls, violations := reader.finish(t)
			if violations > 0 {
				t.Errorf("the reader saw %d rows go back or vanish in %d polls", violations, polls)
			}
			if len(w.ids) > 0 {
				t.Fatalf("the replay committed too few units for the writer: %d ids left", len(w.ids))
			}
			checkRows(t, db, want)
		})
	}
}

// TestStarRocksPartialImages is TestPartialImages against the StarRocks
// fake: an update image that lacks columns is loaded with partial_update
// and a columns header of the columns it carries, so the others keep
// their stored values whatever the flush boundaries; one of a row the
// target lacks (which partial_update would insert with defaults) is
// refused naming its key.
func TestStarRocksPartialImages(t *testing.T) {
	sr, db := starrocksCluster(t, `CREATE TABLE w (id INT NOT NULL, a VARCHAR(20), b VARCHAR(20), c INT) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
	partialImages(t, db)
	reqs, ok := fakeRequests(t, sr, "the partial loads' columns headers")
	if !ok {
		return
	}
	partial := 0
	for _, r := range reqs {
		if r.Role == "BE" && r.Header.Get("table") == "w" && r.Header.Get("partial_update") == "true" {
			partial++
			if cols := r.Header.Get("columns"); cols != "id,a,__op" && cols != "id,b,__op" && cols != "id,a,b,__op" {
				t.Errorf("a partial load's columns: %q", cols)
			}
		}
	}
	if partial == 0 {
		t.Error("no load into w had partial_update: true")
	}
}

// TestStarRocksDeleteRules is TestDeleteRules against the StarRocks fake:
// soft deletes (a boolean and a DATETIME column) are partial updates of
// the column, of stored rows only; a delete in its insert's flush leaves
// the row marked, an insert revives it, in the delete's flush or a later
// one; ignored deletes are counted.
func TestStarRocksDeleteRules(t *testing.T) {
	_, db := starrocksCluster(t, `CREATE TABLE sb (id INT NOT NULL, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT "false") PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		`CREATE TABLE st (id INT NOT NULL, val VARCHAR(10) NOT NULL, deleted_at DATETIME NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		`CREATE TABLE ig (id INT NOT NULL, val VARCHAR(10) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`)
	deleteRules(t, db, "plain", "2026-12-03 10:20:30.123", "2026-12-03 10:21:30.123")
}

// TestStarRocksSoftDeleteOfAMissingRow: a soft delete of a key the target
// does not store changes nothing, as the SQL targets' UPDATE does
// (partial_update would insert a marked row of defaults).
func TestStarRocksSoftDeleteOfAMissingRow(t *testing.T) {
	_, db := starrocksCluster(t, `CREATE TABLE sb (id INT NOT NULL, val VARCHAR(10) NOT NULL, deleted BOOLEAN NOT NULL DEFAULT "false") PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		`INSERT INTO sb VALUES (1, 'a', 0)`)
	cfg := pipeline(db, config.Table{Source: "s.sb", Delete: "soft:deleted"})
	cfg.Name = "starrocks-soft-missing"
	e := newEngine(t, cfg)
	f := &feeder{t: t, e: e}
	r := func(id int, val string) changelog.Row {
		return row("id", changelog.Number(strconv.Itoa(id)), "val", val)
	}
	f.must(changelog.Delete, "s.sb", r(1, "a"), changelog.Row{})
	f.must(changelog.Delete, "s.sb", r(9, "z"), changelog.Row{})
	f.flush()
	if got, want := query(t, db, "SELECT id, val, deleted FROM sb ORDER BY id"), "1|a|1"; got != want {
		t.Errorf("sb = %q, want %q", got, want)
	}
}
