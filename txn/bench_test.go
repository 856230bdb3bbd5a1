package txn

import (
	"fmt"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

// BenchmarkStepReadyAdvance measures the Machine's own cost per change on a
// steady stream: 8 partitions, source transactions of 4 changes over 2
// tables, one millisecond per change, and Ready polled every 64 changes as an
// engine polls at its deadline; every plan is advanced at once.
func BenchmarkStepReadyAdvance(b *testing.B) {
	const parts, perTxn = 8, 4
	changes := make([]changelog.Change, 4096)
	for i := range changes {
		p := i % parts
		n := i / parts
		changes[i] = changelog.Change{Kind: changelog.UpdateAfter, Size: 200,
			Table:  changelog.Table{Name: [2]string{"orders", "order_items"}[n%2]},
			After:  changelog.RowOf("id", changelog.Number(fmt.Sprint(n))),
			Pos:    changelog.Position{Partition: fmt.Sprint("p", p), Offset: int64(n), Seq: int64(n)},
			TxnID:  fmt.Sprint("t", n/perTxn),
			TxnEnd: n%perTxn == perTxn-1,
		}
	}
	cfg := DefaultConfig()
	cfg.MinSwitchBytes = 64 << 10
	m, err := New[struct{}](cfg)
	if err != nil {
		b.Fatal(err)
	}
	now := t0
	plans, txns := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Millisecond)
		if err := m.StepCounted(&changes[i%len(changes)], 1, now); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			if p := m.Ready(now, false); p != nil {
				plans++
				txns += p.Txns
				m.Advance(p)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	if plans > 0 {
		b.ReportMetric(float64(txns)/float64(plans), "txns/plan")
	}
}
