package benchrun

import (
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/txsink/txsink/internal/cputime"
	"github.com/txsink/txsink/internal/testdb"
)

// TestLocalTarget tells the targets on this host, whose server's CPU time
// the bench reads, from the others.
func TestLocalTarget(t *testing.T) {
	for _, tc := range []struct {
		url   string
		local bool
	}{
		{"mysql://txsink:txsink@127.0.0.1:3306/test", true},
		{"mysql://app@localhost/shop", true},
		{"postgres://postgres@[::1]:5432/test?sslmode=disable", true},
		{"postgres://postgres@/test?host=/var/run/postgresql", true},
		{"postgres://postgres@db.example.com:5432/test", false},
		{"mysql://app@10.0.0.7:3306/shop", false},
		{"postgres://postgres@127.0.0.1/test?host=db.example.com", false},
		{"::not a url", false},
	} {
		if got := LocalTarget(tc.url); got != tc.local {
			t.Errorf("LocalTarget(%q) = %v, want %v", tc.url, got, tc.local)
		}
	}
}

// TestFindServer finds the process of each server on this host (CI's
// always are) by what the server says of itself, and its CPU time then
// reads; a target named by another host is not looked for, nor is
// SQLite's, which runs inside the bench.
func TestFindServer(t *testing.T) {
	for _, dialect := range []string{"mysql", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := testdb.Open(t, dialect)
			if !LocalTarget(db.URL) || runtime.GOOS != "linux" {
				t.Skipf("the %s server is not on this host (%s) or this is not Linux: nothing to find", dialect, db.URL)
			}
			pid := FindServer(t.Context(), db.SQL, dialect, db.URL)
			if pid == 0 {
				if os.Getenv("CI") == "true" {
					t.Fatalf("the %s server on this host was not found", dialect)
				}
				t.Skipf("the %s server on this host cannot be told apart here", dialect)
			}
			names := []string{"postgres"}
			if dialect == "mysql" {
				names = []string{"mariadbd", "mysqld"}
			}
			if cmd := cputime.Command(pid); !slices.Contains(names, cmd) {
				t.Errorf("found process %d, a %q, want one of %q", pid, cmd, names)
			}
			r := &Result{server: pid}
			if _, ok := r.serverCPU(); !ok {
				t.Errorf("the CPU time of the %s server's process %d cannot be read", dialect, pid)
			}
			if pid := FindServer(t.Context(), db.SQL, dialect, "mysql://u@db.example.com/x"); pid != 0 {
				t.Errorf("a target on another host was taken for process %d", pid)
			}
		})
	}
	sq := testdb.SQLite(t)
	if pid := FindServer(t.Context(), sq.SQL, "sqlite", sq.URL); pid != 0 {
		t.Errorf("SQLite was taken for process %d", pid)
	}
	if _, ok := (&Result{}).serverCPU(); ok {
		t.Error("no server, yet a CPU time")
	}
}
