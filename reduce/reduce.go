// Package reduce is txsink's per-key buffer: it keeps, for every key of every
// target table, only the last action the changelog asked for, and hands the
// result out as one commit.Unit.
//
// It is pure: no I/O, no goroutines, no clock of its own (callers pass the
// time in). The rules (seed 000 §8–9) are:
//
//	+I, +U        upsert the new image
//	-D            delete by key
//	-U            ignored: an upsert target does not need it, and a lone -U
//	              at a flush boundary must never delete the row
//	later change  replaces the earlier one for the same key
//
// An update whose before image has another key than its after image moved
// the row: the old key is deleted and the new one upserted, in the same unit.
// A table without a primary key is append-only: its +I rows are kept in
// order, and a +U or -D reaching it is refused as bad input.
//
// Values are converted for their target columns (package coerce) as they
// enter, so keys compare as the target compares them: 101, "101" and 101.0
// are one INT key, and 'ABC' and 'abc' are one key in a case-insensitive
// column.
//
// A typical loop:
//
//	buf := reduce.NewBuffer("orders-sync")
//	for change := range changes {
//		if err := buf.Add(tables[change.Table], &change, now()); err != nil {
//			return err // *reduce.Error: names table, key, column and position
//		}
//		if buf.Due(now(), policy) != reduce.NotDue {
//			unit := buf.Take()
//			apply(unit) // one target transaction
//		}
//	}
package reduce

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
)

// Table is what the buffer knows of one target table: its schema and how
// its key is made.
type Table struct {
	// Schema is the target table as its catalog describes it.
	Schema *schema.Table
	// Key lists the key columns txsink reduces by, in target key order. It
	// must equal Schema.PrimaryKey (txsink check and NewTable verify it);
	// empty for an append-only table.
	Key []string
	// AppendOnly marks a table that only takes inserts.
	AppendOnly bool

	keyCols []*schema.Column
	// writable holds, for each column of Schema, whether txsink writes it.
	colIndex map[string]int
}

