// Package metrics exports a txsink pipeline to Prometheus. It is an engine
// hook (see engine.WithHooks), so the engine knows nothing of Prometheus,
// and it registers on a registry the caller passes in, never on the global
// one, so a program may run several pipelines, or none, without clashes.
//
//	m := metrics.New(cfg)
//	e, err := engine.New(ctx, cfg, engine.WithHooks(m))
//	...
//	err = m.Register(reg, e)   // reg: a *prometheus.Registry of your own
//
// Every metric carries the label pipeline (the config's name). The other
// labels are bounded by the configuration: partition is one of the source's
// paths, table one of the tables entries (its source pattern as written,
// "_unmatched" for changes no entry matches), kind one of the four change
// kinds, op, result, class and state small fixed sets.
//
// Counters, fed by the engine's hooks:
//
//	txsink_events_total{pipeline,partition,table,kind}
//	    changes read, by kind (+I, -U, +U, -D), before reduction
//	txsink_rows_written_total{pipeline,op}
//	    rows committed after per-key reduction; op is upsert, delete or insert
//	    (insert: appended to an append-only or history table)
//	txsink_commits_total{pipeline,result}
//	    target transactions, result ok or error (an error stops the pipeline)
//	txsink_commit_duration_seconds{pipeline}
//	    histogram of how long a commit took, retries included
//	txsink_source_txns_committed_total{pipeline}
//	    whole source transactions committed (transaction mode)
//	txsink_retries_total{pipeline}
//	    transient target errors retried (deadlocks, lost connections)
//	txsink_errors_total{pipeline,class}
//	    errors met, class transient (each retried one, and a transient one the
//	    pipeline stopped with after its retries ran out) or permanent (bad
//	    input, a refused statement: the pipeline stopped)
//
// Gauges and counters read from observe.Status at each scrape:
//
//	txsink_reduction_ratio{pipeline}
//	    changes read per row written over the pipeline's life (0 before the
//	    first row); for a recent window use
//	    sum(rate(txsink_events_total[5m])) / sum(rate(txsink_rows_written_total[5m]))
//	txsink_bytes_read_total{pipeline}
//	    bytes of source records read
//	txsink_skipped_total{pipeline}
//	    changes of tables no entry matches, skipped (skip-unknown-tables)
//	txsink_dead_letters_total{pipeline}
//	    records or source transactions quarantined (bad-input: dead-letter)
//	txsink_records_skipped_total{pipeline,kind}
//	    records that carry no row, skipped and never applied: kind
//	    schema_change (DDL: Debezium's schema change topic, Canal isDdl,
//	    Maxwell table-create and the like) or message (a logical decoding
//	    message, Debezium op "m")
//	txsink_guard_refused_total{pipeline}
//	    upserts and deletes a version guard refused (tables[].version-column):
//	    the stored row was newer
//	txsink_deletes_ignored_total{pipeline}
//	    deletes of tables with delete: ignore, consumed and not applied
//	txsink_copies_dropped_total{pipeline}
//	    changes dropped as copies published again by the source's producer
//	    (Debezium Server after its restart), told by their place in the
//	    source's log or their transaction's metadata
//	txsink_buffered_bytes{pipeline}
//	    bytes held in memory, not yet committed
//	txsink_open_source_txns{pipeline}
//	    source transactions begun and not yet finished (transaction mode)
//	txsink_committed_offset_bytes{pipeline,partition}
//	    the position stored in the target: where a restart resumes
//	txsink_read_offset_bytes{pipeline,partition}
//	    how far the source has been read
//	txsink_lag_bytes{pipeline,partition}
//	    the source's size minus the committed position; only for partitions
//	    whose size is known (files)
//	txsink_committed_offset_records{pipeline,partition}
//	txsink_read_offset_records{pipeline,partition}
//	txsink_lag_records{pipeline,partition}
//	    the same three for Kafka partitions and NATS streams, in records:
//	    the lag is the partition's high watermark (the stream's end) minus
//	    the committed offset
//	txsink_slot_lag_bytes{pipeline,partition}
//	    for a PostgreSQL source, the WAL the server keeps for the
//	    replication slot beyond what the target confirmed: the server's
//	    WAL end minus the slot's position (during the initial snapshot,
//	    the WAL written since the slot's consistent point)
//	txsink_last_commit_timestamp_seconds{pipeline}
//	    Unix time of the last commit; before the first, of the time the
//	    metrics were made (the pipeline's start), so that
//	    time() - txsink_last_commit_timestamp_seconds is how long the
//	    pipeline has gone without a commit, and no gauge has to tick
//	txsink_state{pipeline,state}
//	    1 for the pipeline's state, 0 for the others: starting, running,
//	    degraded (a unit's commit is being retried), stopping, stopped,
//	    failed
//
// A StarRocks target's, from observe.Status.StarRocks (absent for the
// other targets):
//
//	txsink_starrocks_loads_per_commit{pipeline}
//	    histogram of the loads (tables, progress, claims) of each
//	    committed Stream Load transaction
//	txsink_starrocks_load_bytes{pipeline}
//	    histogram of the body bytes of each load the server accepted
//	txsink_starrocks_label_states_total{pipeline,state}
//	    label states get_load_state answered: committed, visible, aborted,
//	    open (PREPARE, PREPARED) or unknown
//	txsink_starrocks_server_info{pipeline,version}
//	    1, labelled with the server's version (current_version())
//
// Names returns this list, for tests and dashboards. One more, of the
// process rather than of a pipeline, is BuildInfo's:
//
//	txsink_build_info{version,commit,goversion}
//	    1, labelled with the binary's build stamp (txsink version)
package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/observe"
)

