package benchrun

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/internal/cputime"
)

// serverCPU returns the CPU time the target server has used so far (ok
// false when it is not known).
func (r *Result) serverCPU() (time.Duration, bool) {
	if r.server == 0 {
		return 0, false
	}
	return cputime.Tree(r.server)
}

// FindServer returns the process of the target's server when it runs on
// this host and can be told apart, 0 otherwise: MariaDB's or MySQL's from
// its pid file or as the only process of its name, PostgreSQL's
// postmaster as the parent of the bench's backend. A target named by a
// host other than this one's loopback is not looked for, so a local
// server of the same kind is never taken for it; SQLite runs inside the
// bench, whose own CPU time counts it.
func FindServer(ctx context.Context, db *sql.DB, dialect, target string) int {
	if !LocalTarget(target) {
		return 0
	}
	switch dialect {
	case "mysql", "mariadb":
		names := []string{"mariadbd", "mysqld"}
		var pidFile string
		if db.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&pidFile) == nil {
			// Often readable by the server's user only.
			if b, err := os.ReadFile(pidFile); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && slices.Contains(names, cputime.Command(pid)) {
					return pid
				}
			}
		}
		if pid, ok := cputime.Find(names...); ok {
			return pid
		}
	case "postgres":
		var backend int
		if db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend) != nil || cputime.Command(backend) != "postgres" {
			return 0
		}
		if pm, ok := cputime.Parent(backend); ok && cputime.Command(pm) == "postgres" {
			return pm
		}
	}
	return 0
}

// LocalTarget reports whether target names a server on this host: a
// loopback address, localhost, or a Unix socket (no host, or a path).
func LocalTarget(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if h := u.Query().Get("host"); h != "" {
		host = h
	}
	if host == "" || host == "localhost" || strings.HasPrefix(host, "/") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lineCuts reads in, lines lines each ending in a newline, and returns
// the n+1 offsets that cut it into n parts of as equal a number of lines
