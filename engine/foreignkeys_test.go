package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
)

// fkSchema is orders ← order_items ← item_notes with real foreign keys:
// an item's order cascades (a source such as MySQL, whose cascades are not
// in its changelog, deletes an order alone), a note's item does not, and a
// note may reply to another note (a key of the table to itself).
func fkSchema(dialect string) []string {
	engineOpt := fkEngine(dialect)
	return []string{
		"CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, items INT NOT NULL)" + engineOpt,
		"CREATE TABLE order_items (id INT PRIMARY KEY, order_id INT NOT NULL, sku VARCHAR(40) NOT NULL, notes INT NOT NULL," +
			" CONSTRAINT items_order FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE)" + engineOpt,
		"CREATE TABLE item_notes (id INT PRIMARY KEY, item_id INT NOT NULL, reply_to INT NULL, body VARCHAR(80) NOT NULL," +
			" CONSTRAINT notes_item FOREIGN KEY (item_id) REFERENCES order_items (id)," +
			" CONSTRAINT notes_reply FOREIGN KEY (reply_to) REFERENCES item_notes (id))" + engineOpt,
	}
}

// fkEngine is the table option that makes foreign keys hold in dialect:
// InnoDB on MariaDB, whatever the server's default engine.
func fkEngine(dialect string) string {
	if dialect == "mysql" {
		return " ENGINE=InnoDB"
	}
	return ""
}

// fkInvariant counts, in one reading, the orders whose items column is
// not their number of items and the items whose notes column is not
// their number of notes: every source transaction keeps both.
const fkInvariant = `SELECT (SELECT COUNT(*) FROM orders o WHERE o.items <> (SELECT COUNT(*) FROM order_items i WHERE i.order_id = o.id))
	+ (SELECT COUNT(*) FROM order_items i WHERE i.notes <> (SELECT COUNT(*) FROM item_notes n WHERE n.item_id = i.id))`

type fkOrder struct {
	customer string
	items    int64
}

type fkItem struct {
	order int64
	sku   string
	notes int64
}

type fkNote struct {
	item, replyTo int64 // replyTo 0: none
	body          string
}

// fkModel is the source database: it applies operations that keep every
// foreign key at every step, as the source's own checks do, and writes
// the changelog they produce, a source transaction per step.
type fkModel struct {
	rng                  *rand.Rand
	orders               map[int64]*fkOrder
	items                map[int64]*fkItem
	notes                map[int64]*fkNote
	next                 [3]int64
	freeOrders, freeItem []int64
	txn, out             []changelog.Change
	// txns counts the source transactions; cascades the orders deleted
	// alone, moves the items and notes re-parented.
	txns, cascades, moves int
}

var (
	fkOrders = changelog.Table{Namespace: "shop", Name: "orders"}
	fkItems  = changelog.Table{Namespace: "shop", Name: "order_items"}
	fkNotes  = changelog.Table{Namespace: "shop", Name: "item_notes"}
)

func fkNum(n int64) changelog.Number { return changelog.Number(fmt.Sprint(n)) }

func (m *fkModel) orderRow(id int64) changelog.Row {
	o := m.orders[id]
	return row("id", fkNum(id), "customer", o.customer, "items", fkNum(o.items))
}

func (m *fkModel) itemRow(id int64) changelog.Row {
	it := m.items[id]
	return row("id", fkNum(id), "order_id", fkNum(it.order), "sku", it.sku, "notes", fkNum(it.notes))
}

func (m *fkModel) noteRow(id int64) changelog.Row {
	n := m.notes[id]
	var reply any
	if n.replyTo != 0 {
		reply = fkNum(n.replyTo)
	}
	return row("id", fkNum(id), "item_id", fkNum(n.item), "reply_to", reply, "body", n.body)
}

func (m *fkModel) emit(kind changelog.Kind, t changelog.Table, before, after changelog.Row) {
	m.txn = append(m.txn, changelog.Change{Kind: kind, Table: t, Before: before, After: after})
}

// update emits a +U of a row after change, which alters the model.
func (m *fkModel) update(t changelog.Table, rowOf func(int64) changelog.Row, id int64, change func()) {
	before := rowOf(id)
	change()
	m.emit(changelog.UpdateAfter, t, before, rowOf(id))
}