// names lists every metric family the package exports; the package doc
// lists the same (a test keeps them in step).
var names = []string{
	"txsink_events_total",
	"txsink_rows_written_total",
	"txsink_commits_total",
	"txsink_commit_duration_seconds",
	"txsink_source_txns_committed_total",
	"txsink_retries_total",
	"txsink_errors_total",
	"txsink_reduction_ratio",
	"txsink_bytes_read_total",
	"txsink_skipped_total",
	"txsink_dead_letters_total",
	"txsink_records_skipped_total",
	"txsink_guard_refused_total",
	"txsink_deletes_ignored_total",
	"txsink_copies_dropped_total",
	"txsink_buffered_bytes",
	"txsink_open_source_txns",
	"txsink_committed_offset_bytes",
	"txsink_read_offset_bytes",
	"txsink_lag_bytes",
	"txsink_committed_offset_records",
	"txsink_read_offset_records",
	"txsink_lag_records",
	"txsink_slot_lag_bytes",
	"txsink_last_commit_timestamp_seconds",
	"txsink_state",
	"txsink_starrocks_loads_per_commit",
	"txsink_starrocks_load_bytes",
	"txsink_starrocks_label_states_total",
	"txsink_starrocks_server_info",
}

// Names returns the name of every metric family the package exports.
func Names() []string { return append([]string(nil), names...) }

// unmatched is the table label of changes no tables entry matches: they
// are counted (and skipped, or refused) but must not add a label value per
// unknown source table.
const unmatched = "_unmatched"

// states lists every pipeline state, so txsink_state is one-hot over a
// fixed set (a state absent from the scrape would read as "no data").
var states = []observe.State{observe.StateStarting, observe.StateRunning, observe.StateDegraded, observe.StateStopping, observe.StateStopped, observe.StateFailed}

// commitBuckets spans a small SQLite commit (a millisecond) to a large
// transaction-mode unit retried against a slow server (a minute).
var commitBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Source gives the pipeline's status at scrape time; *engine.Engine is one.
type Source interface {
	Status() observe.Status
}

// Metrics is one pipeline's metrics. It implements observe.HookChange,
// HookCommit, HookRetry and HookStop; install it on one engine only.
type Metrics struct {
	cfg     *config.Config
	created time.Time

	events   *prometheus.CounterVec
	rows     *prometheus.CounterVec
	commits  *prometheus.CounterVec
	duration prometheus.Histogram
	txns     prometheus.Counter
	retries  prometheus.Counter
	errors   *prometheus.CounterVec

	// Per-change lookups are the hot path: the counter of each (table,
	// partition, kind) is resolved once and kept, so counting a change is
	// a map read and an atomic add, not a label hash and a config match.
	// Changes come in runs of one table, partition and kind (a record's
	// rows, a bulk of inserts), so the last counter used is checked first:
	// that skips hashing the key, which cost as much as the rest of
	// OnChange. Only OnChange touches these fields, and the engine calls
	// it from its loop's goroutine alone, so they take no lock.
	byEvent map[eventKey]prometheus.Counter
	entry   map[changelog.Table]string
	last    eventKey
	lastCtr prometheus.Counter
}

