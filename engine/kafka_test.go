package engine_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/kafka"
)

// newKafka starts an in-process Kafka cluster (kfake) holding topics of
// partitions partitions each, and returns its brokers.
func newKafka(t *testing.T, partitions int, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topics...))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// produce writes each workload partition p, as txsink-json records, to
// partition p of topic, and returns the end offset of every partition and
// the bytes of the records written.
func produce(t *testing.T, brokers []string, topic string, res *workload.Result) (map[string]int64, int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends := map[string]int64{}
	var recs []*kgo.Record
	var bytes int64
	for p, changes := range res.Partitions {
		for i := range changes {
			line, err := native.Append(nil, &changes[i])
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: line[:len(line)-1]})
			bytes += int64(len(line) - 1)
		}
		ends[kafka.PartitionName(topic, int32(p))] = int64(len(changes))
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return ends, bytes
}

func kafkaPipeline(db *testdb.DB, brokers []string, group string, topics ...string) *config.Config {
	cfg := workloadPipeline(db, nil)
	cfg.Name = "kafka"
	cfg.Source = config.Source{Type: "kafka", Format: "txsink-json", Raw: source.Settings{
		"brokers": brokers, "topics": topics, "group": group, "session-timeout": 6 * time.Second}}
	cfg.Sink.FlushInterval = 50 * time.Millisecond
	return cfg
}

// groupOffsets returns the offsets committed in Kafka for group.
func groupOffsets(t *testing.T, brokers []string, group string) map[string]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("fetch the offsets of group %s: %v", group, err)
	}
	out := map[string]int64{}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.Offset >= 0 {
				out[kafka.PartitionName(tp.Topic, p.Partition)] = p.Offset
			}
		}
	}
	return out
}

// reached returns a commit hook and a channel closed once the committed
// progress of every partition in ends has reached its end.
func reached(ends map[string]int64) (func(*commit.Unit), <-chan struct{}) {
	var mu sync.Mutex
	at := map[string]int64{}
	done := make(chan struct{})
	closed := false
	return func(u *commit.Unit) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range u.Progress {
			at[p.Partition] = max(at[p.Partition], p.Offset)
		}
		for part, end := range ends {
			if at[part] < end {
				return
			}
		}
		if !closed {
			closed = true
			close(done)
		}
	}, done
}

