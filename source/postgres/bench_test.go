package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source/postgres"
)

// BenchmarkSnapshotAndStream measures, in one run against the same data,
// the initial snapshot's rows/s (rows loaded by COPY before the slot
// exists) and streaming's events/s (as many rows inserted by COPY in
// transactions of 1,000 while the pipeline runs), into a PostgreSQL
// target, and the slot's largest lag (WAL bytes not yet confirmed) seen
// while streaming; then it loads the same rows by COPY into an empty
// table of the target, the database's own bulk path, and reports each
// rate as a ratio of that one (snapshot÷copy, stream÷copy). Run it once: go test -run - -bench SnapshotAndStream
// -benchtime 1x ./source/postgres/
func BenchmarkSnapshotAndStream(b *testing.B) {
	const rows, perTxn = 200_000, 1_000
	for b.Loop() {
		src := testdb.PrivatePostgres(b)
		src.Exec(b, "CREATE TABLE bench (id int PRIMARY KEY, v text NOT NULL, n numeric(12,2) NOT NULL)")
		load := func(db *testdb.DB, table string, from, n int) {
			b.Helper()
			var text strings.Builder
			for id := from; id < from+n; id++ {
				fmt.Fprintf(&text, "%d\tvalue %d\t%d.%02d\n", id, id, id/100, id%100)
			}
			conn, err := db.SQL.Conn(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			err = conn.Raw(func(dc any) error {
				_, err := dc.(*stdlib.Conn).Conn().PgConn().CopyFrom(context.Background(), strings.NewReader(text.String()), "COPY "+table+" FROM STDIN")
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		load(src, "bench", 1, rows)
		dst := testdb.Open(b, "postgres")
		dst.Exec(b, "CREATE TABLE bench (id int PRIMARY KEY, v text NOT NULL, n numeric(12,2) NOT NULL)")
		cfg := pipeline("bench", src, dst)
		cfg.Source.Set("tables", []string{"public.bench"})
		cfg.Tables = []config.Table{{Source: "public.bench"}}
		cfg.Source.Set("snapshot", postgres.SnapshotInitial)
		slot := postgres.DefaultSlot(cfg.Name)
		count := func() int {
			var n int
			if err := dst.SQL.QueryRow("SELECT count(*) FROM bench").Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		}
		waitRows := func(n int) {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			deadline := time.Now().Add(5 * time.Minute)
			for count() < n {
				if time.Now().After(deadline) {
					b.Fatalf("the target has %d rows of %d after 5 minutes", count(), n)
				}
				<-tick.C
			}
		}
		t0 := time.Now()
		r := pipelinetest.Start(b, cfg)
		waitRows(rows)
		snap := time.Since(t0)

		lag := int64(0)
		t1 := time.Now()
		for i := range rows / perTxn {
			load(src, "bench", rows+1+i*perTxn, perTxn)
			var l int64
			if err := src.SQL.QueryRow("SELECT pg_current_wal_lsn() - confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&l); err == nil {
				lag = max(lag, l)
			}
		}
		waitRows(2 * rows)
		stream := time.Since(t1)
		r.Stop(b)

		// The same rows by COPY, in one statement, into an empty table
		// of the target.
		dst.Exec(b, "CREATE TABLE bench_copy (id int PRIMARY KEY, v text NOT NULL, n numeric(12,2) NOT NULL)")
		t2 := time.Now()
		load(dst, "bench_copy", 1, rows)
		copyRate := float64(rows) / time.Since(t2).Seconds()
		snapRate, streamRate := float64(rows)/snap.Seconds(), float64(rows)/stream.Seconds()
		b.ReportMetric(snapRate, "snapshot-rows/s")
		b.ReportMetric(streamRate, "stream-events/s")
		b.ReportMetric(copyRate, "copy-rows/s")
		b.ReportMetric(snapRate/copyRate, "snapshot÷copy")
		b.ReportMetric(streamRate/copyRate, "stream÷copy")
		b.ReportMetric(float64(lag), "max-slot-lag-bytes")
	}
}