type eventKey struct {
	table     changelog.Table
	partition string
	kind      changelog.Kind
}

// New returns the metrics of the pipeline cfg describes. Install them on
// its engine with engine.WithHooks, then Register them.
func New(cfg *config.Config) *Metrics {
	pl := prometheus.Labels{"pipeline": cfg.Name}
	m := &Metrics{
		cfg:     cfg,
		created: time.Now(),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "txsink_events_total", ConstLabels: pl,
			Help: "Changes read, by partition, tables entry and kind (+I, -U, +U, -D), before reduction.",
		}, []string{"partition", "table", "kind"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "txsink_rows_written_total", ConstLabels: pl,
			Help: "Rows committed after per-key reduction, by operation (upsert, delete, insert into an append-only or history table).",
		}, []string{"op"}),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "txsink_commits_total", ConstLabels: pl,
			Help: "Target transactions, by result (ok, or error: the pipeline stopped).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "txsink_commit_duration_seconds", ConstLabels: pl, Buckets: commitBuckets,
			Help: "How long a commit took, retries included.",
		}),
		txns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "txsink_source_txns_committed_total", ConstLabels: pl,
			Help: "Whole source transactions committed (transaction mode).",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "txsink_retries_total", ConstLabels: pl,
			Help: "Transient target errors retried.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "txsink_errors_total", ConstLabels: pl,
			Help: "Errors met, by class: transient (retried, or retries ran out) or permanent (the pipeline stopped).",
		}, []string{"class"}),
		byEvent: map[eventKey]prometheus.Counter{},
		entry:   map[changelog.Table]string{},
	}
	// Known label values are created up front, so a rate() over them is
	// defined (0) before the first event instead of absent.
	for _, op := range []string{"upsert", "delete", "insert"} {
		m.rows.WithLabelValues(op)
	}
	for _, r := range []string{"ok", "error"} {
		m.commits.WithLabelValues(r)
	}
	for _, c := range []string{"transient", "permanent"} {
		m.errors.WithLabelValues(c)
	}
	return m
}

// Register registers the metrics on reg, with the gauges that read src's
// status at every scrape (one Status call per scrape, so they agree).
func (m *Metrics) Register(reg prometheus.Registerer, src Source) error {
	for _, c := range []prometheus.Collector{m.events, m.rows, m.commits, m.duration, m.txns, m.retries, m.errors, newStatusCollector(m.cfg.Name, src, m.created)} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("metrics: register: %w", err)
		}
	}
	return nil
}

// OnChange implements observe.HookChange. Like the engine's other calls of
// it, calls must not overlap.
func (m *Metrics) OnChange(c *changelog.Change) {
	k := eventKey{c.Table, c.Pos.Partition, c.Kind}
	ctr := m.lastCtr
	if ctr == nil || k != m.last {
		var ok bool
		if ctr, ok = m.byEvent[k]; !ok {
			ctr = m.events.WithLabelValues(c.Pos.Partition, m.tableLabel(c.Table), c.Kind.String())
			m.byEvent[k] = ctr
		}
		m.last, m.lastCtr = k, ctr
	}
	ctr.Inc()
}

// tableLabel returns the tables entry that routes t, as written in the
// config (its upsert entry, else its first history entry): a wildcard
// entry is one label value however many tables it matches. Only OnChange
// calls it.
func (m *Metrics) tableLabel(t changelog.Table) string {
	if l, ok := m.entry[t]; ok {
		return l
	}
	l := unmatched
	if tc, ok := m.cfg.Match(t); ok {
		l = tc.Source
	} else if h := m.cfg.History(t); len(h) > 0 {
		l = h[0].Source // only history entries route it
	}
	m.entry[t] = l
	return l
}

