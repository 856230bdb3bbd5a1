package engine

// A source's TRUNCATE (changelog.Truncate) empties its target table in
// the unit of its transaction (package reduce drops the table's earlier
// rows, the target deletes every row it holds: commit.Batch.Truncate).
// What the engine adds is the refusal of what cannot be honoured: a
// target that cannot empty a table inside a unit (sink.Truncater), at
// start when the source says it emits TRUNCATEs (source.Truncater) and
// at the first one otherwise, and a target table that gathers the rows
// of several source tables, which a TRUNCATE of one of them must not
// empty.

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
)

// TruncateError is a source's TRUNCATE the pipeline cannot apply. It is
// permanent: the configuration or the target must change first.
type TruncateError struct {
	// Pos is where the TRUNCATE was read (zero at start).
	Pos changelog.Position
	// Source is the source table it empties ("" at start), Table its
	// target table.
	Source, Table string
	Reason, Hint  string
}

// Error renders "pos: TRUNCATE of table src (target table t): reason; hint".
func (e *TruncateError) Error() string {
	var b strings.Builder
	if e.Pos.Partition != "" {
		b.WriteString(e.Pos.String() + ": ")
	}
	b.WriteString("TRUNCATE")
	if e.Source != "" {
		fmt.Fprintf(&b, " of table %s (target table %s)", e.Source, e.Table)
	}
	b.WriteString(": " + e.Reason + "; " + e.Hint)
	return b.String()
}

// Kind reports errkind.Permanent.
func (e *TruncateError) Kind() errkind.Kind { return errkind.Permanent }

// Where names the TRUNCATE's position and its target table.
func (e *TruncateError) Where() errkind.Where { return errkind.Where{Pos: e.Pos, Table: e.Table} }

// truncateHint is what to do about a target that cannot apply TRUNCATE.
const truncateHint = "set source.truncate: refuse (and empty the target table yourself when the source truncates it), or use a target that applies TRUNCATE (MariaDB/MySQL, PostgreSQL, SQLite)"

// truncates reports whether the target empties a table inside a unit.
func (e *Engine) truncates() bool {
	tr, ok := e.target.(sink.Truncater)
	return ok && tr.TruncatesInUnit()
}

// checkTruncates refuses, at start, a source that emits TRUNCATEs with a
// target that cannot apply them.
func (e *Engine) checkTruncates() error {
	st, ok := e.src.(source.Truncater)
	if !ok || e.truncates() {
		return nil
	}
	if setting := st.Truncates(); setting != "" {
		return &TruncateError{Reason: fmt.Sprintf("%s: the target (%T) cannot empty a table inside a unit's transaction", setting, e.target), Hint: truncateHint}
	}
	return nil
}

// truncatable refuses TRUNCATE c of a source table routed to t when the
// target cannot apply it, or when t takes the rows of other source
// tables too (a tables entry whose wildcard routes to one target, or
// several entries naming it), whose rows a delete of every row would
// take with it.
func (e *Engine) truncatable(c *changelog.Change, t *reduce.Table) error {
	te := &TruncateError{Pos: c.Pos, Source: c.Table.Printable(), Table: t.Schema.String()}
	if !e.truncates() {
		te.Reason, te.Hint = fmt.Sprintf("the target (%T) cannot empty a table inside a unit's transaction", e.target), truncateHint
		return te
	}
	rt, err := e.router.Route(c.Table)
	if err != nil || rt.Entry == nil {
		return err
	}
	if strings.ContainsAny(rt.Entry.Source, "*?") && rt.Entry.Target != "" {
		te.Reason = fmt.Sprintf("its tables entry (source %s, target %s) routes every table it matches to one target table, which a delete of every row would empty of the other tables' rows too", rt.Entry.Source, rt.Entry.Target)
	}
	for i := range e.cfg.Tables {
		tc := &e.cfg.Tables[i]
		if tc == rt.Entry || !route.Known(tc) {
			continue
		}
		if _, name, err := route.Entry(tc); err == nil && name == rt.Target {
			te.Reason = fmt.Sprintf("tables entries %s and %s both route to it, and a delete of every row would empty it of the other table's rows too", rt.Entry.Source, tc.Source)
		}
	}
	if te.Reason == "" {
		return nil
	}
	te.Hint = "give each source table a target table of its own, or set source.truncate: refuse and empty the target table yourself"
	return te
}