// NewTable prepares t for the buffer. key is the configured key (empty means
// the table's PRIMARY KEY); appendOnly says the table takes inserts only.
// It refuses a key that disagrees with the table's PRIMARY KEY, and a table
// without a key that is not declared append-only (seed 000 §3, §15).
func NewTable(t *schema.Table, key []string, appendOnly bool) (*Table, error) {
	rt := &Table{Schema: t, AppendOnly: appendOnly, colIndex: make(map[string]int, len(t.Columns))}
	for i, c := range t.Columns {
		rt.colIndex[strings.ToLower(c.Name)] = i
	}
	if appendOnly {
		if len(key) > 0 {
			return nil, fmt.Errorf("table %s: primary-key and append-only are both set: an append-only table is written by plain INSERT and has no key; remove one of them", t)
		}
		return rt, nil
	}
	if len(t.PrimaryKey) == 0 {
		return nil, fmt.Errorf("table %s has no PRIMARY KEY: a changelog can carry updates and deletes, which need a key to find the row; declare a primary key on the target table, or set append-only: true on its tables entry if it only ever receives inserts", t)
	}
	if len(key) > 0 && !sameColumns(key, t.PrimaryKey) {
		return nil, fmt.Errorf("table %s: configured primary-key [%s] differs from the target's PRIMARY KEY [%s]: reducing by one key and writing by another overwrites or duplicates rows (seed 000 §15); make them the same, column for column", t, strings.Join(key, ", "), strings.Join(t.PrimaryKey, ", "))
	}
	rt.Key = t.PrimaryKey
	for _, k := range t.PrimaryKey {
		c, ok := t.Column(k)
		if !ok {
			return nil, fmt.Errorf("table %s: primary-key column %s is not a column of the table", t, k)
		}
		rt.keyCols = append(rt.keyCols, c)
	}
	return rt, nil
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

// Error is a change the buffer refuses: bad input. It names everything a
// person needs to find and fix it. It is permanent: retrying cannot help.
type Error struct {
	Pos    changelog.Position
	Table  string // the target table
	Key    string // the row's key, rendered, when known
	Column string // the column, when one is at fault
	Reason string
	Hint   string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": table ")
	b.WriteString(e.Table)
	if e.Key != "" {
		b.WriteString(" key ")
		b.WriteString(e.Key)
	}
	if e.Column != "" {
		b.WriteString(" column ")
		b.WriteString(e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// FlushReason says why a buffer is due for a flush.
type FlushReason uint8

// The flush reasons.
const (
	NotDue   FlushReason = iota
	MaxRows              // buffer-flush.max-rows reached
	MaxBytes             // buffer-flush.max-bytes reached
	Interval             // buffer-flush.interval passed since the oldest buffered change
)

func (r FlushReason) String() string {
	return [...]string{"not-due", "max-rows", "max-bytes", "interval"}[r]
}

// Policy holds the flush triggers.
type Policy struct {
	// MaxRows flushes when the buffer holds this many rows after reduction.
	MaxRows int
	// MaxBytes flushes when the buffered rows hold this many bytes.
	MaxBytes int64
	// Interval flushes once the oldest buffered change has waited this
	// long; 0 disables it.
	Interval time.Duration
}

type entry struct {
	pos  changelog.Position // where the change that made the entry was read
	del  bool
	key  []any // key values (only for deletes; upserts read them from row)
	cols []string
	row  []any
	size int
}

type tableState struct {
	t       *Table
	order   []string // keys in first-seen order
	entries map[string]*entry
	inserts []entry
}

// Buffer is the per-key reduction buffer for one pipeline. It is not safe
// for concurrent use.
type Buffer struct {
	pipeline string
	tables   []*tableState
	byTable  map[*Table]*tableState
	progress map[string]changelog.Position
	partOrd  []string
	rows     int
	bytes    int64
	changes  int
	since    time.Time // when the oldest buffered change arrived
	dead     []commit.DeadLetter
}

// NewBuffer returns an empty buffer for the named pipeline.
func NewBuffer(pipeline string) *Buffer {
	return &Buffer{pipeline: pipeline, byTable: map[*Table]*tableState{}, progress: map[string]changelog.Position{}}
}

// Rows returns the rows buffered after reduction.
func (b *Buffer) Rows() int { return b.rows }

// Bytes returns the bytes the buffered rows hold (the sum of their changes'
// Size).
func (b *Buffer) Bytes() int64 { return b.bytes }

// Changes returns the changes added since the last Take.
func (b *Buffer) Changes() int { return b.changes }

// Empty reports whether nothing, not even progress, waits to be taken.
func (b *Buffer) Empty() bool { return b.changes == 0 && len(b.progress) == 0 }

// Since returns when the oldest change of the buffer arrived (zero when empty).
func (b *Buffer) Since() time.Time { return b.since }

// Due says whether the buffer should be flushed now under policy p.
func (b *Buffer) Due(now time.Time, p Policy) FlushReason {
	switch {
	case b.changes == 0 && len(b.progress) == 0:
		return NotDue
	case p.MaxRows > 0 && b.rows >= p.MaxRows:
		return MaxRows
	case p.MaxBytes > 0 && b.bytes >= p.MaxBytes:
		return MaxBytes
	case p.Interval > 0 && !b.since.IsZero() && now.Sub(b.since) >= p.Interval:
		return Interval
	}
	return NotDue
}

// DeadLetter records that the record at pos is quarantined instead of
// applied: progress moves past it, and the unit carries d.
func (b *Buffer) DeadLetter(d commit.DeadLetter, now time.Time) {
	b.touch(d.Pos, now)
	b.dead = append(b.dead, d)
}

// Check reports whether Add would accept c for table t, without adding it:
// the same conversions, the same refusals. Callers that must take a
// record's changes all or none check them first.
func (b *Buffer) Check(t *Table, c *changelog.Change) error {
	switch {
	case c.Kind == changelog.EndTxn, c.Kind == changelog.UpdateBefore:
		return nil
	case t.AppendOnly:
		if c.Kind != changelog.Insert {
			return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change reached an append-only table", c.Kind),
				Hint: "an append-only table takes inserts only; declare a primary key on the target table and drop append-only from its tables entry, or stop the source from sending updates and deletes for it"}
		}
		_, _, err := b.convertRow(t, c, c.After, "")
		return err
	case c.Kind == changelog.Delete:
		_, _, err := b.key(t, c, c.Before, "before")
		return err
	case c.Kind.Upserts():
		if _, _, err := b.convertRow(t, c, c.After, "after"); err != nil {
			return err
		}
		if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() && b.hasKey(t, c.Before) {
			_, _, err := b.key(t, c, c.Before, "before")
			return err
		}
		return nil
	}
	return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("unknown change kind %d", c.Kind), Hint: "this is a bug in the decoder that produced it; please report it"}
}

// Skip records that the change at pos was consumed without adding a row
// (a tombstone, a skipped table), so progress still moves past it.
func (b *Buffer) Skip(pos changelog.Position, now time.Time) {
	b.touch(pos, now)
}

func (b *Buffer) touch(pos changelog.Position, now time.Time) {
	if b.changes == 0 && len(b.progress) == 0 {
		b.since = now
	}
	if _, ok := b.progress[pos.Partition]; !ok {
		b.partOrd = append(b.partOrd, pos.Partition)
	}
	b.progress[pos.Partition] = pos
	b.changes++
}

// Add adds one change for table t at time now. A change the buffer refuses
// (a value its column cannot hold, a missing key column, an update on an
// append-only table) returns an *Error and leaves the buffer as it was.
func (b *Buffer) Add(t *Table, c *changelog.Change, now time.Time) error {
	ts := b.byTable[t]
	if ts == nil {
		ts = &tableState{t: t, entries: map[string]*entry{}}
		b.byTable[t] = ts
		b.tables = append(b.tables, ts)
	}
	if c.Kind == changelog.EndTxn {
		// A transaction boundary holds no row; only progress moves.
		b.touch(c.Pos, now)
		return nil
	}
	if t.AppendOnly {
		switch c.Kind {
		case changelog.Insert:
			cols, row, err := b.convertRow(t, c, c.After, "")
			if err != nil {
				return err
			}
			ts.inserts = append(ts.inserts, entry{pos: c.Pos, cols: cols, row: row, size: c.Size})
			b.rows++
			b.bytes += int64(c.Size)
		case changelog.UpdateBefore:
			// Nothing to do, like on keyed tables.
		default:
			return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change reached an append-only table", c.Kind),
				Hint: "an append-only table takes inserts only; declare a primary key on the target table and drop append-only from its tables entry, or stop the source from sending updates and deletes for it"}
		}
		b.touch(c.Pos, now)
		return nil
	}
	switch c.Kind {
	case changelog.UpdateBefore:
		b.touch(c.Pos, now)
		return nil
	case changelog.Delete:
		key, ks, err := b.key(t, c, c.Before, "before")
		if err != nil {
			return err
		}
		b.put(ts, ks, &entry{pos: c.Pos, del: true, key: key, size: keySize(c)})
	case changelog.Insert, changelog.UpdateAfter:
		cols, row, err := b.convertRow(t, c, c.After, "after")
		if err != nil {
			return err
		}
		ks := b.keyOf(t, cols, row)
		var oldKey []any
		oldKs := ""
		if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() && b.hasKey(t, c.Before) {
			oldKey, oldKs, err = b.key(t, c, c.Before, "before")
			if err != nil {
				return err
			}
		}
		if oldKey != nil && oldKs != ks {
			b.put(ts, oldKs, &entry{pos: c.Pos, del: true, key: oldKey, size: keySize(c)})
		}
		b.put(ts, ks, &entry{pos: c.Pos, cols: cols, row: row, size: c.Size})
	default:
		return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("unknown change kind %d", c.Kind), Hint: "this is a bug in the decoder that produced it; please report it"}
	}
	b.touch(c.Pos, now)
	return nil
}