// runUntil runs e until done is closed (then stops it as SIGINT would) or
// the deadline passes.
func runUntil(t *testing.T, e *engine.Engine, done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx, engine.RunOptions{}) }()
	select {
	case <-done:
	case err := <-errc:
		cancel()
		t.Fatalf("Run ended before the end of the topics: %v", err)
	case <-time.After(2 * time.Minute):
		cancel()
		<-errc
		t.Fatalf("the end of the topics was not committed within 2 minutes; status: %+v", e.Status())
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestKafkaSource reads a workload from a 4-partition topic into every
// target, in plain and in transaction mode, then runs again: the second
// run resumes from the target's progress and applies nothing twice (the
// append-only table would show it), even though no offset was read back
// from Kafka.
func TestKafkaSource(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 200, Partitions: 4, Seed: 11, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		for _, txnMode := range []bool{false, true} {
			db.Exec(t, "DROP TABLE IF EXISTS orders", "DROP TABLE IF EXISTS order_items", "DROP TABLE IF EXISTS order_events", "DROP TABLE IF EXISTS txsink_progress")
			db.Exec(t, workload.Schema(db.Dialect)...)
			brokers := newKafka(t, 4, "shop")
			ends, _ := produce(t, brokers, "shop", res)
			cfg := kafkaPipeline(db, brokers, "g", "shop")
			cfg.Sink.TxnEnabled = txnMode
			hook, done := reached(ends)
			e := newEngine(t, cfg, engine.WithCommitHook(hook))
			runUntil(t, e, done)
			checkFinal(t, db, res)
			for part, end := range ends {
				if pos, _ := e.Progress(part); pos.Offset != end || pos.Seq != end-1 {
					t.Errorf("progress of %s = %+v, want offset %d (seq %d)", part, pos, end, end-1)
				}
			}
			if got := e.Stats().Tables["order_events"]; got != (engine.TableStats{Inserted: int64(res.Events)}) {
				t.Errorf("rows of order_events counted %+v, want %d inserted", got, res.Events)
			}
			// Kafka's committed offsets follow, for lag tools.
			if got := groupOffsets(t, brokers, "g"); !maps.Equal(got, ends) {
				t.Errorf("group g's committed offsets %v, want %v", got, ends)
			}
			// /status shows each owned partition in records, with the
			// high watermark as its end: the lag is End - Committed.
			st := e.Status()
			if len(st.Partitions) != len(ends) {
				t.Errorf("status lists %d partitions, want %d: %+v", len(st.Partitions), len(ends), st.Partitions)
			}
			for _, ps := range st.Partitions {
				if ps.Unit != "records" || ps.End != ends[ps.Name] || ps.Committed != ends[ps.Name] {
					t.Errorf("status of %s = %+v, want unit records, end and committed %d", ps.Name, ps, ends[ps.Name])
				}
			}
			// Again, in a new group (so Kafka's committed offsets say
			// "start over") and with more data: only the new data is
			// applied.
			more := workload.Generate(workload.Spec{Orders: 40, Partitions: 4, Seed: 12, Events: true})
			shift(more, 1_000_000)
			ends2, moreBytes := produce(t, brokers, "shop", more)
			for part := range ends2 {
				ends2[part] += ends[part]
			}
			cfg2 := kafkaPipeline(db, brokers, "g2", "shop")
			cfg2.Sink.TxnEnabled = txnMode
			hook2, done2 := reached(ends2)
			e2 := newEngine(t, cfg2, engine.WithCommitHook(hook2))
			runUntil(t, e2, done2)
			if got := e2.Stats().Bytes; got != moreBytes {
				t.Errorf("txn mode %t: the second run read %d bytes, want %d: it did not start where the target's progress says", txnMode, got, moreBytes)
			}
			if got, want := query(t, db, "SELECT COUNT(*) FROM order_events"), res.Events+more.Events; got != strconv.Itoa(want) {
				t.Fatalf("txn mode %t: order_events has %s rows, want %d: the second run applied something twice or missed something", txnMode, got, want)
			}
		}
	})
}

// shift moves a workload's order ids by delta so that it can follow
// another workload in the same tables.
func shift(res *workload.Result, delta int64) {
	for _, changes := range res.Partitions {
		for i := range changes {
			c := &changes[i]
			for _, r := range []*changelog.Row{&c.Before, &c.After} {
				for j, name := range r.Names {
					if name == "id" || name == "order_id" {
						if v, ok := r.Values[j].(changelog.Number); ok {
							n, _ := v.Int64()
							r.Values[j] = changelog.Number(strconv.FormatInt(n+delta, 10))
						}
					}
				}
			}
			c.TxnID = "shifted-" + c.TxnID
		}
	}
}

// dbzTopics are the topics produceDebezium writes: one per table, as
// Debezium does, and its transaction topic.
const dbzTxnTopic = "db.transaction"

