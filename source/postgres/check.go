package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/txsink/txsink/source"
)

// Check implements source.Checker (txsink check): it connects to the
// source, changing nothing, and returns what would stop a run, each with
// what to do: wal_level not logical, a role without REPLICATION, a
// missing publication or table, a table of REPLICA IDENTITY NOTHING, a
// slot that is gone while the target holds a position of it, of another
// plugin or database, or invalidated. A table without a primary key is a
// warning in the log (fine when only inserted into).
func (s *Source) Check(ctx context.Context, stored map[string]source.Stored) error {
	c, err := connect(ctx, s.cfg.URL, false)
	if err != nil {
		return s.refuse(err)
	}
	defer c.Close(context.Background())
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, s.refuse(err))
		}
	}
	add(checkServer(ctx, c))
	tables, err := s.checkPublication(ctx, c)
	add(err)
	for _, t := range tables {
		warn, err := checkIdentity(ctx, c, t)
		add(err)
		if warn != "" {
			s.env.Log.Warn(warn)
		}
	}
	st, hasPos := stored[s.part]
	add(s.checkSlot(ctx, c, st, hasPos && st.Position.Offset > 0))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// refuse makes err a refusal of the slot's partition.
func (s *Source) refuse(err error) error {
	return &source.PartitionError{Partition: s.part, Err: err}
}

// checkServer refuses a server without logical WAL, and a role that may
// not replicate.
func checkServer(ctx context.Context, c *pgconn.PgConn) error {
	rows, err := query(ctx, c, "SELECT current_setting('wal_level'), r.rolreplication OR r.rolsuper, current_user FROM pg_roles r WHERE r.rolname = current_user")
	if err != nil {
		return fmt.Errorf("postgres source: read wal_level and the role's attributes: %w", err)
	}
	if len(rows) != 1 {
		return errors.New("postgres source: the current role is not in pg_roles")
	}
	var errs []error
	if lvl := string(rows[0][0]); lvl != "logical" {
		errs = append(errs, fmt.Errorf("postgres source: the server's wal_level is %s, and logical replication needs wal_level = logical: "+
			"set it (ALTER SYSTEM SET wal_level = logical) and restart the server", lvl))
	}
	if string(rows[0][1]) != "t" {
		errs = append(errs, fmt.Errorf("postgres source: the role %s has no REPLICATION attribute, which a replication slot needs: "+
			"ALTER ROLE %s REPLICATION, or connect as a role that has it (source.url)", rows[0][2], quoteIdent(string(rows[0][2]))))
	}
	return errors.Join(errs...)
}

// checkPublication returns the tables the source streams: the named
// publication's, or source.tables, refusing a publication or a table
// that does not exist.
func (s *Source) checkPublication(ctx context.Context, c *pgconn.PgConn) ([]string, error) {
	if p := s.cfg.Publication; p != "" {
		rows, err := query(ctx, c, "SELECT (SELECT count(*) FROM pg_publication WHERE pubname = $1), "+
			"coalesce((SELECT string_agg(quote_ident(schemaname) || '.' || quote_ident(tablename), ',') FROM pg_publication_tables WHERE pubname = $1), '')", p)
		if err != nil {
			return nil, fmt.Errorf("postgres source: look up publication %s: %w", p, err)
		}
		if string(rows[0][0]) == "0" {
			return nil, fmt.Errorf("postgres source: there is no publication %s (source.publication): create it (CREATE PUBLICATION %s FOR TABLE ...) or list source.tables instead", p, quoteIdent(p))
		}
		if len(rows[0][1]) == 0 {
			return nil, fmt.Errorf("postgres source: publication %s (source.publication) publishes no table: add the tables (ALTER PUBLICATION %s ADD TABLE ...)", p, quoteIdent(p))
		}
		return strings.Split(string(rows[0][1]), ","), nil
	}
	var out []string
	var errs []error
	for _, t := range s.cfg.Tables {
		schema, name, _ := splitTable(t)
		q := quoteIdent(schema) + "." + quoteIdent(name)
		rows, err := query(ctx, c, "SELECT to_regclass($1) IS NOT NULL", q)
		if err != nil {
			return nil, fmt.Errorf("postgres source: look up table %s: %w", t, err)
		}
		if string(rows[0][0]) != "t" {
			errs = append(errs, fmt.Errorf("postgres source: source.tables names %s, which the source database has no table of: create it, or remove it from source.tables", t))
			continue
		}
		out = append(out, q)
	}
	return out, errors.Join(errs...)
}

