// Package kafka reads changelogs from Kafka topics as a member of a consumer
// group (github.com/twmb/franz-go).
//
// Each topic-partition is one source partition, named "topic/partition"
// (PartitionName). A record's Position carries the Kafka offset to resume
// from (the record's offset + 1) and, as Seq, the record's own offset, so
// messages point at "topic/3:1234".
//
// The consumer never decides where a partition starts: on every assignment
// it asks its Group, which reads the target's progress table (written in
// the same transaction as the data, so the target is the truth), and it
// falls back to the configured start policy only for partitions the target
// has never seen. Offsets are also committed to Kafka, for lag tools, but
// never read back.
//
// Rebalances are serialized with polling (franz-go's BlockRebalanceOnPoll):
// between Poll and Release no assignment change can happen, and once a
// Group's Revoked returns no later Poll returns records of the revoked
// partitions. A caller that hands every polled record on, in order, before
// calling Release therefore sees records and assignment changes in one
// consistent order.
package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// PartitionName names the source partition of a Kafka topic-partition.
func PartitionName(topic string, partition int32) string {
	return topic + "/" + strconv.FormatInt(int64(partition), 10)
}

// ParsePartition splits a name made by PartitionName; ok is false for any
// other name (a file partition).
func ParsePartition(name string) (topic string, partition int32, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || n < 0 || !validTopic(name[:i]) {
		return "", 0, false
	}
	return name[:i], int32(n), true
}

// Group is told of the consumer's assignment changes (see source.Group).
// franz-go calls it from its group goroutine, never concurrently with
// itself, and never between a Poll and the following Release. Each call
// blocks the rebalance until it returns, so it must finish within the
// group's rebalance timeout.
type Group = source.Group

// Consumer is one member of a consumer group. Poll and Release must be
// called from one goroutine; CommitOffsets and Close from any.
type Consumer struct {
	cl        *kgo.Client
	group     Group
	start     kgo.Offset
	maxRecord int64
	log       *slog.Logger
	// assignErr is set by the group goroutine when Assigned fails; Poll
	// returns it.
	assignErr chan error
}

// fetchMaxBytes bounds one fetch response.
const fetchMaxBytes = 16 << 20

// ErrRecordTooLarge is returned (wrapped) by Poll for a record longer than
// source.max-record-bytes.
var ErrRecordTooLarge = errors.New("record is longer than source.max-record-bytes")

// Open builds the consumer of src (source.type kafka) and joins its group.
// Nothing is fetched before the first Poll.
func Open(src *Config, g Group, log *slog.Logger) (*Consumer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Consumer{group: g, maxRecord: src.MaxRecordBytes, log: log, assignErr: make(chan error, 1)}
	if c.maxRecord <= 0 {
		c.maxRecord = 64 << 20
	}
	c.start = kgo.NewOffset().AtStart()
	if src.Start == StartLatest {
		c.start = kgo.NewOffset().AtEnd()
	}
	opts, err := clientOpts(src)
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		kgo.ConsumerGroup(src.Group),
		kgo.Balancers(balancer(src)),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(c.start),
		kgo.AdjustFetchOffsetsFn(c.adjust),
		kgo.OnPartitionsRevoked(func(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
			if parts := names(m); len(parts) > 0 {
				log.Info("kafka partitions revoked", "partitions", parts)
				g.Revoked(ctx, parts)
			}
		}),
		kgo.OnPartitionsLost(func(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
			if parts := names(m); len(parts) > 0 {
				log.Warn("kafka partitions lost", "partitions", parts)
				g.Lost(ctx, parts)
			}
		}),
		kgo.WithLogger(slogger{log}),
		// One fetch response per broker is buffered until polled: this
		// bounds the memory the client holds while the pipeline is busy.
		kgo.FetchMaxBytes(fetchMaxBytes),
		// A broker returns a record larger than the fetch limit whole, so
		// a response may hold one record of max-record-bytes.
		kgo.BrokerMaxReadBytes(int32(min(max(fetchMaxBytes, c.maxRecord)+(1<<20), 1<<30))),
		kgo.ClientID("txsink"),
	)
	if src.TopicRegex != "" {
		// Kafka matches the regular expression anywhere in the name; the
		// config promises whole names.
		res := []string{"^(?:" + src.TopicRegex + ")$"}
		if src.TransactionTopic != "" {
			res = append(res, "^"+regexp.QuoteMeta(src.TransactionTopic)+"$")
		}
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(res...))
	} else {
		topics := src.Topics
		if src.TransactionTopic != "" {
			topics = append(slices.Clone(topics), src.TransactionTopic)
		}
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}

	if src.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(src.SessionTimeout), kgo.HeartbeatInterval(max(src.SessionTimeout/10, 100*time.Millisecond)))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	c.cl = cl
	return c, nil
}

