package nats_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// This file writes what Debezium Server's JetStream sink publishes for a
// MySQL database "inventory" with transaction metadata on: one subject per
// table (<prefix>.inventory.<table>), the BEGIN and END of each
// transaction on <prefix>.transaction, and, in every row event, the
// transaction's id and the event's order in it.

// msg is one message to publish.
type msg struct {
	subject string
	data    []byte
}

// order is a row of inventory.orders: total is the sum of its items'
// amounts in every committed transaction (the cross-table invariant a
// partial transaction breaks).
type order struct {
	customer string
	total    int64
}

// model is the source database: its rows, and the transactions that made
// them, as messages, so that a test can publish them again.
type model struct {
	prefix string
	r      *rand.Rand
	orders map[int64]order
	items  map[[2]int64]int64
	// events counts the rows of inventory.events, which has no key: an
	// event applied twice shows.
	events map[[2]int64]int64
	// txns are the messages of each transaction, evKeys the event row
	// each wrote.
	txns   [][]msg
	evKeys [][2]int64
	pos    int64 // the binlog position, for the source blocks
	// bare leaves Debezium's transaction metadata out (no BEGIN, END or
	// "transaction" block). postgres writes the PostgreSQL connector's
	// source blocks instead of MySQL's: every other transaction's rows
	// have LSNs before the last commit's (it began before the transaction
	// before it committed), and its sequence ["last commit LSN", "LSN"]
	// orders them; lastCommit is that LSN.
	bare, postgres bool
	lastCommit     int64
	// compressed writes every row event of a transaction at one binlog
	// position, their rows numbered from 0 every other event, as the
	// events of a compressed transaction payload (MySQL 8's
	// binlog_transaction_compression) are.
	compressed bool
}

func newModel(prefix string, seed uint64) *model {
	return &model{prefix: prefix, r: rand.New(rand.NewPCG(seed, 7)), orders: map[int64]order{},
		items: map[[2]int64]int64{}, events: map[[2]int64]int64{}}
}

// txnBuilder collects the row events of one transaction.
type txnBuilder struct {
	m      *model
	id     string
	events []msg
	counts map[string]int
	// txID and lsnBack are the PostgreSQL transaction's id, and how far
	// its rows' LSNs lie before the model's position.
	txID, lsnBack int64
}

// row writes one row event of table: op c, u or d, with its images (nil
// for none).
func (b *txnBuilder) row(table, op string, before, after map[string]any) {
	pos, row := b.m.pos+100, 0
	if b.m.compressed {
		pos, row = b.m.pos+1, len(b.events)%2
	} else {
		b.m.pos = pos
	}
	b.counts[table]++
	source := map[string]any{"version": "2.7.3.Final", "connector": "mysql", "name": b.m.prefix, "ts_ms": 1767225600000 + pos,
		"snapshot": "false", "db": "inventory", "table": table, "server_id": 1, "file": "mysql-bin.000003", "pos": pos, "row": row}
	if b.m.postgres {
		lsn := b.m.pos - b.lsnBack
		source = map[string]any{"version": "2.7.3.Final", "connector": "postgresql", "name": b.m.prefix, "ts_ms": 1767225600000 + b.m.pos,
			"snapshot": "false", "db": "shop", "schema": "inventory", "table": table, "txId": b.txID, "lsn": lsn,
			"sequence": fmt.Sprintf(`["%d","%d"]`, b.m.lastCommit, lsn)}
	}
	var txn any
	if !b.m.bare {
		txn = map[string]any{"id": b.id, "total_order": len(b.events) + 1, "data_collection_order": b.counts[table]}
	}
	ev := map[string]any{"before": before, "after": after, "op": op, "ts_ms": 1767225600000 + b.m.pos, "source": source, "transaction": txn}
	b.events = append(b.events, msg{b.m.prefix + ".inventory." + table, mustJSON(ev)})
}

