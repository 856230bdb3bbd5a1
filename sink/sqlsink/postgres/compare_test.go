package postgres_test

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/txsink/txsink/collate"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
)

// TestDescribeCompare checks how Describe sets each text column's
// comparison: character(n) pads, uuid compares by value, a deterministic
// collation compares bytes, a nondeterministic one is not reproduced, and
// citext folds as lower() does in the database's LC_CTYPE.
func TestDescribeCompare(t *testing.T) {
	db := testdb.Postgres(t)
	ns := db.Namespace(t)
	db.Exec(t,
		"CREATE COLLATION nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
		"CREATE EXTENSION citext SCHEMA "+db.Quote(ns),
		`CREATE TABLE cmp (c CHAR(3) NOT NULL PRIMARY KEY, t TEXT, tc TEXT COLLATE "C", u UUID, d NUMERIC(5,2), n TEXT COLLATE nd, ci citext)`)
	tdb, err := postgres.Open(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tdb.Close() })
	tbl := describe(t, tdb, "cmp")
	var ctype string
	if err := db.SQL.QueryRow("SELECT datctype FROM pg_database WHERE datname = current_database()").Scan(&ctype); err != nil {
		t.Fatal(err)
	}
	fold, _ := postgres.CitextFold("c", ctype)
	want := map[string]schema.Compare{
		"c":  {PadSpace: true},
		"t":  {},
		"tc": {Collation: "C"},
		"u":  {UUID: true},
		"d":  {},
		"ci": {Collation: "citext", Fold: fold},
	}
	for name, w := range want {
		c, _ := tbl.Column(name)
		if c.Compare != w {
			t.Errorf("column %s: Compare = %+v, want %+v", name, c.Compare, w)
		}
	}
	if c, _ := tbl.Column("n"); c.Compare.Unsupported == "" || c.Compare.Collation != "nd" {
		t.Errorf("column n: Compare = %+v, want nd unsupported", c.Compare)
	}
}

// TestCitextFold checks citextFold's choice for the locales it knows.
func TestCitextFold(t *testing.T) {
	for _, tc := range []struct {
		provider, ctype string
		want            schema.Fold
		unsupported     bool
	}{
		{"c", "C", schema.FoldASCII, false},
		{"c", "POSIX", schema.FoldASCII, false},
		{"c", "C.UTF-8", schema.FoldLower, false},
		{"c", "en_US.utf8", schema.FoldLower, false},
		{"c", "tr_TR.UTF-8", schema.FoldNone, true},
		{"c", "de_DE.ISO-8859-1", schema.FoldNone, true},
		{"i", "und", schema.FoldNone, true},
	} {
		fold, why := postgres.CitextFold(tc.provider, tc.ctype)
		if fold != tc.want || (why != "") != tc.unsupported {
			t.Errorf("citextFold(%q, %q) = %v, %q; want %v, unsupported %v", tc.provider, tc.ctype, fold, why, tc.want, tc.unsupported)
		}
	}
}

// TestCitextFoldMatchesLower checks, on the real PostgreSQL, that the fold
// citext gets in the test database gives every character of the first
// three planes the lower() the server gives it.
func TestCitextFoldMatchesLower(t *testing.T) {
	db := testdb.Postgres(t)
	var ctype string
	if err := db.SQL.QueryRow("SELECT datctype FROM pg_database WHERE datname = current_database()").Scan(&ctype); err != nil {
		t.Fatal(err)
	}
	fold, why := postgres.CitextFold("c", ctype)
	if why != "" {
		t.Fatalf("the test database's LC_CTYPE %s is not reproduced: %s", ctype, why)
	}
	rows, err := db.SQL.Query("SELECT cp, lower(chr(cp)) FROM generate_series(1, 196607) cp WHERE cp NOT BETWEEN 55296 AND 57343")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cmp := schema.Compare{Fold: fold}
	n := 0
	for rows.Next() {
		var cp rune
		var lower string
		if err := rows.Scan(&cp, &lower); err != nil {
			t.Fatal(err)
		}
		n++
		if got := string(collate.AppendText(nil, &cmp, string(cp))); got != lower || !utf8.ValidString(got) {
			t.Errorf("U+%04X: folds to %q, lower() gives %q", cp, got, lower)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 196607-2048 {
		t.Fatalf("%d characters checked, want %d", n, 196607-2048)
	}
}
