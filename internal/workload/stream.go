package workload

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
)

// The streamed workloads below feed benchmarks whose changelogs are too
// large to hold in memory: they hand each source transaction to an Emit
// function as soon as it is made, and keep of the final state only a
// Digest (a row count and an order-independent hash per table), which a
// target can be checked against without reading it into memory.

// Emit receives one source transaction of a streamed workload: its changes
// in order, all of partition p. The slice is reused after Emit returns.
type Emit func(p int, txn []changelog.Change) error

// Digest summarizes a final state: per table, how many rows it holds and
// the sum of their row hashes (see RowHash), which does not depend on the
// order rows are read in.
type Digest map[string]TableDigest

// TableDigest is one table's part of a Digest.
type TableDigest struct {
	Rows int64
	Sum  uint64
}

// finalState tracks the hash of every live row, by table and key (a
// number the generator derives from the row's key), while a workload is
// generated.
type finalState map[string]map[uint64]uint64

func (f finalState) put(table string, key uint64, r changelog.Row) {
	m := f[table]
	if m == nil {
		m = map[uint64]uint64{}
		f[table] = m
	}
	m[key] = RowHash(final(r))
}

func (f finalState) delete(table string, key uint64) { delete(f[table], key) }

func (f finalState) digest() Digest {
	d := Digest{}
	for table, rows := range f {
		var td TableDigest
		for _, h := range rows {
			td.Rows++
			td.Sum += h
		}
		d[table] = td
	}
	return d
}

// DigestOf returns the Digest of a final state as Result.Final holds it.
func DigestOf(final map[string]map[string]Row) Digest {
	d := Digest{}
	for table, rows := range final {
		var td TableDigest
		for _, r := range rows {
			td.Rows++
			td.Sum += RowHash(r)
		}
		d[table] = td
	}
	return d
}

// RowHash hashes a row's normalized values (see Normalize) in column-name
// order, so a generated row and the same row read from a target hash alike.
func RowHash(r Row) uint64 {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	h := fnv.New64a()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(Normalize(r[n])))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// ReadDigest reads every row of table from db and returns its digest,
// streaming: nothing but the running sum is kept. Values are rendered and
// normalized as ReadState does.
func ReadDigest(ctx context.Context, db *sql.DB, table string) (TableDigest, error) {
	var td TableDigest
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return td, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return td, fmt.Errorf("read %s: %w", table, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	r := make(Row, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return td, fmt.Errorf("read %s: %w", table, err)
		}
		for i, c := range cols {
			r[strings.ToLower(c)] = Render(vals[i])
		}
		td.Rows++
		td.Sum += RowHash(r)
	}
	if err := rows.Err(); err != nil {
		return td, fmt.Errorf("read %s: %w", table, err)
	}
	return td, nil
}

// StreamStats counts what a streamed workload emitted.
type StreamStats struct {
	// Changes counts the row changes (not counting transaction ends).
	Changes int64
	// Txns counts the source transactions.
	Txns int64
	// Final is the digest of the state the changelog leaves.
	Final Digest
}

// streamer carries what the streamed generators share.
type streamer struct {
	ns    string
	emit  Emit
	txn   []changelog.Change
	stats StreamStats
	state finalState
	next  int // the next transaction's number
}

func newStreamer(emit Emit) *streamer {
	return &streamer{ns: "shop", emit: emit, state: finalState{}}
}

func (s *streamer) table(name string) changelog.Table {
	return changelog.Table{Namespace: s.ns, Name: name}
}

// add appends one change to the transaction being built.
func (s *streamer) add(c changelog.Change) { s.txn = append(s.txn, c) }

// commit marks the transaction's end and hands it to emit.
func (s *streamer) commit(p int) error {
	if len(s.txn) == 0 {
		return nil
	}
	s.next++
	id := fmt.Sprintf("t%d", s.next)
	for i := range s.txn {
		s.txn[i].TxnID = id
	}
	s.txn[len(s.txn)-1].TxnEnd = true
	s.stats.Changes += int64(len(s.txn))
	s.stats.Txns++
	err := s.emit(p, s.txn)
	s.txn = s.txn[:0]
	return err
}

func (s *streamer) done() *StreamStats {
	s.stats.Final = s.state.digest()
	return &s.stats
}

