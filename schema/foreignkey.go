package schema

import "strings"

// ForeignKey is one foreign key of a target table, as its catalog declares
// it: Columns of the table reference ParentColumns of Parent (which may be
// the table itself). A target checks it on every row written to the table
// and every row deleted from Parent; package sqlsink orders a unit's
// statements so that it holds at each of them.
type ForeignKey struct {
	// Name is the constraint's name, "" when the target keeps none
	// (SQLite), for messages.
	Name string
	// Columns are the referencing columns of the table, in the
	// constraint's order.
	Columns []string
	// Parent is the referenced table, its namespace as the catalog
	// resolved it (SQLite: the child's own).
	Parent Name
	// ParentColumns are the referenced columns, paired with Columns.
	ParentColumns []string
	// OnDelete is the action a delete of a referenced row takes:
	// "CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT" or "NO ACTION".
	OnDelete string
	// Deferrable reports a constraint a transaction may defer to its
	// COMMIT (PostgreSQL's DEFERRABLE; SET CONSTRAINTS ALL DEFERRED).
	Deferrable bool
	// Deferred reports a constraint checked at COMMIT unless a
	// transaction asks otherwise (INITIALLY DEFERRED): no statement
	// order inside the transaction can break it.
	Deferred bool
}

// Label names the constraint of table child for messages:
// "name: child(columns) → parent(columns)", without "name: " for an
// unnamed one.
func (fk *ForeignKey) Label(child *Table) string {
	link := child.Name + "(" + strings.Join(fk.Columns, ", ") + ") → " + fk.Parent.Name + "(" + strings.Join(fk.ParentColumns, ", ") + ")"
	if fk.Name == "" {
		return link
	}
	return fk.Name + ": " + link
}

// References reports whether fk's parent is t.
func (fk *ForeignKey) References(t *Table) bool {
	return fk.Parent.Name == t.Name && fk.Parent.Namespace == t.Namespace
}
