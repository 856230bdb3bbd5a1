package reduce

// History tables (tables[].mode: history): every change of a source
// table appended as a row of its own, with its kind, position,
// transaction and read time, never reduced by key; and fans, the one
// Table through which a source table's changes reach its upsert table
// and its history tables at once.

import (
	"fmt"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
)

// The columns txsink fills in every row of a history table, beside the
// change's own.
const (
	// OpColumn holds the change's kind: OpInsert, OpUpdate or OpDelete.
	OpColumn = "__op"
	// PartitionColumn holds the source partition the change was read from.
	PartitionColumn = "__source_partition"
	// OffsetColumn holds the change's changelog.Position.Offset: where
	// reading resumes past its record, as the progress table stores it.
	OffsetColumn = "__source_offset"
	// TxnColumn holds the change's source transaction id, NULL when the
	// format carries none.
	TxnColumn = "__txn_id"
	// ReadAtColumn holds when txsink read the change (the time the caller
	// passes to Add), in UTC, cut to the column's fractional digits.
	ReadAtColumn = "__read_at"
)

// The values of OpColumn.
const (
	OpInsert = "I"
	OpUpdate = "U"
	OpDelete = "D"
)

// HistoryColumns lists the columns txsink fills in a history table, in
// the order a created table has them (after the source's columns).
var HistoryColumns = []string{OpColumn, PartitionColumn, OffsetColumn, TxnColumn, ReadAtColumn}

// HistoryDeclaration returns decl as a history table is created from it
// (schema.create: missing): no key, every column NULL-able (a delete's
// before image may carry only the key), and HistoryColumns after them.
// decl itself is shared and stays as it is.
func HistoryDeclaration(decl *coltype.Table) *coltype.Table {
	out := &coltype.Table{From: decl.From, Columns: make([]coltype.Column, 0, len(decl.Columns)+len(HistoryColumns))}
	for _, c := range decl.Columns {
		c.Nullable = true
		out.Columns = append(out.Columns, c)
	}
	text := func(n int) coltype.Type {
		return coltype.Type{Kind: coltype.String, Length: n, Source: "txsink"}
	}
	out.Columns = append(out.Columns,
		coltype.Column{Name: OpColumn, Type: text(1)},
		// A partition (a file's path, a list of files) and a
		// transaction id have no bound txsink could promise: unbounded
		// text. The read time is a date-time in UTC, which MariaDB's
		// TIMESTAMP would end in 2038.
		coltype.Column{Name: PartitionColumn, Type: text(0)},
		coltype.Column{Name: OffsetColumn, Type: coltype.Type{Kind: coltype.Int, Bits: 64, Source: "txsink"}},
		coltype.Column{Name: TxnColumn, Type: text(0), Nullable: true},
		coltype.Column{Name: ReadAtColumn, Type: coltype.Type{Kind: coltype.DateTime, Frac: coltype.MaxFrac, Source: "txsink"}})
	return out
}

// historyCols are a history table's own columns, found in NewHistoryTable.
type historyCols struct {
	readAt *schema.Column
}

// NewHistoryTable prepares target table st as a history table. It
// refuses a table that lacks one of HistoryColumns, or has it of a type
// that cannot hold what txsink writes, naming every such column at once.
// A primary key of the table's own is taken as it is (an auto-increment
// or identity column the changes do not carry): txsink only inserts.
func NewHistoryTable(st *schema.Table) (*Table, error) {
	t, err := NewTable(st, nil, true)
	if err != nil {
		return nil, err
	}
	t.AppendOnly = false
	want := map[string]struct {
		classes []schema.Class
		ddl     string
	}{
		OpColumn:        {[]schema.Class{schema.String, schema.Unknown}, "VARCHAR(1) NOT NULL"},
		PartitionColumn: {[]schema.Class{schema.String, schema.Unknown}, "TEXT NOT NULL"},
		OffsetColumn:    {[]schema.Class{schema.Int, schema.Uint, schema.Decimal}, "BIGINT NOT NULL"},
		TxnColumn:       {[]schema.Class{schema.String, schema.Unknown}, "TEXT NULL"},
		ReadAtColumn:    {[]schema.Class{schema.DateTime, schema.Timestamp}, "DATETIME(6) NOT NULL (PostgreSQL: TIMESTAMP(6))"},
	}
	var problems []string
	for _, name := range HistoryColumns {
		w := want[name]
		i, ok := t.colIndex[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("it lacks column %s (add it: %s %s)", name, name, w.ddl))
			continue
		}
		c := &st.Columns[i]
		ok = false
		for _, cl := range w.classes {
			ok = ok || c.Class == cl
		}
		switch {
		case c.Generated:
			problems = append(problems, fmt.Sprintf("its column %s is generated, and txsink writes it", c.Name))
		case !ok:
			problems = append(problems, fmt.Sprintf("its column %s is %s, which cannot hold what txsink writes there (make it %s)", c.Name, c.SQLType, w.ddl))
		case name == TxnColumn && !c.Nullable:
			problems = append(problems, fmt.Sprintf("its column %s is NOT NULL, but a change of a format without transaction ids writes NULL there; make it NULL-able", c.Name))
		}
		if name == ReadAtColumn {
			t.history = &historyCols{readAt: c}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("history table %s (mode: history) cannot take txsink's rows: %s", st, strings.Join(problems, "; "))
	}
	return t, nil
}

