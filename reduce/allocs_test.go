package reduce

import (
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/debezium"
)

// TestSteadyStateAllocations guards the allocations per change of
// txsink's own path on the records of txsink bench (see
// BenchmarkPipeline): decoding Debezium JSON into a recycled arena, and
// adding the decoded changes to a buffer taken every 5000 rows. They are
// counts, not times: each added allocation shows here whatever the
// machine's load.
func TestSteadyStateAllocations(t *testing.T) {
	for _, tc := range []struct {
		workload string
		// decode and add bound the allocations per change of decoding
		// (BEGIN and END records included) and of Buffer.Add.
		decode, add float64
	}{
		// Decoding allocates no more than a heap block of transaction
		// ids now and then (changelog.Arena.Recent); adding only the
		// shared blocks rows, their values and keys are carved from
		// (rowSlots, rowMem, keyMem): 0.02 on both workloads, 2026-12-07.
		{"insert-only", 0.02, 0.03},
		{"update-heavy", 0.02, 0.03},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			recs := benchWorkload(tc.workload, 6000)
			tables := benchSchema(t)
			dec, err := debezium.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			mem := new(changelog.Arena)
			var cs []changelog.Change
			changes := 0
			decode := func() {
				cs, changes = cs[:0], 0
				for r, rec := range recs {
					if r%128 == 0 {
						mem.Reset()
					}
					out, err := dec.DecodeIn(mem, rec, changelog.Position{Partition: "p", Offset: int64(r)})
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range out {
						if c.Kind != changelog.EndTxn {
							changes++
						}
					}
				}
			}
			if got := testing.AllocsPerRun(1, decode) / float64(changes); got > tc.decode {
				t.Errorf("decoding allocates %.2f times per change, want at most %v", got, tc.decode)
			}
			// The changes to add, decoded on the heap: Add copies what it
			// keeps, so the changes are the same every run.
			var all []changelog.Change
			for r, rec := range recs {
				out, err := dec.Decode(rec, changelog.Position{Partition: "p", Offset: int64(r)})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range out {
					if c.Kind != changelog.EndTxn {
						all = append(all, c)
					}
				}
			}
			buf := NewBuffer("allocs")
			add := func() {
				for i := range all {
					if err := buf.Add(tables[all[i].Table], &all[i], t0); err != nil {
						t.Fatal(err)
					}
					if buf.Rows() >= 5000 {
						buf.Take()
					}
				}
			}
			got := testing.AllocsPerRun(1, add) / float64(len(all))
			t.Logf("%s: decoding %.2f, adding %.2f allocations per change", tc.workload, testing.AllocsPerRun(1, decode)/float64(changes), got)
			if got > tc.add {
				t.Errorf("Buffer.Add allocates %.2f times per change, want at most %v", got, tc.add)
			}
		})
	}
}
