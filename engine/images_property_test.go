package engine_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// imageModel is the replay of a changelog of table w(id, a, b, c), one
// change at a time: what a target holds after each change applied alone.
type imageModel map[int][3]string

// TestImagesProperty generates changelogs of full and partial images,
// deletes, and -U/+U pairs that keep or move keys, applies each at random
// flush boundaries on every server, plain and transaction mode, and
// compares the table with the replay.
func TestImagesProperty(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		db.Exec(t, `CREATE TABLE w (id INT NOT NULL PRIMARY KEY, a VARCHAR(20), b VARCHAR(20), c INT)`)
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 24))
			lines, model := imageChangelog(rng, 160, 10)
			for _, txn := range []bool{false, true} {
				flush := []int{1, 3, 7, 40, 1 << 30}[rng.IntN(5)]
				t.Run(fmt.Sprintf("seed%d/flush%d/txn=%v", seed, flush, txn), func(t *testing.T) {
					db.Exec(t, "DELETE FROM w")
					cfg := linesPipeline(t, db, "w", fmt.Sprintf("images-%d-%d-%v", seed, flush, txn), lines, flush, txn)
					if r := runPipeline(t, cfg); r.err != nil {
						t.Fatal(r.err)
					}
					got := query(t, db, "SELECT id, COALESCE(a, '~'), COALESCE(b, '~'), COALESCE(CAST(c AS CHAR(12)), '~') FROM w ORDER BY id")
					if db.Dialect == "postgres" {
						got = query(t, db, "SELECT id, COALESCE(a, '~'), COALESCE(b, '~'), COALESCE(CAST(c AS VARCHAR(12)), '~') FROM w ORDER BY id")
					}
					if want := model.String(); got != want {
						t.Errorf("table differs from the replay\n got %s\nwant %s\nchangelog:\n%s", got, want, strings.Join(lines, "\n"))
					}
				})
			}
		}
	})
}

// imageChangelog returns n txsink-json lines over keys 0..keys-1 and the
// replay's final state.
func imageChangelog(rng *rand.Rand, n, keys int) ([]string, imageModel) {
	model := imageModel{}
	var lines []string
	val := func() string { return fmt.Sprintf("v%d", rng.IntN(100)) }
	full := func(op string, id int) {
		r := [3]string{val(), val(), fmt.Sprint(rng.IntN(1000))}
		lines = append(lines, fmt.Sprintf(`{"op":%q,"table":"shop.w","row":{"id":%d,"a":%q,"b":%q,"c":%s}}`, op, id, r[0], r[1], r[2]))
		model[id] = r
	}
	for len(lines) < n {
		id := rng.IntN(keys)
		_, exists := model[id]
		switch k := rng.IntN(10); {
		case k < 2:
			full("+I", id)
		case k < 5 && exists:
			// A partial update: a random non-empty subset of a, b, c.
			r := model[id]
			var cols []string
			for i, name := range []string{"a", "b", "c"} {
				if rng.IntN(2) == 0 {
					continue
				}
				if i == 2 {
					r[i] = fmt.Sprint(rng.IntN(1000))
					cols = append(cols, fmt.Sprintf(`"c":%s`, r[i]))
				} else {
					r[i] = val()
					cols = append(cols, fmt.Sprintf(`%q:%q`, name, r[i]))
				}
			}
			if len(cols) == 0 {
				continue
			}
			lines = append(lines, fmt.Sprintf(`{"op":"+U","table":"shop.w","row":{"id":%d,%s}}`, id, strings.Join(cols, ",")))
			model[id] = r
		case k < 6:
			lines = append(lines, fmt.Sprintf(`{"op":"-D","table":"shop.w","row":{"id":%d}}`, id))
			delete(model, id)
		case k < 8 && exists:
			// A -U/+U pair, keeping or moving the key.
			lines = append(lines, fmt.Sprintf(`{"op":"-U","table":"shop.w","row":{"id":%d}}`, id))
			to := id
			if rng.IntN(2) == 0 {
				to = rng.IntN(keys)
			}
			delete(model, id)
			full("+U", to)
		case k < 9:
			// A lone -U: followed by another change, it deletes nothing.
			lines = append(lines, fmt.Sprintf(`{"op":"-U","table":"shop.w","row":{"id":%d}}`, id))
			full("+I", rng.IntN(keys))
		default:
			full("+U", id)
		}
	}
	return lines, model
}

// String renders the model as query renders the table: "id|a|b|c" rows.
func (m imageModel) String() string {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var rows []string
	for _, id := range ids {
		r := m[id]
		rows = append(rows, fmt.Sprintf("%d|%s|%s|%s", id, r[0], r[1], r[2]))
	}
	return strings.Join(rows, "\n")
}
