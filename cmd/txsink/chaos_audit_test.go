//go:build unix

package main

// The audit side of TestChaos: AFTER triggers on order_items and
// order_events that write one audit row per row change, and the checks
// that read them back.
//
// order_items is reduced per key, so how many audit rows it gets depends
// on where the flushes fell (an insert and a later update of one item in
// one flush is one INSERT audit row; in two flushes, an INSERT and an
// UPDATE), and flush boundaries move with every kill. Its audit is
// checked per key instead, which holds for any batching: the audit rows
// of a key, in order, must walk forward through that key's history in the
// changelog (its state after each source transaction that touched it),
// each row starting from the state the previous one left and ending in a
// state found later in the history, and the last one must be the row the
// table holds. A unit applied twice shows up as a step that stays put (an
// UPDATE whose new image is the state already reached: a no-op upsert
// still fires the trigger) or goes back (a replayed older image).
//
// order_events is append-only: never reduced, so its audit count does not
// depend on batching, and a run without kills writes exactly one audit row
// per insert in the changelog (workload.Result.Events). The chaos run must
// write exactly as many.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/internal/workload"
)

// auditSchema returns the statements creating the audit tables and their
// triggers for db's dialect. Run them after workload.Schema.
func auditSchema(dialect string) []string {
	cols := `op CHAR(1) NOT NULL,
			order_id BIGINT NOT NULL,
			line_no INT NOT NULL,
			old_sku VARCHAR(32) NULL, old_qty INT NULL, old_price DECIMAL(10,2) NULL,
			new_sku VARCHAR(32) NULL, new_qty INT NULL, new_price DECIMAL(10,2) NULL`
	evCols := `event_seq BIGINT NOT NULL, order_id BIGINT NOT NULL, event VARCHAR(16) NOT NULL`
	const (
		ins  = `INSERT INTO order_items_audit (op, order_id, line_no, new_sku, new_qty, new_price) VALUES ('I', NEW.order_id, NEW.line_no, NEW.sku, NEW.qty, NEW.price)`
		upd  = `INSERT INTO order_items_audit (op, order_id, line_no, old_sku, old_qty, old_price, new_sku, new_qty, new_price) VALUES ('U', NEW.order_id, NEW.line_no, OLD.sku, OLD.qty, OLD.price, NEW.sku, NEW.qty, NEW.price)`
		del  = `INSERT INTO order_items_audit (op, order_id, line_no, old_sku, old_qty, old_price) VALUES ('D', OLD.order_id, OLD.line_no, OLD.sku, OLD.qty, OLD.price)`
		evIn = `INSERT INTO order_events_audit (event_seq, order_id, event) VALUES (NEW.seq, NEW.order_id, NEW.event)`
	)
	switch dialect {
	case "mysql":
		return []string{
			`CREATE TABLE order_items_audit (id BIGINT AUTO_INCREMENT PRIMARY KEY, ` + cols + `)`,
			`CREATE TABLE order_events_audit (id BIGINT AUTO_INCREMENT PRIMARY KEY, ` + evCols + `)`,
			`CREATE TRIGGER order_items_audit_i AFTER INSERT ON order_items FOR EACH ROW ` + ins,
			`CREATE TRIGGER order_items_audit_u AFTER UPDATE ON order_items FOR EACH ROW ` + upd,
			`CREATE TRIGGER order_items_audit_d AFTER DELETE ON order_items FOR EACH ROW ` + del,
			`CREATE TRIGGER order_events_audit_i AFTER INSERT ON order_events FOR EACH ROW ` + evIn,
		}
	case "postgres":
		// SET search_path FROM CURRENT: the functions find the audit
		// tables in the test's private schema whatever the session's
		// search_path is.
		return []string{
			`CREATE TABLE order_items_audit (id BIGSERIAL PRIMARY KEY, ` + cols + `)`,
			`CREATE TABLE order_events_audit (id BIGSERIAL PRIMARY KEY, ` + evCols + `)`,
			`CREATE FUNCTION order_items_audit_fn() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
			BEGIN
				IF TG_OP = 'INSERT' THEN ` + ins + `;
				ELSIF TG_OP = 'UPDATE' THEN ` + upd + `;
				ELSE ` + del + `;
				END IF;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER order_items_audit AFTER INSERT OR UPDATE OR DELETE ON order_items FOR EACH ROW EXECUTE FUNCTION order_items_audit_fn()`,
			`CREATE FUNCTION order_events_audit_fn() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
			BEGIN
				` + evIn + `;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER order_events_audit AFTER INSERT ON order_events FOR EACH ROW EXECUTE FUNCTION order_events_audit_fn()`,
		}
	case "sqlite":
		return []string{
			`CREATE TABLE order_items_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ` + cols + `)`,
			`CREATE TABLE order_events_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ` + evCols + `)`,
			`CREATE TRIGGER order_items_audit_i AFTER INSERT ON order_items BEGIN ` + ins + `; END`,
			`CREATE TRIGGER order_items_audit_u AFTER UPDATE ON order_items BEGIN ` + upd + `; END`,
			`CREATE TRIGGER order_items_audit_d AFTER DELETE ON order_items BEGIN ` + del + `; END`,
			`CREATE TRIGGER order_events_audit_i AFTER INSERT ON order_events BEGIN ` + evIn + `; END`,
		}
	}
	panic("auditSchema: unknown dialect " + dialect)
}

