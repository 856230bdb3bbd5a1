// Package workload generates realistic changelogs of an orders schema
// (orders, order_items, order_events) for the demo, the end-to-end tests and
// the benchmarks, and computes the final table state they must leave, so a
// run can be checked row for row.
//
// Changes are grouped into source transactions the way an application
// writes them (an order with its items, a status change, a quantity change
// with the order's new amount, a cancellation), each marked with a
// transaction id and an end mark, so the same changelog serves plain and
// transaction mode.
//
// Generation is deterministic for a seed: the same Spec gives the same
// changes.
package workload

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
)

// Spec says what to generate.
type Spec struct {
	// Orders is how many orders to create.
	Orders int
	// Partitions spreads orders over this many partitions (order i goes to
	// partition i mod Partitions); default 1.
	Partitions int
	// Seed makes the run reproducible.
	Seed uint64
	// Namespace is the source database name; default "shop".
	Namespace string
	// UpdateRate is the chance that an order is paid, then shipped (two
	// updates); default 0.7.
	UpdateRate float64
	// DeleteRate is the chance that an order is cancelled and deleted with
	// its items; default 0.05.
	DeleteRate float64
	// ReinsertRate is the chance that an order is replaced by a -D/+I pair
	// of the same key in one transaction (the way some CDC producers write
	// an update); default 0.05.
	ReinsertRate float64
	// Events adds one append-only order_events row per change of an order.
	Events bool
	// Linked adds a third level, item_notes (0 to 2 notes per item, and a
	// note on the first item when its quantity changes), and keeps the
	// changelog valid under LinkedSchema's foreign keys: a cancellation
	// deletes the notes, then the items, then the order, and a re-inserted
	// order is deleted and inserted again with its items and notes. The
	// orders and items are those of the same Spec without it.
	Linked bool
}

func (s *Spec) defaults() {
	if s.Partitions <= 0 {
		s.Partitions = 1
	}
	if s.Namespace == "" {
		s.Namespace = "shop"
	}
	if s.UpdateRate == 0 {
		s.UpdateRate = 0.7
	}
	if s.DeleteRate == 0 {
		s.DeleteRate = 0.05
	}
	if s.ReinsertRate == 0 {
		s.ReinsertRate = 0.05
	}
}

