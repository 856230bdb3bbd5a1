//go:build unix

package main

import (
	"testing"

	"github.com/txsink/txsink/internal/workload"
	"github.com/txsink/txsink/sink/starrocks"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
	"github.com/txsink/txsink/sink/starrocks/starrockstest"
)

// TestChaosStarRocks is TestChaos against the StarRocks fake: the txsink
// binary, in transaction mode, runs into the fake's starrocks:// URL and is
// SIGKILLed at random moments and restarted. The fake runs in this test
// process, outside the killed one, so it outlives every kill as a cluster
// would: a killed run's open transaction and in-flight loads stay on it
// until the next run's claim rolls them back (or a load's cut connection
// aborts them), and a commit sent just before the kill still lands.
// Checked, as TestChaos checks them (StarRocks has no triggers, so there
// are no audit tables): after every kill the tables are exactly the
// changelog replayed up to the committed progress, which never goes back;
// at the end the final state is exact and order_events (a Duplicate Key
// table, append-only) holds every insert once, compared event by event;
// and a reader polling the cross-table invariant over the MySQL protocol
// never sees a source transaction in part. The same environment variables
// as TestChaos set the kills, the orders and the seed. With
// TXSINK_TEST_STARROCKS_URL set it runs, unchanged, against that cluster
// (starrockstest), which outlives the kills as the fake does.
func TestChaosStarRocks(t *testing.T) {
	txsinkBinary(t)
	kills := chaosEnvInt(t, "TXSINK_CHAOS_KILLS", 3)
	orders := chaosEnvInt(t, "TXSINK_CHAOS_ORDERS", max(4000, 500*kills))
	seed := chaosSeed(t)
	t.Logf("chaos starrocks: %d kills, %d orders, seed %d (TXSINK_CHAOS_SEED=%d reproduces the workload and the schedule)", kills, orders, seed, seed)
	res := workload.Generate(workload.Spec{Orders: orders, Partitions: 4, Seed: seed, Events: true})

	c := starrockstest.New(t, starrocksfake.Options{}, append([]string{starrocks.ProgressDDL, starrocks.ClaimsDDL}, workload.Schema("starrocks")...)...)
	name := "starrocks (fake)"
	if c.Fake == nil {
		name = "starrocks (" + starrockstest.EnvURL + ")"
	}
	r := chaosRun(t, c.TestDB(), name, res, itemHistories(res), kills, seed, false)
	if r.kills != kills {
		t.Errorf("%d kills sent, want %d", r.kills, kills)
	}
}
