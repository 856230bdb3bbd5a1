package diagnose

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// tableInfo is one target table as check knows it.
type tableInfo struct {
	entry  *config.Table
	label  string        // "source -> target", for findings
	schema *schema.Table // nil when the table could not be described
	// key is what changes are reduced by: the target's PRIMARY KEY when
	// the entry agrees with it; nil for append-only tables and tables with
	// a key problem (reported already).
	key []string
	ok  bool // the table resolves as a run would resolve it
	// sourceKeys records the primary keys sampled messages declare, so
	// each distinct one is reported once.
	sourceKeys map[string]bool
	// sent holds the columns (lower-cased) that some sampled change
	// writing a row of the table carries, or that the schema of some
	// sampled message declares; writes counts those changes, and
	// declared says a schema was seen (see checkNotNull).
	sent     map[string]bool
	writes   int
	declared bool
}

// noteColumns records the columns ch carries, if it writes a row, and the
// columns cols its message's schema declares.
func (ti *tableInfo) noteColumns(ch *changelog.Change, cols []string) {
	if ti.sent == nil {
		ti.sent = map[string]bool{}
	}
	if ch.Kind.Upserts() {
		ti.writes++
		for _, name := range ch.After.Names {
			ti.sent[strings.ToLower(name)] = true
		}
	}
	if cols != nil {
		ti.declared = true
		for _, name := range cols {
			ti.sent[strings.ToLower(name)] = true
		}
	}
}

// checkNotNull reports, for each table the sample writes, the NOT NULL
// columns without a default that nothing sampled sends: neither a sampled
// change that writes a row nor the schema a message declares. txsink run
// writes the columns a change carries, so its first insert of a new row
// fails there (MySQL error 1364, PostgreSQL 23502, SQLite's NOT NULL
// constraint), and check says so before.
func (c *checker) checkNotNull() {
	infos := make([]*tableInfo, 0, len(c.tables))
	for _, ti := range c.tables {
		infos = append(infos, ti)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].label < infos[j].label })
	for _, ti := range infos {
		if ti.schema == nil || !ti.ok || (ti.writes == 0 && !ti.declared) {
			continue
		}
		for _, col := range ti.schema.Columns {
			if col.Nullable || col.HasDefault || col.Generated || ti.isKey(col.Name) || ti.sent[strings.ToLower(col.Name)] {
				continue
			}
			what := fmt.Sprintf("none of the %d sampled changes that write a row of the table carries it", ti.writes)
			switch {
			case ti.writes == 0:
				what = "the schema the sampled messages declare for the table does not have it"
			case ti.writes == 1:
				what = "the one sampled change that writes a row of the table does not carry it"
			}
			if ti.writes > 0 && ti.declared {
				what += ", nor does the schema the messages declare"
			}
			c.add(Finding{Severity: Error, Check: "column", Table: ti.label,
				Message: fmt.Sprintf("column %s is NOT NULL without a default, and %s: txsink run stops at the first insert of a new row (MySQL error 1364, PostgreSQL 23502, SQLite's NOT NULL constraint).", col.Name, what),
				Fix:     fmt.Sprintf("give column %s a DEFAULT, or make it NULL-able, or have the changelog send it (for Debezium, check the connector's column.exclude.list)", col.Name)})
		}
	}
}

