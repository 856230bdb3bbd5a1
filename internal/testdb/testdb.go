// Package testdb gives tests a fresh, private database on each real server
// txsink supports: a new MariaDB/MySQL database, a new PostgreSQL schema, or
// a new SQLite file, dropped when the test ends. Tests in different packages
// run at once, so none of them shares tables.
//
// The servers are found through environment variables, with defaults that
// match scripts/test-services.sh:
//
//	TXSINK_TEST_MYSQL_URL     mysql://txsink:txsink@127.0.0.1:3306/test
//	TXSINK_TEST_POSTGRES_URL  postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//	TXSINK_TEST_NATS_URL      nats://127.0.0.1:4222 (NATS, for the nats source)
//
// When a server cannot be reached the test is skipped with a message saying
// how to start it — except under CI=true, where it fails: CI must never
// skip a real-server test.
package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the MySQL driver, for setting up
	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for setting up
	_ "modernc.org/sqlite"             // the SQLite driver, for setting up

	"github.com/txsink/txsink/sink/sqlsink/mysql"
)

// DB is one private test database.
type DB struct {
	// Dialect is "mysql", "postgres" or "sqlite".
	Dialect string
	// URL is the target URL of the private database, for a pipeline config.
	URL string
	// SQL is an administrative connection to the private database.
	SQL *sql.DB
}

// Exec runs statements on the private database, failing the test on error.
func (d *DB) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := d.SQL.Exec(s); err != nil {
			t.Fatalf("%s: %v\n%s", d.Dialect, err, s)
		}
	}
}

// Dialects lists the dialects All returns, in order.
var Dialects = []string{"sqlite", "mysql", "postgres"}

// Open returns a private database of the named dialect.
func Open(t testing.TB, dialect string) *DB {
	t.Helper()
	switch dialect {
	case "mysql":
		return MySQL(t)
	case "postgres":
		return Postgres(t)
	case "sqlite":
		return SQLite(t)
	}
	t.Fatalf("testdb: unknown dialect %q", dialect)
	return nil
}

func unavailable(t testing.TB, what, how string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s is not reachable (%v); start it with scripts/test-services.sh, or point %s at a server", what, err, how)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: real-server tests must run)")
	}
	t.Skip(msg)
}

func name() string {
	return fmt.Sprintf("txsink_t_%d_%06d", time.Now().Unix()%1000000, rand.IntN(1000000))
}

// MySQLBase is the URL of the MariaDB/MySQL test server's shared
// database: TXSINK_TEST_MYSQL_URL, or the default user on loopback.
func MySQLBase() string {
	if base := os.Getenv("TXSINK_TEST_MYSQL_URL"); base != "" {
		return base
	}
	return "mysql://txsink:txsink@127.0.0.1:3306/test"
}

// MySQL returns a new private database on the MariaDB/MySQL test server.
func MySQL(t testing.TB) *DB {
	t.Helper()
	base := MySQLBase()
	dsn, err := mysql.DSN(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		unavailable(t, "MariaDB/MySQL at "+redact(base), "TXSINK_TEST_MYSQL_URL", err)
	}
	db := name()
	if _, err := admin.Exec("CREATE DATABASE " + db + " CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		admin.Close()
		t.Fatalf("create database %s: %v", db, err)
	}
	u, _ := url.Parse(base)
	u.Path = "/" + db
	priv := u.String()
	pdsn, _ := mysql.DSN(priv)
	conn, err := sql.Open("mysql", pdsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + db); err != nil {
			t.Logf("drop database %s: %v", db, err)
		}
		admin.Close()
	})
	return &DB{Dialect: "mysql", URL: priv, SQL: conn}
}

// Postgres returns a new private schema on the PostgreSQL test server; its
// URL sets search_path so unqualified names land in it.
func Postgres(t testing.TB) *DB {
	t.Helper()
	base := os.Getenv("TXSINK_TEST_POSTGRES_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		unavailable(t, "PostgreSQL at "+redact(base), "TXSINK_TEST_POSTGRES_URL", err)
	}
	schema := name()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema %s: %v", schema, err)
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	priv := u.String()
	conn, err := sql.Open("pgx", priv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		if _, err := admin.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	return &DB{Dialect: "postgres", URL: priv, SQL: conn}
}

// SQLite returns a new SQLite database file in a temporary folder.
func SQLite(t testing.TB) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &DB{Dialect: "sqlite", URL: "sqlite://" + path, SQL: conn}
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the server"
	}
	return u.Redacted()
}

// Quote quotes an identifier for the dialect.
func (d *DB) Quote(s string) string {
	if d.Dialect == "mysql" {
		return "`" + strings.ReplaceAll(s, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// Namespace returns the private database's name as its server names the
// connection's own namespace: the database on MariaDB/MySQL, the schema
// on PostgreSQL, "main" on SQLite.
func (d *DB) Namespace(t testing.TB) string {
	t.Helper()
	var q string
	switch d.Dialect {
	case "mysql":
		q = "SELECT DATABASE()"
	case "postgres":
		q = "SELECT current_schema()"
	default:
		return "main"
	}
	var ns string
	if err := d.SQL.QueryRow(q).Scan(&ns); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return ns
}

// Neighbour creates a namespace beside the private one, dropped when the
// test ends, and returns its name: a database on MariaDB/MySQL, a schema
// on PostgreSQL, for tests that a pipeline never writes outside its own.
// SQLite reaches other databases only by attaching them, so there it
// returns "main", the private database itself.
func (d *DB) Neighbour(t testing.TB) string {
	t.Helper()
	own := d.Namespace(t)
	if d.Dialect == "sqlite" {
		return own
	}
	ns := own + "_neighbour"
	create, drop := "CREATE SCHEMA ", "DROP SCHEMA IF EXISTS %s CASCADE"
	if d.Dialect == "mysql" {
		create, drop = "CREATE DATABASE ", "DROP DATABASE IF EXISTS %s"
	}
	d.Exec(t, create+d.Quote(ns))
	t.Cleanup(func() {
		if _, err := d.SQL.Exec(fmt.Sprintf(drop, d.Quote(ns))); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
	})
	return ns
}
