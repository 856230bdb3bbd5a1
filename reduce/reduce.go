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
// enter, and keys are compared in their target's comparison form (package
// collate), so keys compare as the target compares them: 101, "101" and
// 101.0 are one INT key, 1.5 and 1.50 one DECIMAL key, 'ABC' and 'abc' one
// key in a case-insensitive column, 'a' and 'a  ' one under PAD SPACE. The
// row written is the last change's, in its spelling. A key column whose
// collation txsink cannot reproduce is refused by NewTable.
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
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/collate"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/box"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
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
	// Rules are the table's apply rules, set by SetRules; every unit's
	// batch of the table carries them.
	Rules commit.Rules
	// AddColumns are the columns of Schema the target table is still to
	// get, in the unit's own transaction (schema.evolve: add-columns on
	// a target whose DDL is transactional): every unit's batch of the
	// table carries them (commit.Batch.AddColumns).
	AddColumns []coltype.Column

	// history is set on a history table (NewHistoryTable), fan on a
	// Table made by Fan: Add and Check go to its tables.
	history *historyCols
	fan     *fan

	// ignoreDeletes drops the table's deletes (delete: ignore); verCol
	// and softCol are Rules' columns (see SetRules).
	ignoreDeletes   bool
	verCol, softCol *schema.Column

	keyCols []*schema.Column
	// keyExact has bit i set when key column i is collate.Exact (the
	// first 64): its values are their own comparison form; keyInt when
	// it is also of class Int, its values int64 (see appendKey).
	keyExact, keyInt uint64
	// intKey reports that every key column is one of keyInt's, and keySeq
	// lists 0 to len(keyCols)-1: see appendIntKey.
	intKey bool
	keySeq []int
	// salt is mixed into the hashes of the table's keys (see keyHash).
	salt [2]uint64
	// colIndex maps each column of Schema, lower-cased, to its index;
	// colPos maps each column's own name to it.
	colIndex map[string]int
	colPos   map[string]int
	// writable counts the columns txsink writes (all but generated ones):
	// an update image with fewer is partial (see plan.partial).
	writable int

	// plans caches how images with a given list of column names map to
	// the table (see plan); spare is a reset tableState a Buffer takes
	// instead of building one (see Buffer.Take). Both are only caches, and
	// atomic, so one Table may serve several Buffers at once.
	plans atomic.Pointer[[]*plan]
	spare atomic.Pointer[tableState]
}

// plan says how a row image with a given list of column names becomes a row
// of the table: which image column feeds which target column, and where the
// key columns are. Images of one table nearly always list the same columns,
// so a plan is made once per list instead of looking every column up per
// row; and rows made by one plan share one column list, so a unit's groups
// need no list per row.
type plan struct {
	// names is a copy of the image names the plan was made for. Plans are
	// found by comparing names by content, never by the slice's identity, so
	// a caller that reuses a Names slice for other columns cannot get a stale
	// plan; the comparison is cheap when the strings are the same strings
	// (decoders share one names slice between the rows of a table).
	names []string
	// bad is the index in names of the first column the table lacks, -1
	// when there is none.
	bad int
	// out lists the columns of a converted row, in the target's column
	// order; it is shared by every row of the plan and never modified.
	out []string
	// conv says, for each of out, how convertRow makes its value: one
	// slice of everything the loop reads per column, so that the loop
	// keeps one base pointer live across its calls, not one per list.
	conv []conv
	// keyOut holds, for each key column, its index in out (-1: absent);
	// keySrc its index in the image as Row.Get finds it (-1: absent).
	keyOut, keySrc []int
	// keyLacks reports a key column absent from out (a keyOut of -1):
	// convertRow then refuses every row of the plan.
	keyLacks bool
	// partial reports images that lack a column the table writes: as an
	// update's image, such a one says nothing of those columns, which keep
	// their value (see Buffer.Add).
	partial bool
	// before caches the plan of the before images last seen with after
	// images of this plan (see movedFrom): an update's two images keep
	// their column lists, so it is found by one comparison of names, not
	// by planFor's look-up. Only a cache, and atomic, as Table.plans.
	before atomic.Pointer[plan]
}

// conv is how convertRow makes one value of a plan's rows: the target
// column, the value's index in the image, and the fast path tried first.
type conv struct {
	col *schema.Column
	src int
	// lo and hi are an Int column's range (coerce.IntRange), so that an
	// integer read by coerce.ShortInt is checked without asking the
	// column each time.
	lo, hi int64
	kind   convKind
}

// convKind is the fast path convertRow tries for a column before
// coerce.Value.
type convKind uint8

const (
	// convValue: none, coerce.Value converts every value.
	convValue convKind = iota
	// convInt: an Int column, its short integers read by coerce.ShortInt.
	convInt
	// convTime: a DateTime or Timestamp column, its plain date-times read
	// by coerce.DateTime.
	convTime
	// convText: a String column, its strings that fit (coerce.Text)
	// copied into the row's memory without coerce.Value's interface.
	convText
	// convDecimal: a Decimal column, its Numbers and strings in canonical
	// form that fit (coerce.DecimalText) copied as convText's are.
	convDecimal
)

// maxPlans bounds the plans a table keeps; past it the cache starts over.
// A table has one plan per distinct column list its changes carry, usually
// one or two.
const maxPlans = 16

// planFor returns the plan for images with the column names names.
func (t *Table) planFor(names []string) *plan {
	old := t.plans.Load()
	if old != nil {
		for _, p := range *old {
			if sameSlice(p.names, names) {
				return p
			}
		}
	}
	p := t.newPlan(names)
	var ps []*plan
	if old != nil && len(*old) < maxPlans {
		ps = append(make([]*plan, 0, len(*old)+1), *old...)
	}
	ps = append(ps, p)
	t.plans.Store(&ps)
	return p
}

func (t *Table) newPlan(names []string) *plan {
	p := &plan{names: append([]string(nil), names...), bad: -1}
	// idx[i] = position in the image of target column i, -1 if absent; the
	// first of several names that differ only in case wins.
	idx := make([]int, len(t.Schema.Columns))
	for i := range idx {
		idx[i] = -1
	}
	for j, name := range names {
		i, ok := t.colIndex[strings.ToLower(name)]
		if !ok {
			if p.bad < 0 {
				p.bad = j
			}
			continue
		}
		if idx[i] < 0 {
			idx[i] = j
		}
	}
	for i := range t.Schema.Columns {
		col := &t.Schema.Columns[i]
		if idx[i] < 0 || col.Generated {
			continue
		}
		p.out = append(p.out, col.Name)
		cv := conv{col: col, src: idx[i]}
		switch col.Class {
		case schema.Int:
			cv.kind = convInt
			cv.lo, cv.hi = coerce.IntRange(col)
		case schema.DateTime, schema.Timestamp:
			cv.kind = convTime
		case schema.String:
			cv.kind = convText
		case schema.Decimal:
			cv.kind = convDecimal
		}
		p.conv = append(p.conv, cv)
	}
	p.out = p.out[:len(p.out):len(p.out)]
	p.partial = len(p.out) < t.writable
	img := changelog.Row{Names: names}
	for _, kc := range t.keyCols {
		at := -1
		for j, name := range p.out {
			if name == kc.Name {
				at = j
				break
			}
		}
		p.keyOut = append(p.keyOut, at)
		p.keyLacks = p.keyLacks || at < 0
		p.keySrc = append(p.keySrc, img.Index(kc.Name))
	}
	return p
}

