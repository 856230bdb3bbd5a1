package engine

// Records about the source that carry no row: a schema change (Debezium's
// schema change topic, Canal's isDdl, Maxwell's table-alter and the
// like) or a logical decoding message (Debezium's op "m"). The formats
// decode them to one change of a kind that changelog.Kind.Skipped says is
// no row event; the session counts them and hands the loop the record
// with nothing to apply, so its position moves like a tombstone's and no
// loop, buffer or transaction machine ever sees them.

import (
	"github.com/txsink/txsink/changelog"
)

// noteKey is one kind of skipped record of one table, logged once.
type noteKey struct {
	kind  changelog.Kind
	table changelog.Table
}

// skipNotes counts and logs d's changes when d is a skipped record, and
// drops them, so the loop takes d as a record with nothing to apply. A
// record read again after a restart from the last commit is counted
// again, as its row events are.
func (e *Engine) skipNotes(d *decoded) {
	if d.err != nil || len(d.changes) == 0 || !d.changes[0].Kind.Skipped() {
		return
	}
	if !e.applied(d.pos) {
		for i := range d.changes {
			e.noteSkipped(&d.changes[i])
		}
	}
	d.changes = nil
}

// noteSkipped counts c, a skipped record, and logs the first of its kind
// and table at info: what it was, that txsink applies rows only, and
// where it was read.
func (e *Engine) noteSkipped(c *changelog.Change) {
	k := noteKey{c.Kind, c.Table}
	e.mu.Lock()
	switch c.Kind {
	case changelog.SchemaChange:
		e.stats.SchemaChanges++
	case changelog.Message:
		e.stats.Messages++
	}
	first := !e.noted[k]
	if first {
		if e.noted == nil {
			e.noted = map[noteKey]bool{}
		}
		e.noted[k] = true
	}
	e.mu.Unlock()
	if !first {
		return
	}
	// A record of a whole database names no table.
	key, where := "table", c.Table.Printable()
	if c.Table.Name == "" {
		key, where = "database", changelog.Table{Name: c.Table.Namespace}.Printable()
	}
	switch c.Kind {
	case changelog.SchemaChange:
		e.log.Info("skipping schema change records: txsink applies rows, never DDL; if the target table needs the change, alter it (a column added or widened is picked up without a restart); later ones of this "+key+" are counted, not logged",
			key, where, "at", c.Pos.String())
	case changelog.Message:
		e.log.Info("skipping logical decoding messages (Debezium op \"m\"): they carry no row; later ones of this "+key+" are counted, not logged",
			key, where, "at", c.Pos.String())
	}
}
