// Package nats is the source of type "nats": it reads a NATS JetStream
// stream, such as the one Debezium Server's JetStream sink writes (one
// subject per table, <topic.prefix>.<db>.<table>, and the transaction
// subject <topic.prefix>.transaction when Debezium's transaction metadata
// is on), with github.com/nats-io/nats.go's jetstream package.
//
// It guarantees:
//
//   - one ordered lane: a stream orders all its subjects, so the stream is
//     one partition, "nats:<stream>" (Partition), read in stream order.
//     Debezium publishes a transaction's BEGIN, its row events (to the
//     tables' subjects) and its END in order, so in transaction mode every
//     source transaction is committed whole, across tables;
//   - the position is the stream sequence: a message's Position has Offset
//     sequence + 1 (where reading resumes) and Seq the sequence; messages
//     point at "subject:sequence" (the subject is the Position's File);
//   - resuming from the target only: every Open starts an ordered consumer
//     (ephemeral, no acknowledgements) at the target's stored Offset, or
//     at the stream's first message when the target has none. No durable
//     consumer is created, and nothing on the server decides where
//     reading resumes;
//   - no silent gap: a stored position the stream no longer holds (its
//     limits or a purge removed messages not yet applied) or a stream
//     recreated under the same name (its creation time is the position's
//     Mark) is refused with what to do.
//
// Acknowledgements: an ordered consumer acknowledges nothing (AckNone),
// and acknowledging on a durable consumer would make the server, not the
// target, look like the record of progress. Monitoring reads txsink's
// own lag instead: the reader reports the stream's end as it sees it
// (Sizer, from each message's pending count), so /status and the metrics
// (txsink_lag_records: offsets count records, one a message) show how many
// messages are still to apply.
//
// Duplicates: Debezium Server publishes without a message id, so after its
// own restart it may publish again what it had published since its last
// offset flush: new messages, at new sequences. The engine drops them by
// each event's place in its source database's log, which the
// debezium-json format reads from the event's source block for this
// source alone (it is a source.Republisher; see format.OrderReader)
// (changelog.Order: PostgreSQL's sequence, a binlog's file, position and
// row) and the engine stores with the stream's position, so copies after a
// restart of txsink are dropped too; in transaction mode also by
// Debezium's transaction metadata, within a run; a snapshot starts its
// connector's logs anew. Events without a usable place (snapshots, other
// connectors) published again after a restart of
// txsink are applied again, which converges to the same rows for keyed
// tables (see the README).
package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/source"
)

// Type is the source type of this package (the config's source.type).
const Type = "nats"

func init() { source.Register(Type, Driver{}) }

// Config is the NATS source's part of the config's source section. Its
// keys are declared, and documented once, in Driver.Keys (printed in
// docs/config.md); each field is the key its tag names.
type Config struct {
	// URL is `source.url`; see docs/config.md.
	URL string `source:"url"`
	// Stream is `source.stream`; see docs/config.md.
	Stream string `source:"stream"`
	// Subjects is `source.subjects`; see docs/config.md. Empty reads
	// every subject of the stream.
	Subjects []string `source:"subjects"`
	// MaxRecordBytes is `source.max-record-bytes`; see docs/config.md. 0
	// means 64 MiB.
	MaxRecordBytes int64 `source:"max-record-bytes"`
}

// Partition returns the name of a stream's one partition, under which the
// target stores its position.
func Partition(stream string) string { return "nats:" + stream }

// Driver opens NATS sources.
type Driver struct{}

// Open implements source.Driver: it checks the settings, connecting
// nowhere.
func (Driver) Open(settings source.Settings, env source.Env) (source.Source, error) {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return nil, err
	}
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("source.url is required for the nats source: the NATS server, such as nats://127.0.0.1:4222"))
	}
	if msg := checkStream(c.Stream); msg != "" {
		errs = append(errs, fmt.Errorf("source.stream: %s; set it to the JetStream stream's name", msg))
	}
	for i, s := range c.Subjects {
		if msg := checkSubject(s); msg != "" {
			errs = append(errs, fmt.Errorf("source.subjects[%d]: %s; set it to a subject filter such as dbserver1.inventory.* or dbserver1.>", i, msg))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = 64 << 20
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: c, env: env, part: Partition(c.Stream)}, nil
}

// checkStream returns what is wrong with a stream name, "" when nothing.
func checkStream(s string) string {
	switch {
	case s == "":
		return "missing"
	case strings.ContainsAny(s, " \t\r\n.*>/\\"):
		return fmt.Sprintf("%q is not a stream name (no white space, '.', '*', '>', '/' or '\\')", s)
	}
	return ""
}

