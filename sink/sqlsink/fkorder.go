package sqlsink

// The order of a unit's statements under foreign keys. Each table of a unit
// has up to two steps, its deletes and its writes (upserts and inserts);
// the foreign keys among the unit's tables, read from the catalog when a
// table is described, order them so that every constraint holds at every
// statement:
//
//   - a parent's writes come before its children's (a new child finds
//     its parent);
//   - a child's deletes come before its parent's (a parent is not deleted
//     while a child still references it);
//   - a child's writes come before its parent's deletes: a child moved to
//     another parent leaves the old one before that one goes, and a child
//     the unit writes under a parent it deletes with ON DELETE CASCADE (or
//     SET NULL) is then removed (or cleared) by the delete, as a source
//     whose cascades are not in its changelog (MySQL's) ended;
//   - where nothing of that says otherwise, a table's deletes come before
//     its writes, and all deletes before all writes, so that a deleted
//     row frees a unique value a written row takes (commit's contract).
//
// A foreign key of a table to itself orders rows within the table: writes
// level by level from the rows whose parent the unit does not write,
// deletes from the deepest of the deleted rows (as the target holds them)
// up. A cycle that no order can satisfy is deferred to COMMIT where the
// server can (PostgreSQL, SET CONSTRAINTS ALL DEFERRED) and the user
// declared every constraint of it DEFERRABLE, and otherwise refused with
// an error naming the tables and constraints. Foreign-key checks are never
// switched off. A foreign key declared INITIALLY DEFERRED orders nothing.

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// ForeignKeyReader is a Dialect that reads a table's own foreign keys from
// its catalog. Without it a unit's statements keep commit's order (all
// deletes, then the writes table by table).
type ForeignKeyReader interface {
	// ForeignKeys returns the foreign keys whose referencing columns are
	// t's, t being as Describe returned it (its namespace resolved).
	ForeignKeys(ctx context.Context, q Querier, t *schema.Table) ([]schema.ForeignKey, error)
}

// Deferrer is a Dialect whose server can defer, inside one transaction,
// the constraints a user declared DEFERRABLE to the COMMIT.
type Deferrer interface {
	// DeferConstraints returns the statement that does it.
	DeferConstraints() string
}

// readKeys fills tbl's foreign and unique keys, as far as the dialect
// reads them.
func (t *DB) readKeys(ctx context.Context, q Querier, tbl *schema.Table) error {
	if err := t.readForeignKeys(ctx, q, tbl); err != nil {
		return err
	}
	return t.readUniqueKeys(ctx, q, tbl)
}

// readForeignKeys fills tbl.ForeignKeys when the dialect reads them.
func (t *DB) readForeignKeys(ctx context.Context, q Querier, tbl *schema.Table) error {
	r, ok := t.dialect.(ForeignKeyReader)
	if !ok {
		return nil
	}
	fks, err := r.ForeignKeys(ctx, q, tbl)
	if err != nil {
		return fmt.Errorf("read the foreign keys of %s: %w", tbl, err)
	}
	tbl.ForeignKeys = fks
	return nil
}

// Step is one step of a unit's plan: a table's deletes or its writes.
type Step struct {
	// Table is the index of the step's table (a unit's batch).
	Table int
	// Delete is true for the table's deletes, false for its writes.
	Delete bool
}

// CycleError is a cycle of foreign keys among a unit's tables that no
// order of statements satisfies and that the server cannot defer.
type CycleError struct {
	// Tables names the tables on the cycle.
	Tables []string
	// Constraints names the foreign keys on it.
	Constraints []string
	// Rows is true for a cycle of rows within one table (a row that
	// references a row that references it back, both written or deleted
	// by the unit).
	Rows bool
}

func (e *CycleError) Error() string {
	what := "the unit writes and deletes rows of tables " + strings.Join(e.Tables, ", ")
	if e.Rows {
		what = "rows of table " + strings.Join(e.Tables, ", ") + " the unit writes or deletes reference each other"
	}
	return fmt.Sprintf("foreign key %s form a cycle: %s, and no order of statements keeps every constraint at every statement", strings.Join(e.Constraints, ", "), what)
}