func keySize(c *changelog.Change) int {
	// A delete keeps only its key; count a small fixed cost so max-bytes
	// still bounds a buffer full of deletes.
	if c.Size < 64 {
		return c.Size
	}
	return 64
}

func (b *Buffer) put(ts *tableState, ks string, e *entry) {
	if old, ok := ts.entries[ks]; ok {
		b.bytes += int64(e.size - old.size)
		ts.entries[ks] = e
		return
	}
	ts.entries[ks] = e
	ts.order = append(ts.order, ks)
	b.rows++
	b.bytes += int64(e.size)
}

// hasKey reports whether img carries every key column.
func (b *Buffer) hasKey(t *Table, img changelog.Row) bool {
	for _, k := range t.Key {
		if _, ok := img.Get(k); !ok {
			return false
		}
	}
	return true
}

// key converts the key columns of img and returns them with their
// comparison string.
func (b *Buffer) key(t *Table, c *changelog.Change, img changelog.Row, which string) ([]any, string, error) {
	vals := make([]any, len(t.keyCols))
	for i, col := range t.keyCols {
		v, ok := img.Get(col.Name)
		if !ok {
			return nil, "", &Error{Pos: c.Pos, Table: t.Schema.String(), Column: col.Name,
				Reason: fmt.Sprintf("the %s image of a %s change lacks key column %s", which, c.Kind, col.Name),
				Hint:   "every key column must be present to find the row; check that the source captures the full key (for Debezium PostgreSQL set REPLICA IDENTITY FULL or keep the key in the replica identity)"}
		}
		cv, err := coerce.Value(col, v)
		if err != nil {
			return nil, "", b.valueError(t, c, col.Name, "", err)
		}
		if cv == nil {
			return nil, "", &Error{Pos: c.Pos, Table: t.Schema.String(), Column: col.Name, Reason: "key column is NULL", Hint: "a primary-key value cannot be NULL; fix the source data"}
		}
		vals[i] = cv
	}
	return vals, keyString(t, vals), nil
}