// absent is the state of a key with no row.
const absent = "(absent)"

// itemState renders the non-key columns of an order_items row as one
// comparable string.
func itemState(sku, qty, price string) string {
	return workload.Normalize(sku) + "|" + workload.Normalize(qty) + "|" + workload.Normalize(price)
}

func itemKey(orderID, lineNo string) string {
	return workload.Normalize(orderID) + "|" + workload.Normalize(lineNo)
}

// itemHistories returns, for every order_items key of the changelog, its
// state after each source transaction that touched it, starting with
// absent. A commit in transaction mode ends at a transaction end, so every
// state the target ever holds for a key is one of these.
func itemHistories(res *workload.Result) map[string][]string {
	hist := map[string][]string{}
	get := func(r changelog.Row, c string) string {
		v, _ := r.Get(c)
		return workload.Render(v)
	}
	for _, changes := range res.Partitions {
		cur := map[string]string{}   // key -> state, in this partition
		touched := map[string]bool{} // keys touched by the open transaction
		var order []string           // the same keys, in first-touch order
		for _, c := range changes {
			if c.Table.Name == "order_items" {
				var k, s string
				switch c.Kind {
				case changelog.Insert, changelog.UpdateAfter:
					k, s = itemKey(get(c.After, "order_id"), get(c.After, "line_no")), itemState(get(c.After, "sku"), get(c.After, "qty"), get(c.After, "price"))
					if c.Kind == changelog.UpdateAfter && !c.Before.IsZero() {
						if bk := itemKey(get(c.Before, "order_id"), get(c.Before, "line_no")); bk != k {
							cur[bk] = absent
							if !touched[bk] {
								touched[bk] = true
								order = append(order, bk)
							}
						}
					}
				case changelog.Delete:
					k, s = itemKey(get(c.Before, "order_id"), get(c.Before, "line_no")), absent
				}
				if k != "" {
					cur[k] = s
					if !touched[k] {
						touched[k] = true
						order = append(order, k)
					}
				}
			}
			if c.TxnEnd || c.TxnID == "" {
				for _, k := range order {
					if hist[k] == nil {
						hist[k] = []string{absent}
					}
					hist[k] = append(hist[k], cur[k])
				}
				clear(touched)
				order = order[:0]
			}
		}
	}
	return hist
}

// auditRow is one order_items_audit row.
type auditRow struct {
	id       int64
	op       string
	key      string
	old, new string // states; absent where the op has no such image
}

