// Package redact hides credentials in database URLs before they reach a
// log line, an error or a status page. It is shared by the config package
// and the target adapters, which must print where they failed to connect
// without printing how.
package redact

import (
	"net/url"
	"strings"
)

// secretParams are query parameters that carry passwords in database URLs.
var secretParams = []string{"password", "pass", "pwd", "sslpassword"}

// URL returns u with its password, and the value of any password query
// parameter, replaced by "xxxxx", for logs and messages. It does not need u
// to be a valid URL: everything between the user name and the last '@' is
// taken as the password, so a raw password holding '@', '/' or '?' is
// hidden whole. When in doubt it hides too much rather than too little.
func URL(u string) string {
	s := u
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndexByte(s, '@'); at > i {
			if user, _, hasPass := strings.Cut(s[i+3:at], ":"); hasPass {
				s = s[:i+3] + user + ":xxxxx" + s[at:]
			}
		}
	}
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		for _, secret := range secretParams {
			if strings.EqualFold(k, secret) {
				params[i] = k + "=xxxxx"
			}
		}
	}
	return base + "?" + strings.Join(params, "&")
}
