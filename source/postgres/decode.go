package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pglogrepl"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/source"
)

// relation is a table as its last Relation message described it.
type relation struct {
	table changelog.Table
	// names, oids and key are the columns' names, type OIDs, and whether
	// each is part of the replica identity (every column under FULL).
	names []string
	oids  []uint32
	key   []bool
	// types is the "types" text of the table's records (types.go).
	types []byte
}

// decoder turns pgoutput messages into txsink-json records. Only the pump
// uses it.
type decoder struct {
	part string
	rels map[uint32]*relation
	// cat is what the catalog said of the published tables at start:
	// their primary keys, NOT NULL columns and types' names.
	cat map[string]*tableCatalog

	// inTxn is set between BEGIN and COMMIT; xid and pos are the open
	// transaction's id and position (its commit LSN plus one).
	inTxn bool
	xid   string
	pos   int64
	// held is the transaction's latest change, held back until the next
	// one or COMMIT says whether it is the last (txn_end); heldSeq is its
	// LSN.
	held      *changelog.Change
	heldSeq   int64
	heldTypes []byte

	// truncate applies TRUNCATEs (source.truncate: delete-all) rather
	// than refusing them.
	truncate bool

	// win, when set, filters the changes of the transactions committed
	// inside the windows of a resumed snapshot; ctx is for its queries.
	win *window
	ctx context.Context
}

// inWindow reports whether the open transaction committed inside the
// windows of a resumed snapshot.
func (d *decoder) inWindow() bool {
	return d.win != nil && uint64(d.pos-1) < d.win.end()
}

// windowKeeps reports whether the window applies a change of r whose key
// tuple is t.
func (d *decoder) windowKeeps(r *relation, t *pglogrepl.TupleData) (bool, error) {
	name := r.table.String()
	var key []string
	if ti := d.win.keys[name]; ti != nil {
		key = tupleKey(r, t, ti.pk)
	}
	return d.win.keeps(d.ctx, name, uint64(d.pos-1), key)
}

func newDecoder(part string) *decoder {
	return &decoder{part: part, rels: map[uint32]*relation{}}
}

