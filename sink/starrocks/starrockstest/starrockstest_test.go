package starrockstest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// TestRealClusterPlumbing runs New's real-cluster path, there being no
// StarRocks here, with TXSINK_TEST_STARROCKS_URL naming two FEs whose
// MySQL side (query-port) is a MariaDB server, which speaks the same
// protocol: the shared test server, or (tls=true, tls-ca) the MySQL side
// of a fake serving TLS. The test gets a database of its own there, the
// target URL keeps both FEs and names that database, the load URL is the
// first FE's (https:// with tls, through a client trusting tls-ca), DDL
// goes over the MySQL protocol (TLS'd with tls), NeedFake skips, and the
// database is dropped at the end.
func TestRealClusterPlumbing(t *testing.T) {
	shared, err := url.Parse(testdb.MySQLBase())
	if err != nil {
		t.Fatal(err)
	}
	admin := testdb.MySQL(t) // skips, or fails under CI=true, when the server is not there
	secure, err := url.Parse(starrocksfake.New(t, starrocksfake.Options{TLS: starrocksfake.NewCA(t)}).SinkURL())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  url.URL
		// ssl: the MySQL side is TLS'd; shared: it is the shared test
		// server, whose databases admin reads after the test.
		ssl, shared bool
	}{
		{"plain", url.URL{Scheme: "starrocks", User: shared.User, Host: shared.Hostname() + ":8030,fe2.invalid:8030", Path: "/any",
			RawQuery: url.Values{"query-port": {shared.Port()}}.Encode()}, false, true},
		{"tls", url.URL{Scheme: "starrocks", User: secure.User, Host: secure.Host + ",fe2.invalid:8030", Path: "/any", RawQuery: secure.RawQuery}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvURL, tc.env.String())
			var db string
			t.Run("cluster", func(t *testing.T) {
				c := New(t, starrocksfake.Options{}, "CREATE TABLE kv (id INT PRIMARY KEY)")
				db = c.Database
				checkReal(t, c, tc.env, tc.ssl)
				skipped := t.Run("NeedFake", func(t *testing.T) {
					c.NeedFake(t, "injects faults")
					t.Error("NeedFake did not skip against a real cluster")
				})
				if !skipped {
					t.Error("the NeedFake subtest failed")
				}
			})
			if !strings.HasPrefix(db, "txsink_t_") {
				t.Fatalf("database %q, want a private txsink_t_ one", db)
			}
			if !tc.shared {
				return // the fake's private server goes with the test
			}
			var n int
			if err := admin.SQL.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", db).Scan(&n); err != nil || n != 0 {
				t.Errorf("database %s is still there (%d, %v) after its test", db, n, err)
			}
		})
	}
}

func checkReal(t *testing.T, c *Cluster, env url.URL, ssl bool) {
	t.Helper()
	ctx := context.Background()
	if c.Fake != nil || c.Catalog != "information_schema" || (c.HTTPClient != nil) != ssl {
		t.Errorf("fake %v, catalog %q, http client %v: want a real cluster's", c.Fake, c.Catalog, c.HTTPClient)
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host != env.Host || u.Path != "/"+c.Database || u.RawQuery != env.RawQuery {
		t.Errorf("target URL %s (%v), want %s with database %s", c.URL, err, env.Host, c.Database)
	}
	first, _, _ := strings.Cut(env.Host, ",")
	want := "http://" + first
	if ssl {
		want = "https://" + first
	}
	if c.LoadURL != want {
		t.Errorf("load URL %s, want %s", c.LoadURL, want)
	}
	var n int
	if err := c.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM kv").Scan(&n); err != nil {
		t.Errorf("the table made by New: %v", err)
	}
	var name, cipher string
	if err := c.SQL.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || (cipher != "") != ssl {
		t.Errorf("the MySQL side's Ssl_cipher is %q (%v); TLS wanted: %v", cipher, err, ssl)
	}
	if !ssl {
		return
	}
	// The FE answers 401 without credentials: the handshake, trusting
	// tls-ca, is what is tested.
	resp, err := c.HTTPClient.Get(c.LoadURL + "/api/transaction/begin")
	if err != nil {
		t.Fatalf("HTTPS to the FE through the cluster's client: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the FE answered %s, want 401", resp.Status)
	}
}
