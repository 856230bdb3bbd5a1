package nats

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/txsink/txsink/source"
)

// sampleWait bounds how long check waits for the server, and for the
// sampled messages.
const sampleWait = 10 * time.Second

// SampleUnit implements source.Sampler: a sample counts streams.
func (s *Source) SampleUnit() string { return "NATS stream" }

// Sample implements source.Sampler: it finds the stream, notes what txsink
// run would refuse (no server, no stream, a stored position the stream no
// longer holds), and hands on up to req.N messages from where a run would
// read next. It acknowledges nothing and leaves only an ordered consumer,
// which the server removes when it is unused.
func (s *Source) Sample(ctx context.Context, req source.SampleRequest, fn func(source.Record) error) (*source.SampleReport, error) {
	rep := &source.SampleReport{}
	note := func(sev source.Severity, subject, msg, fix string) {
		rep.Notes = append(rep.Notes, source.Note{Severity: sev, Subject: subject, Message: msg, Fix: fix})
	}
	sctx, cancel := context.WithTimeout(ctx, sampleWait)
	defer cancel()
	nc, err := s.connect()
	if err != nil {
		note(source.Error, redact(s.cfg.URL), err.Error()+"; txsink run stops with this error.", "start the server, or correct source.url")
		return rep, nil
	}
	defer nc.Close()
	st, err := s.findStream(sctx, nc)
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		note(source.Error, s.cfg.Stream, err.Error()+"; txsink run stops with this error.", "create the stream, or correct source.stream")
		return rep, nil
	}
	rep.Partitions, rep.Count = 1, 1
	if req.Skip[s.part] {
		return rep, nil
	}
	info := st.CachedInfo()
	offset, has := req.From[s.part]
	stored := source.Stored{}
	stored.Position.Offset = offset
	if err := s.checkStored(info, "", stored, has); err != nil {
		note(source.Error, s.part, err.Error()+"; txsink run refuses it.", "see the message")
		return rep, nil
	}
	if req.N <= 0 {
		return rep, nil
	}
	cc, _ := s.consumerAt(info, offset)
	cons, err := st.OrderedConsumer(sctx, cc)
	if err != nil {
		note(source.Error, s.part, fmt.Sprintf("the stream cannot be read with source.subjects %v: %v.", s.cfg.Subjects, err), "correct source.subjects")
		return rep, nil
	}
	batch, err := cons.FetchNoWait(req.N)
	if err != nil {
		note(source.Warning, s.part, fmt.Sprintf("sampling the stream failed: %v; nothing was checked.", err), "check the server's health")
		return rep, nil
	}
	r := &reader{part: s.part, stream: s.cfg.Stream, maxRecord: s.cfg.MaxRecordBytes, subjects: map[string]string{}}
	for msg := range batch.Messages() {
		rec, _, err := r.record(msg)
		if err != nil {
			note(source.Error, s.part, err.Error()+"; txsink run stops at it.", "raise source.max-record-bytes")
			return rep, nil
		}
		if err := fn(rec); err != nil {
			return rep, err
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
		note(source.Warning, s.part, fmt.Sprintf("sampling the stream stopped: %v; what was read is checked.", err), "check the server's health")
	}
	return rep, nil
}