func readItemAudit(t *testing.T, db *testdb.DB) []auditRow {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, op, order_id, line_no, old_sku, old_qty, old_price, new_sku, new_qty, new_price FROM order_items_audit ORDER BY id`)
	if err != nil {
		t.Fatalf("read order_items_audit: %v", err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var id int64
		v := make([]any, 9)
		ptrs := []any{&id}
		for i := range v {
			ptrs = append(ptrs, &v[i])
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("read order_items_audit: %v", err)
		}
		s := make([]string, len(v))
		for i := range v {
			s[i] = workload.Render(v[i])
		}
		r := auditRow{id: id, op: strings.TrimSpace(s[0]), key: itemKey(s[1], s[2]), old: absent, new: absent}
		if r.op == "U" || r.op == "D" {
			r.old = itemState(s[3], s[4], s[5])
		}
		if r.op == "I" || r.op == "U" {
			r.new = itemState(s[6], s[7], s[8])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// auditResult is what an audit check found.
type auditResult struct {
	rows       int      // audit rows read
	duplicates int      // steps that stay put or go back: a unit applied twice
	broken     int      // steps that do not start where the previous one ended, or end off the table's row
	problems   []string // the first few, described
}

// checkItemAudit checks the order_items_audit rows against the changelog's
// histories and the table's current rows (keyed like workload.ReadState),
// reporting the problems with t.Errorf.
func checkItemAudit(t *testing.T, hist map[string][]string, audit []auditRow, table map[string]workload.Row) auditResult {
	t.Helper()
	res := itemAuditProblems(audit, hist, table)
	for _, p := range res.problems {
		t.Error(p)
	}
	return res
}

// itemAuditProblems walks each key's audit rows through its history (see
// the top of this file).
func itemAuditProblems(audit []auditRow, hist map[string][]string, table map[string]workload.Row) auditResult {
	res := auditResult{rows: len(audit)}
	const maxProblems = 10
	n := 0
	report := func(format string, args ...any) {
		if n < maxProblems {
			res.problems = append(res.problems, fmt.Sprintf(format, args...))
		}
		n++
	}
	pos := map[string]int{}      // key -> index in its history the audit has reached
	state := map[string]string{} // key -> the state its last audit row left
	for _, a := range audit {
		h, ok := hist[a.key]
		if !ok {
			report("order_items_audit row %d: %s of key %s, which the changelog never writes", a.id, a.op, a.key)
			res.broken++
			continue
		}
		cur, was := pos[a.key], absent
		if s, ok := state[a.key]; ok {
			was = s
		}
		state[a.key] = a.new
		if a.old != was {
			report("order_items_audit row %d: %s of key %s starts from %s, but its previous audit row left %s: a change without its audit row", a.id, a.op, a.key, a.old, was)
			res.broken++
		}
		next := -1
		for j := cur + 1; j < len(h); j++ {
			if h[j] == a.new {
				next = j
				break
			}
		}
		if next < 0 {
			report("order_items_audit row %d: %s of key %s to %s, a state its history %v does not reach after step %d: a change applied twice", a.id, a.op, a.key, a.new, h, cur)
			res.duplicates++
			continue
		}
		pos[a.key] = next
	}
	for _, k := range slices.Sorted(maps.Keys(hist)) {
		h := hist[k]
		last, ok := state[k]
		if !ok {
			last = absent
		}
		got := absent
		if r, ok := table[k]; ok {
			got = itemState(r["sku"], r["qty"], r["price"])
		}
		if got != last {
			report("order_items key %s holds %s, but its last audit row left %s: a change without its audit row", k, got, last)
			res.broken++
		}
		if last != h[pos[k]] {
			report("order_items key %s: its audit ends at %s, behind step %d of its history %v", k, last, pos[k], h)
			res.broken++
		}
	}
	if n > maxProblems {
		res.problems = append(res.problems, fmt.Sprintf("... and %d more audit problems", n-maxProblems))
	}
	return res
}

// itemAuditBounds returns the fewest and the most order_items audit rows
// any batching can give: at least one row for every key that ends with a
// row, at most one per state change in its history.
func itemAuditBounds(hist map[string][]string) (lo, hi int) {
	for _, h := range hist {
		if h[len(h)-1] != absent {
			lo++
		}
		for i := 1; i < len(h); i++ {
			if h[i] != h[i-1] || h[i] != absent {
				hi++
			}
		}
	}
	return lo, hi
}

// eventCounts counts order_events rows by (order_id, event).
func eventCounts(t *testing.T, db *testdb.DB) map[string]int {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT order_id, event, COUNT(*) FROM order_events GROUP BY order_id, event`)
	if err != nil {
		t.Fatalf("count order_events: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id, ev any
		var n int
		if err := rows.Scan(&id, &ev, &n); err != nil {
			t.Fatal(err)
		}
		out[workload.Render(id)+"|"+workload.Render(ev)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantEventCounts counts the changelog's order_events inserts by
// (order_id, event).
func wantEventCounts(res *workload.Result) map[string]int {
	out := map[string]int{}
	for _, changes := range res.Partitions {
		for _, c := range changes {
			if c.Table.Name == "order_events" && c.Kind == changelog.Insert {
				id, _ := c.After.Get("order_id")
				ev, _ := c.After.Get("event")
				out[workload.Render(id)+"|"+workload.Render(ev)]++
			}
		}
	}
	return out
}

// compareEvents compares the order_events rows with the changelog's,
// event by event: duplicates are rows beyond the changelog's count of the
// same (order_id, event), lost the rows missing.
func compareEvents(t *testing.T, got, want map[string]int) (duplicates, lost int) {
	t.Helper()
	var examples []string
	for k, w := range want {
		if g := got[k]; g != w {
			if g > w {
				duplicates += g - w
			} else {
				lost += w - g
			}
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%s: %d rows, want %d", k, g, w))
			}
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			duplicates += g
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%s: %d rows, want none", k, g))
			}
		}
	}
	if duplicates+lost > 0 {
		t.Errorf("order_events: %d duplicated and %d lost rows, e.g. (order_id|event) %s", duplicates, lost, strings.Join(examples, "; "))
	}
	return duplicates, lost
}

// checkEventAudit checks order_events_audit: one row per order_events row
// (no audit row without its event, none twice), and as many as a run
// without kills writes.
func checkEventAudit(t *testing.T, db *testdb.DB, want int) int {
	t.Helper()
	var n, distinct, orphans int
	if err := db.SQL.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT event_seq) FROM order_events_audit`).Scan(&n, &distinct); err != nil {
		t.Fatalf("count order_events_audit: %v", err)
	}
	if err := db.SQL.QueryRow(`SELECT COUNT(*) FROM order_events_audit a WHERE NOT EXISTS (SELECT 1 FROM order_events e WHERE e.seq = a.event_seq)`).Scan(&orphans); err != nil {
		t.Fatalf("check order_events_audit: %v", err)
	}
	if n != want || distinct != n || orphans != 0 {
		t.Errorf("order_events_audit: %d rows (%d distinct events, %d without their event), want exactly %d, as a run without kills writes", n, distinct, orphans, want)
	}
	return n
}

// TestChaosAuditCheck shows the audit check catching what it is for, on an
// SQLite target written by hand: an item inserted with qty 2, then updated
// to qty 9, in two source transactions. Applied once, in one flush or in
// two, the audit passes; a replayed unit (the update again: a no-op
// upsert; or the insert again: a step back) is reported as a duplicate.
func TestChaosAuditCheck(t *testing.T) {
	items := changelog.Table{Namespace: "shop", Name: "order_items"}
	v1 := changelog.RowOf("order_id", changelog.Number("1"), "line_no", changelog.Number("1"), "sku", "SKU-1", "qty", changelog.Number("2"), "price", changelog.Number("3.50"))
	v2 := changelog.RowOf("order_id", changelog.Number("1"), "line_no", changelog.Number("1"), "sku", "SKU-1", "qty", changelog.Number("9"), "price", changelog.Number("3.50"))
	res := &workload.Result{Partitions: [][]changelog.Change{{
		{Kind: changelog.Insert, Table: items, After: v1, TxnID: "t1", TxnEnd: true},
		{Kind: changelog.UpdateAfter, Table: items, Before: v1, After: v2, TxnID: "t2", TxnEnd: true},
	}}}
	hist := itemHistories(res)
	if want := []string{absent, itemState("SKU-1", "2", "3.50"), itemState("SKU-1", "9", "3.5")}; !slices.Equal(hist["1|1"], want) {
		t.Fatalf("history of key 1|1 = %v, want %v", hist["1|1"], want)
	}
	upsert := func(qty int) string {
		return fmt.Sprintf(`INSERT INTO order_items (order_id, line_no, sku, qty, price) VALUES (1, 1, 'SKU-1', %d, 3.50)
			ON CONFLICT (order_id, line_no) DO UPDATE SET sku = excluded.sku, qty = excluded.qty, price = excluded.price`, qty)
	}
	cases := []struct {
		name       string
		stmts      []string
		duplicates int
	}{
		{"two-flushes", []string{upsert(2), upsert(9)}, 0},
		{"one-flush", []string{upsert(9)}, 0},
		{"update-replayed", []string{upsert(2), upsert(9), upsert(9)}, 1},
		{"insert-replayed", []string{upsert(2), upsert(9), upsert(2), upsert(9)}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := testdb.SQLite(t)
			db.Exec(t, workload.Schema(db.Dialect)...)
			db.Exec(t, auditSchema(db.Dialect)...)
			db.Exec(t, tc.stmts...)
			table, err := workload.ReadState(t.Context(), db.SQL, "order_items", []string{"order_id", "line_no"})
			if err != nil {
				t.Fatal(err)
			}
			got := itemAuditProblems(readItemAudit(t, db), hist, table)
			if got.duplicates != tc.duplicates || got.broken != 0 {
				t.Errorf("%d audit rows: %d duplicates and %d broken steps, want %d and 0; problems:\n%s",
					got.rows, got.duplicates, got.broken, tc.duplicates, strings.Join(got.problems, "\n"))
			}
			if tc.duplicates > 0 {
				t.Logf("reported: %s", got.problems[0])
			}
		})
	}
}