// cycleError wraps a CycleError into the sink's error, with what to do.
func cycleError(ce *CycleError) error {
	return &sink.Error{Op: "order statements", Table: strings.Join(ce.Tables, ", "), Err: ce,
		Hint: "declare those foreign keys DEFERRABLE on a PostgreSQL target (txsink then defers them to COMMIT), or drop one of them on the target (the source enforces it); txsink never switches foreign-key checks off; nothing of this flush was committed"}
}

// fkEdge is an order between two steps: from before to.
type fkEdge struct {
	from, to int // node: 2*table + (0 delete, 1 writes)
	fk       *schema.ForeignKey
	child    int
}

// Order returns the order of the steps of a unit whose tables are tables,
// where hasDelete and hasWrite say which steps exist; canDefer says the
// server can defer DEFERRABLE constraints. deferAll says the unit must
// defer them first. The order is total and deterministic: among steps
// free to go, deletes first, then by table.
func Order(tables []*schema.Table, hasDelete, hasWrite []bool, canDefer bool) (steps []Step, deferAll bool, err error) {
	n := len(tables)
	present := func(node int) bool {
		if node%2 == 0 {
			return hasDelete[node/2]
		}
		return hasWrite[node/2]
	}
	edges := fkEdges(tables, present, false)
	if len(edges) == 0 {
		return defaultOrder(hasDelete, hasWrite), false, nil
	}
	rest := cyclic(2*n, present, edges)
	if len(rest) > 0 {
		if !canDefer || !allDeferrable(edges, rest) {
			return nil, false, onCycle(tables, edges, rest)
		}
		deferAll = true
		edges = fkEdges(tables, present, true)
		if rest = cyclic(2*n, present, edges); len(rest) > 0 {
			return nil, false, onCycle(tables, edges, rest)
		}
	}
	// Deletes before writes within a table, unless the writes must come
	// first.
	for i := 0; i < n; i++ {
		if hasDelete[i] && hasWrite[i] && !reaches(2*n, edges, 2*i+1, 2*i) {
			edges = append(edges, fkEdge{from: 2 * i, to: 2*i + 1})
		}
	}
	in := make([]int, 2*n)
	for _, e := range edges {
		in[e.to]++
	}
	done := make([]bool, 2*n)
	for {
		next := -1
		for _, del := range []bool{true, false} {
			for i := 0; i < n && next < 0; i++ {
				node := 2 * i
				if !del {
					node++
				}
				if present(node) && !done[node] && in[node] == 0 {
					next = node
				}
			}
			if next >= 0 {
				break
			}
		}
		if next < 0 {
			return steps, deferAll, nil
		}
		done[next] = true
		steps = append(steps, Step{Table: next / 2, Delete: next%2 == 0})
		for _, e := range edges {
			if e.from == next {
				in[e.to]--
			}
		}
	}
}

// defaultOrder is commit's order: every delete, then every write.
func defaultOrder(hasDelete, hasWrite []bool) []Step {
	var steps []Step
	for i, d := range hasDelete {
		if d {
			steps = append(steps, Step{Table: i, Delete: true})
		}
	}
	for i, w := range hasWrite {
		if w {
			steps = append(steps, Step{Table: i})
		}
	}
	return steps
}

