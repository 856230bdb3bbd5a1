package nats_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/source"
	natssource "github.com/txsink/txsink/source/nats"
)

// TestSample: txsink check samples the stream from where a run would
// read next, and notes what a run would refuse, without reading anything
// a run would miss.
func TestSample(t *testing.T) {
	s := newStream(t)
	m := newModel(s.prefix, 11)
	var first []msg
	for i := range 3 {
		msgs := m.next(i)
		first = append(first, msgs...)
		s.publish(t, msgs...)
	}
	for _, tc := range []struct {
		name   string
		stream string
		from   map[string]int64
		n      int
		seqs   []int64 // the sampled messages' sequences
		note   string  // in the one note, if any
	}{
		{name: "from the start", stream: s.name, n: 3, seqs: []int64{1, 2, 3}},
		{name: "from the target's position", stream: s.name, from: map[string]int64{natssource.Partition(s.name): 5}, n: 2, seqs: []int64{5, 6}},
		{name: "at the end", stream: s.name, from: map[string]int64{natssource.Partition(s.name): int64(len(first)) + 1}, n: 2},
		{name: "beyond the end", stream: s.name, from: map[string]int64{natssource.Partition(s.name): int64(len(first)) + 5}, n: 2, note: "beyond the stream's last message"},
		{name: "no stream", stream: s.name + "_NONE", n: 2, note: "has no JetStream stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := natssource.Driver{}.Open(source.Settings{"url": s.url, "stream": tc.stream},
				source.Env{Pipeline: "sample", Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			rep, err := src.(source.Sampler).Sample(context.Background(), source.SampleRequest{N: tc.n, From: tc.from}, func(r source.Record) error {
				seqs = append(seqs, r.Pos.Seq)
				if want := first[r.Pos.Seq-1]; r.Pos.File != want.subject || string(r.Data) != string(want.data) || r.Pos.Offset != r.Pos.Seq+1 {
					t.Errorf("message %d: %s %q at offset %d, want %s %q at %d", r.Pos.Seq, r.Pos.File, r.Data, r.Pos.Offset, want.subject, want.data, r.Pos.Seq+1)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seqs, tc.seqs) {
				t.Errorf("sampled sequences %v, want %v", seqs, tc.seqs)
			}
			switch {
			case tc.note == "" && len(rep.Notes) > 0:
				t.Errorf("notes %+v, want none", rep.Notes)
			case tc.note != "" && (len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0].Message, tc.note) || rep.Notes[0].Severity != source.Error):
				t.Errorf("notes %+v, want one error saying %q", rep.Notes, tc.note)
			}
		})
	}
}

// TestCheck: txsink check of a nats pipeline samples the stream as a run
// would decode and route it, and passes; against a stream that does not
// exist it reports the error a run would stop with.
func TestCheck(t *testing.T) {
	s, _, cfg, m := sqliteFixture(t, "nats_check", 13, 5)
	var want int
	for _, tx := range m.txns {
		want += len(tx)
	}
	rep, err := diagnose.Run(context.Background(), cfg, diagnose.Options{Sample: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Count(diagnose.Error) + rep.Count(diagnose.Warning); n != 0 || rep.Records != want {
		t.Errorf("check: %d errors and warnings (%+v), %d records sampled; want none, %d", n, rep.Findings, rep.Records, want)
	}
	t.Log(rep.Summary(cfg))
	cfg.Source.Set("stream", s.name+"_NONE")
	rep, err = diagnose.Run(context.Background(), cfg, diagnose.Options{Sample: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if errs := rep.Of("source"); len(errs) != 1 || errs[0].Severity != diagnose.Error || !strings.Contains(errs[0].Message, "has no JetStream stream") {
		t.Errorf("check of a missing stream: %+v, want one error naming it", errs)
	}
}
