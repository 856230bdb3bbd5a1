package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestRowFault classifies the errors SQLite gives for one row's values
// (CHECK, NOT NULL, a STRICT column's type) as row faults, and those that
// depend on other rows (foreign key, unique key) as not, from real
// statements.
func TestRowFault(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{
		`CREATE TABLE parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE t (id INTEGER PRIMARY KEY, n INT NOT NULL CHECK (n >= 0), u INT UNIQUE, p INT REFERENCES parent(id))`,
		`CREATE TABLE s (id INTEGER PRIMARY KEY, n INT) STRICT`,
		`INSERT INTO t (id, n, u) VALUES (1, 1, 1)`,
	} {
		if _, err := db.DB().ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	tests := []struct {
		stmt string
		want bool
	}{
		{`INSERT INTO t (id, n) VALUES (2, -1)`, true},        // CHECK
		{`INSERT INTO t (id, n) VALUES (2, NULL)`, true},      // NOT NULL
		{`INSERT INTO t (id) VALUES (2)`, true},               // NOT NULL, no default
		{`INSERT INTO s (id, n) VALUES (2, 'text')`, true},    // a STRICT column's type
		{`INSERT INTO t (id, n, u) VALUES (2, 1, 1)`, false},  // a unique key: another row's
		{`INSERT INTO t (id, n, p) VALUES (2, 1, 99)`, false}, // a foreign key: another row's
		{`INSERT INTO t (id, n) VALUES (1, 1)`, false},        // the primary key
		{`INSERT INTO nowhere (id) VALUES (1)`, false},        // no such table
	}
	d := Dialect{}
	for _, tc := range tests {
		_, err := db.DB().ExecContext(ctx, tc.stmt)
		if err == nil {
			t.Fatalf("%s: no error", tc.stmt)
		}
		if got := d.RowFault(err); got != tc.want {
			t.Errorf("RowFault(%v) = %v, want %v (%s)", err, got, tc.want, tc.stmt)
		}
	}
}