// fkEdges returns the orders the foreign keys among tables impose on the
// present steps; deferred drops those of DEFERRABLE constraints.
func fkEdges(tables []*schema.Table, present func(int) bool, deferred bool) []fkEdge {
	var edges []fkEdge
	add := func(from, to int, fk *schema.ForeignKey, child int) {
		if present(from) && present(to) {
			edges = append(edges, fkEdge{from: from, to: to, fk: fk, child: child})
		}
	}
	for c, ct := range tables {
		for k := range ct.ForeignKeys {
			fk := &ct.ForeignKeys[k]
			if fk.Deferred || (deferred && fk.Deferrable) {
				continue
			}
			for p, pt := range tables {
				if !fk.References(pt) {
					continue
				}
				if p == c {
					// Rows are ordered within the table; its writes
					// (children moved away) precede its deletes.
					add(2*c+1, 2*c, fk, c)
					continue
				}
				add(2*p+1, 2*c+1, fk, c) // parent's writes, then the child's
				add(2*c, 2*p, fk, c)     // child's deletes, then the parent's
				add(2*c+1, 2*p, fk, c)   // child's writes, then the parent's deletes
			}
		}
	}
	return edges
}

// cyclic returns the present nodes that lie on or between cycles of edges:
// what is left when nodes without predecessors, and then nodes without
// successors, are taken away.
func cyclic(nodes int, present func(int) bool, edges []fkEdge) []int {
	gone := make([]bool, nodes)
	for changed := true; changed; {
		changed = false
		for v := 0; v < nodes; v++ {
			if gone[v] || !present(v) {
				gone[v] = true
				continue
			}
			hasIn, hasOut := false, false
			for _, e := range edges {
				if !gone[e.from] && !gone[e.to] {
					hasIn = hasIn || e.to == v
					hasOut = hasOut || e.from == v
				}
			}
			if !hasIn || !hasOut {
				gone[v], changed = true, true
			}
		}
	}
	var rest []int
	for v := 0; v < nodes; v++ {
		if !gone[v] {
			rest = append(rest, v)
		}
	}
	return rest
}

// among returns the edges between nodes of rest.
func among(edges []fkEdge, rest []int) []fkEdge {
	in := map[int]bool{}
	for _, v := range rest {
		in[v] = true
	}
	var out []fkEdge
	for _, e := range edges {
		if in[e.from] && in[e.to] {
			out = append(out, e)
		}
	}
	return out
}

// allDeferrable reports whether every constraint on the cycle among rest
// is DEFERRABLE.
func allDeferrable(edges []fkEdge, rest []int) bool {
	for _, e := range among(edges, rest) {
		if !e.fk.Deferrable {
			return false
		}
	}
	return true
}

// onCycle builds the error of the cycle among rest.
func onCycle(tables []*schema.Table, edges []fkEdge, rest []int) error {
	ce := &CycleError{}
	seenT, seenC := map[int]bool{}, map[string]bool{}
	for _, v := range rest {
		if !seenT[v/2] {
			seenT[v/2] = true
			ce.Tables = append(ce.Tables, tables[v/2].String())
		}
	}
	for _, e := range among(edges, rest) {
		label := e.fk.Label(tables[e.child])
		if !seenC[label] {
			seenC[label] = true
			ce.Constraints = append(ce.Constraints, label)
		}
	}
	sort.Strings(ce.Constraints)
	return cycleError(ce)
}

// reaches reports whether a path of edges leads from one node to another.
func reaches(nodes int, edges []fkEdge, from, to int) bool {
	seen := make([]bool, nodes)
	stack := []int{from}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == to {
			return true
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		for _, e := range edges {
			if e.from == v {
				stack = append(stack, e.to)
			}
		}
	}
	return false
}

