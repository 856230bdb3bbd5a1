package starrocks

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// tlsHint says what to set in the target URL when err is a TLS handshake
// that failed on the server's certificate or on a server not speaking
// TLS, and "" for any other error. Such a failure is permanent: a retry
// meets the same certificate.
func tlsHint(err error) string {
	if err == nil {
		return ""
	}
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by a CA this host trusts: set tls-ca=FILE in the target URL to the PEM file of the CA that signed the cluster's certificates (tls=skip-verify trusts any certificate, and so any server in the middle)"
	case errors.As(err, &hostname):
		return "the server's certificate does not name the host the target URL gives: give the FE by a name its certificate holds"
	case errors.As(err, &invalid):
		return "the server's certificate is not valid (expired, or not for a server): renew the cluster's certificate"
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "the server does not speak TLS on that port: drop tls from the target URL, or enable TLS on the cluster"
	case errors.Is(err, mysql.ErrNoTLS):
		return "the FE's MySQL port (query-port) does not offer TLS: enable TLS on the FE's MySQL side, or drop tls from the target URL"
	}
	return ""
}
