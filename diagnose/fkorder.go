package diagnose

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

// checkForeignKeyOrder shows the order in which a flush's statements run
// under the foreign keys among the tables the pipeline writes (as
// sqlsink.Order gives it for a flush that deletes and writes rows of every
// one of them), the tables whose rows are ordered within the table, and
// every foreign key txsink cannot honour: a cycle the server cannot defer.
func (c *checker) checkForeignKeyOrder() {
	var infos []*tableInfo
	for _, ti := range c.tables {
		if ti.schema != nil && ti.ok {
			infos = append(infos, ti)
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].label < infos[j].label })
	tables := make([]*schema.Table, len(infos))
	all := make([]bool, len(infos))
	ordered := false
	for i, ti := range infos {
		tables[i], all[i] = ti.schema, true
		for k := range ti.schema.ForeignKeys {
			fk := &ti.schema.ForeignKeys[k]
			if fk.Deferred {
				continue
			}
			for _, other := range infos {
				if !fk.References(other.schema) {
					continue
				}
				ordered = true
				if other == ti {
					c.add(Finding{Severity: Info, Check: "foreign-key", Table: ti.label,
						Message: fmt.Sprintf("foreign key %s references the table itself: within a flush txsink writes its rows after the rows they reference and deletes them before the rows they reference, a statement per level. Rows of one flush that reference each other in a ring are refused%s.", fk.Label(ti.schema), deferNote(c)),
						Fix:     "nothing"})
				}
			}
		}
	}
	if !ordered {
		return
	}
	_, canDefer := c.dialect().(sqlsink.Deferrer)
	steps, deferAll, err := sqlsink.Order(tables, all, all, canDefer)
	var ce *sqlsink.CycleError
	if errors.As(err, &ce) {
		fix := "drop one of these foreign keys on the target (MySQL and MariaDB cannot defer one; the source enforces it already)"
		switch {
		case c.cat.DialectName() == "sqlite":
			fix = "declare them DEFERRABLE INITIALLY DEFERRED in the CREATE TABLE (SQLite then checks them at COMMIT), or drop one on the target"
		case canDefer:
			fix = "declare them DEFERRABLE (ALTER TABLE ... ALTER CONSTRAINT name DEFERRABLE): txsink then defers them to COMMIT in a flush that needs it, or drop one on the target"
		}
		c.add(Finding{Severity: Warning, Check: "foreign-key", Table: strings.Join(ce.Tables, ", "),
			Message: fmt.Sprintf("foreign keys %s form a cycle among tables txsink writes: no order of statements keeps each of them at every statement of a flush that writes and deletes rows of those tables, and txsink refuses such a flush, naming them, rather than switch foreign-key checks off.", strings.Join(ce.Constraints, ", ")),
			Fix:     fix})
		return
	}
	if err != nil {
		return
	}
	var order []string
	for _, s := range steps {
		verb := "write "
		if s.Delete {
			verb = "delete from "
		}
		order = append(order, verb+tables[s.Table].String())
	}
	msg := "foreign keys among the tables txsink writes order each flush's statements so that every constraint holds at every statement: " + strings.Join(order, ", ") +
		" (a step a flush has no rows for is left out; a child written under a parent the flush deletes with ON DELETE CASCADE or SET NULL is deleted or cleared, as the source's cascade did)."
	if deferAll {
		msg += " Their cycle is made of DEFERRABLE keys: a flush defers them to COMMIT (SET CONSTRAINTS ALL DEFERRED)."
	}
	c.add(Finding{Severity: Info, Check: "foreign-key", Table: "target", Message: msg, Fix: "nothing"})
}

// dialect returns the target's SQL dialect, nil when it is not sqlsink's.
func (c *checker) dialect() sqlsink.Dialect {
	if d, ok := c.cat.(interface{ Dialect() sqlsink.Dialect }); ok {
		return d.Dialect()
	}
	return nil
}

// deferNote says, on a server that can defer, what a DEFERRABLE key
// changes.
func deferNote(c *checker) string {
	if _, ok := c.dialect().(sqlsink.Deferrer); ok {
		return ", unless the key is DEFERRABLE: such a flush then defers it to COMMIT"
	}
	return ""
}
