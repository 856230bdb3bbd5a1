// Package connect opens a target from its URL, choosing the dialect by the
// URL's scheme: mysql:// (MySQL and MariaDB), postgres:// or postgresql://,
// and sqlite:// (a file) or sqlite::memory:.
package connect

import (
	"context"
	"fmt"
	"strings"

	"github.com/txsink/txsink/sink/sqlsink"
	"github.com/txsink/txsink/sink/sqlsink/mysql"
	"github.com/txsink/txsink/sink/sqlsink/postgres"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
)

// Open connects to the target at rawURL. A relative sqlite:// path is
// taken relative to baseDir (the config file's folder).
func Open(ctx context.Context, rawURL, baseDir string) (*sqlsink.DB, error) {
	return open(ctx, rawURL, baseDir, false)
}

// OpenReadOnly is Open for callers that must not change the target, not
// even by creating a SQLite file.
func OpenReadOnly(ctx context.Context, rawURL, baseDir string) (*sqlsink.DB, error) {
	return open(ctx, rawURL, baseDir, true)
}

func open(ctx context.Context, rawURL, baseDir string, readOnly bool) (*sqlsink.DB, error) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch strings.ToLower(scheme) {
	case "mysql", "mariadb":
		return mysql.Open(ctx, rawURL)
	case "postgres", "postgresql":
		return postgres.Open(ctx, rawURL)
	case "sqlite":
		p, err := sqlite.Path(rawURL, baseDir)
		if err != nil {
			return nil, err
		}
		if readOnly {
			return sqlite.OpenReadOnly(ctx, p)
		}
		return sqlite.Open(ctx, p)
	}
	return nil, fmt.Errorf("target url: unknown scheme %q: use mysql://, postgres:// or sqlite://", scheme)
}
