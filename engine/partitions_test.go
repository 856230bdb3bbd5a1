package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/kafka"
)

// splitChanges is the day-1/day-2 shape: inserts of keys 1..n of s.kp in
// partition first, and an update (or a delete) of each in partition
// second. With raced, the two partitions' changes are interleaved as two
// readers racing would (seeded); without, every insert comes first, as
// when the first file is read before the second. Each change is a
// source transaction of its own.
func splitChanges(n int, first, second string, kind changelog.Kind, raced bool, seed uint64) []changelog.Change {
	mk := func(part string, seq int, k changelog.Kind, id, v int) changelog.Change {
		c := changelog.Change{Kind: k, Table: changelog.Table{Namespace: "s", Name: "kp"}, Size: 40,
			Pos:   changelog.Position{Partition: part, Offset: int64(seq) * 40, Seq: int64(seq)},
			TxnID: fmt.Sprint(part, "-", seq), TxnEnd: true}
		img := row("id", changelog.Number(fmt.Sprint(id)), "v", changelog.Number(fmt.Sprint(v)))
		if k == changelog.Delete {
			c.Before = img
		} else {
			c.After = img
		}
		return c
	}
	var a, b []changelog.Change
	for id := 1; id <= n; id++ {
		a = append(a, mk(first, id, changelog.Insert, id, 1))
		b = append(b, mk(second, id, kind, id, 2))
	}
	if !raced {
		return append(a, b...)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]changelog.Change, 0, 2*n)
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && rng.IntN(2) == 0) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// firstCrossing returns the position of the first change of a key whose
// previous change came from another partition.
func firstCrossing(changes []changelog.Change) changelog.Position {
	last := map[string]string{}
	for _, c := range changes {
		img := c.Image()
		id, _ := img.Get("id")
		k := fmt.Sprint(id)
		if p, ok := last[k]; ok && p != c.Pos.Partition {
			return c.Pos
		}
		last[k] = c.Pos.Partition
	}
	return changelog.Position{}
}

// checkCrossError fails unless err is the cross-partition error naming
// both partitions, at want when want is known.
func checkCrossError(t *testing.T, err error, want changelog.Position, parts ...string) {
	t.Helper()
	var re *reduce.Error
	if !errors.As(err, &re) || !errors.Is(err, reduce.ErrCrossPartition) {
		t.Fatalf("got %v, want the cross-partition error (never a run that succeeds with a wrong target)", err)
	}
	if want.Partition != "" && re.Pos != want {
		t.Errorf("refused at %v, want the first change crossing partitions, %v: %v", re.Pos, want, err)
	}
	for _, p := range parts {
		if !strings.Contains(re.Reason, p) {
			t.Errorf("error %q does not name partition %s", err, p)
		}
	}
	if !strings.Contains(err.Error(), "kp key (") || !strings.Contains(err.Error(), "put one key's changes in one partition") {
		t.Errorf("error %q names no table and key, or not the fix", err)
	}
}

