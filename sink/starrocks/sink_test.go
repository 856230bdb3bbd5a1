package starrocks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

const kvDDL = "CREATE TABLE kv (id BIGINT NOT NULL, v BIGINT) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)"

// target opens a Target on c with the cluster's clock and the given
// retries (0: the default), set up.
func (c *cluster) target(t *testing.T, retries int) *Target {
	t.Helper()
	opt := Options{Retries: retries}
	if c.clock != nil {
		opt.Clock = c.clock
	}
	tg, err := Open(context.Background(), c.url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if err := tg.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tg
}

// kvUnit is a unit of pipeline "pipe" upserting id = v into kv, reaching
// offset off of partition p0.
func kvUnit(t *testing.T, tg *Target, off int64, ids ...int64) *commit.Unit {
	t.Helper()
	st, err := tg.Describe(context.Background(), schema.Name{Name: "kv"})
	if err != nil {
		t.Fatal(err)
	}
	g := commit.Group{Columns: []string{"id", "v"}}
	for _, id := range ids {
		g.Rows = append(g.Rows, []any{id, id * 10})
		g.Pos = append(g.Pos, changelog.Position{Partition: "p0", Offset: off, Seq: off})
	}
	return &commit.Unit{Pipeline: "pipe", Batches: []*commit.Batch{{Table: st, Upserts: []commit.Group{g}}},
		Progress: []changelog.Position{{Partition: "p0", Offset: off, Seq: off}}}
}

// kvCluster is the cluster of the tests, with txsink's tables and kv.
func kvCluster(t *testing.T) *cluster {
	t.Helper()
	c := realOrFake(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, kvDDL)
	return c
}

// twoInstances opens two targets on a kvCluster, the first (the zombie to
// be) having committed unit 1 of p0 at offset 100.
func twoInstances(t *testing.T) (c *cluster, zombie, next *Target) {
	t.Helper()
	c = kvCluster(t)
	zombie, next = c.target(t, 0), c.target(t, 0)
	if err := zombie.Apply(context.Background(), kvUnit(t, zombie, 100, 1)); err != nil {
		t.Fatal(err)
	}
	return c, zombie, next
}

// driveTimers fires the client's backoff timers n times, on the fake's
// clock, while the code under test waits on them.
func (c *cluster) driveTimers(t *testing.T, n int) {
	t.Helper()
	go func() {
		for range n {
			if _, err := c.clock.AwaitTimer(context.Background()); err != nil {
				return
			}
			c.clock.Advance(10_000_000_000) // 10s: past any backoff, short of a transaction's timeout
		}
	}()
}

// TestLostCommitAnswer: a commit whose answer the fake drops (the work
// done) or answers with a publish timeout is resolved by the label's
// state and is not an error; when the state cannot be read either, Apply
// fails transient and Committed tells from the label whether it landed —
// yes for a commit carried out, no (after rolling it back) for one never
// received — and a retry then applies the unit once.
func TestLostCommitAnswer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		commit    starrocksfake.Fault
		stateLost bool
		landed    bool
	}{
		{"answer dropped, state read", starrocksfake.DropAnswer, false, true},
		{"publish timeout, state read", starrocksfake.PublishTimeout, false, true},
		{"answer dropped, state lost", starrocksfake.DropAnswer, true, true},
		{"request dropped, state lost", starrocksfake.DropRequest, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeCluster(t, starrocksfake.Options{Clock: clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}).withTables(t)
			c.ddl(t, kvDDL)
			tg := c.target(t, 1)
			if err := tg.Apply(ctx, kvUnit(t, tg, 100, 1)); err != nil {
				t.Fatal(err)
			}
			u := kvUnit(t, tg, 200, 2)
			c.fake.Inject(starrocksfake.OpCommit, tc.commit)
			if tc.stateLost {
				c.fake.Inject(starrocksfake.OpLoadState, starrocksfake.DropRequest, starrocksfake.DropRequest)
				c.driveTimers(t, 1)
			}
			err := tg.Apply(ctx, u)
			if !tc.stateLost {
				if err != nil {
					t.Fatalf("Apply: %v, want the commit resolved as landed", err)
				}
			} else {
				if !errkind.IsTransient(err) {
					t.Fatalf("Apply: %v, want a transient error", err)
				}
				done, err := tg.Committed(ctx, u)
				if err != nil || done != tc.landed {
					t.Fatalf("Committed = %v, %v; want %v", done, err, tc.landed)
				}
				if !done {
					if err := tg.Apply(ctx, u); err != nil {
						t.Fatalf("Apply again: %v", err)
					}
				}
			}
			if n := c.count(t, "SELECT COUNT(*) FROM kv WHERE id = 2"); n != 1 {
				t.Errorf("%d rows of id 2, want 1", n)
			}
			if p, err := tg.Progress(ctx, "pipe"); err != nil || p["p0"].Offset != 200 {
				t.Errorf("Progress = %v, %v; want p0 at 200", p, err)
			}
		})
	}
}

