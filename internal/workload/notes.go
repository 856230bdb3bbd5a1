package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/txsink/txsink/changelog"
)

// The linked workloads add a third level under orders ← order_items:
// item_notes, each note keyed by its item's key and its own number, so
// that a target can hold the three tables with real FOREIGN KEY
// constraints (LinkedSchema) and txsink's foreign-key ordering has work
// at every level. Their changelogs stay valid under those constraints the
// way the source's were without any ON DELETE action: a transaction
// deletes the children first (notes, then items, then the order) and
// inserts the parents first. Notes are drawn from a random source of
// their own, so the orders and items of a linked workload are those of
// the same workload without notes.

// notesTable is the third level's table name.
const notesTable = "item_notes"

// LinkedTables lists the tables LinkedSchema creates, parents first.
var LinkedTables = []string{"orders", "order_items", notesTable}

// LinkedSchema returns the CREATE TABLE statements of orders, order_items
// and item_notes for dialect ("sqlite", "mysql" or "postgres"), each name
// prefixed. With foreignKeys, order_items references orders and item_notes
// references order_items by FOREIGN KEY constraints with no ON DELETE
// action, left unnamed so that tables of different prefixes side by side
// get names of their own from the server (MariaDB's constraint names are
// per database).
func LinkedSchema(dialect, prefix string, foreignKeys bool) []string {
	stmts := SchemaPrefixed(dialect, prefix)[:2] // orders, order_items
	stmts = append(stmts, `CREATE TABLE `+prefix+notesTable+` (
			order_id BIGINT NOT NULL,
			line_no INT NOT NULL,
			note_no INT NOT NULL,
			body VARCHAR(200) NOT NULL,
			PRIMARY KEY (order_id, line_no, note_no))`)
	if foreignKeys {
		stmts[1] = withConstraint(stmts[1], "FOREIGN KEY (order_id) REFERENCES "+prefix+"orders (id)")
		stmts[2] = withConstraint(stmts[2], "FOREIGN KEY (order_id, line_no) REFERENCES "+prefix+"order_items (order_id, line_no)")
	}
	return stmts
}

// withConstraint adds a table constraint to a CREATE TABLE statement that
// ends with its column list's closing parenthesis.
func withConstraint(stmt, constraint string) string {
	i := strings.LastIndexByte(stmt, ')')
	return stmt[:i] + ",\n\t\t\t" + constraint + ")"
}

// noteMaker draws the notes of a linked workload's items.
type noteMaker struct{ rng *rand.Rand }

func newNoteMaker(seed uint64) *noteMaker {
	return &noteMaker{rand.New(rand.NewPCG(seed^0x6e6f746573, seed))}
}

// notes returns the notes of order id's items made with it: 0 to 2 per
// item, numbered from 1.
func (m *noteMaker) notes(id int64, items int) []changelog.Row {
	var out []changelog.Row
	for l := 1; l <= items; l++ {
		k := m.rng.IntN(3)
		for n := 1; n <= k; n++ {
			out = append(out, noteRow(id, l, n, fmt.Sprintf("note %d of line %d, ref %05d", n, l, m.rng.IntN(100000))))
		}
	}
	return out
}

func noteRow(id int64, line, n int, body string) changelog.Row {
	return row("order_id", num(id), "line_no", num(int64(line)), "note_no", num(int64(n)), "body", body)
}

// noteKey renders a note's key as Result.Final holds it.
func noteKey(r changelog.Row) string {
	var parts []string
	for _, c := range []string{"order_id", "line_no", "note_no"} {
		v, _ := r.Get(c)
		parts = append(parts, string(v.(changelog.Number)))
	}
	return strings.Join(parts, "|")
}

// noteDigestKey is a note's key as a number, for a streamed workload's
// final state: line numbers run up to 5 and note numbers up to 3 (a
// later note of the first line), so three bits hold each.
func noteDigestKey(id int64, line, n int) uint64 {
	return uint64(id)<<6 | uint64(line)<<3 | uint64(n)
}

// atoi reads a whole number the generator made.
func atoi(v changelog.Value) int {
	var n int
	fmt.Sscan(string(v.(changelog.Number)), &n)
	return n
}
