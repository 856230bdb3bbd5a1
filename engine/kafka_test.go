package engine_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
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
	cfg.Source = config.Source{Type: config.SourceKafka, Format: "txsink-json", Brokers: brokers, Topics: topics, Group: group,
		SessionTimeout: 6 * time.Second}
	cfg.Sink.FlushInterval = 50 * time.Millisecond
	return cfg
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