// table returns what check knows of the target table name, which src
// goes to under entry tc (see package route), describing and judging it the
// first time; ch is the sampled change that reaches it (nil before the
// sample), whose declaration a missing table is created from.
func (c *checker) table(ctx context.Context, tc *config.Table, src changelog.Table, name schema.Name, ch *changelog.Change) (*tableInfo, error) {
	if ti, ok := c.tables[name]; ok {
		return ti, nil
	}
	label := src.String()
	if name.Namespace != "" || !strings.EqualFold(src.Name, name.Name) {
		label += " -> " + name.String()
	}
	ti := &tableInfo{entry: tc, label: label, sourceKeys: map[string]bool{}}
	c.tables[name] = ti
	st, err := c.cat.DescribeOn(ctx, c.q, name)
	if err != nil {
		// The dialect's error says what to do about a missing table; the
		// finding says it once, as its fix.
		msg := fmt.Sprintf("the target table %s cannot be read: %v.", name, err)
		var me *sink.MissingTableError
		if errors.As(err, &me) {
			if c.missingTable(tc, label, name, ch) {
				return ti, nil
			}
			msg = "the target " + me.Reason() + "."
		}
		c.add(Finding{Severity: Error, Check: "table", Table: label, Message: msg,
			Fix: "create it (or set schema.create: missing to have txsink create it from the changelog's declaration), or point the tables entry's target at the right one"})
		return ti, nil
	}
	ti.schema = st
	ti.label = src.String() + " -> " + st.String()
	ti.ok = c.checkTableKey(ti)
	if n, ok := c.db.(sink.Noter); ok {
		c.addNotes(ti.label, n.TableNotes(name, tc.AppendOnly || tc.IsHistory()))
	}
	if err := c.checkCatalog(ctx, ti); err != nil {
		return nil, err
	}
	return ti, nil
}

// routeFinding reports a route the router refused (err) for the table
// src: what is wrong with the name and what to do, as a run says it.
func routeFinding(sev Severity, src changelog.Table, err error) Finding {
	f := Finding{Severity: sev, Check: "table", Table: src.Printable(), Message: err.Error() + ".", Fix: "see the message"}
	var re *route.Error
	if errors.As(err, &re) {
		f.Message, f.Fix = re.Reason+"; txsink run refuses its changes.", re.Hint
	}
	return f
}

// checkTableKey compares the configured primary-key with the target's PRIMARY
// KEY, as a run does before it writes anything; it reports whether the
// table resolves.
func (c *checker) checkTableKey(ti *tableInfo) bool {
	tc, st := ti.entry, ti.schema
	pk := "[" + strings.Join(st.PrimaryKey, ", ") + "]"
	switch {
	case tc.IsHistory():
		// Keyed or not, a history table is appended to: the run's own
		// refusal (its columns) is what to report.
		if _, err := engine.TableOf(st, tc); err != nil {
			c.add(Finding{Severity: Error, Check: "table", Table: ti.label, Message: err.Error() + ".",
				Fix: "add the columns it names to the table, or let schema.create: missing create the table"})
			return false
		}
		return true
	case tc.AppendOnly && len(tc.PrimaryKey) > 0:
		c.add(Finding{Severity: Error, Check: "key", Table: ti.label,
			Message: "the tables entry sets both primary-key and append-only: an append-only table is written by plain INSERTs and has no key.",
			Fix:     "remove primary-key, or remove append-only"})
		return false
	case tc.AppendOnly:
		return true
	case len(st.PrimaryKey) == 0:
		c.add(Finding{Severity: Error, Check: "key", Table: ti.label,
			Message: "the target table has no PRIMARY KEY, and a changelog carries updates and deletes, which need a key to find their row.",
			Fix:     "declare the primary key the source's key columns form on the target table, or set append-only: true if the table only ever receives inserts"})
		return false
	case len(tc.PrimaryKey) > 0 && !sameColumns(tc.PrimaryKey, st.PrimaryKey):
		c.add(Finding{Severity: Error, Check: "key", Table: ti.label,
			Message: fmt.Sprintf("the configured primary-key [%s] differs from the target's PRIMARY KEY %s: reducing by one key and writing by the other overwrites or duplicates rows.", strings.Join(tc.PrimaryKey, ", "), pk),
			Fix:     fmt.Sprintf("make them the same, column for column: set primary-key: %s (or drop it: the target's key is the default), or change the target's PRIMARY KEY", pk)})
		return false
	}
	for _, k := range st.PrimaryKey {
		if _, ok := st.Column(k); !ok {
			c.add(Finding{Severity: Error, Check: "key", Table: ti.label,
				Message: fmt.Sprintf("primary-key column %s is not a column of the table.", k),
				Fix:     "check the table's definition"})
			return false
		}
	}
	// The run builds its table the same way; a refusal the cases above
	// do not name must still be reported.
	if _, err := engine.TableOf(st, tc); err != nil {
		c.add(Finding{Severity: Error, Check: "key", Table: ti.label, Message: err.Error() + ".", Fix: "see the message"})
		return false
	}
	ti.key = st.PrimaryKey
	return true
}