// keyOf returns the comparison string of a converted row's key.
func (b *Buffer) keyOf(t *Table, cols []string, row []any) string {
	vals := make([]any, len(t.keyCols))
	for i, kc := range t.keyCols {
		for j, c := range cols {
			if c == kc.Name {
				vals[i] = row[j]
				break
			}
		}
	}
	return keyString(t, vals)
}

// keyString renders key values into a string that is equal for keys the
// target considers equal.
func keyString(t *Table, vals []any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(0)
		}
		s := render(v)
		if t.keyCols[i].CaseInsensitive {
			s = strings.ToLower(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		return fmt.Sprint(x)
	}
}

// RenderKey renders key values for messages: "(101)" or "(7, 'A-1')".
func RenderKey(vals []any) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		switch x := v.(type) {
		case string:
			b.WriteString(strconv.Quote(x))
		default:
			b.WriteString(render(x))
		}
	}
	b.WriteByte(')')
	return b.String()
}

// convertRow converts every column of img for t, in the target's column
// order. A column the target lacks is refused: writing the rest would drop
// data silently.
func (b *Buffer) convertRow(t *Table, c *changelog.Change, img changelog.Row, which string) ([]string, []any, error) {
	if img.IsZero() {
		return nil, nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change has no row image", c.Kind), Hint: "the decoder produced an empty row; check the message"}
	}
	// idx[i] = position in img of target column i, -1 if absent.
	n := len(t.Schema.Columns)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = -1
	}
	for j, name := range img.Names {
		i, ok := t.colIndex[strings.ToLower(name)]
		if !ok {
			return nil, nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: name,
				Reason: fmt.Sprintf("the change carries column %s, which the target table does not have", name),
				Hint:   "add the column to the target table (txsink never drops data silently), then run again"}
		}
		if idx[i] < 0 {
			idx[i] = j
		}
	}
	cols := make([]string, 0, len(img.Names))
	row := make([]any, 0, len(img.Names))
	for i := range t.Schema.Columns {
		if idx[i] < 0 {
			continue
		}
		col := &t.Schema.Columns[i]
		if col.Generated {
			continue
		}
		v, err := coerce.Value(col, img.Values[idx[i]])
		if err != nil {
			return nil, nil, b.valueError(t, c, col.Name, keyFromImage(t, img), err)
		}
		cols = append(cols, col.Name)
		row = append(row, v)
	}
	for _, kc := range t.keyCols {
		found := false
		for j, name := range cols {
			if name == kc.Name {
				found = row[j] != nil
				break
			}
		}
		if !found {
			return nil, nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: kc.Name,
				Reason: fmt.Sprintf("the %s image of a %s change lacks key column %s (or it is NULL)", which, c.Kind, kc.Name),
				Hint:   "every key column must be present to find the row; check the tables entry's primary-key and the source"}
		}
	}
	return cols, row, nil
}

