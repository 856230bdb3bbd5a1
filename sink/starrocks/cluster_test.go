package starrocks

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
	"github.com/txsink/txsink/sink/starrocks/starrockstest"
)

// cluster is what a test needs of StarRocks: the FE's load URL, the
// credentials, a private database, DDL and a MySQL-protocol reader. It is
// the fake unless TXSINK_TEST_STARROCKS_URL names a real cluster, as
// starrocks://user:pass@fe-host:8030/db?query-port=9030 (db is unused:
// each test makes a database of its own and drops it); starrockstest,
// which the other packages' StarRocks tests use too, makes it.
type cluster struct {
	loadURL, user, password, db string
	// url is the starrocks:// target URL of the database.
	url string
	// SQL reads the committed rows over the MySQL protocol.
	SQL *sql.DB
	// catalog is the schema Describe reads: information_schema on a real
	// cluster, the fake's CatalogSchema on the fake.
	catalog string
	// http speaks the URL's TLS; nil: the client's default.
	http *http.Client
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
	return fromShared(starrockstest.New(t, opt), opt)
}

// fakeCluster starts a fake with the MariaDB test user's credentials, so
// that its target URL reaches both its sides, whatever
// TXSINK_TEST_STARROCKS_URL says.
func fakeCluster(t testing.TB, opt starrocksfake.Options) *cluster {
	t.Helper()
	return fromShared(starrockstest.NewFake(t, opt), opt)
}

func fromShared(c *starrockstest.Cluster, opt starrocksfake.Options) *cluster {
	clk, _ := opt.Clock.(*clocktest.Clock)
	if c.Fake == nil {
		clk = nil // a real cluster keeps its own time
	}
	return &cluster{loadURL: c.LoadURL, url: c.URL, user: c.User, password: c.Password, db: c.Database, SQL: c.SQL,
		catalog: c.Catalog, http: c.HTTPClient, fake: c.Fake, clock: clk, exec: c.Exec}
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
	cfg := Config{LoadURLs: []string{c.loadURL}, User: c.user, Password: c.password, Database: c.db, HTTPClient: c.http}
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
