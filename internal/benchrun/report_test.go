package benchrun

import (
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/golden"
)

// reportRound is a round with round figures: rate the txsink run's
// speed-up over 1 s, all else fixed, so the report's arithmetic can be
// read off the golden files.
func reportRound(n int, mode string, keys int, rate float64) round {
	run := time.Duration(float64(time.Second) / rate)
	return round{
		round: n, mode: mode, keys: keys,
		run: run, cpu: run / 2,
		serverCPU: run / 4, bulkServerCPU: 200 * time.Millisecond,
		upserted: 900, deleted: 50, inserted: 50, commits: 4,
		bulkTook: 500 * time.Millisecond, bulkCommitsTook: 800 * time.Millisecond,
		peakRSS: 50 << 20,
		p50:     120 * time.Millisecond, p99: 300 * time.Millisecond, maxLatency: 310 * time.Millisecond,
		verified: true,
	}
}

func reportResult(o *Options, dialect string, rounds ...round) *Result {
	o.Workload, o.Orders, o.FlushRows, o.FlushMiB, o.Coalesce, o.Verify = "update-heavy", 100, 5000, 16, true, true
	if o.Partitions == 0 {
		o.Partitions = 1
	}
	return &Result{opts: o, dialect: dialect, events: 1000, records: 3000, inputBytes: 3 << 20, txns: 1000, finalRows: 400, rounds: rounds}
}

// TestPrint writes the report of each kind of bench, row by row as
// `txsink bench` prints it (testdata/*.txt; go test -update rewrites
// them): one round; several, as medians with ranges; both modes and both
// memories of keys' partitions, compared round by round; and figures
// that could not be measured.
func TestPrint(t *testing.T) {
	tests := []struct {
		name string
		r    *Result
	}{
		{"one-round", reportResult(&Options{Target: "sqlite:///tmp/b/bench.db"}, "sqlite", reportRound(1, "plain", 100, 1))},
		{"rounds", func() *Result {
			r := reportResult(&Options{Target: "mysql://txsink:secret@127.0.0.1:3306/test", Rounds: 3, CPUProfile: "cpu.prof", MemProfile: "mem.prof"}, "mariadb",
				reportRound(1, "plain", 100, 1), reportRound(2, "plain", 100, 2), reportRound(3, "plain", 100, 4))
			r.server, r.profile, r.memProfile = 4242, "cpu.prof", "mem.prof"
			r.rounds[1].verifyErr, r.rounds[1].verified = "orders has 3 rows (digest 1), want 4 rows (digest 2)", false
			return r
		}()},
		{"both", func() *Result {
			r := reportResult(&Options{Target: "postgres://postgres@127.0.0.1:5432/test", Mode: "both", KeyPartitions: "both", Partitions: 8, Rounds: 2}, "postgres")
			for i := 1; i <= 2; i++ {
				for j, v := range []variant{{"plain", 100, false, false}, {"plain", 0, false, false}, {"transaction", 100, false, false}, {"transaction", 0, false, false}} {
					r.rounds = append(r.rounds, reportRound(i, v.mode, v.keys, float64(i+j)))
				}
			}
			return r
		}()},
		{"version-column", func() *Result {
			r := reportResult(&Options{Target: "mysql://txsink:txsink@127.0.0.1:3306/test", Mode: "plain", VersionColumn: "both", Partitions: 1, Rounds: 2}, "mysql")
			for i := 1; i <= 2; i++ {
				for j, g := range []bool{false, true} {
					rr := reportRound(i, "plain", 100, float64(i+j))
					rr.guard = g
					r.rounds = append(r.rounds, rr)
				}
			}
			return r
		}()},
		{"foreign-keys", func() *Result {
			r := reportResult(&Options{Target: "postgres://postgres@127.0.0.1:5432/test", Workload: "txn", Mode: "transaction", ForeignKeys: "both", Partitions: 8, Rounds: 2}, "postgres")
			for i := 1; i <= 2; i++ {
				for j, f := range []bool{false, true} {
					rr := reportRound(i, "transaction", 100, float64(i+j))
					rr.fks = f
					r.rounds = append(r.rounds, rr)
				}
			}
			return r
		}()},
		{"unknown", func() *Result {
			o := &Options{Target: "sqlite:///b.db"}
			r := reportResult(o, "sqlite", reportRound(1, "transaction", 100, 1))
			o.Verify, o.Coalesce = false, false
			r.server = 4242 // its CPU time could not be read: no row
			r.rounds[0].cpu, r.rounds[0].serverCPU, r.rounds[0].peakRSS = -1, -1, -1
			r.rounds[0].commits, r.rounds[0].p50, r.rounds[0].p99, r.rounds[0].maxLatency = 0, 0, 0, 0
			return r
		}()},
		{"rss-note", func() *Result {
			r := reportResult(&Options{Target: "sqlite:///b.db"}, "sqlite", reportRound(1, "plain", 100, 1))
			r.rounds[0].rssNote = "whole process, generation included: could not reset the high-water mark (permission denied)"
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			tc.r.Print(&b)
			if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
				t.Errorf("a figure is not a number:\n%s", b.String())
			}
			if strings.Contains(b.String(), "secret") {
				t.Errorf("the report shows the target's password:\n%s", b.String())
			}
			golden.Check(t, tc.name+".txt", b.String())
		})
	}
}

// TestSpread writes one round's figure alone, and several as their
// median (the mean of the middle two for an even count) and range.
func TestSpread(t *testing.T) {
	tests := []struct {
		v    []float64
		want string
	}{
		{[]float64{3}, "3.00"},
		{[]float64{5, 1, 3}, "3.00 [1.00–5.00]"},
		{[]float64{4, 1, 2, 3}, "2.50 [1.00–4.00]"},
	}
	for _, tc := range tests {
		if got := spread(tc.v, fixed2); got != tc.want {
			t.Errorf("spread(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{
		1234567 * time.Microsecond: "1.235s",
		12345 * time.Microsecond:   "12.35ms",
		1234 * time.Nanosecond:     "1µs",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", d, got, want)
		}
	}
	if got := countOf(1, "partition") + ", " + countOf(8, "partition"); got != "1 partition, 8 partitions" {
		t.Errorf("countOf: %q", got)
	}
}