// produceDebezium writes res the way Debezium with
// provide.transaction.metadata writes it: one topic per table
// ("db.<table>", parts partitions each, a row's partition chosen by its
// order id, as a key would), each event carrying its transaction's id and
// order, and a BEGIN and an END (with the event count) per transaction in
// dbzTxnTopic. The workload's partitions are interleaved transaction by
// transaction, as one source database would have committed them; only
// the transactions [from, to) of each workload partition are written. It
// adds the records written per partition to ends.
func produceDebezium(t *testing.T, brokers []string, res *workload.Result, parts, from, to int, ends map[string]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	image := func(r changelog.Row) any {
		if r.IsZero() {
			return nil
		}
		m := map[string]any{}
		for i, n := range r.Names {
			m[n] = r.Values[i]
		}
		return m
	}
	// Split every workload partition into its transactions.
	var txns [][][]changelog.Change
	for _, changes := range res.Partitions {
		var list [][]changelog.Change
		start := 0
		for i := range changes {
			if changes[i].TxnEnd {
				list = append(list, changes[start:i+1])
				start = i + 1
			}
		}
		txns = append(txns, list)
	}
	var recs []*kgo.Record
	send := func(topic string, p int32, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: b})
		ends[kafka.PartitionName(topic, p)]++
	}
	for i := from; i < to; i++ {
		more := false
		for _, list := range txns {
			if i >= len(list) {
				continue
			}
			more = true
			txn := list[i]
			id := "gtid:" + txn[0].TxnID
			send(dbzTxnTopic, 0, map[string]any{"status": "BEGIN", "id": id, "event_count": nil, "data_collections": nil})
			n := 0
			for _, c := range txn {
				op := map[changelog.Kind]string{changelog.Insert: "c", changelog.UpdateAfter: "u", changelog.Delete: "d"}[c.Kind]
				if op == "" {
					continue // Debezium has no -U of its own
				}
				n++
				row := c.After
				if c.Kind == changelog.Delete {
					row = c.Before
				}
				key, _ := row.Get("order_id")
				if c.Table.Name == "orders" {
					key, _ = row.Get("id")
				}
				k, _ := key.(changelog.Number).Int64()
				send("db."+c.Table.Name, int32(k%int64(parts)), map[string]any{
					"before": image(c.Before), "after": image(c.After), "op": op,
					"source":      map[string]any{"db": c.Table.Namespace, "table": c.Table.Name},
					"transaction": map[string]any{"id": id, "total_order": n, "data_collection_order": n},
				})
			}
			send(dbzTxnTopic, 0, map[string]any{"status": "END", "id": id, "event_count": n})
		}
		if !more {
			break
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// waitProgress waits until e's progress has reached ends in every
// partition, or Run (errc) ends, or the deadline passes.
func waitProgress(t *testing.T, e *engine.Engine, ends map[string]int64, errc <-chan error) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		at := true
		for part, end := range ends {
			if pos, _ := e.Progress(part); pos.Offset < end {
				at = false
			}
		}
		if at {
			return
		}
		select {
		case <-tick.C:
		case err := <-errc:
			t.Fatalf("Run ended before reaching the end: %v", err)
		case <-deadline:
			t.Fatalf("the end was not committed within 2 minutes; status %+v", e.Status())
		}
	}
}