// TestClaimEpochs: each claim is granted an epoch no claim had, above
// every earlier one, even when another claim took the next one first.
func TestClaimEpochs(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	a, b := c.target(t, 0), c.target(t, 0)
	if _, err := a.Claim(ctx, "pipe", []string{"p0"}); err != nil {
		t.Fatal(err)
	}
	first := a.epochs[claimKey("pipe", "p0")]
	// Another claimer took the next epoch's label (and failed to commit
	// its claim): b must pass over it.
	x, err := b.client.Begin(ctx, Label("pipe", first+1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	x, err = b.client.Begin(ctx, Label("pipe", first+1, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Rollback(ctx)
	if _, err := b.Claim(ctx, "pipe", []string{"p0", "p1"}); err != nil {
		t.Fatal(err)
	}
	second := b.epochs[claimKey("pipe", "p0")]
	if second <= first || b.epochs[claimKey("pipe", "p1")] != second {
		t.Errorf("epochs %d then %v, want a later one for both partitions", first, b.epochs)
	}
	if b.owner["pipe"] == a.owner["pipe"] {
		t.Errorf("both instances have label namespace %d", a.owner["pipe"])
	}
	if _, err := a.Claim(ctx, "pipe", []string{"p0"}); err != nil {
		t.Fatal(err)
	}
	if third := a.epochs[claimKey("pipe", "p0")]; third <= second {
		t.Errorf("a's claim again got epoch %d, want one above %d", third, second)
	}
}

// TestZombieOpenAtClaim: a unit of the earlier owner that passed its
// claims check and was still open when another instance claimed its
// partition is rolled back by that claim; its commit fails with ErrFenced
// and nothing of it is visible.
func TestZombieOpenAtClaim(t *testing.T) {
	ctx := context.Background()
	c, zombie, next := twoInstances(t)
	var claimed map[string]changelog.Position
	claim := fault.With(ctx, &fault.Hooks{BeforeCommit: func(*commit.Unit) error {
		var err error
		claimed, err = next.Claim(ctx, "pipe", []string{"p0"})
		return err
	}})
	err := zombie.Apply(claim, kvUnit(t, zombie, 200, 2))
	if !errors.Is(err, sink.ErrFenced) {
		t.Fatalf("the zombie's Apply: %v, want ErrFenced", err)
	}
	if claimed["p0"].Offset != 100 {
		t.Errorf("claimed %v, want p0 at 100", claimed)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 1 {
		t.Errorf("%d rows, want the first unit's 1", n)
	}
	if err := next.Apply(ctx, kvUnit(t, next, 200, 3)); err != nil {
		t.Fatal(err)
	}
}

// TestLingeringAbortedAtClaim: a transaction an instance left open (it
// crashed between its loads and its commit) is rolled back by the next
// claim of its partition, found from the label stored with the progress.
func TestLingeringAbortedAtClaim(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	old := c.target(t, 0)
	for i := int64(1); i <= 5; i++ {
		if err := old.Apply(ctx, kvUnit(t, old, 100*i, i)); err != nil {
			t.Fatal(err)
		}
	}
	// The crash: unit 6 begun and loaded, never committed.
	label := Label("pipe", old.owner["pipe"], old.seq["pipe"]+1)
	x, err := old.client.Begin(ctx, label)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Load(ctx, "kv", []string{"id", "v", "__op"}, []byte(`[{"id":6,"v":60,"__op":0}]`)); err != nil {
		t.Fatal(err)
	}
	next := c.target(t, 0)
	got, err := next.Claim(ctx, "pipe", []string{"p0"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := next.client.LoadState(ctx, label); err != nil || st != "ABORTED" {
		t.Errorf("the lingering transaction %s is %s (%v), want ABORTED", label, st, err)
	}
	if got["p0"].Offset != 500 {
		t.Errorf("claimed %v, want p0 at 500", got)
	}
	if err := x.Commit(ctx); err == nil {
		t.Error("the lingering transaction committed after the claim")
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 5 {
		t.Errorf("%d rows, want 5", n)
	}
}

// TestVersionRefused: a server older than 4.0 has no multi-table
// transactions: opening it is refused, saying so.
func TestVersionRefused(t *testing.T) {
	c := fakeCluster(t, starrocksfake.Options{Version: "3.3.5 3b7c2e1"})
	_, err := Open(context.Background(), c.url, Options{})
	for _, w := range []string{"3.3.5", "4.0", "multi-table", "upgrade"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Open of a 3.3 server: %v, want an error saying %q", err, w)
		}
	}
	if errkind.Of(err) != errkind.Permanent {
		t.Errorf("errkind = %v, want permanent", errkind.Of(err))
	}
	tg := fakeCluster(t, starrocksfake.Options{}).withTables(t).target(t, 0)
	if !strings.HasPrefix(tg.Version(), "4.0") {
		t.Errorf("Version() = %q", tg.Version())
	}
}

// TestInProcessingApplied: loads answered TXN_IN_PROCESSING are retried
// and the unit commits whole.
func TestInProcessingApplied(t *testing.T) {
	ctx := context.Background()
	c := fakeCluster(t, starrocksfake.Options{Clock: clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}).withTables(t)
	c.ddl(t, kvDDL)
	tg := c.target(t, 0)
	u := kvUnit(t, tg, 100, 1, 2)
	c.fake.Inject(starrocksfake.OpLoad, starrocksfake.InProcessing, starrocksfake.InProcessing)
	c.driveTimers(t, 2)
	if err := tg.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

// TestTableKinds: a Primary Key table is described with its key; a
// Duplicate Key or Unique Key table without one (so a stream with updates
// or deletes into it is refused at start, and inserts go in as they are);
// an Aggregate table is refused, saying why.
func TestTableKinds(t *testing.T) {
	c := realOrFake(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, kvDDL,
		"CREATE TABLE dup (id BIGINT NOT NULL, v BIGINT) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)",
		"CREATE TABLE uniq (id BIGINT NOT NULL, v BIGINT) UNIQUE KEY (id) DISTRIBUTED BY HASH(id)",
		"CREATE TABLE agg (id BIGINT NOT NULL, v BIGINT SUM) AGGREGATE KEY (id) DISTRIBUTED BY HASH(id)")
	tg := c.target(t, 0)
	ctx := context.Background()
	for name, key := range map[string]string{"kv": "id", "dup": "", "uniq": ""} {
		st, err := tg.Describe(ctx, schema.Name{Name: name})
		if err != nil || strings.Join(st.PrimaryKey, ",") != key {
			t.Errorf("Describe(%s) = %v, %v; want key %q", name, st, err, key)
		}
	}
	_, err := tg.Describe(ctx, schema.Name{Name: "agg"})
	if err == nil || !strings.Contains(err.Error(), "Aggregate") || errkind.Of(err) != errkind.Permanent {
		t.Errorf("Describe(agg) = %v, want a permanent refusal naming the Aggregate kind", err)
	}
	if _, err := tg.Describe(ctx, schema.Name{Namespace: "other", Name: "kv"}); err == nil || !strings.Contains(err.Error(), "one database") {
		t.Errorf("Describe(other.kv) = %v, want a refusal", err)
	}
}

// TestParseURL: the target URL's hosts (several for failover, 8030 by
// default), database, query port, catalog and TLS; refusals name what is
// wrong and never the password.
func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url, want, err string
	}{
		{url: "starrocks://u:pw@fe1:8030,fe2:8031/shop?query-port=9031", want: "u pw [fe1:8030 fe2:8031] shop 9031 information_schema false"},
		{url: "starrocks://u@fe1/shop", want: "u  [fe1:8030] shop 9030 information_schema false"},
		{url: "starrocks://u@fe1/shop?tls=true&catalog=cat", want: "u  [fe1:8030] shop 9030 cat true"},
		{url: "starrocks://u@fe1/shop?txn-timeout=120s", want: "u  [fe1:8030] shop 9030 information_schema false 2m0s"},
		{url: "starrocks://u:secret@fe1/shop?txn-timeout=90", err: `txn-timeout "90"`},
		{url: "starrocks://u:secret@fe1/shop?txn-timeout=1500ms", err: `txn-timeout "1500ms"`},
		{url: "mysql://u@fe1/shop", err: `scheme "mysql" is not starrocks`},
		{url: "starrocks://u:secret@/shop", err: "no FE host"},
		{url: "starrocks://u:secret@fe1:8030", err: "database \"\" is not a StarRocks database name"},
		{url: "starrocks://u:secret@fe1/shop?query-port=x", err: `query-port "x"`},
		{url: "starrocks://u:secret@fe1/shop?tls=maybe", err: `tls="maybe"`},
		{url: "starrocks://u:secret@fe1/shop?timeout=3", err: `unknown parameter "timeout"`},
		{url: "starrocks://u:secret@fe1/shop?tls=true&tls-ca=/no/such/ca.pem", err: "tls-ca"},
	} {
		c, err := parseURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("parseURL(%s) = %v, want an error saying %q without the password", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseURL(%s): %v", tc.url, err)
			continue
		}
		got := fmt.Sprint(c.user, " ", c.password, " ", c.hosts, " ", c.db, " ", c.queryPort, " ", c.catalog, " ", c.tls != nil)
		if c.txnTimeout != 0 {
			got += " " + c.txnTimeout.String()
		}
		if got != tc.want {
			t.Errorf("parseURL(%s) = %s, want %s", tc.url, got, tc.want)
		}
	}
}

// TestFailoverToSecondFE: an FE whose HTTP port does not answer is passed
// over for the next one listed. (Both are on one host here, so the MySQL
// side is reached on the first.)
func TestFailoverToSecondFE(t *testing.T) {
	c := fakeCluster(t, starrocksfake.Options{}).withTables(t)
	c.ddl(t, kvDDL)
	u, err := url.Parse(c.url)
	if err != nil {
		t.Fatal(err)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadHost := dead.Listener.Addr().String()
	dead.Close() // nothing listens there now
	u.Host = deadHost + "," + u.Host
	c.url = u.String()
	tg := c.target(t, 0)
	if err := tg.Apply(context.Background(), kvUnit(t, tg, 100, 1)); err != nil {
		t.Fatal(err)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}

// TestRewindAndForget: the progress rows are read whole with their marks,
// a claimed partition is rewound to its start without a mark, and Forget
// deletes the rows (returning them) and fences an instance still running
// for them: its next unit writes nothing.
func TestRewindAndForget(t *testing.T) {
	ctx := context.Background()
	c := kvCluster(t)
	a := c.target(t, 0)
	u := kvUnit(t, a, 100, 1)
	u.Marks = map[string]string{"p0": "mark-1"}
	if err := a.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	st, err := a.Stored(ctx, "pipe")
	if err != nil || len(st) != 1 || st[0].Offset != 100 || st[0].Mark != "mark-1" || st[0].Epoch != a.epochs[claimKey("pipe", "p0")] || st[0].UpdatedAt == "" {
		t.Fatalf("Stored = %+v, %v", st, err)
	}
	if err := a.Rewind(ctx, "pipe", "p0"); err != nil {
		t.Fatal(err)
	}
	if m, err := a.Marks(ctx, "pipe"); err != nil || len(m) != 0 {
		t.Errorf("Marks after Rewind = %v, %v; want none", m, err)
	}
	if p, err := a.Progress(ctx, "pipe"); err != nil || p["p0"].Offset != 0 {
		t.Errorf("Progress after Rewind = %v, %v; want p0 at 0", p, err)
	}
	if err := a.Apply(ctx, kvUnit(t, a, 200, 2)); err != nil {
		t.Fatal(err)
	}
	b := c.target(t, 0)
	gone, err := b.Forget(ctx, "pipe", nil)
	if err != nil || len(gone) != 1 || gone[0].Offset != 200 {
		t.Fatalf("Forget = %+v, %v; want p0 at 200", gone, err)
	}
	if st, err := b.Stored(ctx, "pipe"); err != nil || len(st) != 0 {
		t.Errorf("Stored after Forget = %+v, %v; want none", st, err)
	}
	if err := a.Apply(ctx, kvUnit(t, a, 300, 3)); !errors.Is(err, sink.ErrFenced) {
		t.Errorf("Apply of the instance still running: %v, want ErrFenced", err)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

// TestZombieCommitBeforeAbort: a unit of the earlier owner that passed its
// claims check before the claim and commits after the claim committed but
// before the claim's abort is in the positions the claim returns; the
// claim itself writes no progress row, so it can set none back.
func TestZombieCommitBeforeAbort(t *testing.T) {
	ctx := context.Background()
	c, zombie, next := twoInstances(t)
	claims, err := next.readClaims(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	epoch := claims[counter].epoch + 1
	before, err := next.Stored(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	// The claim commits between the zombie's check and its commit; it
	// writes no progress row.
	grant := fault.With(ctx, &fault.Hooks{BeforeCommit: func(*commit.Unit) error {
		if err := next.grant(ctx, "pipe", []string{"p0"}, epoch); err != nil {
			return err
		}
		after, err := next.Stored(ctx, "pipe")
		if err != nil {
			return err
		}
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the claim changed the progress rows:\n%v\nto\n%v", before, after)
		}
		return nil
	}})
	if err := zombie.Apply(grant, kvUnit(t, zombie, 200, 2)); err != nil {
		t.Fatalf("the zombie's unit, checked before the claim: %v", err)
	}
	got, err := next.settle(ctx, "pipe", []string{"p0"}, claims, epoch)
	if err != nil {
		t.Fatal(err)
	}
	if got["p0"].Offset != 200 {
		t.Errorf("claimed %v, want p0 at 200: the zombie's unit landed before the abort", got)
	}
	if err := zombie.Apply(ctx, kvUnit(t, zombie, 300, 3)); !errors.Is(err, sink.ErrFenced) {
		t.Errorf("the zombie's next unit: %v, want ErrFenced", err)
	}
	if err := next.Apply(ctx, kvUnit(t, next, 300, 4)); err != nil {
		t.Fatal(err)
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 3 {
		t.Errorf("%d rows, want 1, 2 and 4", n)
	}
}
