package starrocks

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// cluster is what a test needs of StarRocks: the FE's load URL, the
// credentials, a private database, DDL and a MySQL-protocol reader. It is
// the fake unless TXSINK_TEST_STARROCKS_URL names a real cluster, as
// starrocks://user:pass@fe-host:8030/db?query-port=9030 (db is unused:
// each test makes a database of its own and drops it).
type cluster struct {
	loadURL, user, password, db string
	// url is the starrocks:// target URL of the database.
	url string
	// SQL reads the committed rows over the MySQL protocol.
	SQL *sql.DB
	// catalog is the schema Describe reads: information_schema on a real
	// cluster, the fake's CatalogSchema on the fake.
	catalog string
	// fake is nil against a real cluster.
	fake  *starrocksfake.Fake
	clock *clocktest.Clock
	exec  func(ctx context.Context, ddl string) error
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	return realOrFake(t, starrocksfake.Options{Clock: clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
}

// realOrFake is the cluster TXSINK_TEST_STARROCKS_URL names, else a fake
// started with opt.
func realOrFake(t testing.TB, opt starrocksfake.Options) *cluster {
	t.Helper()
	if raw := os.Getenv("TXSINK_TEST_STARROCKS_URL"); raw != "" {
		return realCluster(t, raw)
	}
	return fakeCluster(t, opt)
}

// fakeCluster starts a fake with the MariaDB test user's credentials, so
// that its target URL reaches both its sides.
func fakeCluster(t testing.TB, opt starrocksfake.Options) *cluster {
	t.Helper()
	opt.User, opt.Password = starrocksfake.MySQLCredentials(t)
	f := starrocksfake.New(t, opt)
	clk, _ := opt.Clock.(*clocktest.Clock)
	return &cluster{loadURL: f.URL(), url: f.SinkURL(), user: opt.User, password: opt.Password, db: f.Database(), SQL: f.SQL(), fake: f, catalog: f.CatalogSchema(), clock: clk, exec: f.Exec}
}

func realCluster(t testing.TB, raw string) *cluster {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "starrocks" {
		t.Fatalf("TXSINK_TEST_STARROCKS_URL %q is not starrocks://user:pass@fe-host:8030/db?query-port=9030", raw)
	}
	pass, _ := u.User.Password()
	qport := u.Query().Get("query-port")
	if qport == "" {
		qport = "9030"
	}
	dsn := fmt.Sprintf("%s:%s@tcp(%s:%s)/", u.User.Username(), pass, u.Hostname(), qport)
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := fmt.Sprintf("txsink_t_%d_%06d", time.Now().Unix()%1000000, rand.IntN(1000000))
	if _, err := admin.Exec("CREATE DATABASE " + db); err != nil {
		t.Fatalf("create database %s on %s: %v", db, u.Host, err)
	}
	conn, err := sql.Open("mysql", dsn+db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		admin.Exec("DROP DATABASE IF EXISTS " + db + " FORCE")
		admin.Close()
	})
	scheme := "http"
	if u.Query().Get("tls") == "true" {
		scheme = "https"
	}
	exec := func(ctx context.Context, ddl string) error { _, err := conn.ExecContext(ctx, ddl); return err }
	u.Path = "/" + db
	return &cluster{url: u.String(), loadURL: scheme + "://" + u.Host, user: u.User.Username(), password: pass, db: db, SQL: conn, exec: exec, catalog: "information_schema"}
}

// needFake skips a test that injects faults or moves the server's clock,
// which only the fake can do.
func (c *cluster) needFake(t testing.TB) *starrocksfake.Fake {
	t.Helper()
	if c.fake == nil {
		t.Skip("needs the fake's fault injection; TXSINK_TEST_STARROCKS_URL names a real cluster")
	}
	return c.fake
}

func (c *cluster) client(t testing.TB, mod ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{LoadURLs: []string{c.loadURL}, User: c.user, Password: c.password, Database: c.db}
	if c.clock != nil {
		cfg.Clock = c.clock
	}
	for _, m := range mod {
		m(&cfg)
	}
	cl, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func (c *cluster) ddl(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if err := c.exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (c *cluster) count(t testing.TB, q string) int {
	t.Helper()
	var n int
	if err := c.SQL.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