// hasKey reports whether images of the plan carry every key column.
func (p *plan) hasKey() bool {
	for _, j := range p.keySrc {
		if j < 0 {
			return false
		}
	}
	return true
}

// NewTable prepares t for the buffer. key is the configured key (empty means
// the table's PRIMARY KEY); appendOnly says the table takes inserts only.
// It refuses a key that disagrees with the table's PRIMARY KEY, and a table
// without a key that is not declared append-only (seed 000 §3, §15).
func NewTable(t *schema.Table, key []string, appendOnly bool) (*Table, error) {
	rt := &Table{Schema: t, AppendOnly: appendOnly, colIndex: make(map[string]int, len(t.Columns)), colPos: make(map[string]int, len(t.Columns))}
	for i, c := range t.Columns {
		rt.colIndex[strings.ToLower(c.Name)] = i
		rt.colPos[c.Name] = i
		if !c.Generated {
			rt.writable++
		}
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
	rt.salt = tableSalt(t.String())
	for _, k := range t.PrimaryKey {
		c, ok := t.Column(k)
		if !ok {
			return nil, fmt.Errorf("table %s: primary-key column %s is not a column of the table", t, k)
		}
		if c.Compare.Unsupported != "" {
			return nil, fmt.Errorf("table %s: key column %s compares by collation %s, which txsink cannot reproduce (%s): txsink would merge or keep apart changes of one row differently from the target; give the key column a binary collation or one txsink reproduces (MariaDB: utf8mb4_bin, utf8mb4_nopad_bin, utf8mb4_general_ci; PostgreSQL: a deterministic collation, or citext; SQLite: BINARY, NOCASE, RTRIM)", t, c.Name, c.Compare.Collation, c.Compare.Unsupported)
		}
		if collate.Exact(c) && len(rt.keyCols) < 64 {
			rt.keyExact |= 1 << len(rt.keyCols)
			if c.Class == schema.Int {
				rt.keyInt |= 1 << len(rt.keyCols)
			}
		}
		rt.keyCols = append(rt.keyCols, c)
	}
	rt.intKey = len(rt.keyCols) <= 64 && rt.keyInt == 1<<len(rt.keyCols)-1
	for i := range rt.keyCols {
		rt.keySeq = append(rt.keySeq, i)
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
	Type   string // the column's type, when one of its values is at fault
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
		if e.Type != "" {
			b.WriteString(" ")
			b.WriteString(e.Type)
		}
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

// Kind reports errkind.BadInput: the change is refused for what it holds
// (or names), and the same change is refused again.
func (e *Error) Kind() errkind.Kind { return errkind.BadInput }

// Where names the change's position, its target table, its key and the
// column at fault, as far as they are known.
func (e *Error) Where() errkind.Where {
	return errkind.Where{Pos: e.Pos, Table: e.Table, Key: e.Key, Column: e.Column}
}

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
	// MaxBytes flushes when the buffered rows take this many bytes of
	// memory (see Bytes).
	MaxBytes int64
	// Interval flushes once the oldest buffered change has waited this
	// long; 0 disables it.
	Interval time.Duration
}

type entry struct {
	pos changelog.Position // where the change that made the entry was read
	del bool
	// partial marks an update's image that lacks columns the table writes:
	// those keep the value the target holds (see Buffer.Add).
	partial bool
	k       string   // the key's encoding (see appendKey), the index's key
	key     []any    // key values (only for deletes; upserts read them from row)
	cols    []string // the plan's column list, shared
	row     []any
	size    int
}

// tableState is one table's part of a buffer. Entries are kept by value in
// first-seen order, and index finds a key's entry by its encoding (see
// appendKey); both keep their capacity from one unit to the next.
type tableState struct {
	t       *Table
	index   keyIndex
	entries []entry
	inserts []entry
	// truncated is set once a TRUNCATE of the table was added: the
	// entries are the changes after the last one, and the unit empties
	// the table before them (see truncate.go).
	truncated bool
	// truncPos is where the last TRUNCATE was read.
	truncPos changelog.Position
}

// reset empties ts for reuse. The entries are cleared, not only truncated,
// so the rows a taken unit holds are not kept alive by the buffer.
func (ts *tableState) reset() {
	ts.index.reset()
	clear(ts.entries)
	clear(ts.inserts)
	ts.entries, ts.inserts = ts.entries[:0], ts.inserts[:0]
	ts.truncated, ts.truncPos = false, changelog.Position{}
}

// Buffer is the per-key reduction buffer for one pipeline. It is not safe
// for concurrent use.
type Buffer struct {
	pipeline string
	tables   []*tableState
	byTable  map[*Table]*tableState
	// progress holds, per partition in first-seen order, the position of
	// its last change; partIdx finds a partition's index, and last is the
	// index touched last: a partition's changes come in runs, so most
	// changes find theirs without hashing the partition's name.
	progress []changelog.Position
	partIdx  map[string]int
	last     int
	rows     int
	bytes    int64
	changes  int
	// ignored counts the deletes tables with delete: ignore dropped.
	ignored int
	since   time.Time // when the oldest buffered change arrived
	dead    []commit.DeadLetter
	// key and oldKey are scratch space for encoding keys (see appendKey);
	// keyMem is the block the entries' keys are copied into (see
	// keyString).
	key, oldKey, keyMem []byte
	// ints and times are scratch space for a row's converted values that
	// are not written into rowMem (see convertRow): valid until the next
	// row is converted.
	ints  []int64
	times []time.Time
	// idle holds the table states a Merge emptied, kept (with their
	// capacity) for this buffer's next changes.
	idle map[*Table]*tableState
	// confined refuses a key's changes from two partitions, and keys, when
	// not nil, remembers keys' partitions across units (see
	// ConfinePartitions).
	confined bool
	keys     *KeyPartitions
	// keysIdx is the memory's index of partition keysPart (see
	// KeyPartitions.part), the last partition a key of b was noted for.
	keysPart string
	keysIdx  uint64
	// retracting holds, by partition, a -U whose +U has not come yet (see
	// Add): its key, and the progress the partition had before it, which
	// Take commits instead of the -U's own until it is paired or lone.
	retracting map[string]*retraction
	// rowMem holds the buffered rows' values (see detachIn), rowSlots
	// their []any (see convertRow); row is the scratch row convertRow
	// converts into for Check.
	rowMem   rowMem
	rowSlots rowSlots
	row      []any
	// keyRow and keyInts are keyValues' scratch.
	keyRow  []any
	keyInts []int64
	// orders holds the latest place of each partition's source logs the
	// buffer consumed (see noteOrder), lastOrder the index noted last.
	orders    []commit.Order
	lastOrder int
}

// retraction is a -U waiting for the +U that follows it.
type retraction struct {
	t   *Table
	key []any
	// hold is the partition's progress in the buffer before the -U; its
	// Partition is "" when the buffer had none (the position committed
	// last is then before the -U).
	hold changelog.Position
}

// NewBuffer returns an empty buffer for the named pipeline.
func NewBuffer(pipeline string) *Buffer {
	return &Buffer{pipeline: pipeline, byTable: map[*Table]*tableState{}, partIdx: map[string]int{}}
}

// ConfinePartitions makes b refuse, as bad input, a change of a key whose
// entry in b came from another partition, in Add and in Merge: the source
// orders changes only inside a partition, so for such a key no change is
// known to be the last, and keeping the one read last would make the
// target depend on how the partitions' reads raced. With keys not nil, b
// also records in keys the partition of every key new to it and refuses a
// key keys holds from another partition, which finds such keys across
// units, as far back as keys reaches.
//
// The *Error names the table, the key, both partitions and both
// positions, and wraps ErrCrossPartition. Append-only tables are not
// concerned: their rows have no key, and inserts of one table from many
// partitions are all kept.
//
// Buffers reducing the same pipeline's partitions separately (transaction
// mode's per-partition chunks) share one keys; the buffer they are merged
// into is confined with keys nil, since each key entered keys already.
func (b *Buffer) ConfinePartitions(keys *KeyPartitions) {
	b.confined, b.keys, b.keysIdx = true, keys, 0
}

// keyOf is a key's converted values, for messages: vals in key order, or,
// with at, the values of a row at those indexes.
type keyOf struct {
	vals []any
	at   []int
}

func (k keyOf) String() string {
	if k.at == nil {
		return RenderKey(k.vals)
	}
	vals := make([]any, len(k.at))
	for i, j := range k.at {
		if j >= 0 {
			vals[i] = k.vals[j]
		}
	}
	return RenderKey(vals)
}

// entryKey returns the key of an entry of t, for messages.
func entryKey(t *Table, e *entry) keyOf {
	if e.del {
		return keyOf{vals: e.key}
	}
	at := make([]int, len(t.keyCols))
	for i, kc := range t.keyCols {
		at[i] = -1
		for j, name := range e.cols {
			if name == kc.Name {
				at[i] = j
			}
		}
	}
	return keyOf{vals: e.row, at: at}
}

// crossError refuses a change at pos of key k of t, which partition
// other.Partition changed too, at other: in the same unit (buffered), or
// earlier as KeyPartitions remembers.
func crossError(t *Table, k keyOf, pos, other changelog.Position, buffered bool) error {
	at := other.Partition
	if other.Seq > 0 {
		at = other.String()
	}
	when := "a change read earlier, remembered by key-partitions.remember"
	if buffered {
		when = "a change buffered for the same commit"
	}
	return &Error{Pos: pos, Table: t.Schema.String(), Key: k.String(), Err: ErrCrossPartition,
		Reason: fmt.Sprintf("this key's changes come from two partitions: %s here, and %s at %s (%s)", pos.Partition, other.Partition, at, when),
		Hint:   crossHint}
}

// conflict returns the error put would return for a change at pos of the
// key encoded as key, without recording anything.
func (b *Buffer) conflict(ts *tableState, key []byte, pos changelog.Position, k *keyOf) error {
	if !b.confined {
		return nil
	}
	h := indexHash(ts.t, key)
	if i, ok := ts.index.find(ts.entries, key, h); ok {
		if other := ts.entries[i].pos; other.Partition != pos.Partition {
			return crossError(ts.t, *k, pos, other, true)
		}
		return nil
	}
	if b.keys != nil {
		if other, crossed := b.keys.check(h, keyHash2(ts.t, key), pos.Partition); crossed {
			return crossError(ts.t, *k, pos, other, false)
		}
	}
	return nil
}

// smallTables is how many tables' states state looks through before it
// hashes.
const smallTables = 4

// state returns the buffer's state for t, taking the table's spare one
// (left by an earlier Take) when there is one.
func (b *Buffer) state(t *Table) *tableState {
	// A unit mostly holds a few tables: looking through them costs less
	// than hashing the pointer. tables and byTable hold the same states.
	if len(b.tables) <= smallTables {
		for _, ts := range b.tables {
			if ts.t == t {
				return ts
			}
		}
	} else if ts := b.byTable[t]; ts != nil {
		return ts
	}
	ts := b.idle[t]
	if ts != nil {
		delete(b.idle, t)
	} else {
		ts = t.spare.Swap(nil)
	}
	if ts == nil {
		ts = &tableState{t: t}
	}
	b.byTable[t] = ts
	b.tables = append(b.tables, ts)
	return ts
}

// Rows returns the rows buffered after reduction.
func (b *Buffer) Rows() int { return b.rows }

// Bytes returns the memory the buffered rows take: their values (see
// rowBytes), their keys' encodings and the buffer's own bookkeeping for
// each, within a few percent of the live heap they hold. A change's Size
// (its record's) does not count: an update's record carries both images
// and its source metadata, twice or more what its reduced row keeps, and
// a bound in records' bytes would cut units at half the rows the memory
// allows.
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
	delete(b.retracting, d.Pos.Partition)
	b.touch(&d.Pos, now)
	b.dead = append(b.dead, d)
}

// Check reports whether Add would accept c for table t, without adding it:
// the same conversions, the same refusals. Callers that must take a
// record's changes all or none check them first.
func (b *Buffer) Check(t *Table, c *changelog.Change) error {
	switch {
	case c.Kind == changelog.Truncate:
		return checkTruncate(t, c)
	case t.fan != nil:
		return b.checkRouted(t.fan.main, t.fan.history, c)
	case t.history != nil:
		return b.checkRouted(nil, []*Table{t}, c)
	case !c.Kind.Writes():
		return nil
	case t.AppendOnly:
		if c.Kind != changelog.Insert {
			return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change reached an append-only table", c.Kind),
				Hint: "an append-only table takes inserts only; declare a primary key on the target table and drop append-only from its tables entry, or stop the source from sending updates and deletes for it"}
		}
		_, _, _, err := b.convertRow(t, c, c.After, "", false)
		return err
	case c.Kind == changelog.Delete:
		if _, err := b.keyValues(t, c, c.Before, "before"); err != nil || t.ignoreDeletes {
			return err
		}
		_, err := b.deleteExtras(t, c, c.Before, time.Time{})
		return err
	case c.Kind.Upserts():
		p, _, _, err := b.convertRow(t, c, c.After, "after", false)
		if err != nil {
			return err
		}
		if err := t.versioned(p, c); err != nil {
			return err
		}
		_, err = b.movedFrom(t, c, p)
		return err
	}
	return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("unknown change kind %d", c.Kind), Hint: "this is a bug in the decoder that produced it; please report it"}
}

