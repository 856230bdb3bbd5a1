package sqlsink

// A unit that writes a row under a parent it deletes, through a foreign key
// ON DELETE CASCADE or SET NULL. The row's last change wrote it while the
// parent was there; the parent's delete came later (its last change is a
// delete), and in the source the cascade then deleted the row, or cleared
// its reference, without a change of its own in the changelog (MySQL
// writes none for a cascade). The unit applies what the source ended
// with: the row deleted (cascading on, as the target's keys say), or
// written with its reference NULL. Ordering alone cannot do it when the
// parent is not in the target (inserted and deleted within the unit): the
// row's write would then find no parent. A parent's soft delete
// (delete: soft:COLUMN) keeps its row, in the target as in any unit
// boundaries, and cascades nothing.

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// cascadeAction is what a parent's delete does to a row written under it.
type cascadeAction uint8

const (
	keep cascadeAction = iota
	cascadeDelete
	cascadeNull
)

// cascaded returns batches with the effect of the unit's deletes on the
// rows it writes under the deleted parents (see above), repeated until
// nothing more cascades. batches itself is never changed: a unit is
// applied again as it is after a transient error.
func cascaded(batches []*commit.Batch) []*commit.Batch {
	for {
		next, changed := cascadeOnce(batches)
		if !changed {
			return batches
		}
		batches = next
	}
}

// cascadeOnce applies one round of cascades.
func cascadeOnce(batches []*commit.Batch) ([]*commit.Batch, bool) {
	// marks holds, by batch, group and row, what happens to a row, with
	// the columns a SET NULL clears.
	type mark struct {
		action cascadeAction
		null   []int // columns of the group to clear
	}
	var marks map[[3]int]*mark
	for c, cb := range batches {
		for k := range cb.Table.ForeignKeys {
			fk := &cb.Table.ForeignKeys[k]
			var action cascadeAction
			switch fk.OnDelete {
			case "CASCADE":
				action = cascadeDelete
			case "SET NULL":
				action = cascadeNull
			default:
				continue
			}
			if action == cascadeDelete && cb.Rules.SoftDelete != "" {
				// A soft-deleting child has no delete of its own to stand
				// for the cascade's (its deletes mark the row, at a time
				// the buffer gave them): its rows are written as they
				// are, and the target's cascade deletes them with a
				// stored parent, as in a unit of their own.
				continue
			}
			for _, pb := range batches {
				// A soft delete keeps the parent (Rules.SoftDelete): nothing
				// cascades from it in the target, whatever the unit's
				// boundaries, so nothing does here either.
				if len(pb.Deletes) == 0 || pb.Rules.SoftDelete != "" || !fk.References(pb.Table) {
					continue
				}
				cols := childKeyColumns(fk, pb.Table)
				if cols == nil {
					continue
				}
				deleted := make(map[string]bool, len(pb.Deletes))
				for _, key := range pb.Deletes {
					if s, ok := valueKey(key); ok {
						deleted[s] = true
					}
				}
				for g := range cb.Upserts {
					grp := &cb.Upserts[g]
					at, ok := columnsAt(grp.Columns, cols)
					if !ok {
						continue
					}
					for r, row := range grp.Rows {
						s, ok := valueKey(pick(row, at))
						if !ok || !deleted[s] {
							continue
						}
						if marks == nil {
							marks = map[[3]int]*mark{}
						}
						id := [3]int{c, g, r}
						m := marks[id]
						if m == nil {
							m = &mark{}
							marks[id] = m
						}
						if action == cascadeDelete {
							m.action = cascadeDelete
						} else if m.action != cascadeDelete {
							m.action = cascadeNull
							fkAt, _ := columnsAt(grp.Columns, fk.Columns)
							m.null = append(m.null, fkAt...)
						}
					}
				}
			}
		}
	}
	if marks == nil {
		return batches, false
	}
	out := make([]*commit.Batch, len(batches))
	for c, cb := range batches {
		nb := *cb
		nb.Upserts = nil
		nb.Deletes = cb.Deletes[:len(cb.Deletes):len(cb.Deletes)]
		nb.DeletePos = cb.DeletePos[:len(cb.DeletePos):len(cb.DeletePos)]
		nb.DeleteVersions = cb.DeleteVersions[:len(cb.DeleteVersions):len(cb.DeleteVersions)]
		for g, grp := range cb.Upserts {
			ng := grp
			ng.Rows, ng.Pos = nil, nil
			keyAt, _ := columnsAt(grp.Columns, cb.Table.PrimaryKey)
			verAt := -1
			if v := cb.Rules.Version; v != "" {
				if at, ok := columnsAt(grp.Columns, []string{v}); ok {
					verAt = at[0]
				}
			}
			for r, row := range grp.Rows {
				var pos changelog.Position
				if r < len(grp.Pos) {
					pos = grp.Pos[r]
				}
				m := marks[[3]int{c, g, r}]
				switch {
				case m != nil && m.action == cascadeDelete && keyAt != nil:
					nb.Deletes = append(nb.Deletes, pick(row, keyAt))
					nb.DeletePos = append(nb.DeletePos, pos)
					if cb.Rules.Version != "" {
						// A version-guarded child's delete carries a
						// version (Batch.DeleteVersions): the row's own, so
						// the cascade deletes what the write would have
						// overwritten.
						var v any
						if verAt >= 0 {
							v = row[verAt]
						}
						nb.DeleteVersions = append(nb.DeleteVersions, v)
					}
					continue
				case m != nil && m.action == cascadeNull:
					row = append([]any(nil), row...)
					for _, i := range m.null {
						row[i] = nil
					}
				}
				ng.Rows = append(ng.Rows, row)
				if r < len(grp.Pos) {
					ng.Pos = append(ng.Pos, pos)
				}
			}
			if len(ng.Rows) > 0 {
				nb.Upserts = append(nb.Upserts, ng)
			}
		}
		out[c] = &nb
	}
	return out, true
}

// childKeyColumns returns fk's columns in the order of its parent's
// primary key, or nil when fk references other columns than that key
// (a unit's deletes are keys, so only such a reference can be matched).
func childKeyColumns(fk *schema.ForeignKey, parent *schema.Table) []string {
	if len(fk.ParentColumns) != len(parent.PrimaryKey) {
		return nil
	}
	cols := make([]string, len(parent.PrimaryKey))
	for i, k := range parent.PrimaryKey {
		at, ok := columnsAt(fk.ParentColumns, []string{k})
		if !ok {
			return nil
		}
		cols[i] = fk.Columns[at[0]]
	}
	return cols
}
