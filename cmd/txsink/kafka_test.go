//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source/kafka"
)

// scaleTopics are the "topic pair" of the scale-out test: workload
// partition p goes to partition p%8 of scaleTopics[p/8].
var scaleTopics = []string{"shopa", "shopb"}

const scalePartitions = 8

// kafkaPartition names the source partition of workload partition p.
func kafkaPartition(p int) string {
	return kafka.PartitionName(scaleTopics[p/scalePartitions], int32(p%scalePartitions))
}

// produceLines produces records [from, to) of every workload partition,
// the fraction given of each, to its topic-partition.
func produceLines(t *testing.T, cl *kgo.Client, f *feed, from, to float64) {
	t.Helper()
	errc := make(chan error, 1)
	produceSlice(cl, f, from, to, errc)
	select {
	case err := <-errc:
		t.Fatalf("produce: %v", err)
	default:
	}
}

// produceSlice is produceLines for a goroutine: it reports a failure on
// errc instead of failing the test.
func produceSlice(cl *kgo.Client, f *feed, from, to float64, errc chan<- error) {
	var recs []*kgo.Record
	for p, lines := range f.lines {
		lo, hi := int(from*float64(len(lines))), int(to*float64(len(lines)))
		for _, l := range lines[lo:hi] {
			recs = append(recs, &kgo.Record{Topic: scaleTopics[p/scalePartitions], Partition: int32(p % scalePartitions), Value: l[:len(l)-1]})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		select {
		case errc <- err:
		default:
		}
	}
}

func writeKafkaConfig(t *testing.T, dir, name, url string, brokers []string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	b.WriteString("source:\n  type: kafka\n")
	fmt.Fprintf(&b, "  brokers: [%s]\n", strings.Join(brokers, ", "))
	fmt.Fprintf(&b, "  topics: [%s]\n", strings.Join(scaleTopics, ", "))
	b.WriteString("  group: scale\n  session-timeout: 2s\n  format: txsink-json\n")
	fmt.Fprintf(&b, "target:\n  url: %q\n", url)
	b.WriteString("tables:\n  - source: shop.orders\n  - source: shop.order_items\n    primary-key: [order_id, line_no]\n")
	b.WriteString("  - source: shop.order_events\n    append-only: true\n")
	b.WriteString("sink:\n  buffer-flush.interval: 200ms\n  transaction.multi-table.enabled: true\n  transaction.multi-table.buffer-size: 256KiB\n")
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKafkaScaleOut runs txsink processes as one consumer group over an
// 8-partition topic pair holding a transactional workload: two instances
// share the partitions; one is killed (SIGKILL) mid-run and the other
// takes its partitions over; a third joins mid-run and the group moves
// partitions to it. The final state must be exact, the append-only table
// must hold each event once (no loss, no duplicate), and a reader polling
// the cross-table invariant must never see part of a source transaction.
func TestKafkaScaleOut(t *testing.T) {
	for _, d := range []string{"mysql", "postgres"} {
		t.Run(d, func(t *testing.T) {
			db := testdb.Open(t, d)
			res := workload.Generate(workload.Spec{Orders: 1500, Partitions: 2 * scalePartitions, Seed: 21, Events: true})
			f := newFeed(t, res)
			db.Exec(t, workload.Schema(db.Dialect)...)

			brokers, producer := startScaleCluster(t)
			const name = "scale"
			cfg := writeKafkaConfig(t, t.TempDir(), name, db.URL, brokers)
			reader := startInvariantReader(t, db)
			complete := allCommitted(t, db, name, f)

			produceLines(t, producer, f, 0, 0.2)
			a := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
			b := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
			a.waitLog("partitions assigned")
			b.waitLog("partitions assigned")
			// From now on records keep coming, 1% of the workload every
			// 50ms, while instances die and join.
			produced := make(chan error, 1)
			go func() {
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for i := 20; i < 100; i++ {
					<-tick.C
					produceSlice(producer, f, float64(i)/100, float64(i+1)/100, produced)
				}
				produced <- nil
			}()
			// Both own partitions: both commit what comes now. Kill a
			// right after a commit of its own, with more in its buffer.
			a.waitCommits(a.Commits() + 2)
			b.waitCommits(b.Commits() + 1)
			a.signal(syscall.SIGKILL)
			a.wait()
			// b takes a's partitions once the group gives up on a.
			b.waitLogCount("partitions assigned", 2)
			c := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
			c.waitLog("partitions assigned")
			b.waitLog("partitions revoked")
			if err := <-produced; err != nil {
				t.Fatalf("produce: %v", err)
			}
			b.waitDone(complete)

			for _, p := range []*proc{b, c} {
				p.signal(syscall.SIGTERM)
				if code := p.wait(); code != 0 {
					t.Fatalf("txsink exited %d after SIGTERM, want 0\nstderr:\n%s", code, tail(p.Stderr()))
				}
			}
			polls, partial := reader.finish(t)
			checkWholeFeed(t, db, f)
			if partial != 0 {
				t.Errorf("the reader saw %d invariant violations in %d polls: source transactions applied in parts", partial, polls)
			}
			t.Logf("%s: %d records over %d partitions; commits a=%d (killed) b=%d c=%d; reader polled %d times, saw %d partial transactions",
				d, f.totalLines(), len(f.lines), a.Commits(), b.Commits(), c.Commits(), polls, partial)
		})
	}
}

// waitLog waits until the child's log holds a line with msg.
func (p *proc) waitLog(msg string) { p.t.Helper(); p.waitLogCount(msg, 1) }

// waitLogCount waits until the child's log holds n lines with msg.
func (p *proc) waitLogCount(msg string, n int) {
	p.t.Helper()
	deadline := time.NewTimer(startDeadline)
	defer deadline.Stop()
	needle := fmt.Sprintf("msg=%q", msg)
	if !strings.Contains(msg, " ") {
		needle = "msg=" + msg
	}
	for strings.Count(p.Stderr(), needle) < n {
		select {
		case <-p.notify:
		case <-p.done:
			p.t.Fatalf("txsink exited (%v) before logging %q %d times\nstderr:\n%s", p.cmd.ProcessState, msg, n, tail(p.Stderr()))
		case <-deadline.C:
			p.t.Fatalf("txsink did not log %q %d times in %s\nstderr:\n%s", msg, n, startDeadline, tail(p.Stderr()))
		}
	}
}

// TestKafkaPausedInstance freezes one of two instances (SIGSTOP) for longer
// than the session timeout, so that the group gives its partitions to the
// other, then lets it run again (SIGCONT). The frozen instance held read
// and uncommitted records; when it wakes it must not commit them — it
// stops with exit code 1, its partitions lost or its commit fenced — and
// the final state must be exact, every event applied once.
func TestKafkaPausedInstance(t *testing.T) {
	db := testdb.Open(t, "postgres")
	res := workload.Generate(workload.Spec{Orders: 600, Partitions: 2 * scalePartitions, Seed: 23, Events: true})
	f := newFeed(t, res)
	db.Exec(t, workload.Schema(db.Dialect)...)
	brokers, producer := startScaleCluster(t)
	const name = "paused"
	cfg := writeKafkaConfig(t, t.TempDir(), name, db.URL, brokers)
	complete := allCommitted(t, db, name, f)

	produceLines(t, producer, f, 0, 0.3)
	a := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
	b := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
	a.waitLog("partitions assigned")
	b.waitLog("partitions assigned")
	produceLines(t, producer, f, 0.3, 0.6)
	a.waitCommits(a.Commits() + 1)
	a.signal(syscall.SIGSTOP)
	// While a is frozen, b takes its partitions and more records come.
	b.waitLogCount("partitions assigned", 2)
	produceLines(t, producer, f, 0.6, 1)
	b.waitDone(complete)
	a.signal(syscall.SIGCONT)
	if code := a.wait(); code != 1 {
		t.Fatalf("the instance woken after losing its partitions exited %d, want 1\nstderr:\n%s", code, tail(a.Stderr()))
	}
	if s := a.Stderr(); !strings.Contains(s, "were lost from the consumer group") && !strings.Contains(s, sink.ErrFenced.Error()) {
		t.Errorf("the woken instance's log says neither that its partitions were lost nor that it was fenced:\n%s", tail(s))
	}
	b.signal(syscall.SIGTERM)
	if code := b.wait(); code != 0 {
		t.Fatalf("b exited %d after SIGTERM\nstderr:\n%s", code, tail(b.Stderr()))
	}
	checkWholeFeed(t, db, f)
}

// startScaleCluster starts an in-process Kafka cluster with the scale-out
// topics, and a producer that picks each record's partition.
func startScaleCluster(t *testing.T) ([]string, *kgo.Client) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(scalePartitions, scaleTopics...),
		kfake.GroupMinSessionTimeout(time.Second))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	brokers := cluster.ListenAddrs()
	producer, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return brokers, producer
}