// checkSubject returns what is wrong with a subject filter, "" when
// nothing: tokens are not empty and hold no white space, and '>' is only
// the last token.
func checkSubject(s string) string {
	if s == "" {
		return "an empty subject"
	}
	tokens := strings.Split(s, ".")
	for i, tok := range tokens {
		switch {
		case tok == "":
			return fmt.Sprintf("subject %q has an empty token", s)
		case strings.ContainsAny(tok, " \t\r\n"):
			return fmt.Sprintf("subject %q holds white space", s)
		case tok == ">" && i != len(tokens)-1:
			return fmt.Sprintf("subject %q has '>' before its last token", s)
		case len(tok) > 1 && strings.ContainsAny(tok, "*>"):
			return fmt.Sprintf("subject %q has a wildcard inside a token (%q)", s, tok)
		}
	}
	return ""
}

// Source is a NATS JetStream source: one partition, the stream. It
// implements source.Source, Lister, Marker, Counter and Sampler.
type Source struct {
	cfg  Config
	env  source.Env
	part string

	mu      sync.Mutex
	nc      *nats.Conn
	r       *reader
	created string // the stream's creation time, its positions' Mark
}

// Republishes implements source.Republisher: Debezium Server publishes
// without message ids, so after its restart it publishes again, as new
// messages, what it published since its last offset flush (see the
// package doc). The engine then drops the copies by their place.
func (*Source) Republishes() bool { return true }

// Partitions implements source.Lister: the stream's one partition, claimed
// in the target before anything is read.
func (s *Source) Partitions() []string { return []string{s.part} }

// Unit implements source.Counter: offsets count stream sequences, one a
// message, so records (the metrics' txsink_*_records, as Kafka's).
func (s *Source) Unit() string { return "records" }

// Mark implements source.Marker: a position is into the stream created at
// this time; a stream deleted and created again under the same name
// numbers its messages from 1 again, and is refused.
func (s *Source) Mark(changelog.Position) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created, nil
}

// connectTimeout bounds the first connection and each request Open makes.
const connectTimeout = 10 * time.Second

// Open implements source.Source: it connects, checks the stored position
// against the stream, and starts an ordered consumer there.
func (s *Source) Open(ctx context.Context, at source.Start) ([]source.Reader, error) {
	var stored source.Stored
	var has bool
	if at.Stored != nil {
		stored, has = at.Stored(s.part)
	}
	// A long-running source waits for the server as long as it takes; the
	// ordered consumer resumes after the last message read.
	nc, err := s.connect(nats.MaxReconnects(-1))
	if err != nil {
		return nil, err
	}
	r, err := s.open(ctx, nc, stored, has)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.mu.Lock()
	s.nc, s.r = nc, r
	s.mu.Unlock()
	return []source.Reader{r}, nil
}

// open finds the stream, checks the stored position against it, and
// starts the ordered consumer.
func (s *Source) open(ctx context.Context, nc *nats.Conn, stored source.Stored, has bool) (*reader, error) {
	rctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	st, err := s.findStream(rctx, nc)
	if err != nil {
		return nil, err
	}
	info := st.CachedInfo()
	created := info.Created.UTC().Format(time.RFC3339Nano)
	if err := s.checkStored(info, created, stored, has); err != nil {
		return nil, err
	}
	cc, start := s.consumerAt(info, stored.Position.Offset)
	cons, err := st.OrderedConsumer(rctx, cc)
	if err != nil {
		return nil, permanent(fmt.Errorf("nats source: reading stream %s (subjects %v): %w", s.cfg.Stream, s.cfg.Subjects, err))
	}
	// The client buffers at most this much of the stream ahead of the
	// pipeline; the pipeline's own buffers bound the rest.
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(1000, int(min(max(16<<20, s.cfg.MaxRecordBytes+(1<<20)), 1<<30))))
	if err != nil {
		return nil, fmt.Errorf("nats source: reading stream %s: %w", s.cfg.Stream, err)
	}
	s.mu.Lock()
	s.created = created
	s.mu.Unlock()
	r := &reader{it: it, part: s.part, stream: s.cfg.Stream, maxRecord: s.cfg.MaxRecordBytes,
		start: changelog.Position{Partition: s.part, Offset: start}, subjects: map[string]string{}}
	r.size.Store(int64(info.State.LastSeq) + 1)
	r.mayWait.Store(true)
	return r, nil
}

