package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/txsink/txsink/sink/sqlsink"
)

// pragma reads one PRAGMA's value as text.
func pragma(t *testing.T, db *sqlsink.DB, name string) string {
	t.Helper()
	var v string
	if err := db.DB().QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

// TestOpenBoundsMemory checks that a file database is opened with the
// page cache and memory-mapping settings that bound SQLite's memory, and
// that they leave the journal and durability settings as they were.
func TestOpenBoundsMemory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cache_size":   "-1000",
		"mmap_size":    "0",
		"journal_mode": "wal",
		"synchronous":  "1", // NORMAL
		"foreign_keys": "1",
	}
	for name, v := range want {
		if got := pragma(t, db, name); got != v {
			t.Errorf("PRAGMA %s = %s, want %s", name, got, v)
		}
	}
	if _, err := db.DB().ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, name := range []string{"cache_size", "mmap_size"} {
		if got := pragma(t, ro, name); got != want[name] {
			t.Errorf("read-only: PRAGMA %s = %s, want %s", name, got, want[name])
		}
	}
}

// TestMaxParamsFitsSQLite checks that the statement size chosen for
// memory stays within what SQLite accepts and leaves a wide table
// several rows per statement.
func TestMaxParamsFitsSQLite(t *testing.T) {
	n := Dialect{}.MaxParams()
	if n > 32766 {
		t.Fatalf("MaxParams = %d, over SQLITE_MAX_VARIABLE_NUMBER (32766)", n)
	}
	if n/64 < 32 {
		t.Fatalf("MaxParams = %d: a 64-column table would get %d rows per statement", n, n/64)
	}
}
