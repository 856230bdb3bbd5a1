package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// TestOpenReadOnlyMissingFile: a database file that does not exist yet
// is looked at as the empty database txsink run would start from — no
// tables — and nothing is created on disk.
func TestOpenReadOnlyMissingFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "not-yet.db")
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a file not there yet: %v", err)
	}
	var n int
	if err := ro.DB().QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil || n != 0 {
		t.Errorf("the missing file's database holds %d objects (%v), want an empty one", n, err)
	}
	ro.Close()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly left %s behind (stat: %v)", path, err)
	}
	// A folder that is not there could not hold the file run would
	// create: refused, naming it.
	missing := filepath.Join(t.TempDir(), "no-such-folder", "t.db")
	if ro, err := OpenReadOnly(ctx, missing); err == nil {
		ro.Close()
		t.Errorf("OpenReadOnly(%s) = nil error, want the missing folder refused", missing)
	} else if !strings.Contains(err.Error(), "no-such-folder") {
		t.Errorf("OpenReadOnly(%s) = %v, want the folder named", missing, err)
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