// Skip records that the change at pos was consumed without adding a row
// (a tombstone, a skipped table), so progress still moves past it.
func (b *Buffer) Skip(pos changelog.Position, now time.Time) {
	if len(b.retracting) > 0 {
		// A -U followed by anything but its +U is lone.
		delete(b.retracting, pos.Partition)
	}
	b.touch(&pos, now)
}

// touch counts a change at *pos, added at now, and moves its partition's
// progress to it. pos is a pointer, as moveTo's: a Position is six words,
// which each call taking it by value copied.
func (b *Buffer) touch(pos *changelog.Position, now time.Time) {
	if b.changes == 0 && len(b.progress) == 0 {
		b.since = now
	}
	b.moveTo(pos)
	b.changes++
}

// moveTo records *pos as the progress of its partition.
func (b *Buffer) moveTo(pos *changelog.Position) {
	i := b.last
	// A source gives a partition's positions one string, told without
	// a call to compare its bytes.
	if i >= len(b.progress) || !sameString(b.progress[i].Partition, pos.Partition) && b.progress[i].Partition != pos.Partition {
		var ok bool
		if i, ok = b.partIdx[pos.Partition]; !ok {
			i = len(b.progress)
			b.partIdx[pos.Partition] = i
			b.progress = append(b.progress, *pos)
		}
		b.last = i
	}
	b.progress[i] = *pos
}