// checkIdentity refuses a table whose deletes would come without a key
// (q: the table's quoted name), and warns of one without a primary key
// whose updates and deletes the server refuses while it is published
// (fine for a table only ever inserted into, as append-only).
func checkIdentity(ctx context.Context, c *pgconn.PgConn, q string) (warn string, err error) {
	rows, err := query(ctx, c, "SELECT relreplident::text, EXISTS (SELECT 1 FROM pg_index WHERE indrelid = $1::regclass AND indisprimary) FROM pg_class WHERE oid = $1::regclass", q)
	if err != nil {
		return "", fmt.Errorf("postgres source: read the replica identity of table %s: %w", q, err)
	}
	if len(rows) != 1 {
		return "", nil
	}
	switch ident, pk := string(rows[0][0]), string(rows[0][1]) == "t"; {
	case ident == "n":
		return "", fmt.Errorf("postgres source: table %s has REPLICA IDENTITY NOTHING: while it is published the server refuses its updates "+
			"and deletes, and they could not be applied by key: ALTER TABLE %s REPLICA IDENTITY DEFAULT (with a primary key) or FULL", q, q)
	case ident == "d" && !pk:
		return fmt.Sprintf("postgres source: table %s has no primary key and REPLICA IDENTITY DEFAULT: while it is published the server "+
			"refuses its updates and deletes. Fine for a table only inserted into (list it as append-only); else give it a primary key "+
			"or ALTER TABLE %s REPLICA IDENTITY FULL", q, q), nil
	}
	return "", nil
}

// checkSlot refuses a slot Open would refuse: gone while the target holds
// a position of it, of another kind, of another database, invalidated.
func (s *Source) checkSlot(ctx context.Context, c *pgconn.PgConn, st source.Stored, hasPos bool) error {
	slot, err := lookupSlot(ctx, c, s.cfg.Slot)
	switch {
	case err != nil:
		return err
	case slot == nil && hasPos:
		return fmt.Errorf("postgres source: the replication slot %s is gone, but the target holds the position %d of it (partition %s): "+
			"the changes since may be lost. Take the data over again: empty the target tables, forget the progress (%s), and run again, which creates the slot",
			s.cfg.Slot, st.Position.Offset, s.part, resetHint(s.env, s.part))
	case slot == nil:
		return nil // created by the first run
	}
	return slot.usable(s.cfg.Slot, s.part, s.env)
}

// DropSlot drops the source's replication slot (txsink drop-slot), which
// txsink never does by itself: the WAL it kept is released, and the
// target's progress of it can no longer be resumed from. It refuses a
// slot in use (a pipeline streaming from it).
func (s *Source) DropSlot(ctx context.Context) (dropped bool, err error) {
	c, err := connect(ctx, s.cfg.URL, false)
	if err != nil {
		return false, err
	}
	defer c.Close(context.Background())
	rows, err := query(ctx, c, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", s.cfg.Slot)
	if err != nil {
		return false, fmt.Errorf("postgres source: look up replication slot %s: %w", s.cfg.Slot, err)
	}
	if len(rows) == 0 {
		return false, nil
	}
	if string(rows[0][0]) == "t" {
		return false, fmt.Errorf("postgres source: the replication slot %s is in use: stop the pipeline streaming from it first", s.cfg.Slot)
	}
	if _, err := query(ctx, c, "SELECT pg_drop_replication_slot($1)", s.cfg.Slot); err != nil {
		return false, fmt.Errorf("postgres source: drop the replication slot %s: %w", s.cfg.Slot, err)
	}
	return true, nil
}

// Slot returns the name of the source's replication slot.
func (s *Source) Slot() string { return s.cfg.Slot }
