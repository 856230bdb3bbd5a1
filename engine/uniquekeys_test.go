package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// ukAccount is a row of accounts: a NOT NULL unique handle and a nullable
// unique email ("" for NULL).
type ukAccount struct{ handle, email string }

// ukModel is a source table accounts whose rows swap and re-use unique
// values, each step one source transaction that keeps both keys unique at
// every statement (a swap goes through a temporary value, as it must in
// the source).
type ukModel struct {
	rng   *rand.Rand
	rows  map[int64]*ukAccount
	ids   []int64
	next  int64
	fresh int
	txn   []changelog.Change
	out   []changelog.Change
	txns  int
}

var ukTable = changelog.Table{Namespace: "shop", Name: "accounts"}

func (m *ukModel) row(id int64) changelog.Row {
	a := m.rows[id]
	var email any
	if a.email != "" {
		email = a.email
	}
	return row("id", fkNum(id), "handle", a.handle, "email", email)
}

func (m *ukModel) set(id int64, f func(a *ukAccount)) {
	before := m.row(id)
	f(m.rows[id])
	m.txn = append(m.txn, changelog.Change{Kind: changelog.UpdateAfter, Table: ukTable, Before: before, After: m.row(id)})
}

func (m *ukModel) freshValue(prefix string) string {
	m.fresh++
	return fmt.Sprintf("%s%d", prefix, m.fresh)
}

func (m *ukModel) pick() int64 { return m.ids[m.rng.IntN(len(m.ids))] }

// step writes one source transaction of one to three operations.
func (m *ukModel) step() {
	for k := 1 + m.rng.IntN(3); k > 0; k-- {
		a, b := m.pick(), m.pick()
		if a == b {
			continue
		}
		ra, rb := m.rows[a], m.rows[b]
		switch m.rng.IntN(7) {
		case 0, 1: // swap handles through a temporary one
			ha, hb := ra.handle, rb.handle
			m.set(a, func(r *ukAccount) { r.handle = m.freshValue("tmp-") })
			m.set(b, func(r *ukAccount) { r.handle = ha })
			m.set(a, func(r *ukAccount) { r.handle = hb })
		case 2: // a takes a new handle, b takes a's old one
			ha := ra.handle
			m.set(a, func(r *ukAccount) { r.handle = m.freshValue("h-") })
			m.set(b, func(r *ukAccount) { r.handle = ha })
		case 3: // swap emails through NULL
			ea, eb := ra.email, rb.email
			m.set(a, func(r *ukAccount) { r.email = "" })
			m.set(b, func(r *ukAccount) { r.email = ea })
			m.set(a, func(r *ukAccount) { r.email = eb })
		case 4: // b's email goes to a, b gets none or a new one
			eb := rb.email
			m.set(b, func(r *ukAccount) {
				r.email = ""
				if m.rng.IntN(2) == 0 {
					r.email = m.freshValue("e-") + "@example.com"
				}
			})
			m.set(a, func(r *ukAccount) { r.email = eb })
		case 5: // a is deleted, b takes its handle, a comes back with a new one
			ha := ra.handle
			m.txn = append(m.txn, changelog.Change{Kind: changelog.Delete, Table: ukTable, Before: m.row(a)})
			delete(m.rows, a)
			m.set(b, func(r *ukAccount) { r.handle = ha })
			m.rows[a] = &ukAccount{handle: m.freshValue("h-")}
			m.txn = append(m.txn, changelog.Change{Kind: changelog.Insert, Table: ukTable, After: m.row(a)})
		case 6: // a new row takes a's handle and email, a gets new ones
			ha, ea := ra.handle, ra.email
			m.set(a, func(r *ukAccount) { r.handle, r.email = m.freshValue("h-"), "" })
			m.next++
			m.rows[m.next] = &ukAccount{handle: ha, email: ea}
			m.ids = append(m.ids, m.next)
			m.txn = append(m.txn, changelog.Change{Kind: changelog.Insert, Table: ukTable, After: m.row(m.next)})
		}
	}
	m.out, m.txn, m.txns = endTxn(m.out, m.txn, m.txns)
}

