package postgres_test

import (
	"context"
	"github.com/txsink/txsink/internal/pipelinetest"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/testdb"
	txsource "github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/postgres"
)

// openSource opens the postgres source of settings, as the engine does.
func openSource(t *testing.T, pipeline string, settings map[string]any) *postgres.Source {
	t.Helper()
	s, err := postgres.Driver{}.Open(settings, txsource.Env{Pipeline: pipeline, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*postgres.Source)
}

// asRole returns u with its user replaced.
func asRole(t *testing.T, u, role string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.User(role)
	return p.String()
}

// TestCheck checks what txsink check says of a PostgreSQL source: nothing
// for a good one, and for each thing a run would stop on, what it is and
// what to do. The server is a private one with a slot limit it may
// invalidate slots at.
func TestCheck(t *testing.T) {
	src := testdb.PrivatePostgres(t, "max_slot_wal_keep_size=1MB")
	src.Exec(t, "CREATE TABLE kv (id int PRIMARY KEY, v text)", "CREATE TABLE log (v text)",
		"CREATE TABLE noident (id int PRIMARY KEY)", "ALTER TABLE noident REPLICA IDENTITY NOTHING",
		"CREATE ROLE plain LOGIN", "CREATE PUBLICATION empty",
		"SELECT pg_create_physical_replication_slot('physical', true)",
		"SELECT pg_create_logical_replication_slot('lost', 'pgoutput')")
	// WAL past max_slot_wal_keep_size, then checkpoints: the slot "lost"
	// is invalidated.
	for range 4 {
		src.Exec(t, "INSERT INTO log SELECT md5(g::text) FROM generate_series(1, 20000) g", "SELECT pg_switch_wal()", "CHECKPOINT")
	}
	var status string
	if err := src.SQL.QueryRow("SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'lost'").Scan(&status); err != nil || status != "lost" {
		t.Fatalf("the slot was not invalidated: wal_status %q (%v)", status, err)
	}
	part := postgres.Partition("txsink_check")
	stored := map[string]txsource.Stored{part: {Position: changelog.Position{Partition: part, Offset: 12345}}}
	cases := []struct {
		name     string
		settings map[string]any
		stored   map[string]txsource.Stored
		want     []string // "" for no refusal
	}{
		{"good", map[string]any{"url": src.URL, "tables": []string{"public.kv", "public.log"}}, nil, nil},
		{"no REPLICATION", map[string]any{"url": asRole(t, src.URL, "plain"), "tables": []string{"public.kv"}}, nil,
			[]string{"the role plain has no REPLICATION attribute", `ALTER ROLE "plain" REPLICATION`}},
		{"missing table", map[string]any{"url": src.URL, "tables": []string{"public.kv", "public.nope"}}, nil,
			[]string{"source.tables names public.nope, which the source database has no table of"}},
		{"missing publication", map[string]any{"url": src.URL, "publication": "nope"}, nil,
			[]string{"there is no publication nope (source.publication)"}},
		{"empty publication", map[string]any{"url": src.URL, "publication": "empty"}, nil,
			[]string{"publication empty (source.publication) publishes no table"}},
		{"no replica identity", map[string]any{"url": src.URL, "tables": []string{"public.noident"}}, nil,
			[]string{`table "public"."noident" has REPLICA IDENTITY NOTHING`, "REPLICA IDENTITY DEFAULT"}},
		{"slot gone", map[string]any{"url": src.URL, "tables": []string{"public.kv"}}, stored,
			[]string{"the replication slot txsink_check is gone, but the target holds the position 12345", "txsink reset --partition postgres:txsink_check"}},
		{"physical slot", map[string]any{"url": src.URL, "tables": []string{"public.kv"}, "slot": "physical"}, nil,
			[]string{"the replication slot physical is a physical slot", "name another slot (source.slot)"}},
		{"slot invalidated", map[string]any{"url": src.URL, "tables": []string{"public.kv"}, "slot": "lost"}, nil,
			[]string{"the replication slot lost was invalidated", "txsink drop-slot", "max_slot_wal_keep_size"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := openSource(t, "check", c.settings).Check(context.Background(), c.stored)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want no refusal", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = nil, want a refusal saying %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %v\nwant it to say %q", err, w)
				}
			}
		})
	}
}

// TestDropSlot drops a slot only when asked, refuses one a pipeline
// streams from, and says when there is none.
func TestDropSlot(t *testing.T) {
	src, _, cfg, slot := sqlitePipeline(t, "dropslot")
	s := openSource(t, cfg.Name, cfg.Source.Settings())
	if dropped, err := s.DropSlot(context.Background()); err != nil || dropped {
		t.Fatalf("DropSlot of no slot = %v, %v; want false, nil", dropped, err)
	}
	r := pipelinetest.Start(t, cfg)
	waitSlot(t, src, slot)
	if _, err := s.DropSlot(context.Background()); err == nil || !strings.Contains(err.Error(), "is in use: stop the pipeline") {
		t.Fatalf("DropSlot of a slot in use = %v, want the refusal", err)
	}
	r.Stop(t)
	if dropped, err := s.DropSlot(context.Background()); err != nil || !dropped {
		t.Fatalf("DropSlot = %v, %v; want true, nil", dropped, err)
	}
	var n int
	if err := src.SQL.QueryRow("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d slots %s after the drop (%v)", n, slot, err)
	}
}
