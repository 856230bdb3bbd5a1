package diagnose

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// What check says of a missing target table under schema.create:
// missing: the statement txsink run would create it with, from the first
// sampled change that reaches it, or why it cannot. Nothing is created.

// missingTable reports the missing table name of entry tc, reached by
// sampled change ch (nil for an entry checked before the sample), under
// schema.create: missing. It reports whether it did (the caller's
// finding about a missing table is then not wanted).
func (c *checker) missingTable(tc *config.Table, label string, name schema.Name, ch *changelog.Change) bool {
	if !c.cfg.CreatesTables() {
		return false
	}
	if ch == nil && len(tc.Columns) == 0 {
		if err := engine.Creatable(c.cfg, tc, name); err != nil && engine.TypedFormat(c.cfg) == nil {
			// Nothing can declare it: run refuses to start (said here,
			// so checkAsRun does not say it again).
			var se *engine.SchemaError
			errors.As(err, &se)
			c.add(Finding{Severity: Error, Check: "schema", Table: label, Message: "txsink run refuses to start: " + se.Reason + ".", Fix: se.Hint})
			return true
		}
		// Which declaration creates it comes with its first change.
		if c.pendingCreate == nil {
			c.pendingCreate = map[schema.Name]string{}
		}
		c.pendingCreate[name] = label
		delete(c.tables, name)
		return true
	}
	delete(c.pendingCreate, name)
	if engine.TypedFormat(c.cfg) != nil {
		return true // the format is refused, and said so once (checkAsRun)
	}
	stmts, err := CreateStatements(c.db, tc, name, ch)
	if err != nil {
		why, fix := Refusal(err)
		if ch != nil {
			why = ch.Pos.String() + ": " + why
		}
		c.add(Finding{Severity: Error, Check: "schema", Table: label, Message: why + ".", Fix: fix})
		return true
	}
	from := "the columns its tables entry declares"
	if len(tc.Columns) == 0 {
		from = fmt.Sprintf("the declaration of %s's record %s", ch.Table, ch.Pos)
	}
	c.add(Finding{Severity: Info, Check: "schema", Table: label,
		Message: fmt.Sprintf("the target table does not exist; txsink run creates it (schema.create: missing) from %s: %s;", from, strings.Join(stmts, "; ")),
		Fix:     "nothing to do, or run that statement yourself first"})
	return true
}

// Refusal splits an error of CreateStatements into why the table cannot
// be created and what to do, each said once.
func Refusal(err error) (why, fix string) {
	var se *engine.SchemaError
	var ke *sink.Error
	switch {
	case errors.As(err, &se):
		return se.Reason, se.Hint
	case errors.As(err, &ke) && ke.Hint != "":
		return "txsink run cannot create the missing target table: " + ke.Err.Error(), ke.Hint
	case errors.Is(err, ErrNotSampled):
		return "no sampled change reaches it, so its declaration is not known", "sample more records (--sample), or create the table yourself"
	}
	return "txsink run cannot create the missing target table: " + err.Error(), "create the table yourself"
}

// addedColumn reports, under schema.evolve: add-columns, a column name
// that change ch carries and ti's table lacks, which a run adds from the
// change's declaration; false when the run would refuse it instead.
func (c *checker) addedColumn(ti *tableInfo, ch *changelog.Change, name string) bool {
	if !c.cfg.AddsColumns() || ch.Types == nil {
		return false
	}
	col, ok := ch.Types.Column(name)
	if !ok {
		return false
	}
	c.note("addcolumn\x00"+ti.label+"\x00"+strings.ToLower(name), ch.Pos, Finding{Severity: Info, Check: "schema", Table: ti.label,
		Message: fmt.Sprintf("a %s change carries column %s, which the target table does not have: txsink run adds it, NULL-able, as %s declares it (%s; schema.evolve: add-columns).", ch.Kind, name, ch.Types.From, col.Type),
		Fix:     "nothing to do, or add the column yourself first"})
	return true
}

// emitPendingCreates reports the missing tables no sampled change
// reached: what creates them is not known yet.
func (c *checker) emitPendingCreates() {
	labels := make([]string, 0, len(c.pendingCreate))
	for _, l := range c.pendingCreate {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		c.add(Finding{Severity: Info, Check: "schema", Table: l,
			Message: "the target table does not exist, and no sampled change reaches it: txsink run creates it (schema.create: missing) from its first change's declaration, which check cannot show.",
			Fix:     "sample more records (--sample), or create the table yourself"})
	}
}

// CreateStatements returns the statements target would create the
// missing table name with, for change ch of entry tc (see
// engine.Statements: ch may be nil when tc declares its columns),
// running nothing.
func CreateStatements(target sink.Sink, tc *config.Table, name schema.Name, ch *changelog.Change) ([]string, error) {
	cr, ok := target.(sink.Creator)
	if !ok {
		return nil, fmt.Errorf("the target (%T) cannot create tables", target)
	}
	stmts, _, err := engine.Statements(cr, tc, name, ch)
	return stmts, err
}
