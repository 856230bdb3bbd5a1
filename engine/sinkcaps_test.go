package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
)

// minimalSink hides every optional capability of a real sink: it is what
// a target with only the required interface looks like to the engine.
type minimalSink struct{ sink.Sink }

// TestMinimalSink runs a pipeline into a sink with none of the optional
// capabilities (no locks, no marks, no shape versions): it commits as any
// other; a policy that needs a missing capability is refused at start,
// saying which.
func TestMinimalSink(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t)
	db.Exec(t, `CREATE TABLE orders (id INTEGER NOT NULL PRIMARY KEY, status TEXT NOT NULL)`)
	s, err := sink.Open(ctx, db.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := pipeline(db, config.Table{Source: "shop.orders"})
	f := &feeder{t: t, e: newEngine(t, cfg, engine.WithTarget(minimalSink{s}))}
	f.must(changelog.Insert, "shop.orders", changelog.Row{}, row("id", changelog.Number("1"), "status", "NEW"))
	f.flush()
	if got := query(t, db, "SELECT id, status FROM orders"); got != "1|NEW" {
		t.Errorf("orders = %q, want 1|NEW", got)
	}
	if got := query(t, db, "SELECT position FROM txsink_progress"); got != "100" {
		t.Errorf("progress = %q, want 100", got)
	}

	dl := *cfg
	dl.BadInput = config.BadInputDeadLetter
	_, err = engine.New(ctx, &dl, engine.WithTarget(minimalSink{s}))
	if err == nil || !strings.Contains(err.Error(), "keeps no dead letters") {
		t.Errorf("bad-input: dead-letter into a sink without dead letters: err = %v, want a refusal naming them", err)
	}
}
