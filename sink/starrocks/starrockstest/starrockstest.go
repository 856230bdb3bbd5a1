// Package starrockstest gives a test a StarRocks cluster: the real one
// TXSINK_TEST_STARROCKS_URL names, in a database of the test's own, or
// else the fake (starrocksfake). Every StarRocks test outside
// sink/starrocks that does not inject faults takes its cluster from New,
// so that it runs unchanged against a real cluster; one that injects
// faults or reads the fake's request log calls NeedFake, which skips it
// against a real cluster saying why.
//
// TXSINK_TEST_STARROCKS_URL has the form of a target URL,
//
//	starrocks://user:pass@fe1:8030[,fe2:8030]/any?query-port=9030[&tls=true&tls-ca=FILE]
//
// its database unused: each test creates txsink_t_<time>_<random> through
// the first FE's MySQL port and drops it when it ends.
package starrockstest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// EnvURL is the environment variable naming a real cluster.
const EnvURL = "TXSINK_TEST_STARROCKS_URL"

// Cluster is a StarRocks cluster for one test, with a database of the
// test's own.
type Cluster struct {
	// URL is the starrocks:// target URL of the test's database, for a
	// pipeline config.
	URL string
	// LoadURL is the first FE's HTTP base URL (https:// with tls).
	LoadURL string
	// User and Password reach both the HTTP and the MySQL side.
	User, Password string
	// Database is the test's database.
	Database string
	// SQL is a MySQL-protocol connection to Database: the committed rows
	// as a reader sees them.
	SQL *sql.DB
	// Catalog is the schema a Describe reads: information_schema on a
	// real cluster, the fake's CatalogSchema on the fake.
	Catalog string
	// HTTPClient speaks to the FEs and BEs with the URL's TLS settings
	// (nil: http.DefaultClient serves).
	HTTPClient *http.Client
	// Fake is the fake; nil against a real cluster.
	Fake *starrocksfake.Fake

	exec func(ctx context.Context, ddl string) error
}

// New returns the cluster TXSINK_TEST_STARROCKS_URL names, else a fake
// started with opt and the MariaDB test user's credentials (so that its
// URL reaches both its sides), and runs ddl on it in order (StarRocks
// DDL, or INSERT ... VALUES for starting rows); a failure fails t.
func New(t testing.TB, opt starrocksfake.Options, ddl ...string) *Cluster {
	t.Helper()
	if raw := os.Getenv(EnvURL); raw != "" {
		return withDDL(t, realCluster(t, raw), ddl)
	}
	return withDDL(t, fakeCluster(t, opt), ddl)
}

// NewFake is New on the fake whatever TXSINK_TEST_STARROCKS_URL says, for
// a test that injects faults into every case it runs.
func NewFake(t testing.TB, opt starrocksfake.Options, ddl ...string) *Cluster {
	t.Helper()
	return withDDL(t, fakeCluster(t, opt), ddl)
}

func withDDL(t testing.TB, c *Cluster, ddl []string) *Cluster {
	t.Helper()
	for _, s := range ddl {
		if err := c.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return c
}

// Real reports whether TXSINK_TEST_STARROCKS_URL names a real cluster,
// for a test that must know before it starts one.
func Real() bool { return os.Getenv(EnvURL) != "" }

func fakeCluster(t testing.TB, opt starrocksfake.Options) *Cluster {
	t.Helper()
	if opt.TLS == nil {
		opt.User, opt.Password = starrocksfake.MySQLCredentials(t)
	}
	f := starrocksfake.New(t, opt)
	c := &Cluster{URL: f.SinkURL(), LoadURL: f.URL(), User: opt.User, Password: opt.Password, Database: f.Database(),
		SQL: f.SQL(), Catalog: f.CatalogSchema(), Fake: f, exec: f.Exec}
	if c.User == "" {
		c.User = "root" // the fake's default
	}
	if opt.TLS != nil {
		c.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: opt.TLS.Pool}}}
	}
	return c
}

func realCluster(t testing.TB, raw string) *Cluster {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "starrocks" || u.Host == "" {
		t.Fatalf("%s %q is not starrocks://user:pass@fe-host:8030/db?query-port=9030", EnvURL, redact(raw))
	}
	q := u.Query()
	tc, err := tlsConfig(q)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	first, _, _ := strings.Cut(u.Host, ",")
	host := first
	if h, _, err := net.SplitHostPort(first); err == nil {
		host = h
	} else {
		first = net.JoinHostPort(first, "8030")
	}
	qport := q.Get("query-port")
	if qport == "" {
		qport = "9030"
	}
	pass, _ := u.User.Password()
	open := func(db string) *sql.DB {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = u.User.Username(), pass, "tcp", net.JoinHostPort(host, qport), db
		cfg.InterpolateParams = true
		cfg.TLS = tc
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return sql.OpenDB(conn)
	}
	admin := open("")
	db := fmt.Sprintf("txsink_t_%d_%06d", time.Now().Unix()%1000000, rand.IntN(1000000))
	if _, err := admin.Exec("CREATE DATABASE " + db); err != nil {
		admin.Close()
		t.Fatalf("create database %s on %s (%s): %v", db, net.JoinHostPort(host, qport), EnvURL, err)
	}
	conn := open(db)
	t.Cleanup(func() {
		conn.Close()
		// FORCE drops at once, past StarRocks' recycle bin; a server that
		// does not know it (before 2.x, or a MySQL one) drops plainly.
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + db + " FORCE"); err != nil {
			if _, err := admin.Exec("DROP DATABASE IF EXISTS " + db); err != nil {
				t.Logf("drop database %s: %v", db, err)
			}
		}
		admin.Close()
	})
	c := &Cluster{LoadURL: "http://" + first, User: u.User.Username(), Password: pass, Database: db, SQL: conn,
		Catalog: "information_schema", exec: func(ctx context.Context, ddl string) error { _, err := conn.ExecContext(ctx, ddl); return err }}
	if tc != nil {
		c.LoadURL = "https://" + first
		c.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	}
	u.Path = "/" + db
	c.URL = u.String()
	return c
}

// tlsConfig is the TLS configuration a target URL's tls and tls-ca ask
// for (as sink/starrocks reads them), nil without tls.
func tlsConfig(q url.Values) (*tls.Config, error) {
	mode := q.Get("tls")
	if mode == "" || mode == "false" {
		return nil, nil
	}
	tc := &tls.Config{InsecureSkipVerify: mode == "skip-verify"}
	if ca := q.Get("tls-ca"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("tls-ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca %s holds no PEM certificate", ca)
		}
	}
	return tc, nil
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return raw
}

// Exec runs one statement of StarRocks DDL (or INSERT ... VALUES) on the
// cluster: through the fake's Exec, or over the MySQL protocol.
func (c *Cluster) Exec(ctx context.Context, ddl string) error { return c.exec(ctx, ddl) }

// NeedFake returns the fake, or skips t against a real cluster: why says
// what of the fake the test needs ("injects lost commit answers").
func (c *Cluster) NeedFake(t testing.TB, why string) *starrocksfake.Fake {
	t.Helper()
	if c.Fake == nil {
		t.Skipf("needs the StarRocks fake: the test %s, which a real cluster (%s is set) cannot be made to do", why, EnvURL)
	}
	return c.Fake
}

// TestDB is the cluster as a testdb.DB of dialect "mysql", for the
// helpers of the SQL targets' tests: its URL is the target URL, its SQL
// the MySQL-protocol reader.
func (c *Cluster) TestDB() *testdb.DB {
	return &testdb.DB{Dialect: "mysql", URL: c.URL, SQL: c.SQL}
}