// awaitBrokers waits, up to env.StartupTimeout, for one of brokers to
// answer (source.Await): without it the client retries on its own, for
// ever, logging a warning every few seconds, while the pipeline reads
// nothing. A broker that answers with an error (authentication,
// authorization) is not waited for.
func (c *Consumer) awaitBrokers(ctx context.Context, brokers []string, env source.Env) error {
	return source.Await(ctx, source.Wait{
		What:    "the Kafka brokers (source.brokers: " + strings.Join(brokers, ", ") + ")",
		Timeout: env.StartupTimeout,
		Log:     env.Log,
		Hint: "check that the brokers run and that this host reaches them at those addresses (host, port, firewall, " +
			"the listeners the brokers advertise) with the configured TLS and SASL settings, or raise startup-timeout",
	}, c.cl.Ping, func(err error) bool {
		var ke *kerr.Error
		return !errors.As(err, &ke)
	})
}

// adjust replaces the offsets franz-go fetched from the group (Kafka's
// committed offsets) by the target's progress.
func (c *Consumer) adjust(ctx context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	var parts []string
	for t, ps := range offs {
		for p := range ps {
			parts = append(parts, PartitionName(t, p))
		}
	}
	c.log.Info("kafka partitions assigned", "partitions", parts)
	stored, err := c.group.Assigned(ctx, parts)
	if err != nil {
		select {
		case c.assignErr <- err:
		default:
		}
		return nil, err
	}
	out := make(map[string]map[int32]kgo.Offset, len(offs))
	for t, ps := range offs {
		m := make(map[int32]kgo.Offset, len(ps))
		for p := range ps {
			if at, ok := stored[PartitionName(t, p)]; ok {
				// Epoch -1: the position comes from the target, not from
				// this consumer's history, so franz-go must not run its
				// data-loss detection against it.
				m[p] = kgo.NewOffset().At(at).WithEpoch(-1)
			} else {
				m[p] = c.start
			}
		}
		out[t] = m
	}
	return out, nil
}

// Batch is what one Poll returns: records in order within each
// partition, each with its Position, and each polled partition's high
// watermark (the offset the next produced record will get, so End -
// position is the lag).
type Batch = source.Batch

// Poll waits for records and returns them. After handing them on, call
// Release. An error is either ctx's, or permanent (the client was closed,
// an assignment could not be read, a record is too large, the cluster
// refused the group).
func (c *Consumer) Poll(ctx context.Context) (*Batch, error) {
	select {
	case err := <-c.assignErr:
		return nil, fmt.Errorf("kafka source: reading the progress of assigned partitions: %w", err)
	default:
	}
	fetches := c.cl.PollFetches(ctx)
	if fetches.IsClientClosed() {
		return nil, errors.New("kafka source: the client is closed")
	}
	if err := ctx.Err(); err != nil {
		c.cl.AllowRebalance()
		return nil, err
	}
	var fatal error
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return
		}
		// franz-go retries what can be retried; what reaches here
		// (authorization, a group error, data loss) needs a person.
		if fatal == nil {
			fatal = fmt.Errorf("kafka source: %s: %w", PartitionName(topic, p), err)
		}
	})
	if fatal != nil {
		c.cl.AllowRebalance()
		return nil, fatal
	}
	b := &Batch{Records: make([]source.Record, 0, fetches.NumRecords()), Ends: map[string]int64{}}
	var tooLarge error
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		name := PartitionName(p.Topic, p.Partition)
		b.Ends[name] = p.HighWatermark
		for _, r := range p.Records {
			pos := changelog.Position{Partition: name, Offset: r.Offset + 1, Seq: r.Offset}
			if int64(len(r.Value)) > c.maxRecord && tooLarge == nil {
				tooLarge = fmt.Errorf("kafka source: %s: %d bytes: %w; raise it if such records are expected", pos, len(r.Value), ErrRecordTooLarge)
			}
			b.Records = append(b.Records, source.Record{Data: r.Value, Key: r.Key, Pos: pos})
		}
	})
	if tooLarge != nil {
		c.cl.AllowRebalance()
		return nil, tooLarge
	}
	return b, nil
}

