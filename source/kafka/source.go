package kafka

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Type is the source type of this package (the config's source.type).
const Type = "kafka"

func init() { source.Register(Type, Driver{}) }

// Values of Config.Start.
const (
	// StartEarliest starts a partition with no stored progress at its
	// oldest record.
	StartEarliest = "earliest"
	// StartLatest starts it after its newest record.
	StartLatest = "latest"
)

// Config is the Kafka source's part of the config's source section. Its
// keys are declared, and documented once, in Driver.Keys (printed in
// docs/config.md); each field is the key its tag names.
type Config struct {
	// MaxRecordBytes is `source.max-record-bytes`; see docs/config.md. 0
	// means 64 MiB.
	MaxRecordBytes int64 `source:"max-record-bytes"`
	// Brokers is `source.brokers`; see docs/config.md.
	Brokers []string `source:"brokers"`
	// Topics is `source.topics`; see docs/config.md.
	Topics []string `source:"topics"`
	// TopicRegex is `source.topic-regex`; see docs/config.md.
	TopicRegex string `source:"topic-regex"`
	// TransactionTopic is `source.transaction-topic`; see docs/config.md.
	TransactionTopic string `source:"transaction-topic"`
	// Group is `source.group`; see docs/config.md.
	Group string `source:"group"`
	// Start is `source.start`; see docs/config.md. "" is StartEarliest.
	Start string `source:"start"`
	// SessionTimeout is `source.session-timeout`; see docs/config.md. 0
	// means Kafka's.
	SessionTimeout time.Duration `source:"session-timeout"`
	// TLS is `source.tls`; see docs/config.md.
	TLS bool `source:"tls"`
	// TLSCA is `source.tls-ca`; see docs/config.md.
	TLSCA string `source:"tls-ca"`
	// TLSCert is `source.tls-cert`; see docs/config.md.
	TLSCert string `source:"tls-cert"`
	// TLSKey is `source.tls-key`; see docs/config.md.
	TLSKey string `source:"tls-key"`
	// SASLMechanism is `source.sasl.mechanism`; see docs/config.md.
	SASLMechanism string `source:"sasl.mechanism"`
	// SASLUser is `source.sasl.user`; see docs/config.md.
	SASLUser string `source:"sasl.user"`
	// SASLPassword is `source.sasl.password`; see docs/config.md.
	SASLPassword string `source:"sasl.password"`
}

// topicName matches a valid Kafka topic name.
var topicName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

// validTopic reports whether s is a valid Kafka topic name.
func validTopic(s string) bool { return topicName.MatchString(s) }

// Driver opens Kafka sources.
type Driver struct{}

// Open implements source.Driver.
func (Driver) Open(settings source.Settings, env source.Env) (source.Source, error) {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return nil, err
	}
	return &Source{cfg: c, env: env}, nil
}

// Source is a Kafka source: a consumer group member once open. It
// implements source.Source, Rebalancer, Committer, Boundaries, Counter and
// Sampler.
type Source struct {
	cfg   Config
	env   source.Env
	group source.Group
	c     *Consumer
}

// Rebalance implements source.Rebalancer.
func (s *Source) Rebalance(g source.Group) { s.group = g }

// Open implements source.Source: it waits for a broker to answer (up to
// startup-timeout, see awaitBrokers) and joins the consumer group; the one
// Reader reads every partition assigned. Where each resumes is asked of
// the Group on every assignment.
func (s *Source) Open(ctx context.Context, _ source.Start) ([]source.Reader, error) {
	if s.group == nil {
		return nil, fmt.Errorf("kafka source: no group to tell of assignments (Rebalance was not called)")
	}
	c, err := Open(&s.cfg, s.group, s.env.Log)
	if err != nil {
		return nil, err
	}
	if err := c.awaitBrokers(ctx, s.cfg.Brokers, s.env); err != nil {
		c.Close()
		return nil, err
	}
	s.c = c
	return []source.Reader{&reader{Consumer: c}}, nil
}

// Close implements source.Source: it leaves the group.
func (s *Source) Close() error {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
	return nil
}

// Committed implements source.Committer: the group's committed offsets
// follow the target's commits, for lag tools.
func (s *Source) Committed(ctx context.Context, progress []changelog.Position) {
	if s.c != nil {
		s.c.CommitOffsets(ctx, progress)
	}
}

// Stopping implements source.Committer.
func (s *Source) Stopping(ctx context.Context, progress []changelog.Position) {
	if s.c != nil {
		s.c.CommitOffsetsSync(ctx, progress)
	}
}