// allCommitted returns a condition that holds once pipeline name's stored
// progress covers every record of f in every Kafka partition.
func allCommitted(t *testing.T, db *testdb.DB, name string, f *feed) func() bool {
	return func() bool {
		prog := progressRows(t, db, name)
		for p, lines := range f.lines {
			if prog[kafkaPartition(p)][0] != int64(len(lines)) {
				return false
			}
		}
		return true
	}
}

// checkWholeFeed checks that the target holds f's changelog replayed
// whole: the final state of orders and order_items, and each order_events
// row exactly once.
func checkWholeFeed(t *testing.T, db *testdb.DB, f *feed) {
	t.Helper()
	all := make([]int, len(f.lines))
	for p := range all {
		all[p] = len(f.lines[p])
	}
	state, events := f.prefixState(all)
	for table, key := range map[string][]string{"orders": {"id"}, "order_items": {"order_id", "line_no"}} {
		got, err := workload.ReadState(context.Background(), db.SQL, table, key)
		if err != nil {
			t.Fatal(err)
		}
		if d := workload.Diff(table, state[table], got, 10); d != "" {
			t.Errorf("final state differs:\n%s", d)
		}
	}
	if got := count(t, db, "order_events"); got != events {
		t.Errorf("order_events has %d rows, want exactly %d: events were lost or applied twice", got, events)
	}
}
