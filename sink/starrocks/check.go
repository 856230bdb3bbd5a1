package starrocks

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Target's catalog is StarRocks' information_schema over the MySQL
// protocol, which txsink check reads on a connection of its own; check
// also reports the server's version and each table's kind and key.
var (
	_ sink.Catalog = (*Target)(nil)
	_ sink.Noter   = (*Target)(nil)
)

// DialectName is "starrocks": txsink check has no trigger, foreign-key or
// timeout queries for it (StarRocks has no triggers and enforces no
// foreign keys), and no read-only session statement — check writes
// nothing through the handle either way.
func (t *Target) DialectName() string { return "starrocks" }

// Quote quotes an identifier with backticks, as StarRocks' SQL does.
func (t *Target) Quote(ident string) string { return quoteIdent(ident) }

func quoteIdent(ident string) string { return "`" + strings.ReplaceAll(ident, "`", "``") + "`" }

// ServerNotes says which StarRocks the target is, and how it is loaded.
func (t *Target) ServerNotes() []sink.Note {
	return []sink.Note{{
		Message: fmt.Sprintf("StarRocks %s (current_version() %q): each commit is one multi-table Stream Load transaction, which StarRocks has from %s on, loaded with strict_mode on and max_filter_ratio 0, so a row the server would filter stops the run. txsink's StarRocks target is tested against a fake of the v4.0 API only, never against a real cluster.",
			strings.Fields(t.version + " ?")[0], t.version, MinVersion),
		Fix: "nothing; run the StarRocks tests against this cluster (TXSINK_TEST_STARROCKS_URL, see the README) before relying on it",
	}}
}

// TableNotes says what kind of table name is and how a run writes it:
// a Primary Key table by its key (__op), a Duplicate Key table's inserts
// as they are, a Unique Key table's inserts replacing each other by key.
// A Duplicate or Unique Key table a stream with updates would go into
// (which a run refuses, and check reports) gets what StarRocks allows
// instead: its kind cannot be altered.
func (t *Target) TableNotes(name schema.Name, appendOnly bool) []sink.Note {
	t.mu.Lock()
	tbl := t.tables[name.Name]
	t.mu.Unlock()
	if tbl == nil {
		return nil
	}
	bytes := ""
	if len(tbl.ByteLength) > 0 {
		bytes = " Its text lengths count bytes, as StarRocks counts them (a longer value is refused at the change, named by table, key and position)."
	}
	switch {
	case tbl.Model == PrimaryKeys:
		return []sink.Note{{Message: fmt.Sprintf("a Primary Key table keyed by (%s): updates and deletes are loaded by key (__op 0 and 1).%s", strings.Join(tbl.PrimaryKey, ", "), bytes), Fix: "nothing"}}
	case tbl.Model == DuplicateKeys && appendOnly:
		return []sink.Note{{Message: "a Duplicate Key table, written append-only: each insert is loaded as a new row." + bytes, Fix: "nothing"}}
	case tbl.Model == UniqueKeys && appendOnly:
		return []sink.Note{{Warning: true,
			Message: fmt.Sprintf("a Unique Key table keyed by (%s), written append-only: an insert of a key already there replaces that row, so the table holds one row per key, not every insert.", strings.Join(tbl.PrimaryKey, ", ")),
			Fix:     "use a Duplicate Key table to keep every insert, or a Primary Key table and drop append-only to apply the stream by key"}}
	case !appendOnly:
		kind := modelNames[tbl.Model]
		return []sink.Note{{
			Message: fmt.Sprintf("a %s table (%s): StarRocks applies updates by key and deletes (__op = 1) to Primary Key tables only, and a table's kind cannot be altered.", kind, tbl.Model),
			Fix:     "recreate it as a Primary Key table (CREATE TABLE ... PRIMARY KEY (...)) and load its rows again, or declare the entry append-only if the table receives inserts only"}}
	}
	return nil
}
