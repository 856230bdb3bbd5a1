package mysql_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/txsink/txsink/collate"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// variants groups characters a case- or accent-insensitive collation may
// take as one; keyText draws from them so that random pairs are often
// equal under one collation and not under another.
var variants = [][]rune{
	{'a', 'A', 'á', 'Á', 'à', 'ä', 'Å', 'ª'},
	{'e', 'E', 'é', 'É', 'ê', 'ë'},
	{'s', 'S', 'ß', 'ś', 'Š'},
	{'i', 'I', 'ı', 'İ', 'í'},
	{'k', 'K', 'K'}, // the last is KELVIN SIGN
	{'ǅ', 'ǆ', 'Ǆ'},
	{'σ', 'Σ', 'ς'},
	{' ', '\t', '\u00a0'},
	{'😀', '😁', '𝐀'}, // beyond the Basic Multilingual Plane
}

// keyPair returns a random text and a variant of it: some characters
// swapped for others of their group, trailing spaces added or dropped.
func keyPair(rng *rand.Rand, supplementary bool) (string, string) {
	groups := variants
	if !supplementary {
		groups = groups[:len(groups)-1]
	}
	var a, b strings.Builder
	for range rng.IntN(4) + 1 {
		g := groups[rng.IntN(len(groups))]
		a.WriteRune(g[rng.IntN(len(g))])
		if rng.IntN(2) == 0 {
			b.WriteRune(g[rng.IntN(len(g))])
		} else {
			b.WriteRune(g[0])
		}
	}
	a.WriteString(strings.Repeat(" ", rng.IntN(3)))
	b.WriteString(strings.Repeat(" ", rng.IntN(3)))
	return a.String(), b.String()
}

// TestCompareMatchesServer asks the real MariaDB whether random pairs of
// texts are equal under each collation txsink reproduces, and checks that
// their comparison forms are equal exactly when the server says so.
func TestCompareMatchesServer(t *testing.T) {
	db := testdb.MySQL(t)
	for _, coll := range []string{"utf8mb4_general_ci", "utf8mb4_general_nopad_ci", "utf8mb3_general_ci", "utf8mb4_bin", "utf8mb4_nopad_bin", "utf8mb3_bin"} {
		t.Run(coll, func(t *testing.T) {
			cmp := mysql.CompareOf(coll, false)
			if cmp.Unsupported != "" {
				t.Fatalf("%s is unsupported: %s", coll, cmp.Unsupported)
			}
			cs, _, _ := strings.Cut(coll, "_")
			rng := rand.New(rand.NewPCG(7, uint64(len(coll))))
			const batch = 100
			equals := 0
			for range 20 {
				var q strings.Builder
				var args []any
				var pairs [][2]string
				for i := range batch {
					a, b := keyPair(rng, cs == "utf8mb4")
					if i > 0 {
						q.WriteString(" UNION ALL ")
					}
					q.WriteString("SELECT CONVERT(? USING " + cs + ") COLLATE " + coll + " = CONVERT(? USING " + cs + ") COLLATE " + coll)
					args = append(args, a, b)
					pairs = append(pairs, [2]string{a, b})
				}
				rows, err := db.SQL.Query(q.String(), args...)
				if err != nil {
					t.Fatal(err)
				}
				i := 0
				for rows.Next() {
					var equal bool
					if err := rows.Scan(&equal); err != nil {
						t.Fatal(err)
					}
					a, b := pairs[i][0], pairs[i][1]
					if equal {
						equals++
					}
					if got := bytes.Equal(collate.AppendText(nil, &cmp, a), collate.AppendText(nil, &cmp, b)); got != equal {
						t.Errorf("%q = %q: the server says %v, the comparison forms %v", a, b, equal, got)
					}
					i++
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				rows.Close()
			}
			// Both outcomes must be common, or the pairs test little.
			if equals < 20*batch/50 || equals > 20*batch*49/50 {
				t.Errorf("%d of %d pairs equal: the pairs do not test both ways", equals, 20*batch)
			}
			t.Logf("%d of %d pairs equal", equals, 20*batch)
		})
	}
}

// TestCompareOf checks which collations are reproduced, and that what
// Describe reads sets each column's comparison.
func TestCompareOf(t *testing.T) {
	for _, tc := range []struct {
		coll        string
		fixed       bool
		want        schema.Compare
		unsupported bool
	}{
		{coll: "utf8mb4_bin", want: schema.Compare{Collation: "utf8mb4_bin", PadSpace: true}},
		{coll: "utf8mb4_nopad_bin", want: schema.Compare{Collation: "utf8mb4_nopad_bin"}},
		{coll: "utf8mb4_nopad_bin", fixed: true, want: schema.Compare{Collation: "utf8mb4_nopad_bin", PadSpace: true}},
		{coll: "utf8mb4_0900_bin", want: schema.Compare{Collation: "utf8mb4_0900_bin"}},
		{coll: "binary", want: schema.Compare{}},
		{coll: "utf8mb4_general_ci", want: schema.Compare{Collation: "utf8mb4_general_ci", Fold: schema.FoldGeneralCI, PadSpace: true}},
		{coll: "utf8mb3_general_nopad_ci", want: schema.Compare{Collation: "utf8mb3_general_nopad_ci", Fold: schema.FoldGeneralCI}},
		{coll: "utf8mb4_unicode_ci", unsupported: true},
		{coll: "utf8mb4_unicode_520_ci", unsupported: true},
		{coll: "utf8mb4_uca1400_ai_ci", unsupported: true},
		{coll: "utf8mb4_0900_ai_ci", unsupported: true},
		{coll: "latin1_swedish_ci", unsupported: true},
		{coll: "utf8mb3_general_mysql500_ci", unsupported: true},
	} {
		got := mysql.CompareOf(tc.coll, tc.fixed)
		if tc.unsupported {
			if got.Unsupported == "" {
				t.Errorf("%s: reproduced as %+v, want unsupported", tc.coll, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s (fixed %v) = %+v, want %+v", tc.coll, tc.fixed, got, tc.want)
		}
	}

	db := testdb.MySQL(t)
	db.Exec(t, "CREATE TABLE cmp (c CHAR(3) COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY, g VARCHAR(5) COLLATE utf8mb4_general_ci, b VARCHAR(5) COLLATE utf8mb4_bin, u UUID, d DECIMAL(5,2), x VARCHAR(5) COLLATE utf8mb4_unicode_ci)")
	tdb := openTarget(t, db.URL)
	tbl, err := tdb.Describe(context.Background(), schema.Name{Name: "cmp"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schema.Compare{
		"c": {Collation: "utf8mb4_nopad_bin", PadSpace: true},
		"g": {Collation: "utf8mb4_general_ci", Fold: schema.FoldGeneralCI, PadSpace: true},
		"b": {Collation: "utf8mb4_bin", PadSpace: true},
		"u": {UUID: true},
		"d": {},
	}
	for name, w := range want {
		c, _ := tbl.Column(name)
		if c.Compare != w {
			t.Errorf("column %s: Compare = %+v, want %+v", name, c.Compare, w)
		}
	}
	if c, _ := tbl.Column("x"); c.Compare.Unsupported == "" || c.Compare.Collation != "utf8mb4_unicode_ci" {
		t.Errorf("column x: Compare = %+v, want utf8mb4_unicode_ci unsupported", c.Compare)
	}
}
