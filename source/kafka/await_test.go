package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/kafka"
)

// watchLog is a slog.Handler that closes seen at the first record whose
// message holds want.
type watchLog struct {
	want string
	once *sync.Once
	seen chan struct{}
}

func newWatchLog(want string) watchLog {
	return watchLog{want: want, once: &sync.Once{}, seen: make(chan struct{})}
}

func (w watchLog) Enabled(context.Context, slog.Level) bool { return true }
func (w watchLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return nil
}
func (w watchLog) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w watchLog) WithGroup(string) slog.Handler      { return w }

// openSource opens the Kafka source of brokers as the engine does, with
// startup-timeout timeout, logging to log.
func openSource(t *testing.T, brokers []string, timeout time.Duration, log *slog.Logger) (source.Source, func() ([]source.Reader, error)) {
	t.Helper()
	src, err := kafka.Driver{}.Open(source.Settings{"brokers": brokers, "topics": []string{"t"}, "group": "g"},
		source.Env{Pipeline: "await", Log: log, StartupTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	src.(source.Rebalancer).Rebalance(&group{})
	return src, func() ([]source.Reader, error) { return src.Open(context.Background(), source.Start{}) }
}

// TestOpenWaitsForBrokers: opening the source waits for a broker up to
// startup-timeout, logging what it waits for; a broker that comes up
// meanwhile is used, and none answering ends the wait with an error that
// names source.brokers and what to check.
func TestOpenWaitsForBrokers(t *testing.T) {
	t.Run("a broker comes up while it waits", func(t *testing.T) {
		port := testdb.FreePort(t)
		w := newWatchLog("waiting for the Kafka brokers")
		_, open := openSource(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, time.Hour, slog.New(w))
		done := make(chan error, 1)
		go func() {
			_, err := open()
			done <- err
		}()
		select {
		case <-w.seen:
		case err := <-done:
			t.Fatalf("Open returned before it waited: %v", err)
		}
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "t"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		if err := <-done; err != nil {
			t.Fatalf("Open = %v, want the broker that came up", err)
		}
	})
	t.Run("no broker answers", func(t *testing.T) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
		if err != nil {
			t.Fatal(err)
		}
		brokers := c.ListenAddrs()
		c.Close() // stopped: its port answers no more
		_, open := openSource(t, brokers, 50*time.Millisecond, slog.New(slog.DiscardHandler))
		_, err = open()
		if err == nil {
			t.Fatal("Open = nil with no broker up")
		}
		for _, want := range []string{"the Kafka brokers (source.brokers: " + strings.Join(brokers, ", ") + ") did not answer within startup-timeout (50ms",
			"check that the brokers run", "raise startup-timeout"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open = %q, want it to hold %q", err, want)
			}
		}
	})
}