// InsertOnly streams orders orders, each with 1 to 5 items, each order and
// its items one source transaction; order i goes to partition i mod
// partitions. It makes the same kind of rows as Generate, and nothing but
// inserts. With linked, each transaction also inserts its items' notes
// (item_notes, as Spec.Linked makes them), after the items; the orders
// and items are the same.
func InsertOnly(orders, partitions int, seed uint64, linked bool, emit Emit) (*StreamStats, error) {
	partitions = max(partitions, 1)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := newStreamer(emit)
	ot, it, nt := s.table("orders"), s.table("order_items"), s.table(notesTable)
	nm := newNoteMaker(seed)
	base := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	customers := []string{"Ada", "Grace", "Linus", "Margaret", "Zoë", "Søren", "李雷", "Anaïs"}
	items := make([]changelog.Row, 0, 5)
	for i := 0; i < orders; i++ {
		id := int64(i + 1)
		nItems := 1 + rng.IntN(5)
		var total int64
		items = items[:0]
		for l := 0; l < nItems; l++ {
			cents := int64(100 + rng.IntN(20000))
			qty := int64(1 + rng.IntN(4))
			total += cents * qty
			items = append(items, row("order_id", num(id), "line_no", num(int64(l+1)),
				"sku", fmt.Sprintf("SKU-%05d", rng.IntN(100000)), "qty", num(qty), "price", money(cents)))
		}
		created := base.Add(time.Duration(i) * 1234 * time.Millisecond)
		order := row("id", num(id), "customer", customers[rng.IntN(len(customers))], "status", "NEW",
			"amount", money(total), "created_at", created.Format("2006-01-02 15:04:05.000"), "note", nil)
		// The order goes first, then its items, as an application writes them.
		s.add(changelog.Change{Kind: changelog.Insert, Table: ot, After: order})
		s.state.put("orders", uint64(id), order)
		for l, ir := range items {
			s.add(changelog.Change{Kind: changelog.Insert, Table: it, After: ir})
			// Line numbers run up to 5: three bits hold them.
			s.state.put("order_items", uint64(id)<<3|uint64(l+1), ir)
		}
		if linked {
			for _, nr := range nm.notes(id, nItems) {
				s.add(changelog.Change{Kind: changelog.Insert, Table: nt, After: nr})
				line, _ := nr.Get("line_no")
				n, _ := nr.Get("note_no")
				s.state.put(notesTable, noteDigestKey(id, atoi(line), atoi(n)), nr)
			}
		}
		if err := s.commit(i % partitions); err != nil {
			return nil, err
		}
	}
	return s.done(), nil
}

// HotKeys streams an update-heavy changelog of table orders: keys orders,
// each changed changesPerKey times (at least 10) in an order shuffled over
// all keys, so every flush holds many changes of each key. The first
// change of a key inserts it; later ones update its status, amount and
// note, except that about 5% delete it (and the change after a delete
// inserts it again). Each change is a source transaction of its own; key k
// stays in partition k mod partitions, so its changes keep their order.
func HotKeys(keys, changesPerKey, partitions int, seed uint64, emit Emit) (*StreamStats, error) {
	partitions = max(partitions, 1)
	changesPerKey = max(changesPerKey, 10)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := newStreamer(emit)
	ot := s.table("orders")
	base := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	// Changes are dealt in rounds: every key once per round, in a fresh
	// random order, so the changes of one key are spread over the whole
	// changelog rather than bunched.
	live := make([]hotKey, keys)
	order := make([]int32, keys)
	for i := range order {
		order[i] = int32(i)
	}
	for round := 0; round < changesPerKey; round++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			id := int64(k) + 1
			h := &live[k]
			switch {
			case !h.alive:
				*h = hotKey{alive: true, customer: int32(rng.IntN(1000)), status: "NEW", amount: int32(rng.IntN(100000))}
				after := h.row(id, base)
				s.add(changelog.Change{Kind: changelog.Insert, Table: ot, After: after})
				s.state.put("orders", uint64(id), after)
			case rng.Float64() < 0.05:
				s.add(changelog.Change{Kind: changelog.Delete, Table: ot, Before: h.row(id, base)})
				h.alive = false
				s.state.delete("orders", uint64(id))
			default:
				before := h.row(id, base)
				h.status, h.amount, h.note = statuses[round%len(statuses)], int32(rng.IntN(100000)), int32(round+1)
				after := h.row(id, base)
				s.add(changelog.Change{Kind: changelog.UpdateAfter, Table: ot, Before: before, After: after})
				s.state.put("orders", uint64(id), after)
			}
			if err := s.commit(int(k) % partitions); err != nil {
				return nil, err
			}
		}
	}
	return s.done(), nil
}

// hotKey is what HotKeys keeps of a key between its changes, from which
// it makes the key's row again. Keeping the rows instead took about a
// gigabyte for 800,000 keys; txsink bench generates in its own process,
// and the runtime's bookkeeping for that heap outlived it and counted
// against the memory limit of the run measured next.
type hotKey struct {
	alive    bool
	customer int32
	status   string
	amount   int32 // cents
	note     int32 // the round of the last update, plus 1; 0 for none (NULL)
}

// row returns the row of key id as h describes it.
func (h *hotKey) row(id int64, base time.Time) changelog.Row {
	var note any
	if h.note > 0 {
		note = fmt.Sprintf("round %d", h.note-1)
	}
	created := base.Add(time.Duration(id-1) * time.Second)
	return row("id", num(id), "customer", fmt.Sprintf("c%d", h.customer), "status", h.status,
		"amount", money(int64(h.amount)), "created_at", created.Format("2006-01-02 15:04:05.000"), "note", note)
}

// SchemaPrefixed is Schema with every table name prefixed, so a benchmark
// can work next to tables of the same names.
func SchemaPrefixed(dialect, prefix string) []string {
	stmts := Schema(dialect)
	for i, st := range stmts {
		for _, t := range Tables {
			st = strings.Replace(st, "CREATE TABLE "+t+" (", "CREATE TABLE "+prefix+t+" (", 1)
		}
		stmts[i] = st
	}
	return stmts
}