// Add adds one change for table t at time now. A change the buffer refuses
// (a value its column cannot hold, a missing key column, an update on an
// append-only table) returns an *Error and leaves the buffer as it was.
func (b *Buffer) Add(t *Table, c *changelog.Change, now time.Time) error {
	switch {
	case c.Kind == changelog.Truncate && (t.fan != nil || t.history != nil):
		return checkTruncate(t, c)
	case t.fan != nil:
		return b.addRouted(t.fan.main, t.fan.history, c, now)
	case t.history != nil:
		return b.addRouted(nil, []*Table{t}, c, now)
	}
	// A -U waits for the next change of its partition: its +U pairs with
	// it; anything else leaves it lone.
	var paired *retraction
	if len(b.retracting) > 0 {
		if r := b.retracting[c.Pos.Partition]; r != nil {
			delete(b.retracting, c.Pos.Partition)
			if c.Kind == changelog.UpdateAfter && c.Before.IsZero() && r.t == t {
				paired = r
			}
		}
	}
	if c.Kind == changelog.EndTxn {
		// A transaction boundary holds no row; only progress moves.
		b.touch(&c.Pos, now)
		return nil
	}
	if c.Order != nil {
		b.noteOrder(c.Pos.Partition, *c.Order)
	}
	if c.Kind == changelog.Truncate {
		if err := b.truncate(t, c); err != nil {
			return err
		}
		b.touch(&c.Pos, now)
		return nil
	}
	if t.AppendOnly {
		switch c.Kind {
		case changelog.Insert:
			p, row, size, err := b.convertRow(t, c, c.After, "", true)
			if err != nil {
				return err
			}
			size += entryBytes
			ts := b.state(t)
			ts.inserts = append(ts.inserts, entry{pos: c.Pos, cols: p.out, row: row, size: size})
			b.rows++
			b.bytes += int64(size)
		case changelog.UpdateBefore:
			// Nothing to do, like on keyed tables.
		default:
			return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change reached an append-only table", c.Kind),
				Hint: "an append-only table takes inserts only; declare a primary key on the target table and drop append-only from its tables entry, or stop the source from sending updates and deletes for it"}
		}
		b.touch(&c.Pos, now)
		return nil
	}
	switch c.Kind {
	case changelog.UpdateBefore:
		b.retract(t, c)
		b.touch(&c.Pos, now)
		return nil
	case changelog.Delete:
		key, err := b.keyValues(t, c, c.Before, "before")
		if err != nil {
			return err
		}
		if t.ignoreDeletes {
			b.ignored++
			break
		}
		extra, err := b.deleteExtras(t, c, c.Before, now)
		if err != nil {
			return err
		}
		key, size := b.keepAny(key)
		size += keyedEntryBytes + detachIn(&b.rowMem, extra)
		b.key = appendKey(b.key[:0], t, key, nil)
		if err := b.put(b.state(t), b.key, entry{pos: c.Pos, del: true, key: key, row: extra, size: size + len(b.key)}, &keyOf{vals: key}); err != nil {
			return err
		}
	case changelog.Insert, changelog.UpdateAfter:
		p, row, size, err := b.convertRow(t, c, c.After, "after", true)
		if err != nil {
			return err
		}
		// movedFrom's and versioned's first tests, made here: an insert,
		// or a table without a version column, needs neither call.
		var oldKey []any
		if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
			if oldKey, err = b.movedFrom(t, c, p); err != nil {
				return err
			}
		}
		if t.verCol != nil {
			if err := t.versioned(p, c); err != nil {
				return err
			}
		}
		cols := p.out
		if t.softCol != nil {
			if cols, row, err = t.revive(p, row); err != nil {
				return b.valueError(t, c, t.softCol.Name, keyFromImage(t, c.After), err)
			}
			if len(cols) != len(p.out) {
				// A row merged with the soft-delete column's value, which
				// is not in the row's memory yet.
				row, size = b.keepAny(row)
			}
		}
		if paired != nil {
			// The +U of a -U: the -U's key is the old one (the same key
			// when the update kept it, which puts nothing below).
			oldKey = paired.key
		}
		// appendKey's common case without its call (appendIntKey inlines).
		key, ok := b.key[:0], false
		if t.intKey {
			key, ok = appendIntKey(key, row, p.keyOut)
		}
		if !ok {
			key = appendKey(key, t, row, p.keyOut)
		}
		b.key = key
		ts := b.state(t)
		k := keyOf{vals: row, at: p.keyOut}
		partial := c.Kind == changelog.UpdateAfter && p.partial
		var origin *entry
		if oldKey != nil {
			b.oldKey = appendKey(b.oldKey[:0], t, oldKey, nil)
			if !bytes.Equal(b.oldKey, b.key) && partial {
				// A partial image of a row that moves: the columns it
				// lacks are the old row's, which only the buffer can give
				// (txsink does not read the target's rows).
				if i, ok := ts.index.find(ts.entries, b.oldKey, indexHash(t, b.oldKey)); ok && !ts.entries[i].del {
					o := ts.entries[i]
					origin = &o
				} else {
					return &Error{Pos: c.Pos, Table: t.Schema.String(), Key: k.String(),
						Reason: fmt.Sprintf("an update moves key %s to %s with an image without column %s: the moved row's values for them are in the target's row %s, which txsink does not read",
							RenderKey(oldKey), k, t.lacking(p.out), RenderKey(oldKey)),
						Hint: "capture full row images for updates that change a key (GoldenGate: NOCOMPRESSUPDATES; MySQL: binlog_row_image=FULL), or fix the changelog"}
				}
			}
			if !bytes.Equal(b.oldKey, b.key) && t.ignoreDeletes {
				// The old key's row stays, as any deleted row does.
				b.ignored++
			} else if !bytes.Equal(b.oldKey, b.key) {
				// Both keys or neither: the new key is checked before
				// the old one's delete is put.
				if err := b.conflict(ts, b.key, c.Pos, &k); err != nil {
					return err
				}
				// The old key goes at the update's version: its after
				// image carries it (see versioned), where a -U's +U
				// has no before image.
				extra, err := b.deleteExtras(t, c, c.After, now)
				if err != nil {
					return err
				}
				oldKey, dsize := b.keepAny(oldKey)
				dsize += keyedEntryBytes + detachIn(&b.rowMem, extra) + len(b.oldKey)
				if err := b.put(ts, b.oldKey, entry{pos: c.Pos, del: true, key: oldKey, row: extra, size: dsize}, &keyOf{vals: oldKey}); err != nil {
					return err
				}
			}
		}
		size += keyedEntryBytes + len(b.key)
		e := entry{pos: c.Pos, cols: cols, row: row, size: size, partial: partial}
		if origin != nil {
			e = t.mergeImages(origin, e)
			e.size += len(b.key) - len(origin.k)
		}
		if err := b.put(ts, b.key, e, &k); err != nil {
			return err
		}
	default:
		return &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("unknown change kind %d", c.Kind), Hint: "this is a bug in the decoder that produced it; please report it"}
	}
	b.touch(&c.Pos, now)
	return nil
}

