package engine_test

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source"
)

// memoryType is a source type only this test knows: it plugs in through
// the registry, as the PostgreSQL and NATS sources will.
const memoryType = "memory-test"

func init() { source.Register(memoryType, memoryDriver{}) }

// memoryData holds each pipeline's partitions of records, by pipeline
// name (the Env the engine hands the driver names it).
var memoryData sync.Map // string -> map[string][]string

// memoryOpened holds the source each pipeline opened last.
var memoryOpened sync.Map // string -> *memorySource

// memoryDriver opens in-memory sources: partitions of records, lists of
// lines. It implements only the required interfaces and source.Lister.
type memoryDriver struct{}

func (memoryDriver) Open(_ source.Settings, env source.Env) (source.Source, error) {
	parts, _ := memoryData.Load(env.Pipeline)
	s := &memorySource{parts: parts.(map[string][]string)}
	memoryOpened.Store(env.Pipeline, s)
	return s, nil
}

type memorySource struct {
	parts map[string][]string
	// starts records where each Open began, by partition.
	starts []map[string]int64
}

func (s *memorySource) Partitions() []string {
	names := slices.Sorted(func(yield func(string) bool) {
		for p := range s.parts {
			if !yield(p) {
				return
			}
		}
	})
	return names
}

func (s *memorySource) Open(_ context.Context, at source.Start) ([]source.Reader, error) {
	starts := map[string]int64{}
	var out []source.Reader
	for _, p := range s.Partitions() {
		st, _ := at.Stored(p)
		starts[p] = st.Position.Offset
		out = append(out, &memoryReader{part: p, lines: s.parts[p], next: st.Position.Offset})
	}
	s.starts = append(s.starts, starts)
	return out, nil
}

func (s *memorySource) Close() error { return nil }

// memoryReader reads one partition: record i (from 0) ends at offset i+1.
type memoryReader struct {
	part  string
	lines []string
	next  int64
}

func (r *memoryReader) Next(ctx context.Context) (source.Record, error) {
	if r.next >= int64(len(r.lines)) {
		return source.Record{}, io.EOF
	}
	r.next++
	return source.Record{Data: []byte(r.lines[r.next-1]), Pos: changelog.Position{Partition: r.part, Offset: r.next, Seq: r.next}}, nil
}

func (r *memoryReader) Close() error { return nil }

// TestRegisteredSource runs a whole pipeline on SQLite from a source the
// engine knows only through the registry: its records are applied, its
// partitions are claimed up front (source.Lister) and their progress is
// committed, and a second run hands that progress back to the source's
// Open, which resumes after it.
func TestRegisteredSource(t *testing.T) {
	db := testdb.SQLite(t)
	createKV(t, db)
	cfg := pipeline(db, config.Table{Source: "shop.kv"})
	cfg.Name = "registered"
	cfg.Source = config.Source{Type: memoryType, Format: "txsink-json"}
	data := map[string][]string{
		"a": {kvLine("+I", 1, "a1"), kvLine("+I", 2, "a2"), kvLine("+U", 1, "a1b"), kvLine("-D", 2, "")},
		"b": {kvLine("+I", 3, "b3"), kvLine("+I", 4, "b4")},
	}
	memoryData.Store(cfg.Name, data)

	run := func() *memorySource {
		t.Helper()
		e, err := engine.New(context.Background(), cfg)
		if err != nil {
			t.Fatalf("engine.New: %v", err)
		}
		defer e.Close()
		if err := e.Run(context.Background(), engine.RunOptions{}); err != nil {
			t.Fatalf("Run: %v", err)
		}
		for p, lines := range data {
			if pos, ok := e.Progress(p); !ok || pos.Offset != int64(len(lines)) {
				t.Errorf("progress of %s = %v, %v; want offset %d", p, pos, ok, len(lines))
			}
		}
		s, _ := memoryOpened.Load(cfg.Name)
		return s.(*memorySource)
	}
	if s := run(); len(s.starts) != 1 || s.starts[0]["a"] != 0 || s.starts[0]["b"] != 0 {
		t.Errorf("first run opened the source at %v, want once at the start", s.starts)
	}
	if got, want := query(t, db, "SELECT id, v FROM kv ORDER BY id"), "1|a1b\n3|b3\n4|b4"; got != want {
		t.Fatalf("after the first run:\n%s\nwant\n%s", got, want)
	}

	// More records: the second run resumes after the first's progress.
	data["a"] = append(data["a"], kvLine("+U", 1, "a1c"))
	s := run()
	if len(s.starts) != 1 || s.starts[0]["a"] != 4 || s.starts[0]["b"] != 2 {
		t.Errorf("second run opened the source at %v, want a at 4 and b at 2 (the committed progress)", s.starts)
	}
	if got, want := query(t, db, "SELECT id, v FROM kv ORDER BY id"), "1|a1c\n3|b3\n4|b4"; got != want {
		t.Fatalf("after the second run:\n%s\nwant\n%s", got, want)
	}
}