func keysOf[V any](mp map[int64]V) []int64 {
	ks := make([]int64, 0, len(mp))
	for k := range mp {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (m *fkModel) pick(ks []int64) int64 { return ks[m.rng.IntN(len(ks))] }

func (m *fkModel) newID(kind int, free *[]int64) int64 {
	if len(*free) > 0 && m.rng.IntN(2) == 0 {
		i := m.rng.IntN(len(*free))
		id := (*free)[i]
		*free = slices.Delete(*free, i, i+1)
		return id
	}
	m.next[kind]++
	return m.next[kind]
}

func (m *fkModel) newOrder() {
	id := m.newID(0, &m.freeOrders)
	m.orders[id] = &fkOrder{customer: fmt.Sprintf("c%d", m.rng.IntN(50))}
	m.emit(changelog.Insert, fkOrders, changelog.Row{}, m.orderRow(id))
	for k := m.rng.IntN(4); k > 0; k-- {
		m.addItem(id)
	}
}

func (m *fkModel) addItem(order int64) {
	id := m.newID(1, &m.freeItem)
	m.items[id] = &fkItem{order: order, sku: fmt.Sprintf("sku-%d", m.rng.IntN(1000))}
	m.emit(changelog.Insert, fkItems, changelog.Row{}, m.itemRow(id))
	m.update(fkOrders, m.orderRow, order, func() { m.orders[order].items++ })
}

func (m *fkModel) addNote(item int64) {
	m.next[2]++
	id := m.next[2]
	n := &fkNote{item: item, body: fmt.Sprintf("note %d", m.rng.IntN(1000))}
	if len(m.notes) > 0 && m.rng.IntN(2) == 0 {
		n.replyTo = m.pick(keysOf(m.notes))
	}
	m.notes[id] = n
	m.emit(changelog.Insert, fkNotes, changelog.Row{}, m.noteRow(id))
	m.update(fkItems, m.itemRow, item, func() { m.items[item].notes++ })
}

// moveItem re-parents an item, its orders' counts updated before or
// after.
func (m *fkModel) moveItem(id, to int64) {
	m.moves++
	from := m.items[id].order
	counts := func() {
		m.update(fkOrders, m.orderRow, from, func() { m.orders[from].items-- })
		m.update(fkOrders, m.orderRow, to, func() { m.orders[to].items++ })
	}
	first := m.rng.IntN(2) == 0
	if first {
		counts()
	}
	m.update(fkItems, m.itemRow, id, func() { m.items[id].order = to })
	if !first {
		counts()
	}
}

func (m *fkModel) moveNote(id, to int64) {
	m.moves++
	from := m.notes[id].item
	m.update(fkNotes, m.noteRow, id, func() { m.notes[id].item = to })
	m.update(fkItems, m.itemRow, from, func() { m.items[from].notes-- })
	m.update(fkItems, m.itemRow, to, func() { m.items[to].notes++ })
}

// deleteNote deletes a note after its replies: each is deleted first (its
// own replies before it) or made to reply to nothing.
func (m *fkModel) deleteNote(id int64) {
	for _, r := range keysOf(m.notes) {
		if n, ok := m.notes[r]; ok && n.replyTo == id {
			if m.rng.IntN(2) == 0 {
				m.deleteNote(r)
			} else {
				m.update(fkNotes, m.noteRow, r, func() { n.replyTo = 0 })
			}
		}
	}
	if _, ok := m.notes[id]; !ok {
		return
	}
	item := m.notes[id].item
	m.emit(changelog.Delete, fkNotes, m.noteRow(id), changelog.Row{})
	delete(m.notes, id)
	m.update(fkItems, m.itemRow, item, func() { m.items[item].notes-- })
}

func (m *fkModel) deleteItem(id int64) {
	for _, n := range keysOf(m.notes) {
		if nt, ok := m.notes[n]; ok && nt.item == id {
			m.deleteNote(n)
		}
	}
	order := m.items[id].order
	m.emit(changelog.Delete, fkItems, m.itemRow(id), changelog.Row{})
	delete(m.items, id)
	m.freeItem = append(m.freeItem, id)
	m.update(fkOrders, m.orderRow, order, func() { m.orders[order].items-- })
}

// deleteOrder deletes an order: with its items and notes deleted first,
// or, when no item of it has notes, alone, the target's ON DELETE CASCADE
// deleting its items as the source's did without saying so. An order
// deleted that way never comes back: a flush that deleted and inserted it
// again would keep only the insert, and its old items with it.
func (m *fkModel) deleteOrder(id int64) {
	var items []int64
	noted := false
	for _, i := range keysOf(m.items) {
		if m.items[i].order == id {
			items = append(items, i)
			noted = noted || m.items[i].notes > 0
		}
	}
	if !noted && m.rng.IntN(3) == 0 {
		m.cascades++
		m.emit(changelog.Delete, fkOrders, m.orderRow(id), changelog.Row{})
		delete(m.orders, id)
		for _, i := range items {
			delete(m.items, i)
			m.freeItem = append(m.freeItem, i)
		}
		return
	}
	for _, i := range items {
		m.deleteItem(i)
	}
	m.emit(changelog.Delete, fkOrders, m.orderRow(id), changelog.Row{})
	delete(m.orders, id)
	m.freeOrders = append(m.freeOrders, id)
}

// step runs one source transaction of one to three random operations.
func (m *fkModel) step() {
	for k := 1 + m.rng.IntN(3); k > 0; k-- {
		orders, items, notes := keysOf(m.orders), keysOf(m.items), keysOf(m.notes)
		switch r := m.rng.IntN(100); {
		case r < 22 || len(orders) < 2:
			m.newOrder()
		case r < 36:
			m.addItem(m.pick(orders))
		case r < 54 && len(items) > 0:
			m.addNote(m.pick(items))
		case r < 66 && len(items) > 0:
			id, to := m.pick(items), m.pick(orders)
			if to != m.items[id].order {
				m.moveItem(id, to)
			}
		case r < 74 && len(notes) > 0 && len(items) > 1:
			id, to := m.pick(notes), m.pick(items)
			if to != m.notes[id].item {
				m.moveNote(id, to)
			}
		case r < 82 && len(notes) > 0:
			m.deleteNote(m.pick(notes))
		case r < 90 && len(items) > 0:
			m.deleteItem(m.pick(items))
		default:
			m.deleteOrder(m.pick(orders))
		}
	}
	m.out, m.txn, m.txns = endTxn(m.out, m.txn, m.txns)
}

// endTxn ends a source transaction of the changes txn (if any), the n-th
// one, appending it to out, and returns out, txn emptied and the count.
func endTxn(out, txn []changelog.Change, n int) ([]changelog.Change, []changelog.Change, int) {
	if len(txn) == 0 {
		return out, txn, n
	}
	n++
	for i := range txn {
		txn[i].TxnID = fmt.Sprintf("t%d", n)
	}
	txn[len(txn)-1].TxnEnd = true
	return append(out, txn...), txn[:0], n
}

// writeChangelog writes changes as one txsink-json file and returns its
// path.
func writeChangelog(t *testing.T, changes []changelog.Change) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "changes.jsonl")
	writeChangeFile(t, path, changes)
	return path
}

