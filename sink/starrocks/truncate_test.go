package starrocks

import (
	"context"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// TestTruncateRefused: a StarRocks target is no sink.Truncater, and a
// unit with a truncated batch is refused before anything is sent, naming
// the table, the TRUNCATE's position and what to do.
func TestTruncateRefused(t *testing.T) {
	var target sink.Sink = &Target{}
	if _, ok := target.(sink.Truncater); ok {
		t.Fatal("a StarRocks target claims to apply TRUNCATE")
	}
	pos := changelog.Position{Partition: "p0", Offset: 3, Seq: 3}
	u := &commit.Unit{Pipeline: "p", Progress: []changelog.Position{pos},
		Batches: []*commit.Batch{{Table: &schema.Table{Namespace: "shop", Name: "orders"}, Truncate: true, TruncatePos: pos}}}
	err := target.Apply(context.Background(), u)
	if err == nil || errkind.Of(err) != errkind.Permanent {
		t.Fatalf("Apply = %v, want a permanent refusal", err)
	}
	for _, want := range []string{"p0:3", "shop.orders", "source.truncate: refuse"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}
