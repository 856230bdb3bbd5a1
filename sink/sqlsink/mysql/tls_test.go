package mysql

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA makes a CA and a server certificate for "db.internal" signed by
// it, and writes the CA and a client pair as PEM files.
type testPKI struct {
	caFile, certFile, keyFile string
	server                    tls.Certificate
}

func newPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "txsink test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(name string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
			DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvDER, srvKey := leaf("db.internal", x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf("txsink", x509.ExtKeyUsageClientAuth)
	cliKeyDER, _ := x509.MarshalECPrivateKey(cliKey)
	return testPKI{
		caFile:   write("ca.pem", "CERTIFICATE", caDER),
		certFile: write("client.pem", "CERTIFICATE", cliDER),
		keyFile:  write("client-key.pem", "EC PRIVATE KEY", cliKeyDER),
		server:   tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
	}
}

// handshake runs a TLS handshake between client config c and a server
// presenting cert, over loopback, bounded by a deadline.
func handshake(t *testing.T, c *tls.Config, cert tls.Certificate) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	err = tls.Client(conn, c).Handshake()
	conn.Close()
	<-done
	return err
}

func TestTLSOptions(t *testing.T) {
	pki := newPKI(t, t.TempDir())
	other := newPKI(t, t.TempDir())
	tests := []struct {
		name      string
		opts      tlsOptions
		host      string
		builtin   string // a driver name, no config built
		handshake bool   // a handshake with pki's server succeeds
		err       string
	}{
		{name: "no tls", opts: tlsOptions{}, builtin: ""},
		{name: "driver's true", opts: tlsOptions{mode: "true"}, builtin: "true"},
		{name: "driver's skip-verify", opts: tlsOptions{mode: "skip-verify"}, builtin: "skip-verify"},
		{name: "CA, verify-full, right name", opts: tlsOptions{ca: pki.caFile}, host: "db.internal", handshake: true},
		{name: "CA, verify-full, wrong name", opts: tlsOptions{ca: pki.caFile}, host: "127.0.0.1", handshake: false},
		{name: "CA, verify-full, server name given", opts: tlsOptions{ca: pki.caFile, serverName: "db.internal"}, host: "127.0.0.1", handshake: true},
		{name: "CA, verify-ca, wrong name", opts: tlsOptions{mode: "verify-ca", ca: pki.caFile}, host: "127.0.0.1", handshake: true},
		{name: "other CA, verify-ca", opts: tlsOptions{mode: "verify-ca", ca: other.caFile}, host: "127.0.0.1", handshake: false},
		{name: "client certificate", opts: tlsOptions{ca: pki.caFile, cert: pki.certFile, key: pki.keyFile}, host: "db.internal", handshake: true},
		{name: "cert without key", opts: tlsOptions{cert: pki.certFile}, err: "go together"},
		{name: "missing CA file", opts: tlsOptions{ca: "/nonexistent/ca.pem"}, err: "tls-ca"},
		{name: "unknown mode", opts: tlsOptions{mode: "maybe"}, err: "want true, verify-full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, c, err := tc.opts.build(tc.host)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c == nil {
				if name != tc.builtin {
					t.Errorf("name = %q, want the driver's %q", name, tc.builtin)
				}
				return
			}
			if !strings.HasPrefix(name, "txsink-") {
				t.Errorf("name = %q", name)
			}
			if tc.opts.cert != "" && len(c.Certificates) != 1 {
				t.Errorf("client certificate not loaded")
			}
			if err := handshake(t, c, pki.server); (err == nil) != tc.handshake {
				t.Errorf("handshake err = %v, want success %v", err, tc.handshake)
			}
		})
	}
	dsn, err := DSN("mysql://u@db.internal:3306/shop?tls-ca=" + pki.caFile)
	if err != nil || !strings.Contains(dsn, "tls=txsink-") {
		t.Errorf("DSN with tls-ca = %q, %v", dsn, err)
	}
}
