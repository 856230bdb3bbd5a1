package benchrun

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/config"
)

// Print writes the figures of each mode's rounds, and with --mode both
// how transaction mode's events/s compare with plain mode's, round by
// round.
//
// With --key-partitions both it also compares, per mode, the events/s
// with the memory of keys' partitions on with those with it off; with
// --version-column both, those with the orders' version column with
// those without; with --foreign-keys both, those with the tables'
// foreign keys with those without.
func (r *Result) Print(w io.Writer) {
	byMode := map[variant][]round{}
	var modes []variant
	for _, rr := range r.rounds {
		v := variant{rr.mode, rr.keys, rr.guard, rr.fks}
		if byMode[v] == nil {
			modes = append(modes, v)
		}
		byMode[v] = append(byMode[v], rr)
	}
	for i, v := range modes {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r.printMode(w, v, byMode[v])
	}
	tw := &tableWriter{}
	// ratio adds a row comparing the events/s of b's rounds with a's,
	// round by round (each pair ran in the same round).
	ratio := func(name string, a, b []round) {
		if len(a) == 0 || len(a) != len(b) {
			return
		}
		v := make([]float64, len(a))
		var each []string
		for i := range a {
			// Same events: the ratio of the rates is that of the run times.
			v[i] = a[i].run.Seconds() / b[i].run.Seconds()
			each = append(each, fmt.Sprintf("%.2f", v[i]))
		}
		tw.row(name, "events/s "+spread(v, func(x float64) string { return fmt.Sprintf("%.2f×", x) })+", each round "+strings.Join(each, " "))
	}
	first := r.rounds[0]
	keys, guard, fks := first.keys, first.guard, first.fks
	ratio("transaction ÷ plain", byMode[variant{"plain", keys, guard, fks}], byMode[variant{"transaction", keys, guard, fks}])
	for _, mode := range []string{"plain", "transaction"} {
		if r.opts.KeyPartitions == "both" {
			var on, off []round
			for _, v := range modes {
				if v.mode == mode && v.guard == guard && v.fks == fks && v.keys > 0 {
					on = byMode[v]
				} else if v.mode == mode && v.guard == guard && v.fks == fks {
					off = byMode[v]
				}
			}
			ratio("key memory on ÷ off, "+mode, off, on)
		}
		if r.opts.VersionColumn == "both" {
			ratio("version-column on ÷ off, "+mode, byMode[variant{mode, keys, false, fks}], byMode[variant{mode, keys, true, fks}])
		}
		if r.opts.ForeignKeys == "both" {
			ratio("foreign keys on ÷ off, "+mode, byMode[variant{mode, keys, guard, false}], byMode[variant{mode, keys, guard, true}])
		}
	}
	if len(tw.labels) > 0 {
		fmt.Fprintln(w)
		tw.write(w)
	}
}

