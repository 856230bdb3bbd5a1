package config

import (
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// Resolve returns the target table for changes of src. With Target set
// it is the table Target names (split at its one dot, as Validate
// allows). Otherwise it is src's name as one identifier in the target's
// own database or schema — never split, so a source name can never
// choose another namespace.
func (tb *Table) Resolve(src changelog.Table) schema.Name {
	if tb.Target != "" {
		return tb.targetName()
	}
	return schema.Name{Name: src.Name}
}

// targetName reads Target: "schema.name" split at the first dot, or
// "name" in the target's own namespace.
func (tb *Table) targetName() schema.Name {
	if ns, name, dotted := strings.Cut(tb.Target, "."); dotted {
		return schema.Name{Namespace: ns, Name: name}
	}
	return schema.Name{Name: tb.Target}
}