// TestKafkaJoinedTransactions reads a Debezium changelog written one
// topic per table, joins each source transaction across the topics by the
// transaction topic, and commits whole transactions: a reader polling the
// cross-table invariant never sees part of one. Two instances share the
// group: one reads everything, the other stands by; when the first stops
// mid-run, the second takes every partition over and finishes exactly.
func TestKafkaJoinedTransactions(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 400, Partitions: 3, Seed: 5, Events: true})
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, workload.Schema(db.Dialect)...)
		topics := []string{"db.orders", "db.order_items", "db.order_events"}
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topics...), kfake.SeedTopics(1, dbzTxnTopic),
			kfake.GroupMinSessionTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		brokers := c.ListenAddrs()
		ends := map[string]int64{}
		longest := 0
		for _, changes := range res.Partitions {
			n := 0
			for _, c := range changes {
				if c.TxnEnd {
					n++
				}
			}
			longest = max(longest, n)
		}
		produceDebezium(t, brokers, res, 3, 0, longest/2, ends)
		cfg := kafkaPipeline(db, brokers, "joined", topics...)
		for i := range cfg.Tables {
			cfg.Tables[i].Source = strings.Replace(cfg.Tables[i].Source, "shop.", "*.", 1)
		}
		cfg.Source.Format = "debezium-json"
		cfg.Source.Set("transaction-topic", dbzTxnTopic)
		cfg.Source.Set("session-timeout", 2*time.Second)
		cfg.Sink.TxnEnabled = true
		cfg.Sink.FlushMaxRows = 50 // many commits, each cut between two transactions
		cfg.Sink.FlushCoalesce = false

		p := startPoller(t, db, workload.Invariant)
		var mu sync.Mutex
		commits := 0
		fifth := make(chan struct{})
		first := newEngine(t, cfg, engine.WithCommitHook(func(*commit.Unit) {
			mu.Lock()
			defer mu.Unlock()
			if commits++; commits == 5 {
				close(fifth)
			}
		}))
		second := newEngine(t, cfg)
		ctx1, cancel1 := context.WithCancel(context.Background())
		err1 := make(chan error, 1)
		go func() { err1 <- first.Run(ctx1, engine.RunOptions{}) }()
		select {
		case <-fifth:
		case err := <-err1:
			cancel1()
			t.Fatalf("the first instance ended before 5 commits: %v", err)
		case <-time.After(2 * time.Minute):
			cancel1()
			t.Fatalf("the first instance did not commit 5 times; status %+v", first.Status())
		}
		// The standby joins while the first works, and gets nothing; the
		// first stops; the standby takes every partition and the second
		// half of the changelog.
		ctx2, cancel2 := context.WithCancel(context.Background())
		err2 := make(chan error, 1)
		go func() { err2 <- second.Run(ctx2, engine.RunOptions{}) }()
		cancel1()
		if err := <-err1; err != nil {
			t.Fatalf("first instance: %v", err)
		}
		produceDebezium(t, brokers, res, 3, longest/2, longest, ends)
		waitProgress(t, second, ends, err2)
		cancel2()
		if err := <-err2; err != nil {
			t.Fatalf("second instance: %v", err)
		}
		if second.Stats().Commits == 0 {
			t.Error("the standby committed nothing: the test did not hand the partitions over mid-run")
		}
		polls, violations := p.finish(t)
		checkFinal(t, db, res)
		if violations != 0 {
			t.Errorf("the reader saw %d invariant violations in %d polls: transactions applied in parts", violations, polls)
		}
		st1, st2 := first.Stats(), second.Stats()
		t.Logf("%s: first %d commits, second %d commits; reader polled %d times", db.Dialect, st1.Commits, st2.Commits, polls)
	})
}

// stateAtLog is a slog.Handler that, at the first record whose message
// holds msg, sends the state of the engine e points at to states.
type stateAtLog struct {
	msg    string
	e      *atomic.Pointer[engine.Engine]
	states chan engine.State
}

func (h stateAtLog) Enabled(context.Context, slog.Level) bool { return true }
func (h stateAtLog) Handle(_ context.Context, r slog.Record) error {
	if e := h.e.Load(); e != nil && strings.Contains(r.Message, h.msg) {
		select {
		case h.states <- e.Status().State:
		default:
		}
	}
	return nil
}
func (h stateAtLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h stateAtLog) WithGroup(string) slog.Handler      { return h }

// TestKafkaBrokersUnreachableAtStart runs a pipeline whose Kafka cluster
// is stopped: while Run waits for the brokers the pipeline is starting,
// not running (so /readyz is not ready), and once startup-timeout has
// passed Run stops with an error naming source.brokers.
func TestKafkaBrokersUnreachableAtStart(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, workload.Schema("sqlite")...)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	brokers := c.ListenAddrs()
	c.Close()
	cfg := kafkaPipeline(db, brokers, "unreachable", "orders")
	cfg.StartupTimeout = 200 * time.Millisecond
	var current atomic.Pointer[engine.Engine]
	h := stateAtLog{msg: "waiting for the Kafka brokers", e: &current, states: make(chan engine.State, 1)}
	e := newEngine(t, cfg, engine.WithLogger(slog.New(h)))
	current.Store(e)
	err = e.Run(context.Background(), engine.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "the Kafka brokers (source.brokers: "+strings.Join(brokers, ", ")+") did not answer within startup-timeout (200ms") {
		t.Fatalf("Run = %v, want the brokers' timeout", err)
	}
	select {
	case st := <-h.states:
		if st != engine.StateStarting {
			t.Errorf("state while waiting for the brokers = %s, want starting", st)
		}
	default:
		t.Error("no log line said what Run waited for")
	}
	if st := e.Status().State; st != engine.StateFailed {
		t.Errorf("state after the timeout = %s, want failed", st)
	}
}