// final renders the model's tables as the queries of checkFKFinal read
// the target's.
func (m *fkModel) final() map[string]string {
	var o, i, n []string
	for _, id := range keysOf(m.orders) {
		o = append(o, fmt.Sprintf("%d|%s|%d", id, m.orders[id].customer, m.orders[id].items))
	}
	for _, id := range keysOf(m.items) {
		it := m.items[id]
		i = append(i, fmt.Sprintf("%d|%d|%s|%d", id, it.order, it.sku, it.notes))
	}
	for _, id := range keysOf(m.notes) {
		nt := m.notes[id]
		reply := int64(-1)
		if nt.replyTo != 0 {
			reply = nt.replyTo
		}
		n = append(n, fmt.Sprintf("%d|%d|%d|%s", id, nt.item, reply, nt.body))
	}
	return map[string]string{"orders": strings.Join(o, "\n"), "order_items": strings.Join(i, "\n"), "item_notes": strings.Join(n, "\n")}
}

var fkFinalQueries = map[string]string{
	"orders":      "SELECT id, customer, items FROM orders ORDER BY id",
	"order_items": "SELECT id, order_id, sku, notes FROM order_items ORDER BY id",
	"item_notes":  "SELECT id, item_id, COALESCE(reply_to, -1), body FROM item_notes ORDER BY id",
}