func sameColumns(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// checkCatalog reports unique indexes, collations, triggers, foreign keys
// and rows written by someone else.
func (c *checker) checkCatalog(ctx context.Context, ti *tableInfo) error {
	dialect := c.cat.DialectName()
	st := ti.schema
	cat, err := readCatalog(ctx, c.q, dialect, st)
	if err != nil {
		return fmt.Errorf("read the catalog of %s: %w", st, err)
	}
	if ti.key != nil {
		c.checkUnique(ti, cat.unique, dialect)
		c.checkCollations(ti, cat.nondeterministic)
	}
	c.checkTriggers(ti, cat.triggers)
	c.checkForeignKeys(ti, cat.foreignKeys)
	return c.checkWriter(ctx, ti)
}

// checkUnique reports UNIQUE indexes besides the primary key. txsink
// frees, inside the commit, the values a flush's rows take from the rows
// of the flush holding them (sqlsink's unique.go), for the keys the
// target's Describe read: for a nullable key by setting the holders' values
// to NULL (info), for a NOT NULL one by deleting the holders and writing
// them again, whose delete actions run (warning). An index txsink does not
// read (on expressions, partial, on a prefix) can still conflict.
func (c *checker) checkUnique(ti *tableInfo, unique []index, dialect string) {
	for _, ix := range unique {
		if ix.deferred {
			continue // checked at COMMIT, when the flush's rows are all in place
		}
		cols := strings.Join(ix.columns, ", ")
		if uk := handledUnique(ti.schema, ix.name); uk != nil {
			nullable := true
			for _, name := range uk.Columns {
				col, ok := ti.schema.Column(name)
				nullable = nullable && ok && col.Nullable
			}
			if nullable {
				c.add(Finding{Severity: Info, Check: "unique", Table: ti.label,
					Message: fmt.Sprintf("unique index %s (%s) besides the primary key: when rows of a flush exchange its values (two rows swapping %s, or a row taking a value another gives up), txsink first sets the values of the flush's rows that hold them to NULL, inside the commit, so the flush applies. A row the flush does not change that holds a value a flushed row takes stops the flush with an error naming both rows.", ix.name, cols, cols),
					Fix:     "nothing"})
				continue
			}
			c.add(Finding{Severity: Warning, Check: "unique", Table: ti.label,
				Message: fmt.Sprintf("unique index %s (%s) besides the primary key is NOT NULL: when rows of a flush exchange its values (two rows swapping %s, or a row taking a value another gives up), txsink deletes the flush's rows that hold them and writes them again, inside the commit. Their delete triggers and the ON DELETE actions of foreign keys referencing this table run on them (a cascade deletes the rows referencing them), and a row the flush updates with a partial image is then missing. A row the flush does not change that holds a value a flushed row takes stops the flush with an error naming both rows.", ix.name, cols, cols),
				Fix:     "nothing, if no foreign key cascades from this table and no delete trigger acts on it; otherwise let the columns take NULL (txsink then clears the values instead of deleting rows), or drop the unique index on the target (the source enforces it already)"})
			continue
		}
		what := "the upsert fails with a duplicate-key error and the pipeline stops at that flush on every retry"
		if dialect == "mysql" || dialect == "mariadb" {
			what = "INSERT ... ON DUPLICATE KEY UPDATE takes the clash for a duplicate of the other row and updates that row instead, silently, or fails with a duplicate-key error"
		}
		fix := "drop the unique index on the target or make it non-unique (the source enforces uniqueness already)"
		if dialect == "postgres" {
			fix += ", or declare it as a constraint DEFERRABLE INITIALLY DEFERRED so it is checked at COMMIT"
		}
		c.add(Finding{Severity: Warning, Check: "unique", Table: ti.label,
			Message: fmt.Sprintf("unique index %s (%s) besides the primary key is on expressions, partial or on a column prefix, which txsink does not read: when rows of a flush exchange its values, the upserts meet a value still held by another row of the flush: %s.", ix.name, cols, what),
			Fix:     fix})
	}
}

// handledUnique returns the unique key of t called name that the target's
// Describe read, nil when it read none of that name.
func handledUnique(t *schema.Table, name string) *schema.UniqueKey {
	for i := range t.UniqueKeys {
		if t.UniqueKeys[i].Name == name {
			return &t.UniqueKeys[i]
		}
	}
	return nil
}

// checkCollations reports key columns that compare without regard to case
// (or by another collation rule than byte equality).
func (c *checker) checkCollations(ti *tableInfo, nondeterministic map[string]string) {
	for _, k := range ti.key {
		col, _ := ti.schema.Column(k)
		switch {
		case col.CaseInsensitive():
			c.add(Finding{Severity: Info, Check: "collation", Table: ti.label,
				Message: fmt.Sprintf("key column %s compares without regard to case, so 'ABC' and 'abc' are one row. txsink folds case when it reduces a flush, as the target compares (and, where the collation ignores them, accents and trailing spaces), so the last change of any spelling wins and one row is written, in that change's spelling.", col.Name),
				Fix:     "nothing, if the source's key compares the same way; if the source tells 'ABC' from 'abc', give the column a case-sensitive collation (MySQL utf8mb4_bin, PostgreSQL text instead of citext, SQLite without COLLATE NOCASE)"})
		case nondeterministic[strings.ToLower(col.Name)] != "":
			c.add(Finding{Severity: Warning, Check: "collation", Table: ti.label,
				Message: fmt.Sprintf("key column %s uses the nondeterministic collation %s: the target takes values as equal that txsink, which reduces by exact value, keeps apart, so two changes of one target row can reach one statement and the upsert fails.", col.Name, nondeterministic[strings.ToLower(col.Name)]),
				Fix:     "give the key column a deterministic collation, or use citext, whose case folding txsink knows"})
		}
	}
}

// checkTriggers reports triggers: their effects happen inside txsink's
// transaction, so exactly-once covers them, unless they reach outside it.
func (c *checker) checkTriggers(ti *tableInfo, triggers []trigger) {
	for _, tr := range triggers {
		msg := fmt.Sprintf("trigger %s (%s) runs on every row txsink writes here; its effects happen in txsink's transaction, and exactly-once covers them because each unit is applied once (a unit whose COMMIT's answer was lost is checked against the progress rows, not applied again).", tr.name, tr.when)
		fix := "nothing, if its effects are meant to follow the source's changes; note that a flush keeps only the last change of each key, so the trigger sees one write per key per flush, not every source change"
		if tr.outside != "" {
			msg += fmt.Sprintf(" It writes outside the target database (%s), which the transaction does not cover: a retried or rolled-back unit repeats or leaves those writes.", tr.outside)
			fix = "make the trigger write only inside the target database, or make its outside writes idempotent"
		}
		c.add(Finding{Severity: Warning, Check: "trigger", Table: ti.label, Message: msg, Fix: fix})
	}
}

// checkForeignKeys reports cascading foreign keys that reach other tables
// (side effects). Foreign keys of this table are kept for
// checkChildForeignKeys, which needs to know every table the pipeline
// writes.
func (c *checker) checkForeignKeys(ti *tableInfo, fks []foreignKey) {
	for _, fk := range fks {
		if !fk.parentSide {
			c.childFKs = append(c.childFKs, childFK{ti: ti, fk: fk})
			continue
		}
		var rules []string
		if fk.onDelete != "" && fk.onDelete != "NO ACTION" && fk.onDelete != "RESTRICT" {
			rules = append(rules, "ON DELETE "+fk.onDelete)
		}
		if fk.onUpdate != "" && fk.onUpdate != "NO ACTION" && fk.onUpdate != "RESTRICT" {
			rules = append(rules, "ON UPDATE "+fk.onUpdate)
		}
		if len(rules) == 0 {
			continue
		}
		c.add(Finding{Severity: Info, Check: "foreign-key", Table: ti.label,
			Message: fmt.Sprintf("foreign key%s on %s (%s) references this table %s: a row txsink deletes here (or whose key it changes) changes rows of %s too. That happens in txsink's transaction, so exactly-once covers it because each unit is applied once.", fk.named(), fk.child, strings.Join(fk.childCols, ", "), strings.Join(rules, " "), fk.child),
			Fix:     fmt.Sprintf("nothing, if %s should follow this table; if the changelog carries %s's changes too, drop the cascade so the source alone decides", fk.child, fk.child)})
	}
}

// childFK is a foreign key of a target table, judged once every table is
// known.
type childFK struct {
	ti *tableInfo
	fk foreignKey
}

// checkChildForeignKeys reports foreign keys to tables the pipeline does
// not write. Those among the tables it writes order a flush's statements
// (checkForeignKeyOrder, in fkorder.go).
func (c *checker) checkChildForeignKeys() {
	for _, cf := range c.childFKs {
		fk := cf.fk
		if fk.deferred || c.writes(fk.parent) {
			continue
		}
		refs := fmt.Sprintf("foreign key%s (%s) references %s (%s)", fk.named(), strings.Join(fk.childCols, ", "), fk.parent, strings.Join(fk.parentCols, ", "))
		c.add(Finding{Severity: Info, Check: "foreign-key", Table: cf.ti.label,
			Message: refs + ", which this pipeline does not write: a row whose referenced row is missing there stops the pipeline.",
			Fix:     fmt.Sprintf("nothing, if whoever writes %s keeps it ahead of this pipeline", fk.parent)})
	}
	c.checkForeignKeyOrder()
}

// writes reports whether the pipeline writes table name (as a catalog
// names it: "t" or "ns.t").
func (c *checker) writes(name string) bool {
	for _, ti := range c.tables {
		if ti.schema == nil {
			continue
		}
		if strings.EqualFold(name, ti.schema.String()) || (!strings.Contains(name, ".") && strings.EqualFold(name, ti.schema.Name)) {
			return true
		}
	}
	return false
}

// checkWriter reports a keyed table that holds rows although this
// pipeline has committed nothing: something else wrote them.
func (c *checker) checkWriter(ctx context.Context, ti *tableInfo) error {
	if c.committed() {
		// Telling this pipeline's rows from another writer's would take
		// a scan of the table against the whole changelog; not a check.
		return nil
	}
	var one int
	err := c.q.QueryRowContext(ctx, "SELECT 1 FROM "+sqlsink.QuotedTable(c.cat, ti.schema)+" LIMIT 1").Scan(&one)
	if err != nil {
		if isNoRows(err) {
			return nil
		}
		return fmt.Errorf("read %s: %w", ti.schema, err)
	}
	c.heldRows = append(c.heldRows, ti.schema.String())
	return nil
}

// emitHeldRows reports, once for all of them, the tables checkWriter found
// holding rows another writer put there.
func (c *checker) emitHeldRows() {
	if len(c.heldRows) == 0 {
		return
	}
	what := "table " + c.heldRows[0] + " holds"
	if len(c.heldRows) > 1 {
		what = "tables " + strings.Join(c.heldRows, ", ") + " hold"
	}
	c.add(Finding{Severity: Info, Check: "writer", Table: "target",
		Message: fmt.Sprintf("%s rows, but pipeline %s has committed nothing here yet: another writer put them there. txsink upserts over them by key and leaves the rest.", what, c.cfg.Name),
		Fix:     "nothing, if they are a snapshot the changelog continues; otherwise stop the other writer (a version column the source fills lets a periodic query tell its writes from the changelog's)"})
}