// Release lets a rebalance that waited for the last Poll go ahead. Call
// it once the polled records are handed on.
func (c *Consumer) Release() { c.cl.AllowRebalance() }

// CommitOffsets records positions in the group's committed offsets, for
// lag tools. It does not wait, and failures are only logged: txsink
// resumes from the target, never from these offsets.
func (c *Consumer) CommitOffsets(ctx context.Context, positions []changelog.Position) {
	offs := kafkaOffsets(positions)
	if len(offs) == 0 {
		return
	}
	c.cl.CommitOffsets(ctx, offs, c.logCommit)
}

// CommitOffsetsSync is CommitOffsets, waiting for the brokers' answer (or
// ctx), for a consumer about to close.
func (c *Consumer) CommitOffsetsSync(ctx context.Context, positions []changelog.Position) {
	if offs := kafkaOffsets(positions); len(offs) > 0 {
		c.cl.CommitOffsetsSync(ctx, offs, c.logCommit)
	}
}

func (c *Consumer) logCommit(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		c.log.Debug("committing offsets to kafka (for lag tools) failed", "err", err)
	}
}

func kafkaOffsets(positions []changelog.Position) map[string]map[int32]kgo.EpochOffset {
	offs := map[string]map[int32]kgo.EpochOffset{}
	for _, p := range positions {
		t, n, ok := ParsePartition(p.Partition)
		if !ok {
			continue
		}
		if offs[t] == nil {
			offs[t] = map[int32]kgo.EpochOffset{}
		}
		offs[t][n] = kgo.EpochOffset{Epoch: -1, Offset: p.Offset}
	}
	return offs
}

// Close leaves the group and closes the client. A Group's Revoked is
// called for the partitions still owned, as in any orderly rebalance.
func (c *Consumer) Close() { c.cl.Close() }

// balancer spreads the partitions over the members (cooperative-sticky:
// a rebalance moves only what changes hands), except when transactions
// are joined across topics: then one member reads them all.
func balancer(src *Config) kgo.GroupBalancer {
	if src.TransactionTopic != "" {
		return singleOwner{}
	}
	return kgo.CooperativeStickyBalancer()
}

func names(m map[string][]int32) []string {
	var out []string
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, PartitionName(t, p))
		}
	}
	return out
}

func tlsConfig(src *Config) (*tls.Config, error) {
	if !src.TLS && src.TLSCA == "" && src.TLSCert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if src.TLSCA != "" {
		pem, err := os.ReadFile(src.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("source.tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("source.tls-ca: %s holds no PEM certificate", src.TLSCA)
		}
		cfg.RootCAs = pool
	}
	if src.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(src.TLSCert, src.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("source.tls-cert, source.tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Mechanism returns the SASL mechanism src configures, or nil for none.
func Mechanism(src *Config) sasl.Mechanism {
	switch src.SASLMechanism {
	case "PLAIN":
		return plain.Auth{User: src.SASLUser, Pass: src.SASLPassword}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: src.SASLUser, Pass: src.SASLPassword}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: src.SASLUser, Pass: src.SASLPassword}.AsSha512Mechanism()
	}
	return nil
}

// slogger hands franz-go's log lines to slog, one level down: what franz-go
// calls info (connections, fetch sessions) is detail for a txsink operator.
type slogger struct{ l *slog.Logger }

func (s slogger) Level() kgo.LogLevel {
	if s.l.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelInfo
	}
	return kgo.LogLevelWarn
}

func (s slogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	}
	s.l.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}
