package starrocks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// withQuery is raw with the query parameters set (an empty value deletes
// the parameter).
func withQuery(t *testing.T, raw string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			q.Del(kv[i])
		} else {
			q.Set(kv[i], kv[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// TestTLS runs the target against the fake serving its FE and BE over
// HTTPS and its MySQL side over TLS (a private MariaDB server with the
// certificate), all signed by a CA made for the test: with tls=true and
// tls-ca naming the CA, and with tls=skip-verify and no CA, a unit is
// claimed, begun, loaded through the FE's 307 to the BE's https://
// address and committed, and reads back over the TLS'd MySQL side.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	c := fakeCluster(t, starrocksfake.Options{TLS: starrocksfake.NewCA(t)}).withTables(t)
	c.ddl(t, kvDDL)
	if !strings.HasPrefix(c.fake.URL(), "https://") || !strings.HasPrefix(c.fake.BEURL(), "https://") {
		t.Fatalf("the fake serves %s and %s, want https://", c.fake.URL(), c.fake.BEURL())
	}
	for i, raw := range []string{c.url, withQuery(t, c.url, "tls", "skip-verify", "tls-ca", "")} {
		tg, err := Open(ctx, raw, Options{})
		if err != nil {
			t.Fatalf("open %s: %v", raw, err)
		}
		t.Cleanup(func() { tg.Close() })
		var ssl string
		var cipher string
		if err := tg.DB().QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&ssl, &cipher); err != nil || cipher == "" {
			t.Errorf("%s: the MySQL side's Ssl_cipher is %q (%v), want a TLS session", raw, cipher, err)
		}
		off := int64(100 * (i + 1))
		if err := tg.Apply(ctx, kvUnit(t, tg, off, int64(i+1))); err != nil {
			t.Fatalf("apply over %s: %v", raw, err)
		}
		p, err := tg.Progress(ctx, "pipe")
		if err != nil || p["p0"].Offset != off {
			t.Fatalf("progress over %s: %v %v, want p0 at %d", raw, p, err, off)
		}
	}
	if n := c.count(t, "SELECT COUNT(*) FROM kv"); n != 2 {
		t.Errorf("kv holds %d rows, want 2", n)
	}
	seen := map[string]int{}
	for _, r := range c.fake.Requests() {
		op := r.Path[strings.LastIndexByte(r.Path[:strings.IndexByte(r.Path+"?", '?')], '/')+1:]
		if i := strings.IndexByte(op, '?'); i >= 0 {
			op = op[:i]
		}
		seen[r.Role+" "+op]++
	}
	for _, want := range []string{"FE begin", "FE load", "BE load", "FE commit"} {
		if seen[want] == 0 {
			t.Errorf("no %s request over TLS; seen %v", want, seen)
		}
	}
}

// TestTLSRefused: a certificate the target cannot verify, or a server
// that does not speak TLS, is refused at once (permanent: a retry meets
// the same server), saying what to set in the URL — on the MySQL side at
// Open, and on the HTTP side at the first request.
func TestTLSRefused(t *testing.T) {
	ctx := context.Background()
	secure := fakeCluster(t, starrocksfake.Options{TLS: starrocksfake.NewCA(t)}).withTables(t)
	secure.ddl(t, kvDDL)
	plain := fakeCluster(t, starrocksfake.Options{})
	untrusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
	misnaming := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: secure.fake.TLS().Pool, ServerName: "fe.elsewhere.invalid"}}}
	for _, tc := range []struct {
		name string
		url  string
		http *http.Client
		says []string
	}{
		{"MySQL side: tls=true without the CA", withQuery(t, secure.url, "tls-ca", ""), nil,
			[]string{"MySQL side", "tls-ca=FILE", "not signed by a CA this host trusts"}},
		{"HTTP side: a client without the CA", secure.url, untrusting,
			[]string{"TLS with https://", "tls-ca=FILE"}},
		{"HTTP side: a certificate for another name", secure.url, misnaming,
			[]string{"TLS with https://", "does not name the host"}},
		{"MySQL side: tls=true, no TLS offered", withQuery(t, plain.url, "tls", "true"), nil,
			[]string{"query-port", "does not offer TLS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Open(ctx, tc.url, Options{HTTPClient: tc.http})
			if err == nil {
				t.Cleanup(func() { tg.Close() })
				err = tg.Apply(ctx, kvUnit(t, tg, 100, 1))
			}
			checkRefusal(t, err, tc.says...)
		})
	}
	// The MySQL side refuses tls=true against the plain fake first; its
	// HTTP side is asked over HTTPS through a client alone.
	t.Run("HTTP side: HTTPS against plain HTTP", func(t *testing.T) {
		cl := plain.client(t, func(cfg *Config) {
			cfg.LoadURLs = []string{"https://" + strings.TrimPrefix(plain.loadURL, "http://")}
			cfg.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		})
		_, err := cl.Begin(ctx, "tls-plain")
		checkRefusal(t, err, "does not speak TLS", "drop tls")
	})
}

// checkRefusal fails t unless err is permanent and says each of says.
func checkRefusal(t *testing.T, err error, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	t.Logf("refused: %v", err)
	if k := errkind.Of(err); k != errkind.Permanent {
		t.Errorf("error kind %v, want permanent: %v", k, err)
	}
}

// TestTLSHint: each way a TLS handshake fails on the server's side says
// what to do; other errors, none.
func TestTLSHint(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		says string
	}{
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, "tls-ca=FILE"},
		{"another host", x509.HostnameError{Host: "fe1"}, "does not name the host"},
		{"expired", fmt.Errorf("dial: %w", x509.CertificateInvalidError{Reason: x509.Expired}), "renew"},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "does not speak TLS"},
		{"no TLS on the query port", mysql.ErrNoTLS, "query-port"},
		{"a refused connection", errors.New("connect: connection refused"), ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tlsHint(tc.err)
			if tc.says == "" && got != "" || !strings.Contains(got, tc.says) {
				t.Errorf("tlsHint(%v) = %q, want one saying %q", tc.err, got, tc.says)
			}
		})
	}
}
