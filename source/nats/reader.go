package nats

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// ErrRecordTooLarge is returned (wrapped) by Next for a message longer
// than source.max-record-bytes.
var ErrRecordTooLarge = errors.New("message is longer than source.max-record-bytes")

// maxSubjects bounds the subjects a reader keeps one string of: a stream of
// Debezium Server has one per table, so this is plenty; past it each
// message's subject is its own string.
const maxSubjects = 4096

// reader reads the stream's messages from an ordered consumer, in stream
// order. It implements source.Reader, Lane, Sizer and Waiter. Data stays
// valid for good (each message owns its bytes).
type reader struct {
	it        jetstream.MessagesContext
	part      string
	stream    string
	maxRecord int64
	start     changelog.Position
	// subjects interns the messages' subjects, which each Position keeps.
	subjects map[string]string
	// size is the stream's end as last seen (see Size); mayWait whether
	// the server had nothing more for the consumer after the last message.
	size    atomic.Int64
	mayWait atomic.Bool
	err     error
}

// Next implements source.Reader.
func (r *reader) Next(ctx context.Context) (source.Record, error) {
	if r.err != nil {
		return source.Record{}, r.err
	}
	msg, err := r.it.Next(jetstream.NextContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return source.Record{}, ctx.Err()
		}
		r.err = fmt.Errorf("nats source: reading stream %s: %w", r.stream, err)
		return source.Record{}, r.err
	}
	rec, md, err := r.record(msg)
	if err != nil {
		r.err = err
		return source.Record{}, err
	}
	seq := rec.Pos.Seq
	// With a subject filter, pending counts only the matching messages:
	// the lag then leaves out the others, which txsink does not read.
	r.size.Store(seq + 1 + int64(md.NumPending))
	r.mayWait.Store(md.NumPending == 0)
	return rec, nil
}

// record returns msg as a record of the stream, and its metadata.
func (r *reader) record(msg jetstream.Msg) (source.Record, *jetstream.MsgMetadata, error) {
	md, err := msg.Metadata()
	if err != nil {
		return source.Record{}, nil, fmt.Errorf("nats source: stream %s: a message without JetStream metadata: %w", r.stream, err)
	}
	seq := int64(md.Sequence.Stream)
	pos := changelog.Position{Partition: r.part, File: r.subject(msg.Subject()), Offset: seq + 1, Seq: seq}
	data := msg.Data()
	if int64(len(data)) > r.maxRecord {
		return source.Record{}, nil, fmt.Errorf("nats source: %s (stream %s): %d bytes: %w; raise it if such messages are expected", pos, r.stream, len(data), ErrRecordTooLarge)
	}
	return source.Record{Data: data, Pos: pos}, md, nil
}

// subject returns s as the reader's one string of it.
func (r *reader) subject(s string) string {
	if in, ok := r.subjects[s]; ok {
		return in
	}
	if len(r.subjects) < maxSubjects {
		r.subjects[s] = s
	}
	return s
}

// Close implements source.Reader; the Source stops the consumer.
func (r *reader) Close() error { return nil }

// Partition implements source.Lane.
func (r *reader) Partition() string { return r.part }

// Start implements source.Lane: where reading began.
func (r *reader) Start() changelog.Position { return r.start }

// Size implements source.Sizer: the offset after the stream's last
// message as last seen (the last message read's sequence + 1 + the
// messages still pending for the consumer).
func (r *reader) Size() int64 { return r.size.Load() }

// MayWait implements source.Waiter: the next message may not be there yet
// when the server had none pending after the last one.
func (r *reader) MayWait() bool { return r.mayWait.Load() }