// TestKeysAcrossPartitions: one key's insert in partition day1 and its
// update or delete in day2, added through the library in plain mode,
// stop the pipeline with the cross-partition error at the first change
// that crosses, at every flush size from one row to all in one flush,
// whether the partitions race or day1 comes first (its 20,000 keys then
// committed in many units before day2 begins: the memory finds them).
func TestKeysAcrossPartitions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE kp (id BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL)`)
		for _, tc := range []struct {
			n     int
			raced bool
			flush []int
		}{
			{2000, true, []int{1, 2, 7, 100, 1000, 1 << 20}},
			{300, false, []int{1, 7, 100}},
			{20000, false, []int{1000, 5000, 1 << 20}},
		} {
			for _, kind := range []changelog.Kind{changelog.UpdateAfter, changelog.Delete} {
				for _, flush := range tc.flush {
					name := fmt.Sprintf("%d keys, raced %v, %s, max-rows %d", tc.n, tc.raced, kind, flush)
					t.Run(name, func(t *testing.T) {
						db.Exec(t, "DELETE FROM kp")
						cfg := pipeline(db, config.Table{Source: "s.kp"})
						cfg.Name = fmt.Sprintf("cross-%d-%v-%d-%d", tc.n, tc.raced, kind, flush)
						cfg.Sink.FlushMaxRows = flush
						e := newEngine(t, cfg)
						changes := splitChanges(tc.n, "day1", "day2", kind, tc.raced, uint64(flush))
						var err error
						for i := range changes {
							if err = e.Add(context.Background(), &changes[i]); err != nil {
								break
							}
						}
						if err == nil {
							err = e.Flush(context.Background())
						}
						checkCrossError(t, err, firstCrossing(changes), "day1", "day2")
					})
				}
			}
		}
	})
}

// TestKeysAcrossPartitionsOff: with key-partitions.remember 0 the check
// still covers one commit (every change in one flush: refused), and
// nothing beyond it: a flush per change applies the race's last change,
// which is what the option's documentation promises.
func TestKeysAcrossPartitionsOff(t *testing.T) {
	db := testdb.Open(t, "sqlite")
	db.Exec(t, `CREATE TABLE kp (id BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL)`)
	for _, flush := range []int{1, 1 << 20} {
		cfg := pipeline(db, config.Table{Source: "s.kp"})
		cfg.Name = fmt.Sprint("off-", flush)
		cfg.Sink.FlushMaxRows = flush
		cfg.Sink.KeyPartitionsRemember = 0
		e := newEngine(t, cfg)
		changes := splitChanges(50, "day1", "day2", changelog.UpdateAfter, false, 0)
		var err error
		for i := range changes {
			if err = e.Add(context.Background(), &changes[i]); err != nil {
				break
			}
		}
		if flush == 1 {
			if err != nil {
				t.Fatalf("a flush per change, the memory off: %v, want no check across commits", err)
			}
			continue
		}
		checkCrossError(t, err, firstCrossing(changes), "day1", "day2")
	}
}

// produceChanges writes changes to topic as txsink-json records, each
// to the partition its Pos names ("0", "1", ...).
func produceChanges(t *testing.T, brokers []string, topic string, changes []changelog.Change) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, len(changes))
	for i := range changes {
		line, err := native.Append(nil, &changes[i])
		if err != nil {
			t.Fatal(err)
		}
		var p int32
		fmt.Sscan(changes[i].Pos.Partition, &p)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: line[:len(line)-1]})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// kpKafka returns a pipeline reading topics of brokers into kp.
func kpKafka(db *testdb.DB, brokers []string, group string, txnMode bool, topics ...string) *config.Config {
	cfg := pipeline(db, config.Table{Source: "s.kp"})
	cfg.Name = group
	cfg.Source = config.Source{Type: "kafka", Format: "txsink-json", Raw: source.Settings{
		"brokers": brokers, "topics": topics, "group": group, "session-timeout": 6 * time.Second}}
	cfg.Sink.FlushInterval = 50 * time.Millisecond
	cfg.Sink.TxnEnabled = txnMode
	return cfg
}

// TestKeysAcrossKafkaPartitions: the same through Run with a Kafka source
// of two partitions read at once, in plain and in transaction mode (each
// change a source transaction: the key's change in the other partition
// is found when its transaction is reduced), at every flush size: Run
// stops with the cross-partition error naming both partitions, never
// returns nil, under the dead-letter policy too (quarantining one of the
// two changes would leave the target at whichever came first). The
// day-1/day-2 shape runs at 20,000 keys.
func TestKeysAcrossKafkaPartitions(t *testing.T) {
	type kcase struct {
		n     int
		txn   bool
		flush int
		kind  changelog.Kind
		dead  bool // bad-input: dead-letter
	}
	var cases []kcase
	for _, txnMode := range []bool{false, true} {
		for _, flush := range []int{1, 10, 1000, 1 << 20} {
			cases = append(cases, kcase{2000, txnMode, flush, changelog.UpdateAfter, false}, kcase{2000, txnMode, flush, changelog.Delete, false})
		}
		cases = append(cases, kcase{20000, txnMode, 5000, changelog.UpdateAfter, false}, kcase{2000, txnMode, 100, changelog.UpdateAfter, true})
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE kp (id BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL)`)
		var topics []string
		for i := range cases {
			topics = append(topics, fmt.Sprint("kp", i))
		}
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topics...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		brokers := c.ListenAddrs()
		for i, kc := range cases {
			t.Run(fmt.Sprintf("%d keys, txn %v, %s, max-rows %d, dead-letter %v", kc.n, kc.txn, kc.kind, kc.flush, kc.dead), func(t *testing.T) {
				db.Exec(t, "DELETE FROM kp")
				topic := topics[i]
				produceChanges(t, brokers, topic, splitChanges(kc.n, "0", "1", kc.kind, false, 0))
				cfg := kpKafka(db, brokers, topic, kc.txn, topic)
				cfg.Sink.FlushMaxRows = kc.flush
				if kc.dead {
					cfg.BadInput = config.BadInputDeadLetter
				}
				e := newEngine(t, cfg)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				err := e.Run(ctx, engine.RunOptions{})
				if ctx.Err() != nil {
					t.Fatalf("Run did not stop within 2 minutes: %v; status %+v", err, e.Status())
				}
				checkCrossError(t, err, changelog.Position{}, kafka.PartitionName(topic, 0), kafka.PartitionName(topic, 1))
			})
		}
	})
}