// fkChangelog generates txns source transactions over the three tables
// and writes them as one txsink-json partition.
func fkChangelog(t *testing.T, seed uint64, txns int) (path string, m *fkModel) {
	t.Helper()
	m = &fkModel{rng: rand.New(rand.NewPCG(seed, seed^0x5bd1e995)), orders: map[int64]*fkOrder{}, items: map[int64]*fkItem{}, notes: map[int64]*fkNote{}}
	for m.txns < txns {
		m.step()
	}
	path = writeChangelog(t, m.out)
	return path, m
}

// runEveryBoundary runs a pipeline of tables over the changelog at path,
// in mode ("plain" or "transaction"), cutting a commit after every
// maxRows rows (coalescing off, so every boundary is cut), while a reader
// polls query; it fails the test on a run error and returns the polls and
// the sum of what they counted.
func runEveryBoundary(t *testing.T, db *testdb.DB, path, mode string, maxRows int, query string, tables ...config.Table) (polls, counted int64) {
	t.Helper()
	cfg := pipeline(db, tables...)
	cfg.Name = fmt.Sprintf("%s-%s-%d", tables[0].Source, mode, maxRows)
	cfg.Source.Set("paths", []string{path})
	if mode == "transaction" {
		txnPipeline(cfg)
	}
	cfg.Sink.FlushMaxRows = maxRows
	cfg.Sink.FlushCoalesce = false
	e := newEngine(t, cfg)
	p := startPoller(t, db, query)
	err := e.Run(context.Background(), engine.RunOptions{})
	polls, counted = p.finish(t)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return polls, counted
}

// TestForeignKeyOrder applies a changelog that inserts, re-parents and
// deletes across orders ← order_items ← item_notes (and notes replying to
// notes) in every order, to tables with the real foreign keys, in plain
// and transaction mode, with flushes cut after every row count from 1 to
// all, while a reader polls the source's cross-table invariant. No
// statement may meet a constraint error, the final state must be the
// source's, and in transaction mode the reader never sees the invariant
// broken.
func TestForeignKeyOrder(t *testing.T) {
	path, m := fkChangelog(t, 27, 250)
	want := m.final()
	deletes := 0
	for _, c := range m.out {
		if c.Kind == changelog.Delete {
			deletes++
		}
	}
	t.Logf("%d changes in %d source transactions: %d deletes (%d orders alone, their items cascading), %d re-parentings; final: %d orders, %d items, %d notes",
		len(m.out), m.txns, deletes, m.cascades, m.moves, len(m.orders), len(m.items), len(m.notes))
	if m.cascades == 0 || m.moves == 0 {
		t.Fatalf("the changelog lacks cascades (%d) or re-parentings (%d)", m.cascades, m.moves)
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, fkSchema(db.Dialect)...)
		for _, mode := range []string{"plain", "transaction"} {
			for _, maxRows := range []int{1, 2, 3, 5, 17, 1 << 20} {
				t.Run(fmt.Sprintf("%s-max-rows-%d", mode, maxRows), func(t *testing.T) {
					db.Exec(t, "UPDATE item_notes SET reply_to = NULL", "DELETE FROM item_notes", "DELETE FROM order_items", "DELETE FROM orders")
					polls, violations := runEveryBoundary(t, db, path, mode, maxRows, fkInvariant,
						config.Table{Source: "shop.orders"}, config.Table{Source: "shop.order_items"}, config.Table{Source: "shop.item_notes"})
					t.Logf("reader polled %d times, saw %d invariant violations", polls, violations)
					if mode == "transaction" && violations != 0 {
						t.Errorf("transaction mode: the reader saw %d violations of the cross-table invariant", violations)
					}
					for _, table := range []string{"orders", "order_items", "item_notes"} {
						if got := query(t, db, fkFinalQueries[table]); got != want[table] {
							t.Errorf("%s differs from the source's final state:\n got: %.400s\nwant: %.400s", table, got, want[table])
						}
					}
				})
			}
		}
	})
}
