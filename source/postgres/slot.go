package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/txsink/txsink/source"
)

// The publication and the slot a stream reads, made sure of before it
// starts, and the refusals of a slot it cannot read.

// ensurePublication returns the publication to stream: the one the config
// names, which must exist, or txsink's own, named as the slot, created or
// altered to publish exactly the config's tables.
func ensurePublication(ctx context.Context, c *pgconn.PgConn, cfg *Config) (string, error) {
	rows, err := query(ctx, c, "SELECT current_setting('wal_level')")
	if err != nil {
		return "", fmt.Errorf("postgres source: read wal_level: %w", err)
	}
	if lvl := string(rows[0][0]); lvl != "logical" {
		return "", fmt.Errorf("postgres source: the server's wal_level is %s; logical replication needs wal_level = logical "+
			"(set it in postgresql.conf, or ALTER SYSTEM SET wal_level = logical, and restart the server)", lvl)
	}
	name := cfg.Publication
	if name == "" {
		name = cfg.Slot
	}
	rows, err = query(ctx, c, "SELECT 1 FROM pg_publication WHERE pubname = $1", name)
	if err != nil {
		return "", fmt.Errorf("postgres source: look up publication %s: %w", name, err)
	}
	exists := len(rows) > 0
	if cfg.Publication != "" {
		if !exists {
			return "", fmt.Errorf("postgres source: there is no publication %s (source.publication); create it (CREATE PUBLICATION %s FOR TABLE ...) or list source.tables instead", name, name)
		}
		return name, nil
	}
	list := make([]string, len(cfg.Tables))
	for i, t := range cfg.Tables {
		schema, table, _ := splitTable(t)
		list[i] = quoteIdent(schema) + "." + quoteIdent(table)
	}
	stmt := "CREATE PUBLICATION " + quoteIdent(name) + " FOR TABLE " + strings.Join(list, ", ")
	if exists {
		stmt = "ALTER PUBLICATION " + quoteIdent(name) + " SET TABLE " + strings.Join(list, ", ")
	}
	if err := c.Exec(ctx, stmt).Close(); err != nil {
		return "", fmt.Errorf("postgres source: %s: %w (to create the publication the role must own the tables and have CREATE on the database; or create it yourself and set source.publication)", stmt, err)
	}
	return name, nil
}

// slotInfo is what the server says of an existing slot.
type slotInfo struct {
	plugin, kind, walStatus string
	confirmed               pglogrepl.LSN
}

// usable refuses a slot this source cannot stream from, saying what to
// do.
func (s *slotInfo) usable(name, part string, env source.Env) error {
	switch {
	case s.kind != "logical" || s.plugin != "pgoutput":
		return fmt.Errorf("postgres source: the replication slot %s is a %s slot of plugin %q, not a logical slot of pgoutput; name another slot (source.slot)", name, s.kind, s.plugin)
	case s.walStatus == "lost":
		return fmt.Errorf("postgres source: the replication slot %s was invalidated: the server removed WAL it needed (max_slot_wal_keep_size), "+
			"so the changes since the target's position are lost. Take the data over again: drop the slot (txsink drop-slot), empty the target tables, "+
			"forget the progress (%s), and run again; raise max_slot_wal_keep_size (or keep txsink running) so that it does not happen again", name, resetHint(env, part))
	}
	return nil
}

// lookupSlot returns the slot named name in the current database, or nil.
func lookupSlot(ctx context.Context, c *pgconn.PgConn, name string) (*slotInfo, error) {
	rows, err := query(ctx, c, "SELECT coalesce(plugin, ''), slot_type, coalesce(wal_status, ''), coalesce(confirmed_flush_lsn::text, '0/0'), "+
		"coalesce(database = current_database(), slot_type = 'physical') FROM pg_replication_slots WHERE slot_name = $1", name)
	if err != nil {
		return nil, fmt.Errorf("postgres source: look up replication slot %s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	r := rows[0]
	if string(r[4]) != "t" {
		return nil, fmt.Errorf("postgres source: the replication slot %s belongs to another database; name another slot (source.slot)", name)
	}
	lsn, err := pglogrepl.ParseLSN(string(r[3]))
	if err != nil {
		return nil, fmt.Errorf("postgres source: slot %s's confirmed_flush_lsn %q: %w", name, r[3], err)
	}
	return &slotInfo{plugin: string(r[0]), kind: string(r[1]), walStatus: string(r[2]), confirmed: lsn}, nil
}