// What an entry takes in memory beside its values (see rowBytes and
// Bytes): the entry itself in its table's slice and, for a keyed table,
// its share of the index (an 8-byte slot in a keyIndex kept a quarter to
// half full: 16 to 32 bytes) beside the key's encoding.
const (
	entryBytes      = int(unsafe.Sizeof(entry{}))
	keyedEntryBytes = entryBytes + 24
)

// put makes e the entry of the key encoded as key, whose values *k holds
// (for messages; a pointer, which the call passes in one word, not six). The index is searched with the scratch bytes; a string is
// only made for a key seen first. A confined buffer refuses a key another
// partition changed (see ConfinePartitions), changing nothing.
func (b *Buffer) put(ts *tableState, key []byte, e entry, k *keyOf) error {
	h := indexHash(ts.t, key)
	if i, ok := ts.index.find(ts.entries, key, h); ok {
		if other := ts.entries[i].pos; b.confined && other.Partition != e.pos.Partition {
			return crossError(ts.t, *k, e.pos, other, true)
		}
		return b.replace(ts, i, e)
	}
	if b.keys != nil {
		// A key new to the unit: the one look-up in the memory it costs.
		// A partition's changes come in runs (a transaction mode chunk
		// has one partition): its index in the memory is kept.
		if b.keysIdx == 0 || e.pos.Partition != b.keysPart {
			b.keysPart, b.keysIdx = e.pos.Partition, b.keys.part(e.pos.Partition)
		}
		if other, crossed := b.keys.note(h, keyHash2(ts.t, key), b.keysIdx, e.pos); crossed {
			return crossError(ts.t, *k, e.pos, other, false)
		}
	}
	e.k = b.keyString(key)
	b.append(ts, e, h)
	return nil
}

// keyChunk is the size of the blocks a buffer keeps its keys' encodings in.
const keyChunk = 4 << 10

// keyString returns key as a string in b's key memory: blocks of keyChunk
// bytes, each filled before the next is allocated and never written
// again, so a key costs an allocation per block, not one of its own. A
// key lives as long as its entry's unit (a replaced entry keeps its key),
// so a block's bytes are all live until the units holding them are gone,
// and Bytes, which counts each key's length, stays within a block of the
// truth.
func (b *Buffer) keyString(key []byte) string {
	if len(key) == 0 {
		return ""
	}
	if len(key) > cap(b.keyMem)-len(b.keyMem) {
		b.keyMem = make([]byte, 0, max(keyChunk, len(key)))
	}
	at := len(b.keyMem)
	b.keyMem = append(b.keyMem, key...)
	return unsafe.String(&b.keyMem[at], len(key))
}

// replace makes e, a later change of the same key, entry i of ts: the
// key keeps its first-seen place. A partial update's image is merged over
// the entry it follows (see mergeImages): the columns it lacks keep the
// earlier image's values. One that follows a delete of the key has no
// values for them and is refused.
func (b *Buffer) replace(ts *tableState, i int32, e entry) error {
	old := &ts.entries[i]
	if e.del && !old.del && ts.t.softCol != nil {
		e = ts.t.soften(old, e)
	}
	if e.partial && !e.del {
		if old.del {
			return &Error{Pos: e.pos, Table: ts.t.Schema.String(), Key: entryKey(ts.t, &e).String(),
				Reason: fmt.Sprintf("an update's image without column %s follows a delete of its key (at %s): the row is gone, so the columns the image lacks have no value",
					ts.t.lacking(e.cols), old.pos),
				Hint: "the source sent a partial update (a compressed or minimal row image) for a deleted row; capture full row images for this table, or fix the changelog"}
		}
		e = ts.t.mergeImages(old, e)
	}
	b.bytes += int64(e.size - old.size)
	e.k = old.k
	*old = e
	return nil
}

// mergeImages returns e, a partial update's entry, with the columns it
// lacks taken from old, the entry of the same key it follows: in the
// table's column order, each column's latest value. The result is partial
// when old was (the columns neither image carries keep the stored value).
func (t *Table) mergeImages(old *entry, e entry) entry {
	names := make([]string, 0, len(old.cols)+len(e.cols))
	vals := make([]any, 0, cap(names))
	i, j := 0, 0
	for i < len(old.cols) || j < len(e.cols) {
		switch {
		case j == len(e.cols) || (i < len(old.cols) && t.colPos[old.cols[i]] < t.colPos[e.cols[j]]):
			names, vals = append(names, old.cols[i]), append(vals, old.row[i])
			i++
		case i == len(old.cols) || t.colPos[e.cols[j]] < t.colPos[old.cols[i]]:
			names, vals = append(names, e.cols[j]), append(vals, e.row[j])
			j++
		default: // one column in both: the later value
			names, vals = append(names, e.cols[j]), append(vals, e.row[j])
			i++
			j++
		}
	}
	// The plan of the merged names shares its column list with every row
	// merged alike, so they form one group.
	e.cols, e.row, e.partial = t.planFor(names).out, vals, old.partial
	e.size = keyedEntryBytes + rowBytes(vals) + len(old.k)
	return e
}

// lacking names the columns t writes that cols lacks, for messages.
func (t *Table) lacking(cols []string) string {
	var out []string
	for _, c := range t.Schema.Columns {
		if !c.Generated && !slices.Contains(cols, c.Name) {
			out = append(out, c.Name)
		}
	}
	return strings.Join(out, ", ")
}

// retract notes a -U of table t: the +U that follows it in its partition
// tells whether the update kept the key (nothing to do) or moved it (the
// old key is deleted in the unit of the new key's upsert). Until then the
// partition's progress stays before the -U, so that a commit between the
// two never loses the -U: a restart reads it again. A -U without its key,
// or one no +U follows, deletes nothing (seed 000 §11).
func (b *Buffer) retract(t *Table, c *changelog.Change) {
	key, err := b.keyValues(t, c, c.Before, "before")
	if err != nil {
		return
	}
	key = append([]any(nil), key...) // out of keyValues' scratch
	detach(key)
	r := &retraction{t: t, key: key}
	if i, ok := b.partIdx[c.Pos.Partition]; ok {
		r.hold = b.progress[i]
	}
	if b.retracting == nil {
		b.retracting = map[string]*retraction{}
	}
	b.retracting[c.Pos.Partition] = r
}