// History reports whether t is a history table (see NewHistoryTable).
func (t *Table) History() bool { return t.history != nil }

// fan is what a Table made by Fan routes to.
type fan struct {
	main    *Table
	history []*Table
}

// Fan returns the Table through which one source table's changes reach
// main (its upsert or append-only table, nil when it has none) and each
// of history (NewHistoryTable's), in that order, as one change: Add and
// Check take or refuse a change for all of them together. The fan holds
// no rows of its own (each table's rows are its own, shared with every
// other fan and source table that writes it); its Schema is main's, or
// the first history table's. Fan with no history returns main.
func Fan(main *Table, history ...*Table) *Table {
	if len(history) == 0 {
		return main
	}
	first := main
	if first == nil {
		first = history[0]
	}
	return &Table{Schema: first.Schema, Key: first.Key, fan: &fan{main: main, history: history}}
}

// Member returns the table of t's fan (see Fan) that an *Error's Table
// names, or t when t is no fan or none of it is so named: the table to
// widen or to add columns to when a change is refused.
func (t *Table) Member(table string) *Table {
	if t.fan == nil {
		return t
	}
	if m := t.fan.main; m != nil && m.Schema.String() == table {
		return m
	}
	for _, h := range t.fan.history {
		if h.Schema.String() == table {
			return h
		}
	}
	return t
}

// historyRow is a history row converted and detached, not yet added.
type historyRow struct {
	t    *Table
	cols []string
	row  []any
	size int
}

// historyRow converts the row change c makes in history table t (see
// historyImage) and detaches it. ok is false for a change that makes
// none.
func (b *Buffer) historyRow(t *Table, c *changelog.Change, now time.Time) (r historyRow, ok bool, err error) {
	img, ok, err := historyImage(t, c, now)
	if !ok || err != nil {
		return historyRow{}, ok, err
	}
	p, row, size, err := b.convertRow(t, c, img, "", true)
	if err != nil {
		return historyRow{}, false, err
	}
	return historyRow{t: t, cols: p.out, row: row, size: entryBytes + size}, true, nil
}

// historyImage returns the row change c makes in history table t: its
// image (a delete's before image, else the after image) with
// HistoryColumns, read at now. ok is false for a change that makes none
// (a -U: its +U is the update's row; an END). A source column named like
// one of HistoryColumns is refused.
func historyImage(t *Table, c *changelog.Change, now time.Time) (ext changelog.Row, ok bool, err error) {
	var op string
	img := c.After
	switch c.Kind {
	case changelog.Insert:
		op = OpInsert
	case changelog.UpdateAfter:
		op = OpUpdate
	case changelog.Delete:
		op, img = OpDelete, c.Before
	default:
		return changelog.Row{}, false, nil
	}
	if img.IsZero() {
		return changelog.Row{}, false, &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change has no row image", c.Kind), Hint: "the decoder produced an empty row; check the message"}
	}
	for _, n := range img.Names {
		for _, h := range HistoryColumns {
			if strings.EqualFold(n, h) {
				return changelog.Row{}, false, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: n,
					Reason: fmt.Sprintf("the change carries column %s, which a history table's txsink fills itself (%s)", n, strings.Join(HistoryColumns, ", ")),
					Hint:   "rename the source column, or drop mode: history from this table's entry"}
			}
		}
	}
	step := time.Second
	for range min(t.history.readAt.FracDigits, 9) {
		step /= 10
	}
	var txn any
	if c.TxnID != "" {
		txn = c.TxnID
	}
	n := len(img.Names)
	ext = changelog.Row{Names: make([]string, n, n+len(HistoryColumns)), Values: make([]any, n, n+len(HistoryColumns))}
	copy(ext.Names, img.Names)
	copy(ext.Values, img.Values)
	ext.Names = append(ext.Names, HistoryColumns...)
	ext.Values = append(ext.Values, op, c.Pos.Partition, c.Pos.Offset, txn, now.UTC().Truncate(step))
	return ext, true, nil
}

// addRouted adds change c for main (nil: none) and for each history
// table, all or nothing: the history rows are converted first, then c is
// added to main (or, without one, its position consumed), then the rows
// appended.
func (b *Buffer) addRouted(main *Table, history []*Table, c *changelog.Change, now time.Time) error {
	rows := make([]historyRow, 0, len(history))
	for _, h := range history {
		r, ok, err := b.historyRow(h, c, now)
		if err != nil {
			return err
		}
		if ok {
			rows = append(rows, r)
		}
	}
	if main != nil {
		if err := b.Add(main, c, now); err != nil {
			return err
		}
	} else {
		// Its place in its source's log is the unit's all the same.
		b.SkipChange(c, now)
	}
	for _, r := range rows {
		ts := b.state(r.t)
		ts.inserts = append(ts.inserts, entry{pos: c.Pos, cols: r.cols, row: r.row, size: r.size})
		b.rows++
		b.bytes += int64(r.size)
	}
	return nil
}

// checkRouted is Check for main (nil: none) and each history table.
func (b *Buffer) checkRouted(main *Table, history []*Table, c *changelog.Change) error {
	for _, h := range history {
		img, ok, err := historyImage(h, c, time.Time{})
		if ok && err == nil {
			_, _, _, err = b.convertRow(h, c, img, "", false)
		}
		if err != nil {
			return err
		}
	}
	if main != nil {
		return b.Check(main, c)
	}
	return nil
}
