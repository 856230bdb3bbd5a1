package postgres_test

import (
	"testing"
	"time"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/pipelinetest"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source/postgres"
)

// TestCreateAndEvolve starts each target from an empty database with
// schema.create: missing and schema.evolve: add-columns: txsink creates
// every published table from the source's catalog (the snapshot) and its
// Relation messages (the stream), with its primary key, applies the copy
// and the stream exactly, and adds a column the source adds mid-way, its
// values with it.
func TestCreateAndEvolve(t *testing.T) {
	src := source(t)
	workloadTx(t, src.SQL, 0, 60, 3, nil)
	for _, dialect := range testdb.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dst := testdb.Open(t, dialect)
			cfg := pipeline("create_"+dialect, src, dst)
			cfg.Source.Set("snapshot", postgres.SnapshotInitial)
			cfg.Schema = config.Schema{Create: config.SchemaCreateMissing, Evolve: []string{config.SchemaEvolveAddColumns}}
			slot := postgres.DefaultSlot(cfg.Name)
			t.Cleanup(func() { src.SQL.Exec("SELECT pg_drop_replication_slot($1)", slot) })
			r := pipelinetest.Start(t, cfg)
			waitSlot(t, src, slot)
			workloadTx(t, src.SQL, 60, 40, 4, nil)
			r.Until(t, 2*time.Minute, "every table created in the target", func() (bool, string) {
				for _, tbl := range []string{"orders", "items", "events", "kvfull", "kvdef", "docs"} {
					var n int
					if err := dst.SQL.QueryRow("SELECT count(*) FROM " + tbl).Scan(&n); err != nil {
						return false, err.Error()
					}
				}
				return true, ""
			})
			caughtUp(t, r, src, dst)

			col := "note_" + dialect
			src.Exec(t, "ALTER TABLE kvdef ADD COLUMN "+col+" varchar(30)",
				"INSERT INTO kvdef (id, v, "+col+") VALUES (100000, 'added', 'its note') ON CONFLICT (id) DO UPDATE SET "+col+" = 'its note'")
			caughtUp(t, r, src, dst)
			var note string
			r.Until(t, time.Minute, "the added column's value in the target", func() (bool, string) {
				err := dst.SQL.QueryRow("SELECT " + col + " FROM kvdef WHERE id = 100000").Scan(&note)
				if err != nil {
					return false, err.Error()
				}
				return note == "its note", "got " + note
			})
			r.Stop(t)
		})
	}
}