// Forget drops what b keeps of partition part beyond its buffered changes
// (a -U waiting for its +U), for a partition given up: its next owner
// reads from the committed position.
func (b *Buffer) Forget(part string) { delete(b.retracting, part) }

// append adds e, whose key (of hash h, see indexHash) ts does not hold,
// as ts's last entry.
func (b *Buffer) append(ts *tableState, e entry, h uint64) {
	ts.entries = append(ts.entries, e)
	ts.index.add(ts.t, ts.entries, len(ts.entries)-1, h)
	b.rows++
	b.bytes += int64(e.size)
}

// Merge moves everything o holds into b, leaving o empty: b then holds
// exactly what it would had o's changes been added to it, in their order,
// after its own. Per key the later change wins in the place the key was
// first seen, tables and partitions keep their first-seen order, and the
// inserts of append-only tables follow b's. An engine that reduces each
// partition's transactions as they end merges them, in the order a commit
// takes them, into that commit's unit; each entry moves at the cost of one
// map lookup, not of a reduction. o keeps its table states, emptied, for
// its next changes.
//
// A confined b (see ConfinePartitions) refuses an entry of o whose key b
// holds from another partition, with the *Error Add would return. b then
// holds part of o, and o is left as it was in part: the caller stops (a
// pipeline stops on bad input), using neither again.
func (b *Buffer) Merge(o *Buffer) error {
	if o.Empty() {
		return nil
	}
	if b.Empty() || o.since.Before(b.since) {
		b.since = o.since
	}
	for _, ots := range o.tables {
		if len(ots.entries)+len(ots.inserts) > 0 || ots.truncated {
			ts := b.state(ots.t)
			if ots.truncated {
				// o's TRUNCATE came after everything b holds of the
				// table, and before o's own rows of it.
				b.dropRows(ts, ots.truncPos)
			}
			for i := range ots.entries {
				e := &ots.entries[i]
				h := indexHashString(ts.t, e.k)
				if j, ok := ts.index.findString(ts.entries, e.k, h); ok {
					if other := ts.entries[j].pos; b.confined && other.Partition != e.pos.Partition {
						return crossError(ts.t, entryKey(ts.t, e), e.pos, other, true)
					}
					if err := b.replace(ts, j, *e); err != nil {
						return err
					}
				} else {
					b.append(ts, *e, h)
				}
			}
			ts.inserts = append(ts.inserts, ots.inserts...)
			b.rows += len(ots.inserts)
			for i := range ots.inserts {
				b.bytes += int64(ots.inserts[i].size)
			}
		}
		ots.reset()
		if o.idle == nil {
			o.idle = map[*Table]*tableState{}
		}
		o.idle[ots.t] = ots
	}
	for i := range o.progress {
		b.moveTo(&o.progress[i])
	}
	for _, o := range o.orders {
		b.noteOrder(o.Partition, o.Order)
	}
	// o holds whole source transactions: a -U at the end of one is lone.
	clear(o.retracting)
	b.changes += o.changes
	b.ignored += o.ignored
	b.dead = append(b.dead, o.dead...)
	o.empty()
	return nil
}

// movedFrom returns the converted key of an update's before image when the
// update may have moved the row to another key, nil when it cannot have: no
// before image, a before image without every key column, or one whose key
// values are the after image's very values (the common case, decided
// without converting anything).
func (b *Buffer) movedFrom(t *Table, c *changelog.Change, after *plan) ([]any, error) {
	if c.Kind != changelog.UpdateAfter || c.Before.IsZero() {
		return nil, nil
	}
	bp := after.before.Load()
	if bp == nil || !sameSlice(bp.names, c.Before.Names) {
		bp = t.planFor(c.Before.Names)
		after.before.Store(bp)
	}
	if !bp.hasKey() {
		return nil, nil
	}
	same := true
	for i, j := range bp.keySrc {
		// The after image's key value is the one its row was converted
		// from; the row has every key column, or convertRow refused it.
		if !sameRaw(c.Before.Values[j], c.After.Values[after.conv[after.keyOut[i]].src]) {
			same = false
			break
		}
	}
	if same {
		return nil, nil
	}
	return b.keyValues(t, c, c.Before, "before")
}

// sameRaw reports whether a and b are the same value of the same type, for
// the types whose equality is cheap and safe (== panics on []byte).
// Equal raw values convert to equal values; unequal ones may still convert
// to equal values ("7" and 7.0), which the caller finds by converting.
func sameRaw(a, b changelog.Value) bool {
	switch x := a.(type) {
	case changelog.Number:
		y, ok := b.(changelog.Number)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	}
	return false
}

// keyValues converts the key columns of img, in key order, into the
// buffer's scratch key, integers in their common shape without boxing
// them (as convertRow does): valid until the next keyValues, and copied by
// keepAny for an entry that keeps it.
func (b *Buffer) keyValues(t *Table, c *changelog.Change, img changelog.Row, which string) ([]any, error) {
	p := t.planFor(img.Names)
	if cap(b.keyRow) < len(t.keyCols) {
		b.keyRow, b.keyInts = make([]any, len(t.keyCols)), make([]int64, len(t.keyCols))
	}
	vals := b.keyRow[:len(t.keyCols)]
	for i, col := range t.keyCols {
		j := p.keySrc[i]
		if j < 0 {
			return nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: col.Name,
				Reason: fmt.Sprintf("the %s image of a %s change lacks key column %s", which, c.Kind, col.Name),
				Hint:   "every key column must be present to find the row; check that the source captures the full key (for Debezium PostgreSQL set REPLICA IDENTITY FULL or keep the key in the replica identity)"}
		}
		if n, ok := coerce.Int64(col, img.Values[j]); ok {
			b.keyInts[i] = n
			vals[i] = box.Int64(&b.keyInts[i])
			continue
		}
		cv, err := coerce.Value(col, img.Values[j])
		if err != nil {
			return nil, b.valueError(t, c, col.Name, "", err)
		}
		if cv == nil {
			return nil, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: col.Name, Reason: "key column is NULL", Hint: "a primary-key value cannot be NULL; fix the source data"}
		}
		vals[i] = cv
	}
	return vals, nil
}

// appendKey appends the encoding of a key to dst: its converted values
// are vals in key order, or, with at, vals[at[i]] for key column i (a
// row's values, at its plan's keyOut). Keys the target considers equal
// encode equally: each value in its comparison form (package collate),
// which for binary-collated text is its plain rendering, and for an Int
// column, whose values are all int64 (coerce.Value), the integer's eight
// bytes, which strconv would take ten times as long to render. With
// several key columns each form is followed by its length in four bytes,
// so the encoding reads back unambiguously from its end whatever bytes the
// values hold. The encoding lives as long as the process (KeyPartitions
// keeps its hash, nothing stores it).
func appendKey(dst []byte, t *Table, vals []any, at []int) []byte {
	if t.intKey {
		if at == nil {
			at = t.keySeq
		}
		if key, ok := appendIntKey(dst, vals, at); ok {
			return key
		}
	}
	for i, kc := range t.keyCols {
		start := len(dst)
		var v any
		if at != nil {
			v = vals[at[i]]
		} else {
			v = vals[i]
		}
		if n, ok := v.(int64); ok && t.keyInt&(1<<i) != 0 {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(n))
		} else if t.keyExact&(1<<i) != 0 {
			dst = collate.AppendValue(dst, v)
		} else {
			dst = collate.AppendKey(dst, kc, v)
		}
		if len(t.keyCols) > 1 {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(dst)-start))
		}
	}
	return dst
}

