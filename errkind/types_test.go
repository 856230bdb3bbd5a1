package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/txn"
)

// TestErrorTypes: each package's error says what it is and where, through
// errkind, however deeply it is wrapped; the engine, the metrics and check
// rely on nothing else.
func TestErrorTypes(t *testing.T) {
	pos := changelog.Position{Partition: "p0.jsonl", Offset: 40, Seq: 3}
	tests := []struct {
		name  string
		err   error
		kind  errkind.Kind
		where errkind.Where
		found bool // a Where is named
	}{
		{"reduce", &reduce.Error{Pos: pos, Table: "shop.orders", Key: "(7)", Column: "total", Reason: "r"},
			errkind.BadInput, errkind.Where{Pos: pos, Table: "shop.orders", Key: "(7)", Column: "total"}, true},
		{"format", &format.Error{Pos: pos, Format: "debezium-json", Table: "shop.orders", Reason: "r"},
			errkind.BadInput, errkind.Where{Pos: pos, Table: "shop.orders"}, true},
		{"coerce", &coerce.Error{Column: "total", SQLType: "INT", Value: "x", Reason: "r"},
			errkind.BadInput, errkind.Where{Column: "total"}, true},
		{"route", &config.RouteError{Source: changelog.Table{Namespace: "shop", Name: "txsink_progress"}, Reason: "r", Hint: "h"},
			errkind.BadInput, errkind.Where{Table: "shop.txsink_progress"}, true},
		{"txn", &txn.Error{Partition: "p0.jsonl", Pos: pos, Err: txn.ErrMaxTxnBytes},
			errkind.Permanent, errkind.Where{Pos: pos}, true},
		{"config", &config.Error{Line: 3, Key: "sink.max-retries", Msg: "m"}, errkind.Permanent, errkind.Where{}, false},
		{"config list", config.ErrorList{{Key: "k", Msg: "m"}}, errkind.Permanent, errkind.Where{}, false},
		{"partition", &source.PartitionError{Partition: "p1", Err: errors.New("gone")},
			errkind.Permanent, errkind.Where{Pos: changelog.Position{Partition: "p1"}}, true},
		// A refused change wraps the value's refusal: the outer error
		// speaks for both.
		{"reduce around coerce", &reduce.Error{Pos: pos, Table: "t", Column: "c", Err: &coerce.Error{Column: "c"}},
			errkind.BadInput, errkind.Where{Pos: pos, Table: "t", Column: "c"}, true},
		{"plain", errors.New("plain"), errkind.Unknown, errkind.Where{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("context: %w", tt.err)
			if got := errkind.Of(wrapped); got != tt.kind {
				t.Errorf("Of = %v, want %v", got, tt.kind)
			}
			w, ok := errkind.WhereOf(wrapped)
			if ok != tt.found || w != tt.where {
				t.Errorf("WhereOf = %+v, %v; want %+v, %v", w, ok, tt.where, tt.found)
			}
		})
	}
}