// next makes transaction i: it changes the model and returns its
// messages, BEGIN and END included.
func (m *model) next(i int) []msg {
	b := &txnBuilder{m: m, id: fmt.Sprintf("3e11fa47-71ca-11e1-9e33-c80aa9429562:%d", i+1), counts: map[string]int{}}
	if m.postgres {
		b.id, b.txID = fmt.Sprintf("%d:%d", 700+i, m.pos), int64(700+i)
		if i%2 == 1 {
			b.lsnBack = 1000
		}
	}
	r := m.r
	id := int64(r.IntN(i/2 + 1))
	orderRow := func(id int64, o order) map[string]any {
		return map[string]any{"id": id, "customer": o.customer, "total": o.total}
	}
	itemRow := func(k [2]int64, amount int64) map[string]any {
		return map[string]any{"order_id": k[0], "n": k[1], "amount": amount}
	}
	deleteOrder := func() {
		for n := int64(0); ; n++ {
			k := [2]int64{id, n}
			a, ok := m.items[k]
			if !ok {
				break
			}
			b.row("items", "d", itemRow(k, a), nil)
			delete(m.items, k)
		}
		if o, ok := m.orders[id]; ok {
			b.row("orders", "d", orderRow(id, o), nil)
			delete(m.orders, id)
		}
	}
	switch r.IntN(4) {
	case 0, 1: // a new order, or a replaced one
		deleteOrder()
		o := order{customer: fmt.Sprintf("customer %d's \"order\"", i)}
		for n := range int64(1 + r.IntN(4)) {
			k, a := [2]int64{id, n}, int64(100+r.IntN(10000))
			m.items[k] = a
			o.total += a
			b.row("items", "c", nil, itemRow(k, a))
		}
		m.orders[id] = o
		b.row("orders", "c", nil, orderRow(id, o))
	case 2: // a changed item, and the total with it
		k := [2]int64{id, 0}
		if a, ok := m.items[k]; ok {
			m.items[k] = a + 1
			b.row("items", "u", itemRow(k, a), itemRow(k, a+1))
			o := m.orders[id]
			m.orders[id] = order{o.customer, o.total + 1}
			b.row("orders", "u", orderRow(id, o), orderRow(id, m.orders[id]))
		}
	case 3: // a deleted order
		deleteOrder()
	}
	ek := [2]int64{id, int64(i % 3)}
	m.events[ek]++
	b.row("events", "c", nil, map[string]any{"order_id": ek[0], "kind": fmt.Sprint("tx", ek[1])})

	collections := []map[string]any{}
	for _, t := range slices.Sorted(maps.Keys(b.counts)) {
		collections = append(collections, map[string]any{"data_collection": "inventory." + t, "event_count": b.counts[t]})
	}
	ts := 1767225600000 + m.pos
	m.lastCommit = m.pos + 50 // the commit record, after the rows
	m.pos += 100
	if m.bare {
		m.txns = append(m.txns, b.events)
		m.evKeys = append(m.evKeys, ek)
		return b.events
	}
	out := append([]msg{{m.prefix + ".transaction", mustJSON(map[string]any{"status": "BEGIN", "id": b.id, "ts_ms": ts, "event_count": nil, "data_collections": nil})}}, b.events...)
	out = append(out, msg{m.prefix + ".transaction", mustJSON(map[string]any{"status": "END", "id": b.id, "ts_ms": ts,
		"event_count": len(b.events), "data_collections": collections})})
	m.txns = append(m.txns, out)
	m.evKeys = append(m.evKeys, ek)
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// replay returns the messages of transactions from to to again, as
// Debezium Server publishes them after its restart. applied says txsink
// applies them again: inventory.events has no key, so a replayed insert is
// then a second row, as in a replayed SQL INSERT.
func (m *model) replay(from, to int, applied bool) []msg {
	var out []msg
	for i := from; i < to; i++ {
		out = append(out, m.txns[i]...)
		if applied {
			m.events[m.evKeys[i]]++
		}
	}
	return out
}

// dump renders the model as dumpTarget renders a target.
func (m *model) dump() string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(m.orders)) {
		fmt.Fprintf(&b, "%d|%s|%d\n", id, m.orders[id].customer, m.orders[id].total)
	}
	b.WriteString("--\n")
	writePairs(&b, "%d|%d|%d\n", m.items)
	b.WriteString("--\n")
	writePairs(&b, "%d|tx%d|%d\n", m.events)
	b.WriteString("--\n")
	return b.String()
}

func writePairs(b *strings.Builder, format string, m map[[2]int64]int64) {
	keys := make([][2]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]int64) int {
		if x[0] != y[0] {
			return int(x[0] - y[0])
		}
		return int(x[1] - y[1])
	})
	for _, k := range keys {
		fmt.Fprintf(b, format, k[0], k[1], m[k])
	}
}