// Schema returns the CREATE TABLE statements of the target tables for a
// dialect ("sqlite", "mysql", "postgres", or "starrocks": StarRocks' DDL,
// Primary Key tables for orders and items and a Duplicate Key table for
// the append-only events, which has no sequence column because StarRocks
// has no auto-increment in a load).
func Schema(dialect string) []string {
	if dialect == "starrocks" {
		return []string{
			`CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR(64) NOT NULL, status VARCHAR(16) NOT NULL,
		amount DECIMAL(12,2) NOT NULL, created_at DATETIME NOT NULL, note VARCHAR(200) NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
			`CREATE TABLE order_items (order_id BIGINT NOT NULL, line_no INT NOT NULL, sku VARCHAR(32) NOT NULL, qty INT NOT NULL,
		price DECIMAL(10,2) NOT NULL) PRIMARY KEY (order_id, line_no) DISTRIBUTED BY HASH(order_id)`,
			`CREATE TABLE order_events (order_id BIGINT NOT NULL, event VARCHAR(16) NOT NULL) DUPLICATE KEY (order_id) DISTRIBUTED BY HASH(order_id)`,
		}
	}
	dt := "DATETIME(3)"
	if dialect == "postgres" {
		dt = "TIMESTAMP(3)"
	}
	if dialect == "sqlite" {
		dt = "DATETIME"
	}
	auto := "INTEGER"
	switch dialect {
	case "mysql":
		auto = "BIGINT AUTO_INCREMENT PRIMARY KEY"
	case "postgres":
		auto = "BIGSERIAL PRIMARY KEY"
	case "sqlite":
		auto = "INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	return []string{
		`CREATE TABLE orders (
			id BIGINT NOT NULL PRIMARY KEY,
			customer VARCHAR(64) NOT NULL,
			status VARCHAR(16) NOT NULL,
			amount DECIMAL(12,2) NOT NULL,
			created_at ` + dt + ` NOT NULL,
			note VARCHAR(200) NULL)`,
		`CREATE TABLE order_items (
			order_id BIGINT NOT NULL,
			line_no INT NOT NULL,
			sku VARCHAR(32) NOT NULL,
			qty INT NOT NULL,
			price DECIMAL(10,2) NOT NULL,
			PRIMARY KEY (order_id, line_no))`,
		`CREATE TABLE order_events (
			seq ` + auto + `,
			order_id BIGINT NOT NULL,
			event VARCHAR(16) NOT NULL)`,
	}
}

// Tables lists the target tables Schema creates.
var Tables = []string{"orders", "order_items", "order_events"}

// Row is a final-state row: column name to rendered value.
type Row map[string]string

// Result is a generated changelog and the state it leaves.
type Result struct {
	// Partitions holds each partition's changes in order.
	Partitions [][]changelog.Change
	// Final holds, per keyed table, the rows that must exist at the end,
	// keyed by their rendered key (Generate only).
	Final map[string]map[string]Row
	// Digest summarizes Final (see Digest): a target can be checked
	// against it without holding its rows.
	Digest Digest
	// Events is how many order_events rows the changelog inserts.
	Events int
	// Txns is how many source transactions the changelog holds.
	Txns int
}

// Invariant is a query returning the number of rows that break the
// workload's cross-table invariant: orders whose amount is not the sum of
// their items' qty*price, plus items without their order. It is one
// statement, so it reads one snapshot. Every source transaction keeps it at
// zero, so a reader sees a violation only when a source transaction is
// applied in parts.
//
// Amounts are compared to within half a cent: SQLite keeps DECIMAL as REAL,
// whose sums are not exact.
const Invariant = `SELECT
	(SELECT COUNT(*) FROM orders o WHERE ABS(o.amount - (SELECT COALESCE(SUM(i.qty * i.price), 0) FROM order_items i WHERE i.order_id = o.id)) > 0.005)
	+ (SELECT COUNT(*) FROM order_items i WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = i.order_id))`

// Changes returns the number of changes over all partitions.
func (r *Result) Changes() int {
	n := 0
	for _, p := range r.Partitions {
		n += len(p)
	}
	return n
}

var statuses = []string{"NEW", "PAID", "SHIPPED"}

// Generate builds the changelog of spec, in memory.
func Generate(spec Spec) *Result {
	spec.defaults()
	parts := make([][]changelog.Change, spec.Partitions)
	final := map[string]map[string]Row{"orders": {}, "order_items": {}}
	if spec.Linked {
		final[notesTable] = map[string]Row{}
	}
	res, _ := generate(spec, func(p int, txn []changelog.Change) error {
		parts[p] = append(parts[p], txn...)
		return nil
	}, func(table, key string, r Row) { final[table][key] = r }, nil)
	res.Partitions, res.Final = parts, final
	return res
}

// Stream generates the changelog of spec as Generate does, the same changes
// with the same positions, but hands each source transaction to emit
// instead of keeping it, and keeps of the final state only its Digest: a
// large changelog is written out without being held in memory. progress,
// when not nil, is told every 1000 orders how many are generated. The
// Result it returns has neither Partitions nor Final; an error from emit
// ends it with that error.
func Stream(spec Spec, emit Emit, progress func(orders int)) (*Result, error) {
	return generate(spec, emit, nil, progress)
}

// generate is Generate and Stream: it hands each source transaction to
// emitTo and each row of the final state to finalRow (when not nil), and
// sums the final state's Digest. An order's rows are final once its
// iteration ends: no later order touches them.
func generate(spec Spec, emitTo Emit, finalRow func(table, key string, r Row), progress func(orders int)) (*Result, error) {
	spec.defaults()
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))
	res := &Result{Digest: Digest{}}
	keep := func(table, key string, r changelog.Row) {
		fr := final(r)
		td := res.Digest[table]
		td.Rows++
		td.Sum += RowHash(fr)
		res.Digest[table] = td
		if finalRow != nil {
			finalRow(table, key, fr)
		}
	}
	// txn holds the current source transaction's changes until its end
	// mark is set; seq numbers each partition's changes from 1.
	var txn []changelog.Change
	seq := make([]int64, spec.Partitions)
	var failed error
	orders := changelog.Table{Namespace: spec.Namespace, Name: "orders"}
	items := changelog.Table{Namespace: spec.Namespace, Name: "order_items"}
	events := changelog.Table{Namespace: spec.Namespace, Name: "order_events"}
	base := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	customers := []string{"Ada", "Grace", "Linus", "Margaret", "Zoë", "Søren", "李雷", "Anaïs"}
	notes := changelog.Table{Namespace: spec.Namespace, Name: notesTable}
	nm := newNoteMaker(spec.Seed)

	for i := 0; i < spec.Orders; i++ {
		if failed != nil {
			return nil, failed
		}
		if progress != nil && i > 0 && i%1000 == 0 {
			progress(i)
		}
		p := i % spec.Partitions
		id := int64(i + 1)
		// Each business step of an order is one source transaction; its
		// changes carry the transaction id, and the last one the end mark.
		step := 0
		begin := func() { step++ }
		emit := func(c changelog.Change) {
			c.TxnID = fmt.Sprintf("o%d.%d", id, step)
			txn = append(txn, c)
			if spec.Events && c.Table == orders {
				txn = append(txn, changelog.Change{Kind: changelog.Insert, Table: events, TxnID: c.TxnID,
					After: row("order_id", num(id), "event", c.Kind.String()+statusOf(c))})
				res.Events++
			}
		}
		end := func() {
			txn[len(txn)-1].TxnEnd = true
			res.Txns++
			for i := range txn {
				// Positions are given by the source that carries the
				// changes; number them so library users can feed them
				// directly.
				seq[p]++
				txn[i].Pos = changelog.Position{Partition: fmt.Sprintf("p%d", p), Offset: seq[p], Seq: seq[p]}
				txn[i].Size = 200
			}
			if failed == nil {
				failed = emitTo(p, txn)
			}
			txn = txn[:0]
		}
		created := base.Add(time.Duration(i) * 1234 * time.Millisecond)
		nItems := 1 + rng.IntN(5)
		var total int64
		itemRows := make([]changelog.Row, nItems)
		prices := make([]int64, nItems)
		for l := 0; l < nItems; l++ {
			cents := int64(100 + rng.IntN(20000))
			qty := int64(1 + rng.IntN(4))
			total += cents * qty
			prices[l] = cents
			itemRows[l] = row("order_id", num(id), "line_no", num(int64(l+1)),
				"sku", fmt.Sprintf("SKU-%05d", rng.IntN(100000)), "qty", num(qty), "price", money(cents))
		}
		// Invariant, in every source transaction's result: an order's
		// amount is the sum of its items' qty*price, and no item exists
		// without its order.
		order := row("id", num(id), "customer", customers[rng.IntN(len(customers))], "status", "NEW",
			"amount", money(total), "created_at", created.Format("2006-01-02 15:04:05.000"), "note", nil)
		var noteRows []changelog.Row
		if spec.Linked {
			noteRows = nm.notes(id, nItems)
		}
		// Parents are inserted before their children, and deleted after
		// them, as a source under foreign keys writes them.
		insertAll := func() {
			emit(changelog.Change{Kind: changelog.Insert, Table: orders, After: order})
			for _, ir := range itemRows {
				emit(changelog.Change{Kind: changelog.Insert, Table: items, After: ir})
			}
			for _, nr := range noteRows {
				emit(changelog.Change{Kind: changelog.Insert, Table: notes, After: nr})
			}
		}
		deleteChildren := func() {
			for _, nr := range noteRows {
				emit(changelog.Change{Kind: changelog.Delete, Table: notes, Before: nr})
			}
			for _, ir := range itemRows {
				emit(changelog.Change{Kind: changelog.Delete, Table: items, Before: ir})
			}
		}
		begin()
		insertAll()
		end()
		switch r := rng.Float64(); {
		case r < spec.DeleteRate:
			begin()
			deleteChildren()
			emit(changelog.Change{Kind: changelog.Delete, Table: orders, Before: order})
			end()
			continue
		case r < spec.DeleteRate+spec.ReinsertRate && spec.Linked:
			// The order is replaced with its items and notes: under
			// foreign keys it cannot go while they reference it.
			begin()
			deleteChildren()
			emit(changelog.Change{Kind: changelog.Delete, Table: orders, Before: order})
			order = with(order, "note", "re-inserted")
			insertAll()
			end()
		case r < spec.DeleteRate+spec.ReinsertRate:
			// A -D/+I pair of one key in one transaction: the order is
			// replaced, the way some producers write an update.
			begin()
			emit(changelog.Change{Kind: changelog.Delete, Table: orders, Before: order})
			order = with(order, "note", "re-inserted")
			emit(changelog.Change{Kind: changelog.Insert, Table: orders, After: order})
			end()
		}
		if rng.Float64() < spec.UpdateRate {
			for _, st := range statuses[1:] {
				begin()
				before := order
				order = with(order, "status", st)
				emit(changelog.Change{Kind: changelog.UpdateBefore, Table: orders, Before: before})
				emit(changelog.Change{Kind: changelog.UpdateAfter, Table: orders, Before: before, After: order})
				end()
			}
			if nItems > 1 {
				// The first item's quantity changes, and the order's
				// amount with it, in one transaction.
				begin()
				before := itemRows[0]
				q, _ := before.Get("qty")
				var qty int64
				fmt.Sscan(string(q.(changelog.Number)), &qty)
				itemRows[0] = with(before, "qty", num(9))
				emit(changelog.Change{Kind: changelog.UpdateAfter, Table: items, Before: before, After: itemRows[0]})
				if spec.Linked {
					// A note on the changed line, numbered past the
					// ones it was made with.
					nr := noteRow(id, 1, 3, fmt.Sprintf("qty %d -> 9", qty))
					noteRows = append(noteRows, nr)
					emit(changelog.Change{Kind: changelog.Insert, Table: notes, After: nr})
				}
				total += (9 - qty) * prices[0]
				prev := order
				order = with(order, "amount", money(total))
				emit(changelog.Change{Kind: changelog.UpdateAfter, Table: orders, Before: prev, After: order})
				end()
			}
		}
		keep("orders", render(id), order)
		for _, ir := range itemRows {
			ln, _ := ir.Get("line_no")
			keep("order_items", render(id)+"|"+string(ln.(changelog.Number)), ir)
		}
		for _, nr := range noteRows {
			keep(notesTable, noteKey(nr), nr)
		}
	}
	if failed != nil {
		return nil, failed
	}
	return res, nil
}

func statusOf(c changelog.Change) string {
	v, _ := c.Image().Get("status")
	if s, ok := v.(string); ok {
		return " " + s
	}
	return ""
}

func num(n int64) changelog.Number { return changelog.Number(fmt.Sprint(n)) }

func money(cents int64) changelog.Number {
	return changelog.Number(fmt.Sprintf("%d.%02d", cents/100, cents%100))
}

func render(id int64) string { return fmt.Sprint(id) }

var row = changelog.RowOf

// with returns a copy of r with some columns changed.
func with(r changelog.Row, kv ...any) changelog.Row {
	out := changelog.Row{Names: append([]string(nil), r.Names...), Values: append([]changelog.Value(nil), r.Values...)}
	for i := 0; i < len(kv); i += 2 {
		out.Set(kv[i].(string), kv[i+1])
	}
	return out
}

func final(r changelog.Row) Row {
	out := Row{}
	for i, n := range r.Names {
		out[n] = Render(r.Values[i])
	}
	return out
}

// Render renders a value the way Final holds it: NULL as "NULL", numbers
// and text as their text.
func Render(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case changelog.Number:
		return string(x)
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000")
	default:
		return fmt.Sprint(x)
	}
}

// Keys returns the sorted keys of a final-state table, for diffs.
func Keys(m map[string]Row) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Diff compares got with want and describes up to max differences; "" when
// they are equal.
func Diff(table string, want, got map[string]Row, maxDiffs int) string {
	var b strings.Builder
	n := 0
	note := func(format string, args ...any) {
		if n < maxDiffs {
			fmt.Fprintf(&b, format+"\n", args...)
		}
		n++
	}
	for _, k := range Keys(want) {
		g, ok := got[k]
		if !ok {
			note("%s key %s: missing", table, k)
			continue
		}
		for col, wv := range want[k] {
			if gv := g[col]; gv != wv {
				note("%s key %s column %s: got %q, want %q", table, k, col, gv, wv)
			}
		}
	}
	for _, k := range Keys(got) {
		if _, ok := want[k]; !ok {
			note("%s key %s: unexpected row", table, k)
		}
	}
	if n > maxDiffs {
		fmt.Fprintf(&b, "... and %d more differences\n", n-maxDiffs)
	}
	return b.String()
}

// ReadState reads every row of table from db, keyed like Result.Final (key
// values joined by "|"). Values are normalized with Normalize.
func ReadState(ctx context.Context, db *sql.DB, table string, key []string) (map[string]Row, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]Row{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		r := Row{}
		for i, c := range cols {
			r[strings.ToLower(c)] = Normalize(Render(vals[i]))
		}
		parts := make([]string, len(key))
		for i, k := range key {
			parts[i] = r[k]
		}
		out[strings.Join(parts, "|")] = r
	}
	return out, rows.Err()
}

// Normalize puts a rendered value in a form every target returns alike:
// decimals without trailing fractional zeros, date-times as
// "2006-01-02 15:04:05.000".
func Normalize(s string) string {
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999 -0700 MST", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format("2006-01-02 15:04:05.000")
		}
	}
	if i := strings.IndexByte(s, '.'); i > 0 && strings.Trim(s, "-0123456789.") == "" && strings.Count(s, ".") == 1 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// NormalizeState applies Normalize to every value of a final state.
func NormalizeState(m map[string]Row) map[string]Row {
	out := make(map[string]Row, len(m))
	for k, r := range m {
		nr := Row{}
		for c, v := range r {
			nr[c] = Normalize(v)
		}
		out[k] = nr
	}
	return out
}