// keyFromImage renders the key of an image for messages, best effort.
func keyFromImage(t *Table, img changelog.Row) string {
	if len(t.keyCols) == 0 {
		return ""
	}
	vals := make([]any, len(t.keyCols))
	for i, kc := range t.keyCols {
		v, _ := img.Get(kc.Name)
		vals[i] = coerce.Describe(v)
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.(string))
	}
	b.WriteByte(')')
	return b.String()
}

func (b *Buffer) valueError(t *Table, c *changelog.Change, column, key string, err error) error {
	var ce *coerce.Error
	reason := err.Error()
	if errors.As(err, &ce) {
		reason = ce.Error()
	}
	return &Error{Pos: c.Pos, Table: t.Schema.String(), Key: key, Column: column, Reason: reason,
		Hint: "fix the value at the source or widen the target column, then run again; nothing past the last commit was applied", Err: err}
}

// Take returns everything buffered as one commit unit and empties the
// buffer. It returns nil when the buffer is empty.
func (b *Buffer) Take() *commit.Unit {
	if b.Empty() {
		return nil
	}
	u := &commit.Unit{Pipeline: b.pipeline, Changes: b.changes, DeadLetters: b.dead}
	for _, ts := range b.tables {
		batch := &commit.Batch{Table: ts.t.Schema}
		var ups groupSet
		for _, ks := range ts.order {
			e := ts.entries[ks]
			if e.del {
				batch.Deletes = append(batch.Deletes, e.key)
				batch.DeletePos = append(batch.DeletePos, e.pos)
			} else {
				ups.add(e.cols, e.row, e.pos)
			}
		}
		batch.Upserts = ups.groups
		var ins groupSet
		for i := range ts.inserts {
			ins.add(ts.inserts[i].cols, ts.inserts[i].row, ts.inserts[i].pos)
		}
		batch.Inserts = ins.groups
		if len(batch.Deletes)+len(batch.Upserts)+len(batch.Inserts) > 0 {
			u.Batches = append(u.Batches, batch)
		}
	}
	for _, p := range b.partOrd {
		u.Progress = append(u.Progress, b.progress[p])
	}
	*b = Buffer{pipeline: b.pipeline, byTable: map[*Table]*tableState{}, progress: map[string]changelog.Position{}}
	return u
}

// groupSet groups rows by their column set, keeping first-seen order.
type groupSet struct {
	groups []commit.Group
}

func (g *groupSet) add(cols []string, row []any, pos changelog.Position) {
	for i := range g.groups {
		if sameSlice(g.groups[i].Columns, cols) {
			g.groups[i].Rows = append(g.groups[i].Rows, row)
			g.groups[i].Pos = append(g.groups[i].Pos, pos)
			return
		}
	}
	g.groups = append(g.groups, commit.Group{Columns: cols, Rows: [][]any{row}, Pos: []changelog.Position{pos}})
}

func sameSlice(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