// connect connects to the server, with opts.
func (s *Source) connect(opts ...nats.Option) (*nats.Conn, error) {
	log := s.env.Log
	opts = append([]nats.Option{
		nats.Name("txsink " + s.env.Pipeline),
		nats.Timeout(connectTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected; reconnecting", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats: reconnected", "server", c.ConnectedUrlRedacted()) }),
	}, opts...)
	nc, err := nats.Connect(s.cfg.URL, opts...)
	if err != nil {
		return nil, transient(fmt.Errorf("nats source: connecting to %s: %w; check source.url and that the server runs", redact(s.cfg.URL), err))
	}
	return nc, nil
}

// findStream returns the configured stream, with its info.
func (s *Source) findStream(ctx context.Context, nc *nats.Conn) (jetstream.Stream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats source: %w", err)
	}
	st, err := js.Stream(ctx, s.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, permanent(fmt.Errorf("nats source: the server has no JetStream stream %s (source.stream); create it, or let Debezium Server create it "+
			"(debezium.sink.nats-jetstream.create-stream=true), or correct source.stream", s.cfg.Stream))
	}
	if err != nil {
		return nil, transient(fmt.Errorf("nats source: reading stream %s: %w; check that JetStream is enabled on the server (nats-server -js)", s.cfg.Stream, err))
	}
	return st, nil
}

// consumerAt returns the ordered consumer reading from offset (a stored
// position; 0 for none: the stream's first message), and where it starts.
func (s *Source) consumerAt(info *jetstream.StreamInfo, offset int64) (jetstream.OrderedConsumerConfig, int64) {
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: s.cfg.Subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	if offset <= 0 {
		return cc, int64(info.State.FirstSeq)
	}
	cc.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
	cc.OptStartSeq = uint64(offset)
	return cc, offset
}

// checkStored refuses a stored position the stream cannot resume from.
func (s *Source) checkStored(info *jetstream.StreamInfo, created string, stored source.Stored, has bool) error {
	if !has || stored.Position.Offset <= 0 {
		return nil
	}
	reset := "txsink reset"
	if s.env.ResetHint != nil {
		reset = s.env.ResetHint(s.part)
	}
	off, first, last := stored.Position.Offset, int64(info.State.FirstSeq), int64(info.State.LastSeq)
	refuse := func(msg string) error {
		return &source.PartitionError{Partition: s.part, Err: fmt.Errorf("nats source: stream %s: %s", s.cfg.Stream, msg)}
	}
	switch {
	case stored.Mark != "" && stored.Mark != created:
		return refuse(fmt.Sprintf("the target's position (sequence %d) is into the stream created at %s, but the stream now is one created at %s: "+
			"it was deleted and created again, and its sequences start again. To load the new stream from its start, forget the position (%s) "+
			"and make sure the target's tables are empty or match the new stream's first message", off-1, stored.Mark, created, reset))
	case off > last+1:
		return refuse(fmt.Sprintf("the target's position (sequence %d) is beyond the stream's last message (%d): this is not the stream the target was loaded from. "+
			"Check source.stream and target.url, or forget the position (%s) to load the stream from its start", off-1, last, reset))
	case first > 0 && off < first:
		return refuse(fmt.Sprintf("the stream no longer holds messages %d to %d, which the target has not applied (its limits, max-age or max-msgs, or a purge removed them): "+
			"reading on would lose them. Reload the target (empty its tables, forget the position with %s, and publish a new snapshot, such as Debezium's), "+
			"and raise the stream's limits so that a stopped txsink cannot fall behind them", off, first-1, reset))
	}
	return nil
}

// Close implements source.Source: it stops the consumer and disconnects.
func (s *Source) Close() error {
	s.mu.Lock()
	nc, r := s.nc, s.r
	s.nc, s.r = nil, nil
	s.mu.Unlock()
	if r != nil {
		r.it.Stop()
	}
	if nc != nil {
		nc.Close()
	}
	return nil
}

// redact drops the passwords and tokens of a URL list, for messages.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, u := range parts {
		if at := strings.LastIndexByte(u, '@'); at >= 0 {
			scheme, _, ok := strings.Cut(u[:at], "://")
			if ok {
				parts[i] = scheme + "://***@" + u[at+1:]
			} else {
				parts[i] = "***@" + u[at+1:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// Error is a failure of the NATS source, classified: Transient when the
// server may answer later (connecting, reading the stream's state),
// Permanent when someone must act first (a missing stream, a consumer the
// server refuses). Its message says what, where and what to do.
type Error struct {
	Err       error
	transient bool
}

func transient(err error) error { return &Error{Err: err, transient: true} }
func permanent(err error) error { return &Error{Err: err} }

// Error returns Err's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Kind implements errkind.Classifier.
func (e *Error) Kind() errkind.Kind {
	if e.transient {
		return errkind.Transient
	}
	return errkind.Permanent
}