// appendIntKey is appendKey for a table whose key columns are all exact
// Int columns (Table.intKey), the key's values vals[at[i]]: each value's
// eight bytes, each followed by its length (8) when there are several. The
// values of an Int column are int64 (coerce.Value), so the loop needs
// none of appendKey's choices per column; ok is false, and dst as it was,
// for a value that is not an int64 all the same.
func appendIntKey(dst []byte, vals []any, at []int) (key []byte, ok bool) {
	start := len(dst)
	several := len(at) > 1
	for _, j := range at {
		n, ok := vals[j].(int64)
		if !ok {
			return dst[:start], false
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(n))
		if several {
			dst = binary.LittleEndian.AppendUint32(dst, 8)
		}
	}
	return dst, true
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

// RowKey hashes the key of the row img identifies in t, from the image's
// raw values, converting nothing: a cheap identity for counting the
// distinct rows of a stream of changes before they reach a Buffer
// (transaction mode counts them for buffer-flush.max-rows). Equal keys
// hash equal; values that only convert equal (7 and "7", or 'A' and 'a'
// in a case-insensitive column) may hash apart, so a count made of it
// errs high, never low except by a 64-bit collision. ok is false when
// img has no such identity: an append-only table (every insert is a row
// of its own), a key column missing, NULL or of a type not hashed here.
func (t *Table) RowKey(img changelog.Row, seed maphash.Seed) (key uint64, ok bool) {
	if t.fan != nil {
		if t.fan.main == nil {
			return 0, false
		}
		return t.fan.main.RowKey(img, seed)
	}
	if t.AppendOnly || len(t.keyCols) == 0 || img.IsZero() {
		return 0, false
	}
	p := t.planFor(img.Names)
	for _, j := range p.keySrc {
		if j < 0 {
			return 0, false
		}
		// Each value is hashed on its own, with a constant per type (7
		// and "7" apart), and folded in by position, so ("ab", "c") and
		// ("a", "bc") differ too.
		var h uint64
		switch v := img.Values[j].(type) {
		case string:
			h = maphash.String(seed, v) ^ 0x73
		case changelog.Number:
			h = maphash.String(seed, string(v)) ^ 0x6e
		case int64:
			h = maphash.Comparable(seed, v) ^ 0x69
		default:
			return 0, false
		}
		key = (key ^ h) * 0x9e3779b97f4a7c15
	}
	return key, true
}

// convertRow converts every column of img for t, in the target's column
// order, and returns the row with the plan that made it (whose out names
// the row's columns). A column the target lacks is refused: writing the
// rest would drop data silently.
//
// With keep, the row is one the buffer keeps: its []any from rowSlots,
// its values written into rowMem as they are converted (see
// rowMem.place), as detachIn would copy them, and size is what it holds
// (see rowBytes). A refused row gives back the memory it took. Without
// keep (Check), the row is scratch, valid until the next convertRow, and
// size is 0.
func (b *Buffer) convertRow(t *Table, c *changelog.Change, img changelog.Row, which string, keep bool) (p *plan, row []any, size int, err error) {
	if img.IsZero() {
		return nil, nil, 0, &Error{Pos: c.Pos, Table: t.Schema.String(), Reason: fmt.Sprintf("a %s change has no row image", c.Kind), Hint: "the decoder produced an empty row; check the message"}
	}
	p = t.planFor(img.Names)
	if p.bad >= 0 {
		name := img.Names[p.bad]
		return nil, nil, 0, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: name,
			Reason: fmt.Sprintf("the change carries column %s, which the target table does not have", name),
			Hint:   "add the column to the target table (txsink never drops data silently), or set schema.evolve: add-columns to have txsink add it, then run again"}
	}
	n := len(p.out)
	// Integers and date-times in their common shapes are converted
	// without boxing, into the row's memory or, without it, into scratch
	// memory: the boxes of the others are allocations of their own.
	if len(b.ints) < n {
		b.ints, b.times = make([]int64, n), make([]time.Time, n)
	}
	m := &b.rowMem
	// What the row takes is given back if it is refused.
	slots, lo, hi := b.rowSlots, m.lo, m.hi
	// direct: the values go straight into rowMem's block, until it has no
	// room left for the row (or the row outgrows a shared block's share):
	// the rest are converted as without keep, and detachIn copies the
	// whole row into memory of its own.
	direct := keep
	if keep {
		row, size = b.rowSlots.alloc(n), 16*n
	} else {
		if cap(b.row) < n {
			b.row = make([]any, n)
		}
		row = b.row[:n]
	}
	placed := 0
	// nulls notes a NULL converted (only coerce.Value makes one): a key
	// column's is refused below.
	nulls := false
	vals, cv := img.Values, p.conv
	row = row[:len(cv)]
	for k := range cv {
		w := &cv[k]
		raw := vals[w.src]
		switch w.kind {
		case convInt:
			// coerce.Int64, with the column's range the plan's.
			if v, ok := coerce.ShortInt(raw); ok && w.lo <= v && v <= w.hi {
				size += 8
				if direct {
					if at := m.front(8, &placed); at != nil {
						*(*int64)(at) = v
						row[k] = box.Int64((*int64)(at))
						continue
					}
					direct = false
				}
				b.ints[k] = v
				row[k] = box.Int64(&b.ints[k])
				continue
			}
		case convTime:
			// coerce.DateTime's times are in UTC (see ownable).
			if tv, ok := coerce.DateTime(w.col, raw); ok {
				size += timeBytes
				if direct {
					if at := m.front(timeBytes, &placed); at != nil {
						*(*time.Time)(at) = tv
						row[k] = box.Time((*time.Time)(at))
						continue
					}
					direct = false
				}
				b.times[k] = tv
				row[k] = box.Time(&b.times[k])
				continue
			}
		case convText:
			// What coerce.Value returns for such a string is the string
			// itself, which the row keeps a copy of (text, below).
			if s, ok := raw.(string); ok && direct && coerce.Text(w.col, s) {
				if h := m.text(s, &placed); h != nil {
					size += headerBytes + len(s)
					row[k] = box.String(h)
					continue
				}
				direct = false
			}
		case convDecimal:
			// As convText: coerce.Value returns such text as a string.
			// Any other value leaves s empty, which is no decimal.
			var s string
			switch x := raw.(type) {
			case changelog.Number:
				s = string(x)
			case string:
				s = x
			}
			if direct && coerce.DecimalText(w.col, s) {
				if h := m.text(s, &placed); h != nil {
					size += headerBytes + len(s)
					row[k] = box.String(h)
					continue
				}
				direct = false
			}
		}
		v, err := coerce.Value(w.col, raw)
		if err != nil {
			b.rowSlots, m.lo, m.hi = slots, lo, hi
			return nil, nil, 0, b.valueError(t, c, w.col.Name, keyFromImage(t, img), err)
		}
		row[k] = v
		if v == nil {
			// Needs no memory (valueBytes, place).
			nulls = true
			continue
		}
		if !keep {
			continue
		}
		// Text, the common result (String, Decimal, Date, JSON columns),
		// told by one type assertion; the rest by place's switch.
		if s, ok := v.(string); ok {
			size += headerBytes + len(s)
			if direct {
				if h := m.text(s, &placed); h != nil {
					row[k] = box.String(h)
					continue
				}
				direct = false
			}
			continue
		}
		size += valueBytes(v)
		if direct {
			direct = m.place(row, k, &placed)
		}
	}
	if p.keyLacks || nulls {
		for i, kc := range t.keyCols {
			if j := p.keyOut[i]; j < 0 || row[j] == nil {
				b.rowSlots, m.lo, m.hi = slots, lo, hi
				return nil, nil, 0, &Error{Pos: c.Pos, Table: t.Schema.String(), Column: kc.Name,
					Reason: fmt.Sprintf("the %s image of a %s change lacks key column %s (or it is NULL)", which, c.Kind, kc.Name),
					Hint:   "every key column must be present to find the row; check the tables entry's primary-key and the source"}
			}
		}
	}
	if keep && !direct {
		// Some values are still the decoder's or in scratch memory.
		detachIn(m, row)
	}
	return p, row, size, nil
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

// rerunTail ends the hint of a value refused under bad-input: fail, where
// the pipeline stops and a rerun after the fix resumes at the last commit.
const rerunTail = ", then run again; nothing past the last commit was applied"

// DeadLetterReason is the reason of a refusal as a quarantined change
// stores it: under bad-input: dead-letter the pipeline went on, so "then
// run again; nothing past the last commit was applied" is not true there,
// and what to do is to feed the quarantined change again after the fix.
func DeadLetterReason(reason string) string {
	if r, ok := strings.CutSuffix(reason, rerunTail); ok {
		return r + ", then feed the quarantined change again (txsink dead-letters lists it)"
	}
	return reason
}

// valueError is the *Error for a value of column the conversion refused
// (err): the column named once, with its type, and the fix the value
// points to.
func (b *Buffer) valueError(t *Table, c *changelog.Change, column, key string, err error) error {
	const then = rerunTail
	e := &Error{Pos: c.Pos, Table: t.Schema.String(), Key: key, Column: column, Reason: err.Error(),
		Hint: "fix the value at the source or widen the target column" + then, Err: err}
	var ce *coerce.Error
	if errors.As(err, &ce) {
		e.Type, e.Reason = ce.SQLType, "value "+ce.Value+" "+ce.Reason
		switch {
		case ce.Hint != "":
			e.Hint = ce.Hint + then
		case ce.Value == "NULL":
			e.Hint = "make the column NULL-able, or have the source send a value" + then
		}
	}
	return e
}

// Take returns everything buffered as one commit unit and empties the
// buffer. It returns nil when the buffer is empty.
func (b *Buffer) Take() *commit.Unit {
	if b.Empty() {
		return nil
	}
	u := &commit.Unit{Pipeline: b.pipeline, Changes: b.changes, DeadLetters: b.dead, IgnoredDeletes: b.ignored}
	if len(b.orders) > 0 {
		u.Orders = slices.Clone(b.orders)
	}
	for _, ts := range b.tables {
		batch := &commit.Batch{Table: ts.t.Schema, Rules: ts.t.Rules, AddColumns: ts.t.AddColumns}
		var ups groupSet
		for i := range ts.entries {
			e := &ts.entries[i]
			if e.del {
				batch.Deletes = append(batch.Deletes, e.key)
				batch.DeletePos = append(batch.DeletePos, e.pos)
				if ts.t.verCol != nil {
					batch.DeleteVersions = append(batch.DeleteVersions, e.row[0])
				}
				if ts.t.softCol != nil {
					batch.SoftValues = append(batch.SoftValues, e.row[1])
				}
			} else {
				ups.add(e, len(ts.entries)-i)
			}
		}
		batch.Upserts = ups.groups
		var ins groupSet
		for i := range ts.inserts {
			ins.add(&ts.inserts[i], len(ts.inserts)-i)
		}
		batch.Inserts = ins.groups
		batch.Truncate, batch.TruncatePos = ts.truncated, ts.truncPos
		if len(batch.Deletes)+len(batch.Upserts)+len(batch.Inserts) > 0 || batch.Truncate {
			u.Batches = append(u.Batches, batch)
		}
		// The unit holds the rows, not the state: the state goes back to
		// its table for the next unit, keeping its capacity.
		ts.reset()
		ts.t.spare.Store(ts)
	}
	u.Progress = make([]changelog.Position, 0, len(b.progress))
	for _, pos := range b.progress {
		if r := b.retracting[pos.Partition]; r != nil {
			// Not past a -U whose +U has not come: a restart must read
			// it again.
			pos = r.hold
			r.hold = changelog.Position{}
			if pos.Partition == "" {
				continue
			}
		}
		u.Progress = append(u.Progress, pos)
	}
	b.empty()
	return u
}

// empty forgets what b holds once its table states are taken care of
// (handed to a unit's tables, or kept idle), keeping the capacity of its
// slices and maps.
func (b *Buffer) empty() {
	clear(b.byTable)
	clear(b.partIdx)
	clear(b.tables)
	b.tables, b.progress, b.orders = b.tables[:0], b.progress[:0], b.orders[:0]
	b.rows, b.bytes, b.changes, b.since, b.dead, b.last, b.ignored = 0, 0, 0, time.Time{}, nil, 0, 0
}

// groupSet groups rows by their column set and partiality, keeping
// first-seen order.
type groupSet struct {
	groups []commit.Group
}

// add adds e's row; left is how many rows may still come (this one
// included), the capacity a new group starts with: one column set is the
// rule. e is a pointer: an entry's row, columns and position are a dozen
// words, which passing each by value copied. An insert's entry is never
// partial.
func (g *groupSet) add(e *entry, left int) {
	for i := range g.groups {
		if gr := &g.groups[i]; gr.Partial == e.partial && sameSlice(gr.Columns, e.cols) {
			gr.Rows = append(gr.Rows, e.row)
			gr.Pos = append(gr.Pos, e.pos)
			return
		}
	}
	rows := append(make([][]any, 0, left), e.row)
	ps := append(make([]changelog.Position, 0, left), e.pos)
	g.groups = append(g.groups, commit.Group{Columns: e.cols, Rows: rows, Pos: ps, Partial: e.partial})
}

// sameSlice reports whether a and b hold the same strings. Rows of one plan
// share its column list, so the common case is one slice twice, told
// without comparing the strings; the next most common is two slices of
// the same strings (a plan's copy of a decoder's names, see plan.names),
// each told by its pointer and length without a call to compare its
// bytes.
func sameSlice(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || unsafe.StringData(a[i]) != unsafe.StringData(b[i]) && a[i] != b[i] {
			return false
		}
	}
	return true
}
