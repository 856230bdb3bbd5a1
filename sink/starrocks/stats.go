package starrocks

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/txsink/txsink/observe"
)

// The histograms' buckets: a commit of the three-table workload is 4
// loads, a transaction-mode commit streaming frozen chunks may be dozens;
// a load is a few hundred bytes (a progress row) to the buffer's size
// (megabytes).
var (
	loadsPerCommitBounds = []float64{1, 2, 4, 8, 16, 32, 64, 128}
	loadBytesBounds      = []float64{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20}
)

// stats counts what a Client sent and read, for Target.Report.
type stats struct {
	mu             sync.Mutex
	loadsPerCommit histogram
	loadBytes      histogram
	labelStates    map[string]int64
}

func newStats() *stats {
	s := &stats{
		loadsPerCommit: histogram{bounds: loadsPerCommitBounds, counts: make([]uint64, len(loadsPerCommitBounds))},
		loadBytes:      histogram{bounds: loadBytesBounds, counts: make([]uint64, len(loadBytesBounds))},
		labelStates:    map[string]int64{},
	}
	for _, k := range observe.LabelStates {
		s.labelStates[k] = 0
	}
	return s
}

func (s *stats) load(bytes int) {
	s.mu.Lock()
	s.loadBytes.observe(float64(bytes))
	s.mu.Unlock()
}

func (s *stats) commit(loads int) {
	s.mu.Lock()
	s.loadsPerCommit.observe(float64(loads))
	s.mu.Unlock()
}

// labelState counts one get_load_state answer under its metrics key.
func (s *stats) labelState(state string) {
	k := "unknown"
	switch strings.ToUpper(state) {
	case "COMMITTED":
		k = "committed"
	case "VISIBLE":
		k = "visible"
	case "ABORTED":
		k = "aborted"
	case "PREPARE", "PREPARED":
		k = "open"
	}
	s.mu.Lock()
	s.labelStates[k]++
	s.mu.Unlock()
}

func (s *stats) snapshot() (loadsPerCommit, loadBytes observe.Histogram, labelStates map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadsPerCommit.snapshot(), s.loadBytes.snapshot(), maps.Clone(s.labelStates)
}

// histogram is a cumulative histogram of fixed bounds.
type histogram struct {
	count  uint64
	sum    float64
	bounds []float64
	counts []uint64 // cumulative
}

func (h *histogram) observe(v float64) {
	h.count++
	h.sum += v
	for i := len(h.bounds) - 1; i >= 0 && v <= h.bounds[i]; i-- {
		h.counts[i]++
	}
}

func (h *histogram) snapshot() observe.Histogram {
	return observe.Histogram{Count: h.count, Sum: h.sum, Bounds: h.bounds, Counts: slices.Clone(h.counts)}
}

// Report implements sink.Reporter: the server's version, loads per
// commit, bytes per load and the label states read, in st.StarRocks.
func (t *Target) Report(st *observe.Status) {
	lpc, lb, ls := t.client.stats.snapshot()
	st.StarRocks = &observe.StarRocksStatus{ServerVersion: t.version, LoadsPerCommit: lpc, LoadBytes: lb, LabelStates: ls}
}
