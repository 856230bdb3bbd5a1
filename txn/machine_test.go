package txn

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

func TestErrorsAreTyped(t *testing.T) {
	m, err := New(Config{CommitInterval: time.Second, BufferSize: 1000, MaxTxnBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	pos := changelog.Position{Partition: "p0", Offset: 7, Seq: 7}
	err = m.Step(changelog.Change{Pos: pos, TxnID: "t1", Size: 101}, t0)
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrMaxTxnBytes) || te.Partition != "p0" || te.TxnID != "t1" || te.Pos != pos {
		t.Fatalf("got %#v", err)
	}
	for _, want := range []string{"p0:7", "max-txn-bytes", "t1", "101 bytes > 100"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if m.Bytes() != 0 || len(m.Regions()) != 0 {
		t.Errorf("a refused change was taken: %s", m.Describe())
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{BufferSize: 1, CommitInterval: -1}, "buffer-flush.interval"},
		{Config{BufferSize: 1, MiniSwitchInterval: -1}, "mini-switch-interval-ms"},
		{Config{}, "buffer-size"},
		{Config{BufferSize: 1, MaxTxnBytes: -1}, "max-txn-bytes"},
		{Config{BufferSize: 1, CommitChanges: -1}, "max-rows"},
		{Config{BufferSize: 1, CommitBytes: -1}, "max-bytes"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}

func TestAdvanceRefusesAForeignPlan(t *testing.T) {
	m, _ := New(DefaultConfig())
	defer func() {
		if recover() == nil {
			t.Error("Advance of a plan that is not in flight did not panic")
		}
	}()
	m.Advance(&Plan{})
}