// printMode writes the figures of one mode's rounds.
func (r *Result) printMode(w io.Writer, v variant, rounds []round) {
	o := r.opts
	n := len(rounds)
	// Each figure per round, then its median (and range, over rounds).
	per := func(f func(rr *round) float64) []float64 {
		v := make([]float64, n)
		for i := range rounds {
			v[i] = f(&rounds[i])
		}
		return v
	}
	written := func(rr *round) int64 { return rr.upserted + rr.deleted + rr.inserted }
	secs := per(func(rr *round) float64 { return rr.run.Seconds() })
	eventsPerSec := per(func(rr *round) float64 { return float64(r.events) / rr.run.Seconds() })
	rowsPerSec := per(func(rr *round) float64 { return float64(written(rr)) / rr.run.Seconds() })
	bulkPerSec := per(func(rr *round) float64 { return float64(r.finalRows) / rr.bulkTook.Seconds() })
	ratio := func(num []float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = num[i] / bulkPerSec[i]
		}
		return v
	}
	first := &rounds[0]
	tw := &tableWriter{}
	flush := fmt.Sprintf("flush %d rows or %d MiB", o.FlushRows, o.FlushMiB)
	if !o.Coalesce {
		flush += ", not coalesced"
	}
	tw.row("workload", fmt.Sprintf("%s, %d orders, %s, %s, %s", o.Workload, o.Orders, countOf(o.Partitions, "partition"), v.label(o), flush))
	tw.row("target", fmt.Sprintf("%s (%s)", r.dialect, config.RedactURL(o.Target)))
	if n > 1 {
		tw.row("rounds", fmt.Sprintf("%d, each a txsink run then the bulk load into emptied tables; figures are medians [ranges]", n))
	}
	tw.row("input", fmt.Sprintf("%d events (%d Debezium records, %d transactions, %.1f MiB)", r.events, r.records, r.txns, float64(r.inputBytes)/(1<<20)))
	tw.row("written", fmt.Sprintf("%d rows (%d upserted, %d deleted, %d inserted); %d final rows", written(first), first.upserted, first.deleted, first.inserted, r.finalRows))
	tw.row("txsink run", spread(secs, fixedSecs))
	if first.cpu >= 0 {
		cpuSecs := per(func(rr *round) float64 { return rr.cpu.Seconds() })
		cores := per(func(rr *round) float64 { return rr.cpu.Seconds() / rr.run.Seconds() })
		perEvent := per(func(rr *round) float64 { return float64(rr.cpu.Microseconds()) / float64(max(r.events, 1)) })
		cpu := fmt.Sprintf("%s (%s cores; %s µs per event)",
			spread(cpuSecs, fixedSecs),
			spread(cores, fixed2), spread(perEvent, fixed2))
		if r.dialect == "sqlite" {
			cpu += ", SQLite's own work included"
		}
		tw.row("txsink CPU", cpu)
	}
	if r.server != 0 && !slices.ContainsFunc(rounds, func(rr round) bool { return rr.serverCPU < 0 || rr.bulkServerCPU < 0 }) {
		// Two processes share the host's cores: the server's CPU time
		// beside txsink's shows whether it had the cores it had alone.
		runCPU := per(func(rr *round) float64 { return rr.serverCPU.Seconds() })
		runCores := per(func(rr *round) float64 { return rr.serverCPU.Seconds() / rr.run.Seconds() })
		bulkCPU := per(func(rr *round) float64 { return rr.bulkServerCPU.Seconds() })
		bulkCores := per(func(rr *round) float64 { return rr.bulkServerCPU.Seconds() / rr.bulkTook.Seconds() })
		tw.row("database CPU", fmt.Sprintf("%s (%s cores) in txsink's run, %s (%s cores) in the bulk load (the server's process %d on this host, with its children)",
			spread(runCPU, fixedSecs), spread(runCores, fixed2), spread(bulkCPU, fixedSecs), spread(bulkCores, fixed2), r.server))
	}
	tw.row("input events/s", spread(eventsPerSec, fixed0))
	tw.row("rows written/s", spread(rowsPerSec, fixed0))
	bulkTook := per(func(rr *round) float64 { return rr.bulkTook.Seconds() })
	bulkInto := ""
	if v.fks {
		// The same baseline as the runs without: see Run.
		bulkInto = ", into copies without the foreign keys"
	}
	tw.row("bulk load", fmt.Sprintf("%s rows/s (%s of %d rows in %s%s)", spread(bulkPerSec, fixed0), bulkMethods[r.dialect], r.finalRows,
		spread(bulkTook, fixedSecs), bulkInto))
	times := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	inCommitsPerSec := per(func(rr *round) float64 { return float64(r.finalRows) / rr.bulkCommitsTook.Seconds() })
	inCommitsTook := per(func(rr *round) float64 { return rr.bulkCommitsTook.Seconds() })
	tw.row("bulk in commits", fmt.Sprintf("%s rows/s (the same rows, one transaction per txsink commit, in %s): %s the bulk load",
		spread(inCommitsPerSec, fixed0),
		spread(inCommitsTook, fixedSecs),
		spread(ratio(inCommitsPerSec), times)))
	tw.row("rows/s ÷ bulk", spread(ratio(rowsPerSec), times))
	tw.row("events/s ÷ bulk", spread(ratio(eventsPerSec), times))
	ofInCommits := make([]float64, n)
	for i := range ofInCommits {
		ofInCommits[i] = eventsPerSec[i] / inCommitsPerSec[i]
	}
	tw.row("÷ bulk in commits", spread(ofInCommits, times)+" (events/s against the rows/s of the bulk load in txsink's commits)")
	if n > 1 {
		var each []string
		for _, v := range ratio(eventsPerSec) {
			each = append(each, fmt.Sprintf("%.2f", v))
		}
		tw.row("each round", "events/s ÷ bulk "+strings.Join(each, " "))
	}
	rss := "unknown"
	if first.peakRSS >= 0 {
		mib := per(func(rr *round) float64 { return float64(rr.peakRSS) / (1 << 20) })
		rss = spread(mib, func(v float64) string { return fmt.Sprintf("%.1f MiB", v) })
		if first.rssNote != "" {
			rss += " (" + first.rssNote + ")"
		}
	}
	tw.row("peak RSS", rss)
	tw.row("commits", spread(per(func(rr *round) float64 { return float64(rr.commits) }), fixed0))
	lat := func(f func(rr *round) time.Duration) string {
		return spread(per(func(rr *round) float64 { return f(rr).Seconds() }), fixedSecs)
	}
	tw.row("commit latency", fmt.Sprintf("p50 %s, p99 %s, max %s",
		lat(func(rr *round) time.Duration { return rr.p50 }),
		lat(func(rr *round) time.Duration { return rr.p99 }),
		lat(func(rr *round) time.Duration { return rr.maxLatency })))
	var differs []string
	for i, rr := range rounds {
		if !rr.verified {
			differs = append(differs, fmt.Sprintf("round %d: %s", i+1, rr.verifyErr))
		}
	}
	switch {
	case !o.Verify:
		tw.row("final state", "not checked (--verify=false)")
	case len(differs) == 0 && n > 1:
		tw.row("final state", "verified: the target equals the workload's final state, every round")
	case len(differs) == 0:
		tw.row("final state", "verified: the target equals the workload's final state")
	default:
		tw.row("final state", "DIFFERS: "+strings.Join(differs, "; "))
	}
	if r.profile != "" {
		tw.row("cpu profile", r.profile+" (go tool pprof -top "+r.profile+")")
	}
	if r.memProfile != "" {
		tw.row("allocations", r.memProfile+" (go tool pprof -sample_index=alloc_space -top -diff_base "+r.memProfile+".before "+r.memProfile+")")
	}
	tw.write(w)
}

func fixed0(v float64) string { return fmt.Sprintf("%.0f", v) }
func fixed2(v float64) string { return fmt.Sprintf("%.2f", v) }

// fixedSecs formats v seconds as fmtDur does.
func fixedSecs(v float64) string { return fmtDur(time.Duration(v * float64(time.Second))) }

// spread formats one figure of every round: the value for one round, the
// median and [min-max] for several.
func spread(v []float64, format func(float64) string) string {
	if len(v) == 1 {
		return format(v[0])
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%s [%s–%s]", format(med), format(s[0]), format(s[len(s)-1]))
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// tableWriter prints label/value rows with the labels aligned.
type tableWriter struct{ labels, values []string }

func (t *tableWriter) row(label, value string) {
	t.labels = append(t.labels, label)
	t.values = append(t.values, value)
}

func (t *tableWriter) write(w io.Writer) {
	width := 0
	for _, l := range t.labels {
		width = max(width, utf8.RuneCountInString(l))
	}
	for i, l := range t.labels {
		fmt.Fprintf(w, "  %s%s  %s\n", l, strings.Repeat(" ", width-utf8.RuneCountInString(l)), t.values[i])
	}
}

// countOf writes n things, singular for one: "1 partition", "8 partitions".
func countOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