// OnCommit implements observe.HookCommit.
func (m *Metrics) OnCommit(info observe.CommitInfo) {
	m.duration.Observe(info.Took.Seconds())
	if info.Err != nil {
		// The rows were rolled back: count the attempt only. The error
		// itself is counted once, by OnStop, as the pipeline stops on it.
		m.commits.WithLabelValues("error").Inc()
		return
	}
	m.commits.WithLabelValues("ok").Inc()
	m.rows.WithLabelValues("upsert").Add(float64(info.Upserted))
	m.rows.WithLabelValues("delete").Add(float64(info.Deleted))
	m.rows.WithLabelValues("insert").Add(float64(info.Inserted))
	m.txns.Add(float64(info.Txns))
}

// OnRetry implements observe.HookRetry.
func (m *Metrics) OnRetry(int, time.Duration, error) {
	m.retries.Inc()
	m.errors.WithLabelValues("transient").Inc()
}

// OnStop implements observe.HookStop.
func (m *Metrics) OnStop(err error) {
	if err == nil {
		return
	}
	m.errors.WithLabelValues(errorClass(err)).Inc()
}

// errorClass says whether retrying might have helped (a transient target
// error whose retries ran out) or not (bad input, a refused statement).
func errorClass(err error) string {
	if errkind.IsTransient(err) {
		return "transient"
	}
	return "permanent"
}

// statusCollector turns one observe.Status snapshot per scrape into gauges.
// It is a Collector rather than GaugeFuncs because the per-partition
// gauges need a label per partition, and because one snapshot keeps the
// committed, read and lag values of a scrape consistent with each other.
type statusCollector struct {
	src     Source
	created time.Time

	ratio, bytesRead, skipped, deadLetters, buffered, openTxns *prometheus.Desc
	notes, guardRefused, deletesIgnored, copies                *prometheus.Desc
	committed, read, lag                                       *prometheus.Desc
	committedRecs, readRecs, lagRecs                           *prometheus.Desc
	slotLag, lastCommit, state                                 *prometheus.Desc
	// A StarRocks target's (observe.StarRocksStatus).
	srLoadsPerCommit, srLoadBytes, srLabelStates, srServer *prometheus.Desc
}

func newStatusCollector(pipeline string, src Source, created time.Time) *statusCollector {
	pl := prometheus.Labels{"pipeline": pipeline}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, pl)
	}
	return &statusCollector{
		src:            src,
		created:        created,
		ratio:          d("txsink_reduction_ratio", "Changes read per row written, over the pipeline's life (0 before the first row)."),
		bytesRead:      d("txsink_bytes_read_total", "Bytes of source records read."),
		skipped:        d("txsink_skipped_total", "Changes of tables no entry matches, skipped."),
		deadLetters:    d("txsink_dead_letters_total", "Records or source transactions quarantined (bad-input: dead-letter)."),
		notes:          d("txsink_records_skipped_total", "Records that carry no row (kind schema_change: DDL; message: a logical decoding message), skipped and never applied.", "kind"),
		guardRefused:   d("txsink_guard_refused_total", "Upserts and deletes a version guard refused (tables[].version-column): the stored row was newer."),
		deletesIgnored: d("txsink_deletes_ignored_total", "Deletes of tables with delete: ignore, consumed and not applied."),
		copies:         d("txsink_copies_dropped_total", "Changes dropped as copies published again by the source's producer (Debezium Server after its restart)."),
		buffered:       d("txsink_buffered_bytes", "Bytes held in memory, not yet committed."),
		openTxns:       d("txsink_open_source_txns", "Source transactions begun and not yet finished (transaction mode)."),
		committed:      d("txsink_committed_offset_bytes", "Position stored in the target, where a restart resumes.", "partition"),
		read:           d("txsink_read_offset_bytes", "How far the source has been read.", "partition"),
		lag:            d("txsink_lag_bytes", "Source size minus the committed position (partitions of known size).", "partition"),
		committedRecs:  d("txsink_committed_offset_records", "Kafka offset or NATS stream sequence stored in the target, where a restart resumes.", "partition"),
		readRecs:       d("txsink_read_offset_records", "Kafka offset or NATS stream sequence after the last record read.", "partition"),
		lagRecs:        d("txsink_lag_records", "Kafka high watermark or NATS stream end minus the committed offset: records not yet applied.", "partition"),
		slotLag:        d("txsink_slot_lag_bytes", "WAL the PostgreSQL server keeps for the replication slot beyond what the target confirmed.", "partition"),
		lastCommit:     d("txsink_last_commit_timestamp_seconds", "Unix time of the last commit (before the first: of the pipeline's start)."),
		state:          d("txsink_state", "1 for the pipeline's current state, 0 for the others.", "state"),

		srLoadsPerCommit: d("txsink_starrocks_loads_per_commit", "StarRocks target: loads (tables, progress, claims) of each committed transaction."),
		srLoadBytes:      d("txsink_starrocks_load_bytes", "StarRocks target: body bytes of each load the server accepted."),
		srLabelStates:    d("txsink_starrocks_label_states_total", "StarRocks target: label states get_load_state answered (committed, visible, aborted, open, unknown).", "state"),
		srServer:         d("txsink_starrocks_server_info", "StarRocks target: 1, labelled with the server's version as current_version() answers it.", "version"),
	}
}