// decode decodes one pgoutput message, at LSN at, into the records it
// completes (none, or the held change once the next one or COMMIT comes).
func (d *decoder) decode(at pglogrepl.LSN, data []byte) ([]source.Record, error) {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("postgres source: partition %s at %s: decode pgoutput message: %w", d.part, at, err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		r := &relation{table: changelog.Table{Namespace: m.Namespace, Name: m.RelationName}}
		typmods := make([]int32, 0, len(m.Columns))
		for _, c := range m.Columns {
			r.names = append(r.names, c.Name)
			r.oids = append(r.oids, c.DataType)
			r.key = append(r.key, c.Flags&1 != 0)
			typmods = append(typmods, c.TypeModifier)
		}
		if r.types, err = relationTypes(r, m.ReplicaIdentity, typmods, d.cat[r.table.String()]); err != nil {
			return nil, fmt.Errorf("postgres source: partition %s at %s: table %s: %w", d.part, at, r.table, err)
		}
		d.rels[m.RelationID] = r
	case *pglogrepl.BeginMessage:
		if uint64(m.FinalLSN) >= math.MaxInt64 {
			return nil, fmt.Errorf("postgres source: partition %s: commit LSN %s is beyond what a position holds", d.part, m.FinalLSN)
		}
		d.inTxn, d.xid, d.pos = true, strconv.FormatUint(uint64(m.Xid), 10), int64(m.FinalLSN)+1
	case *pglogrepl.CommitMessage:
		d.inTxn = false
		var out []source.Record
		if d.held != nil {
			d.held.TxnEnd = true
			rec, err := d.release()
			if err != nil {
				return nil, err
			}
			out = append(out, rec)
		}
		return out, nil
	case *pglogrepl.InsertMessage:
		r, err := d.relation(m.RelationID, at)
		if err != nil {
			return nil, err
		}
		if d.inWindow() {
			if keep, err := d.windowKeeps(r, m.Tuple); err != nil || !keep {
				return nil, err
			}
		}
		row, err := d.row(r, m.Tuple, false, at)
		if err != nil {
			return nil, err
		}
		return d.change(&changelog.Change{Kind: changelog.Insert, Table: r.table, After: row}, r, at)
	case *pglogrepl.UpdateMessage:
		r, err := d.relation(m.RelationID, at)
		if err != nil {
			return nil, err
		}
		row, err := d.row(r, m.NewTuple, false, at)
		if err != nil {
			return nil, err
		}
		c := &changelog.Change{Kind: changelog.UpdateAfter, Table: r.table, After: row}
		if m.OldTuple != nil {
			if c.Before, err = d.row(r, m.OldTuple, m.OldTupleType == pglogrepl.UpdateMessageTupleTypeKey, at); err != nil {
				return nil, err
			}
		}
		if d.inWindow() {
			// The old and the new key may lie on either side of a bound
			// (an update that moved the row): each side is kept or not.
			keepNew, err := d.windowKeeps(r, m.NewTuple)
			if err != nil {
				return nil, err
			}
			keepOld := keepNew
			if m.OldTuple != nil {
				if keepOld, err = d.windowKeeps(r, m.OldTuple); err != nil {
					return nil, err
				}
			}
			switch {
			case !keepNew && !keepOld:
				return nil, nil
			case !keepNew:
				c = &changelog.Change{Kind: changelog.Delete, Table: r.table, Before: c.Before}
			case !keepOld:
				c.Before = changelog.Row{}
			}
		}
		return d.change(c, r, at)
	case *pglogrepl.DeleteMessage:
		r, err := d.relation(m.RelationID, at)
		if err != nil {
			return nil, err
		}
		if m.OldTuple == nil {
			return nil, fmt.Errorf("postgres source: partition %s at %s: a DELETE of table %s came without its key: the table has REPLICA IDENTITY NOTHING; "+
				"give it a primary key, or ALTER TABLE %s REPLICA IDENTITY FULL", d.part, at, r.table, r.table)
		}
		if d.inWindow() {
			if keep, err := d.windowKeeps(r, m.OldTuple); err != nil || !keep {
				return nil, err
			}
		}
		row, err := d.row(r, m.OldTuple, m.OldTupleType == pglogrepl.DeleteMessageTupleTypeKey, at)
		if err != nil {
			return nil, err
		}
		return d.change(&changelog.Change{Kind: changelog.Delete, Table: r.table, Before: row}, r, at)
	case *pglogrepl.TruncateMessage:
		return d.truncated(m, at)
	}
	// Origin, Type and logical decoding messages carry no rows.
	return nil, nil
}

// relation returns the table a row message names.
func (d *decoder) relation(id uint32, at pglogrepl.LSN) (*relation, error) {
	r, ok := d.rels[id]
	if !ok {
		return nil, fmt.Errorf("postgres source: partition %s at %s: a row of relation %d came before its Relation message", d.part, at, id)
	}
	if !d.inTxn {
		return nil, fmt.Errorf("postgres source: partition %s at %s: a row of table %s came outside a transaction", d.part, at, r.table)
	}
	return r, nil
}

// row renders a tuple of r as a row image: with keyOnly, only the replica
// identity's columns (pgoutput sends the others of a key tuple as null);
// unchanged TOASTed values ('u') are left out, never written as NULL.
func (d *decoder) row(r *relation, t *pglogrepl.TupleData, keyOnly bool, at pglogrepl.LSN) (changelog.Row, error) {
	if t == nil {
		return changelog.Row{}, nil
	}
	if len(t.Columns) > len(r.names) {
		return changelog.Row{}, fmt.Errorf("postgres source: partition %s at %s: a row of table %s has %d columns, its Relation message %d",
			d.part, at, r.table, len(t.Columns), len(r.names))
	}
	row := changelog.Row{Names: make([]string, 0, len(t.Columns)), Values: make([]changelog.Value, 0, len(t.Columns))}
	for i, c := range t.Columns {
		if keyOnly && !r.key[i] {
			continue
		}
		var v changelog.Value
		switch c.DataType {
		case pglogrepl.TupleDataTypeToast:
			continue
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeText:
			var err error
			if v, err = value(r.oids[i], c.Data); err != nil {
				return changelog.Row{}, fmt.Errorf("postgres source: partition %s at %s: table %s column %s: %w", d.part, at, r.table, r.names[i], err)
			}
		default:
			return changelog.Row{}, fmt.Errorf("postgres source: partition %s at %s: table %s column %s: tuple data of kind %q, not text", d.part, at, r.table, r.names[i], c.DataType)
		}
		row.Names = append(row.Names, r.names[i])
		row.Values = append(row.Values, v)
	}
	return row, nil
}