// Unit implements source.Counter: offsets count records.
func (s *Source) Unit() string { return "records" }

// BoundaryPartition implements source.Boundaries: the transaction topic's
// one partition, "" without source.transaction-topic.
func (s *Source) BoundaryPartition() string {
	if s.cfg.TransactionTopic == "" {
		return ""
	}
	return PartitionName(s.cfg.TransactionTopic, 0)
}

// CheckAssigned implements source.Boundaries: a transaction topic must
// have exactly one partition, which holds the transactions' END events in
// commit order (Debezium creates it so).
func (s *Source) CheckAssigned(parts []string) error {
	for _, p := range parts {
		if t, n, ok := ParsePartition(p); ok && t == s.cfg.TransactionTopic && n != 0 {
			return fmt.Errorf("source.transaction-topic %s has partition %d: a transaction topic must have exactly one partition, "+
				"which holds the transactions' END events in commit order (Debezium creates it so)", t, n)
		}
	}
	return nil
}

// reader is the Consumer as a source.BatchReader.
type reader struct {
	*Consumer
	pending []source.Record
}

// NextBatch implements source.BatchReader.
func (r *reader) NextBatch(ctx context.Context) (*source.Batch, error) { return r.Poll(ctx) }

// Next implements source.Reader, one record of a batch at a time; the
// batch is released once its last record is returned.
func (r *reader) Next(ctx context.Context) (source.Record, error) {
	for len(r.pending) == 0 {
		b, err := r.Poll(ctx)
		if err != nil {
			return source.Record{}, err
		}
		r.pending = b.Records
		if len(r.pending) == 0 {
			r.Release()
		}
	}
	rec := r.pending[0]
	if r.pending = r.pending[1:]; len(r.pending) == 0 {
		r.Release()
	}
	return rec, nil
}

// Close implements source.Reader; the Source leaves the group.
func (r *reader) Close() error { return nil }

// sampleTimeout bounds how long check waits for the brokers.
const sampleTimeout = 30 * time.Second

// SampleUnit implements source.Sampler: a sample counts partitions.
func (s *Source) SampleUnit() string { return "Kafka partition" }

// Sample implements source.Sampler: it asks the brokers for the topics,
// notes what is missing or wrong with them, and samples each partition
// from where a run would read next (req.From, else source.start), without
// joining the consumer group.
func (s *Source) Sample(ctx context.Context, req source.SampleRequest, fn func(source.Record) error) (*source.SampleReport, error) {
	src := &s.cfg
	rep := &source.SampleReport{}
	note := func(sev source.Severity, subject, msg, fix string) {
		rep.Notes = append(rep.Notes, source.Note{Severity: sev, Subject: subject, Message: msg, Fix: fix})
	}
	sctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	topics, err := Sample(sctx, src, req.From, req.N, fn)
	if topics != nil {
		rep.Partitions = len(topics.Partitions)
		rep.Count = rep.Partitions
		for _, t := range topics.Missing {
			note(source.Error, t, fmt.Sprintf("the brokers have no topic %s; txsink run waits for it and reads nothing from it.", t),
				"create the topic (or start the CDC connector that writes it), or correct source.topics / source.transaction-topic")
		}
		if src.TopicRegex != "" && len(topics.Partitions) == 0 {
			note(source.Warning, src.TopicRegex, "no topic matches source.topic-regex (whole names); txsink run reads nothing until one is created.",
				"correct source.topic-regex")
		}
		if src.TransactionTopic != "" && topics.TransactionPartitions > 1 {
			note(source.Error, src.TransactionTopic,
				fmt.Sprintf("the transaction topic has %d partitions; its END events have a commit order only in one, and txsink run refuses it.", topics.TransactionPartitions),
				"let Debezium create the transaction topic (one partition), or recreate it with one partition")
		}
	}
	brokers := strings.Join(src.Brokers, ",")
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return rep, ctx.Err()
	case sctx.Err() != nil:
		note(source.Warning, brokers, fmt.Sprintf("sampling the topics took longer than %s and stopped; what was read is checked.", sampleTimeout),
			"check the brokers' health, or sample fewer records (--sample)")
	default:
		note(source.Error, brokers, fmt.Sprintf("the Kafka source cannot be read: %v.", err),
			"check source.brokers, the TLS and SASL settings, and that this host may reach the brokers")
	}
	return rep, nil
}
