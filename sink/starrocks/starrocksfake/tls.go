package starrocksfake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/txsink/txsink/internal/testdb"
)

// CA is a certificate authority made for one test, and the one server
// certificate it signed, for 127.0.0.1 and localhost. A fake started with
// Options.TLS set to it serves its FE and BE over HTTPS and its MySQL side
// over TLS with that certificate; a client trusts it only through the CA.
type CA struct {
	// File is the CA certificate's PEM file: what a target URL's tls-ca
	// names to trust the fake.
	File string
	// Pool holds the CA certificate alone.
	Pool *x509.CertPool

	cert              tls.Certificate // the server's
	certFile, keyFile string          // the server's, as PEM, for mariadbd
}

// NewCA makes a CA and a server certificate valid for a day, their files
// in a temporary folder of t.
func NewCA(t testing.TB) *CA {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "txsink test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER := sign(t, caTmpl, caTmpl, caKey, caKey)
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "starrocks fake"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der := sign(t, tmpl, caCert, key, caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{File: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool(),
		certFile: filepath.Join(dir, "server.pem"), keyFile: filepath.Join(dir, "server-key.pem"),
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
	ca.Pool.AddCert(caCert)
	writePEM(t, ca.File, "CERTIFICATE", caDER)
	writePEM(t, ca.certFile, "CERTIFICATE", der)
	writePEM(t, ca.keyFile, "PRIVATE KEY", keyDER)
	return ca
}

// sign is tmpl's certificate for key, signed by parent's key by.
func sign(t testing.TB, tmpl, parent *x509.Certificate, key, by *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, by)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveHTTP starts h on a loopback port: over HTTPS with ca's server
// certificate when ca is set, else plain.
func serveHTTP(h http.Handler, ca *CA) *httptest.Server {
	if ca == nil {
		return httptest.NewServer(h)
	}
	s := httptest.NewUnstartedServer(h)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}}
	s.StartTLS()
	return s
}

// tlsDatabases are the fake's two MariaDB databases (committed rows,
// catalog) on a private MariaDB server that offers TLS with ca's server
// certificate: the shared test server has TLS off, and must not be
// reconfigured. The private server skips grant tables, so any user and
// password reach it, as the fake's Options name them.
func tlsDatabases(t testing.TB, ca *CA) (data, catalog *testdb.DB) {
	t.Helper()
	data = testdb.PrivateMariaDB(t, "--ssl-cert="+ca.certFile, "--ssl-key="+ca.keyFile, "--ssl-ca="+ca.File)
	const name = "txsink_catalog"
	data.Exec(t, "CREATE DATABASE "+name)
	u, err := url.Parse(data.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = u.User.Username(), "tcp", u.Host, name
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	u.Path = "/" + name
	return data, &testdb.DB{Dialect: "mysql", URL: u.String(), SQL: db}
}