// change holds c back and releases the change held before it.
// r is the change's relation, whose "types" its record carries; nil for
// a TRUNCATE, which has no row to declare.
func (d *decoder) change(c *changelog.Change, r *relation, at pglogrepl.LSN) ([]source.Record, error) {
	if c.Image().IsZero() && c.Kind != changelog.Truncate {
		// Every column of the image was an unchanged TOASTed value: there
		// is nothing to write, and the key cannot be known.
		return nil, fmt.Errorf("postgres source: partition %s at %s: a %s of table %s has no column to write (its values are all unchanged TOASTed ones); "+
			"set REPLICA IDENTITY FULL on the table", d.part, at, c.Kind, c.Table)
	}
	c.TxnID = d.xid
	var out []source.Record
	if d.held != nil {
		rec, err := d.release()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	d.held, d.heldSeq, d.heldTypes = c, int64(at), nil
	if r != nil {
		d.heldTypes = r.types
	}
	return out, nil
}

// release encodes the held change as a record at the transaction's
// position.
func (d *decoder) release() (source.Record, error) {
	c := d.held
	d.held = nil
	data, err := native.AppendTyped(nil, c, d.heldTypes)
	if err != nil {
		return source.Record{}, fmt.Errorf("postgres source: partition %s at %s: %w", d.part, pglogrepl.LSN(d.heldSeq), err)
	}
	// Without the line terminator, as records of the other sources.
	data = data[:len(data)-1]
	return source.Record{Data: data, Pos: changelog.Position{Partition: d.part, Offset: d.pos, Seq: d.heldSeq}}, nil
}

// truncated decodes a TRUNCATE: under source.truncate: delete-all one
// changelog.Truncate change per table it names, in its order (a CASCADE's
// tables are among them: PostgreSQL lists every table it empties that
// the publication has; its RESTART IDENTITY option needs nothing of the
// target, which gets the source's key values); otherwise, and inside the
// window of a resumed snapshot, a refusal naming the tables.
func (d *decoder) truncated(m *pglogrepl.TruncateMessage, at pglogrepl.LSN) ([]source.Record, error) {
	names := ""
	for i, id := range m.RelationIDs {
		if i > 0 {
			names += ", "
		}
		if r, ok := d.rels[id]; ok {
			names += r.table.String()
		} else {
			names += "relation " + strconv.FormatUint(uint64(id), 10)
		}
	}
	if !d.truncate {
		return nil, fmt.Errorf("postgres source: partition %s at %s: TRUNCATE of %s: txsink does not apply TRUNCATE under source.truncate: refuse (the default). "+
			"Set source.truncate: delete-all to apply it as a delete of every row in its transaction; or empty the target table yourself, "+
			"then forget the progress of the partition and drop the slot to take the data over, "+
			"or remove the table from the publication before truncating it", d.part, at, names)
	}
	if d.inWindow() {
		return nil, fmt.Errorf("postgres source: partition %s at %s: TRUNCATE of %s committed while a resumed initial snapshot was copying: "+
			"the copy already holds what the table had after it, and the rows copied before the stop cannot be told from them. "+
			"Take the data over: drop the slot (txsink drop-slot), empty the target tables, forget the progress of the partition, and run again", d.part, at, names)
	}
	var out []source.Record
	for _, id := range m.RelationIDs {
		r, err := d.relation(id, at)
		if err != nil {
			return nil, err
		}
		recs, err := d.change(&changelog.Change{Kind: changelog.Truncate, Table: r.table}, nil, at)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}
