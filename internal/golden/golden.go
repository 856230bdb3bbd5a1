// Package golden compares test output with files under testdata/. Run the
// tests with -update to rewrite the files, then review the diff before
// committing.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update rewrites golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Check compares got with the file testdata/name, or writes it under -update.
func Check(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n got:\n%s\nwant:\n%s\n(run with -update to accept, then review the diff)", path, got, want)
	}
}
