package engine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// changeOrders records whether any change the pipeline read carried a
// place in its source's log (changelog.Change.Order).
type changeOrders struct {
	mu      sync.Mutex
	changes int
	ordered int
}

func (h *changeOrders) OnChange(c *changelog.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes++
	if c.Order != nil {
		h.ordered++
	}
}

// TestFilesReadNoOrders runs Debezium records whose source blocks tell
// their places in a binlog from the files source, which does not publish
// copies as new records (source.Republisher): the decoder is not told to
// read places, so no change carries one, no unit stores one, and a record
// whose place is before an earlier one's (over NATS, a copy published
// again) is applied as news, as it was before places were read.
func TestFilesReadNoOrders(t *testing.T) {
	rec := func(op, before, after string, pos int) string {
		return fmt.Sprintf(`{"before":%s,"after":%s,"source":{"connector":"mysql","name":"srv","server_id":1,"snapshot":"false","db":"shop","table":"kv","file":"mysql-bin.000003","pos":%d},"op":%q}`,
			before, after, pos, op)
	}
	lines := []string{
		rec("c", "null", `{"id":1,"v":"a"}`, 500),
		rec("c", "null", `{"id":2,"v":"x"}`, 600),
		// Before both in the binlog: a copy, were places read.
		rec("u", `{"id":1,"v":"a"}`, `{"id":1,"v":"b"}`, 400),
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		createKV(t, db)
		cfg := kvPipeline(db, "orders_off", writeLines(t, t.TempDir(), "binlog.jsonl", lines))
		cfg.Source.Format = "debezium-json"
		hook := &changeOrders{}
		var mu sync.Mutex
		var stored []commit.Order
		r := runPipeline(t, cfg, engine.WithHooks(hook), engine.WithCommitHook(func(u *commit.Unit) {
			mu.Lock()
			defer mu.Unlock()
			stored = append(stored, u.Orders...)
		}))
		if r.err != nil {
			t.Fatal(r.err)
		}
		if hook.changes != len(lines) || hook.ordered != 0 {
			t.Errorf("%d of %d changes carried a place, want 0 of %d", hook.ordered, hook.changes, len(lines))
		}
		if len(stored) != 0 {
			t.Errorf("units stored places %+v, want none", stored)
		}
		if r.stats.Copies != 0 {
			t.Errorf("%d changes dropped as copies, want 0", r.stats.Copies)
		}
		if got, want := query(t, db, "SELECT id, v FROM kv ORDER BY id"), "1|b\n2|x"; got != want {
			t.Errorf("kv:\n%s\nwant\n%s", got, want)
		}
	})
}