// applyRows runs the unit's deletes and writes in the order its foreign
// keys give them (see the top of this file), through exec, once the
// cascades of its deletes are applied to the rows it writes (fkcascade.go).
func (t *DB) applyRows(ctx context.Context, conn *sql.Conn, tx *sql.Tx, u *commit.Unit, exec func(*sql.Conn, *work) (*failure, error), counts bool, refused *int) (*failure, error) {
	batches := cascaded(u.Batches)
	tables := make([]*schema.Table, len(batches))
	hasDelete := make([]bool, len(batches))
	hasWrite := make([]bool, len(batches))
	for i, b := range batches {
		tables[i] = b.Table
		hasDelete[i] = len(b.Deletes) > 0
		hasWrite[i] = len(b.Upserts) > 0 || len(b.Inserts) > 0
	}
	deferrer, canDefer := t.dialect.(Deferrer)
	steps, deferAll, err := Order(tables, hasDelete, hasWrite, canDefer)
	if err != nil {
		return nil, err
	}
	deferred := false
	deferNow := func() error {
		if deferred {
			return nil
		}
		deferred = true
		_, err := tx.ExecContext(ctx, deferrer.DeferConstraints())
		return t.wrap("defer constraints", "", "", err)
	}
	if deferAll {
		if err := deferNow(); err != nil {
			return nil, err
		}
	}
	// A source's TRUNCATE empties its tables before anything else
	// (truncate.go).
	if err := t.applyTruncates(batches, exec, canDefer, deferNow); err != nil {
		return nil, err
	}
	for _, s := range steps {
		b := batches[s.Table]
		self := selfKeys(b.Table, canDefer && deferred)
		if s.Delete && b.Rules.Guarded() {
			// Version-guarded, soft and ignored deletes (rules.go) are
			// keyed statements of their own; their order among the
			// tables is the same.
			n, err := t.applyRuleDeletes(ctx, tx, b)
			if err != nil {
				return nil, err
			}
			*refused += n
			continue
		}
		if s.Delete {
			works := []*work{t.deleteWork(b)}
			if len(self) > 0 {
				var err error
				if works, err = t.deleteLevels(ctx, tx, works[0], self); err != nil {
					if ce, ok := err.(*CycleError); ok && canDefer && deferrable(self) {
						works = []*work{t.deleteWork(b)}
						err = deferNow()
					} else if ok {
						err = cycleError(ce)
					}
					if err != nil {
						return nil, err
					}
				}
			}
			for _, w := range works {
				if f, err := exec(nil, w); err != nil {
					return f, err
				}
			}
			continue
		}
		groups := b.Upserts
		if len(self) > 0 {
			var err error
			if groups, err = writeLevels(b.Table, b.Upserts, self); err != nil {
				ce := err.(*CycleError)
				if !canDefer || !deferrable(self) {
					return nil, cycleError(ce)
				}
				if err := deferNow(); err != nil {
					return nil, err
				}
				groups = b.Upserts
			}
		}
		if err := t.freeUnique(ctx, tx, b, tables); err != nil {
			return nil, err
		}
		for _, g := range groups {
			var w *work
			if b.Rules.Version != "" {
				var err error
				if w, err = t.guardedUpsertWork(b, g); err != nil {
					return nil, err
				}
			} else {
				w = t.rowWork(b.Table, g, t.dialect.Upsert)
			}
			if g.Partial {
				if err := t.requireRows(ctx, tx, w); err != nil {
					return nil, err
				}
			}
			if f, err := exec(conn, w); err != nil {
				return f, err
			}
			if w.affected != nil && !counts {
				*refused += len(w.tuples) - int(*w.affected)
			}
		}
		for _, g := range b.Inserts {
			if f, err := exec(conn, t.rowWork(b.Table, g, t.dialect.Insert)); err != nil {
				return f, err
			}
		}
	}
	return nil, nil
}

// selfKeys returns t's foreign keys to itself that order its rows: not
// INITIALLY DEFERRED, and not DEFERRABLE once the unit deferred them.
func selfKeys(t *schema.Table, deferred bool) []*schema.ForeignKey {
	var out []*schema.ForeignKey
	for i := range t.ForeignKeys {
		fk := &t.ForeignKeys[i]
		if fk.References(t) && !fk.Deferred && !(deferred && fk.Deferrable) && len(t.PrimaryKey) > 0 {
			out = append(out, fk)
		}
	}
	return out
}

func deferrable(fks []*schema.ForeignKey) bool {
	for _, fk := range fks {
		if !fk.Deferrable {
			return false
		}
	}
	return true
}
