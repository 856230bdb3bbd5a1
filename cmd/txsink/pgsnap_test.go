package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/sinktest"
)

// TestSnapshotKill SIGKILLs txsink twice in the middle of a PostgreSQL
// source's chunked initial snapshot while the source takes writes, and
// runs it again: each run resumes the copy from the chunks committed (the
// stored mark holds the copy's progress, the position moves on), and the
// target ends equal to the source, row for row — the append-only table
// would show a row copied or streamed twice, or lost.
func TestSnapshotKill(t *testing.T) {
	src := testdb.PrivatePostgres(t)
	src.Exec(t, "CREATE TABLE kv (id int PRIMARY KEY, v text NOT NULL)", "CREATE TABLE ev (n int NOT NULL, v text NOT NULL)",
		"INSERT INTO kv SELECT g, 'v' || g FROM generate_series(1, 30000) g",
		"INSERT INTO ev SELECT g, 'e' || g FROM generate_series(1, 3000) g")
	dir := t.TempDir()
	dst := testdb.SQLite(t)
	dst.Exec(t, "CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT NOT NULL)", "CREATE TABLE ev (n INTEGER NOT NULL, v TEXT NOT NULL)")
	cfg := filepath.Join(dir, "pipeline.yaml")
	conf := "name: snapkill\nsource:\n  type: postgres\n  format: txsink-json\n  url: " + src.URL + "\n  tables: [public.kv, public.ev]\n" +
		"  snapshot.chunk-rows: 100\n  snapshot.parallel: 2\n" +
		"target:\n  url: " + dst.URL + "\ntables:\n  - source: public.ev\n    append-only: true\n  - source: public.kv\n" +
		"sink:\n  transaction.multi-table.enabled: true\n  buffer-flush.max-rows: 150\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	// Writes go on during the runs and between them: each transaction
	// changes keys all over kv (below and above any chunk's bound), adds
	// and deletes some, and appends to ev.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	next := 100000
	write := func(seed uint64) {
		r := rand.New(rand.NewPCG(seed, 2))
		tx, err := src.SQL.Begin()
		if err != nil {
			t.Error(err)
			return
		}
		defer tx.Rollback()
		for range 4 {
			id := 1 + r.IntN(30000)
			for _, q := range []string{
				fmt.Sprintf("UPDATE kv SET v = v || '+' WHERE id = %d", id),
				fmt.Sprintf("DELETE FROM kv WHERE id = %d", 1+r.IntN(30000)),
				fmt.Sprintf("INSERT INTO kv VALUES (%d, 'new') ON CONFLICT (id) DO UPDATE SET v = 'again'", 1+r.IntN(40000)),
				fmt.Sprintf("INSERT INTO ev VALUES (%d, 'w')", next),
			} {
				if _, err := tx.Exec(q); err != nil {
					t.Error(err)
					return
				}
			}
			next++
		}
		if err := tx.Commit(); err != nil {
			t.Error(err)
		}
	}
	load := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := uint64(next); ; seed++ {
				select {
				case <-stop:
					return
				default:
				}
				write(seed)
			}
		}()
	}
	pause := func() {
		close(stop)
		wg.Wait()
		stop = make(chan struct{})
	}

	mark := func() (sql.NullString, int64) {
		var m sql.NullString
		var pos int64
		if err := dst.SQL.QueryRow("SELECT position_mark, position FROM txsink_progress WHERE pipeline = 'snapkill'").Scan(&m, &pos); err != nil {
			t.Fatal(err)
		}
		return m, pos
	}
	last := int64(0)
	for round := 1; round <= 2; round++ {
		load()
		p := start(t, "run", "--config", cfg, "--log-level", "debug", "--http", "off")
		p.waitCommits(4)
		p.signal(syscall.SIGKILL)
		p.wait()
		pause()
		m, pos := mark()
		var st struct {
			Tables map[string]struct{ Done bool }
		}
		rest, ok := strings.CutPrefix(m.String, "pgsnap1 ")
		if ok {
			ok = json.Unmarshal([]byte(rest), &st) == nil && !(st.Tables["public.kv"].Done && st.Tables["public.ev"].Done)
		}
		if !ok {
			t.Fatalf("round %d: killed after the copy, not during it: the stored mark is %q", round, m.String)
		}
		if pos <= last {
			t.Fatalf("round %d: the stored position %d is not past the last run's %d: the copy started again from zero", round, pos, last)
		}
		last = pos
		for i := range 10 {
			write(uint64(1000*round + i))
		}
	}
	load()
	p := start(t, "run", "--config", cfg, "--http", "off")
	deadline := time.Now().Add(3 * time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for m, _ := mark(); m.Valid; m, _ = mark() {
		if time.Now().After(deadline) {
			t.Fatalf("the stream did not pass the resumed copy's windows within 3 minutes; the mark is %q\n%s", m.String, tail(p.Stderr()))
		}
		<-tick.C
	}
	pause()
	queries := []string{"SELECT id, v FROM kv ORDER BY id", "SELECT n, v, count(*) FROM ev GROUP BY n, v ORDER BY n, v"}
	render := func(db *sql.DB) string {
		var b strings.Builder
		for _, q := range queries {
			b.WriteString(sinktest.Rows(t, db, q))
		}
		return b.String()
	}
	want := render(src.SQL)
	for got := render(dst.SQL); got != want; got = render(dst.SQL) {
		if time.Now().After(deadline) {
			t.Fatalf("the target did not converge to the source within 3 minutes (%d vs %d bytes)", len(got), len(want))
		}
		<-tick.C
	}
	p.signal(syscall.SIGINT)
	if code := p.wait(); code != 0 {
		t.Fatalf("txsink run exited %d after SIGINT\n%s", code, tail(p.Stderr()))
	}
}
