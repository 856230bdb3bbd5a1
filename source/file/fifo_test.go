//go:build unix

package file

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestFIFO checks that a named pipe given as a path is read as a stream:
// resumed by skipping bytes, ending when its writer closes it.
func TestFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	written := make(chan error, 1)
	go func() {
		// Opening a FIFO for writing blocks until a reader opens it.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			written <- err
			return
		}
		_, err = w.WriteString("a\nbb\ncc\n")
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		written <- err
	}()
	r := open(t, path, changelog.Position{Partition: path, Offset: 2, Seq: 1}, true)
	if got, want := readAll(t, r, path), []rec{{"bb", 5, 2}, {"cc", 8, 3}}; !slices.Equal(got, want) {
		t.Errorf("records\n got %v\nwant %v", got, want)
	}
	if r.Size() != -1 {
		t.Errorf("Size = %d, want -1", r.Size())
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