// TestKafkaRebalanceKeepsKeys: partitions revoked from an instance and
// assigned to it again (a second instance joins, takes one, and leaves)
// are read again from the target's progress with the same names, so the
// keys the first instance remembers from them stop nothing: each key's
// changes stay in their partition however the group moves it, in plain
// and in transaction mode, and the target ends exact.
func TestKafkaRebalanceKeepsKeys(t *testing.T) {
	for _, txnMode := range []bool{false, true} {
		t.Run(fmt.Sprint("txn ", txnMode), func(t *testing.T) {
			db := testdb.Open(t, "sqlite")
			db.Exec(t, `CREATE TABLE kp (id BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL)`)
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "kp"), kfake.GroupMinSessionTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			brokers := c.ListenAddrs()
			// Round r updates every key to r, key k in partition k%2;
			// ends is where each partition's records end.
			ends := map[string]int64{}
			round := func(r int) {
				var changes []changelog.Change
				for id := 1; id <= 200; id++ {
					part := fmt.Sprint(id % 2)
					ends[kafka.PartitionName("kp", int32(id%2))]++
					changes = append(changes, changelog.Change{Kind: changelog.UpdateAfter, Table: changelog.Table{Namespace: "s", Name: "kp"},
						After: row("id", changelog.Number(fmt.Sprint(id)), "v", changelog.Number(fmt.Sprint(r))),
						Pos:   changelog.Position{Partition: part}, TxnID: fmt.Sprint("t", r, "-", id), TxnEnd: true})
				}
				produceChanges(t, brokers, "kp", changes)
			}
			cfg := kpKafka(db, brokers, "rebalance", txnMode, "kp")
			cfg.Source.Set("session-timeout", 2*time.Second)
			// at is how far the commits of either instance reached.
			var mu sync.Mutex
			at := map[string]int64{}
			onCommit := engine.WithCommitHook(func(u *commit.Unit) {
				mu.Lock()
				defer mu.Unlock()
				for _, p := range u.Progress {
					at[p.Partition] = max(at[p.Partition], p.Offset)
				}
			})
			first := newEngine(t, cfg, onCommit)
			err1 := make(chan error, 1)
			ctx1, cancel1 := context.WithCancel(context.Background())
			defer cancel1()
			go func() { err1 <- first.Run(ctx1, engine.RunOptions{}) }()
			var err2 chan error
			var second *engine.Engine
			// until polls cond until it holds, failing if an instance
			// stops or two minutes pass.
			until := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.After(2 * time.Minute)
				for !cond() {
					select {
					case err := <-err1:
						t.Fatalf("the first instance stopped: %v", err)
					case err := <-err2:
						t.Fatalf("the second instance stopped: %v", err)
					case <-deadline:
						t.Fatalf("%s: not within 2 minutes; committed %v, status %+v", what, at, first.Status())
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			committed := func() bool {
				mu.Lock()
				defer mu.Unlock()
				for part, end := range ends {
					if at[part] < end {
						return false
					}
				}
				return true
			}
			owns := func(n int) func() bool { return func() bool { return len(first.Status().Partitions) == n } }
			round(1)
			until("round 1 committed", committed)
			// A second instance joins: the group takes a partition from
			// the first and gives it to the second. (The first's status
			// lists the partitions it owns.)
			second = newEngine(t, cfg, onCommit)
			err2 = make(chan error, 1)
			ctx2, cancel2 := context.WithCancel(context.Background())
			defer cancel2()
			go func() { err2 <- second.Run(ctx2, engine.RunOptions{}) }()
			until("a partition moved to the second instance", owns(1))
			round(2)
			until("round 2 committed", committed)
			// The second leaves; its partition goes back to the first.
			cancel2()
			if err := <-err2; err != nil {
				t.Fatalf("second instance: %v", err)
			}
			err2 = nil
			until("the partition back with the first instance", owns(2))
			round(3)
			until("round 3 committed", committed)
			cancel1()
			if err := <-err1; err != nil {
				t.Fatalf("first instance, after its partition came back: %v", err)
			}
			if got := query(t, db, "SELECT COUNT(*), MIN(v), MAX(v) FROM kp"); got != "200|3|3" {
				t.Errorf("kp holds %s (count, min, max of v), want every key at round 3", got)
			}
		})
	}
}

// TestDeclaredPartitionsCrossing is TestSequenceOfFiles's layout read as
// declared concurrent partitions (source.partitions, each file one):
// inserts in the first half of the files, updates or deletes of the same
// keys in the second half, 2, 8 and 64 files, at every flush size from
// one row to all, in plain and transaction mode. The files are read at
// once, so no order is known between a key's insert and its later
// change: the run always stops with the cross-partition error, never
// ends with a target that depends on how the reads raced.
func TestDeclaredPartitionsCrossing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		for _, files := range []int{2, 8, 64} {
			for _, sz := range daySizes[files] {
				for _, last := range []string{"+U", "-D"} {
					var parts [][]string
					for _, p := range dayFiles(t, t.TempDir(), files, sz.keys, last) {
						parts = append(parts, []string{p})
					}
					for _, flush := range sz.flush {
						for _, txn := range []bool{false, true} {
							name := fmt.Sprintf("files%d-keys%d-%s-flush%d-txn%v", files, sz.keys, map[string]string{"+U": "update", "-D": "delete"}[last], flush, txn)
							t.Run(name, func(t *testing.T) {
								db.Exec(t, "DELETE FROM kv")
								cfg := kvPipeline(db, "cross-"+name)
								cfg.Source.Set("partitions", parts)
								cfg.Sink.FlushMaxRows = cmpOr(flush, 1<<30)
								cfg.Sink.FlushMaxBytes = 1 << 40
								if txn {
									txnPipeline(cfg)
								}
								r := runPipeline(t, cfg)
								if !errors.Is(r.err, reduce.ErrCrossPartition) {
									t.Fatalf("got %v, want the cross-partition error; %s rows left at day 1", r.err,
										query(t, db, "SELECT COUNT(*) FROM kv WHERE v = 'day1'"))
								}
								if msg := r.err.Error(); !strings.Contains(msg, "kv key (") || strings.Count(msg, "day") < 2 {
									t.Errorf("error %q names no key or not both partitions", msg)
								}
							})
						}
					}
				}
			}
		}
	})
}