func (m *ukModel) final() string {
	var lines []string
	for id := int64(1); id <= m.next; id++ {
		if a, ok := m.rows[id]; ok {
			email := "-"
			if a.email != "" {
				email = a.email
			}
			lines = append(lines, fmt.Sprintf("%d|%s|%s", id, a.handle, email))
		}
	}
	return strings.Join(lines, "\n")
}

const ukFinalQuery = "SELECT id, handle, COALESCE(email, '-') FROM accounts ORDER BY id"

// TestUniqueKeySwaps applies, to a table of 10,000 rows with a NOT NULL
// unique handle and a nullable unique email, a changelog of random swaps
// and re-uses of those values (through temporary values, as the source
// must), in plain and transaction mode with flushes of 1 row to all.
// Reduced per key, a flush hands the target rows that take values other
// rows of the flush still hold: none may fail, MariaDB's ON DUPLICATE KEY
// UPDATE may not update the wrong row, the final state must be the
// source's, and in transaction mode a reader never sees a temporary
// handle.
func TestUniqueKeySwaps(t *testing.T) {
	const keys = 10000
	m := &ukModel{rng: rand.New(rand.NewPCG(3, 27)), rows: map[int64]*ukAccount{}}
	var initial []string
	for id := int64(1); id <= keys; id++ {
		m.rows[id] = &ukAccount{handle: fmt.Sprintf("user%d", id)}
		email := "NULL"
		if id%3 != 0 {
			m.rows[id].email = fmt.Sprintf("u%d@example.com", id)
			email = "'" + m.rows[id].email + "'"
		}
		m.ids = append(m.ids, id)
		initial = append(initial, fmt.Sprintf("(%d, 'user%d', %s)", id, id, email))
	}
	m.next = keys
	for m.txns < 400 {
		m.step()
	}
	want := m.final()
	path := writeChangelog(t, m.out)
	t.Logf("%d changes in %d source transactions over %d keys", len(m.out), m.txns, keys)
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, "CREATE TABLE accounts (id INT PRIMARY KEY, handle VARCHAR(40) NOT NULL, email VARCHAR(80) NULL)",
			"CREATE UNIQUE INDEX accounts_handle ON accounts (handle)",
			"CREATE UNIQUE INDEX accounts_email ON accounts (email)")
		for _, mode := range []string{"plain", "transaction"} {
			for _, maxRows := range []int{1, 5, 1 << 20} {
				t.Run(fmt.Sprintf("%s-max-rows-%d", mode, maxRows), func(t *testing.T) {
					db.Exec(t, "DELETE FROM accounts")
					for i := 0; i < len(initial); i += 1000 {
						db.Exec(t, "INSERT INTO accounts (id, handle, email) VALUES "+strings.Join(initial[i:min(i+1000, len(initial))], ","))
					}
					polls, violations := runEveryBoundary(t, db, path, mode, maxRows, "SELECT COUNT(*) FROM accounts WHERE handle LIKE 'tmp-%'", config.Table{Source: "shop.accounts"})
					t.Logf("reader polled %d times, saw %d temporary handles", polls, violations)
					if mode == "transaction" && violations != 0 {
						t.Errorf("transaction mode: the reader saw %d temporary handles, which no source transaction leaves", violations)
					}
					if got := query(t, db, ukFinalQuery); got != want {
						t.Errorf("accounts differs from the source's final state (%d vs %d lines)", strings.Count(got, "\n"), strings.Count(want, "\n"))
						gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
						for i, n := 0, 0; i < min(len(gl), len(wl)) && n < 5; i++ {
							if gl[i] != wl[i] {
								t.Errorf(" got %s\nwant %s", gl[i], wl[i])
								n++
							}
						}
					}
				})
			}
		}
	})
}