// Describe implements prometheus.Collector.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ratio, c.bytesRead, c.skipped, c.deadLetters, c.notes, c.guardRefused, c.deletesIgnored, c.copies, c.buffered, c.openTxns, c.committed, c.read, c.lag, c.committedRecs, c.readRecs, c.lagRecs, c.slotLag, c.lastCommit, c.state,
		c.srLoadsPerCommit, c.srLoadBytes, c.srLabelStates, c.srServer} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.ratio, ReductionRatio(st.Stats))
	counter(c.bytesRead, float64(st.Stats.Bytes))
	counter(c.skipped, float64(st.Stats.Skipped))
	counter(c.deadLetters, float64(st.Stats.DeadLetters))
	ch <- prometheus.MustNewConstMetric(c.notes, prometheus.CounterValue, float64(st.Stats.SchemaChanges), "schema_change")
	ch <- prometheus.MustNewConstMetric(c.notes, prometheus.CounterValue, float64(st.Stats.Messages), "message")
	counter(c.guardRefused, float64(st.Stats.GuardRefused))
	counter(c.deletesIgnored, float64(st.Stats.DeletesIgnored))
	counter(c.copies, float64(st.Stats.Copies))
	gauge(c.buffered, float64(st.BufferedBytes))
	gauge(c.openTxns, float64(st.OpenTxns))
	for _, p := range st.Partitions {
		committed, read, lag := c.committed, c.read, c.lag
		if p.Unit == "records" {
			committed, read, lag = c.committedRecs, c.readRecs, c.lagRecs
		}
		gauge(committed, float64(p.Committed), p.Name)
		gauge(read, float64(p.Read), p.Name)
		if p.End >= 0 {
			// A file that shrank below the committed position (rotated)
			// has no meaningful lag; report 0 rather than a negative one.
			gauge(lag, float64(max(p.End-p.Committed, 0)), p.Name)
		}
		if p.SlotLagBytes != nil {
			gauge(c.slotLag, float64(*p.SlotLagBytes), p.Name)
		}
	}
	last := st.LastCommit
	if last.IsZero() {
		// Not 0: time() - 0 would read as 56 years without a commit and
		// fire every "stuck" alert at start.
		last = c.created
	}
	gauge(c.lastCommit, float64(last.UnixNano())/1e9)
	for _, s := range states {
		v := 0.0
		if s == st.State {
			v = 1
		}
		gauge(c.state, v, string(s))
	}
	if sr := st.StarRocks; sr != nil {
		histogram(ch, c.srLoadsPerCommit, sr.LoadsPerCommit)
		histogram(ch, c.srLoadBytes, sr.LoadBytes)
		for _, k := range observe.LabelStates {
			ch <- prometheus.MustNewConstMetric(c.srLabelStates, prometheus.CounterValue, float64(sr.LabelStates[k]), k)
		}
		gauge(c.srServer, 1, sr.ServerVersion)
	}
}

func histogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h observe.Histogram) {
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		buckets[b] = h.Counts[i]
	}
	ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
}

// ReductionRatio returns changes read per row written (0 before the first
// row is written): how much per-key reduction saved the target.
func ReductionRatio(s observe.StatsSnapshot) float64 {
	var events int64
	for _, n := range s.Events {
		events += n
	}
	written := s.Upserted + s.Deleted + s.Inserted
	if written == 0 {
		return 0
	}
	return float64(events) / float64(written)
}
