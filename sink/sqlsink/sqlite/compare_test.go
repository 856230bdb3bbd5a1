package sqlite

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/collate"
	"github.com/txsink/txsink/schema"
)

// TestDescribeCompare checks that Describe reads each column's COLLATE
// clause, and that the comparison forms of NOCASE, RTRIM and BINARY are
// equal exactly when SQLite's = says so, over random pairs of texts.
func TestDescribeCompare(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.DB().ExecContext(ctx, `CREATE TABLE cmp (n TEXT COLLATE NOCASE NOT NULL PRIMARY KEY, "r" TEXT COLLATE rtrim, b TEXT COLLATE BINARY, c CHAR(3), p TEXT)`); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Describe(ctx, schema.Name{Name: "cmp"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schema.Compare{
		"n": {Collation: "NOCASE", Fold: schema.FoldASCII},
		"r": {Collation: "RTRIM", PadSpace: true},
		"b": {},
		"c": {}, // SQLite keeps a CHAR's spaces, and compares them
		"p": {},
	}
	for name, w := range want {
		c, _ := tbl.Column(name)
		if c.Compare != w {
			t.Errorf("column %s: Compare = %+v, want %+v", name, c.Compare, w)
		}
	}

	alphabet := []string{"a", "A", "z", "Z", "é", "É", " ", "\t", "ß", "@", "[", "`", "{"}
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(4) + 1 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String() + strings.Repeat(" ", rng.IntN(3))
	}
	for _, coll := range []string{"n", "r", "b"} {
		c, _ := tbl.Column(coll)
		equals := 0
		for range 2000 {
			a, b := text(), text()
			if rng.IntN(2) == 0 { // a variant of a: case swapped, spaces changed
				b = strings.TrimRight(strings.ToUpper(a), " ") + strings.Repeat(" ", rng.IntN(3))
			}
			name := c.Compare.Collation
			if name == "" {
				name = "BINARY"
			}
			var equal bool
			if err := db.DB().QueryRowContext(ctx, "SELECT ? = ? COLLATE "+name, a, b).Scan(&equal); err != nil {
				t.Fatal(err)
			}
			if equal {
				equals++
			}
			if got := bytes.Equal(collate.AppendText(nil, &c.Compare, a), collate.AppendText(nil, &c.Compare, b)); got != equal {
				t.Errorf("%s: %q = %q is %v in SQLite, %v by the comparison forms", coll, a, b, equal, got)
			}
		}
		if equals < 40 || equals > 1960 {
			t.Errorf("%s: %d of 2000 pairs equal: the pairs do not test both ways", coll, equals)
		}
	}
}
