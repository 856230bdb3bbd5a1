package config

import (
	"errors"
	"fmt"
	"github.com/txsink/txsink/internal/redact"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sizeUnits maps the accepted size units, lower-cased, to their byte counts.
// KB, MB and GB are decimal (as disks count), KiB, MiB and GiB binary (as
// memory counts); a user who writes either gets exactly what they wrote.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// parseSize reads a byte size: a whole number with an optional unit, such as
// 1048576, 512KiB, 16MiB or 1GB. Units ignore case.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	if i < len(t) && (t[i] == '-' || t[i] == '+') {
		i++
	}
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || num == "-" || num == "+" || !ok {
		if strings.Contains(t, ".") {
			return 0, fmt.Errorf("%q is not a whole number (use a smaller unit: 1536MiB, not 1.5GiB)", s)
		}
		return 0, fmt.Errorf("%q is not a size (a whole number of bytes, or one with a unit: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// formatSize writes n in the largest binary unit that divides it exactly,
// the way the documentation shows defaults: 16777216 → "16MiB".
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// globMatch reports whether name matches pattern, where '*' matches any run
// of characters (including none), '?' matches one character, and every other
// character matches itself without regard to case (Unicode simple folding).
//
// It runs in O(len(pattern)·len(name)) at worst by remembering only the last
// star (the classic greedy algorithm: a later star can absorb whatever an
// earlier star would have had to), and allocates nothing, because routing
// calls it for each table of a busy changelog.
func globMatch(pattern, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			pr, pw := utf8.DecodeRuneInString(pattern[px:])
			switch pr {
			case '*':
				starPx, starNx = px, nx
				px += pw
				continue
			case '?':
				if nx < len(name) {
					_, nw := utf8.DecodeRuneInString(name[nx:])
					px, nx = px+pw, nx+nw
					continue
				}
			default:
				if nx < len(name) {
					nr, nw := utf8.DecodeRuneInString(name[nx:])
					if foldEqual(pr, nr) {
						px, nx = px+pw, nx+nw
						continue
					}
				}
			}
		}
		// Mismatch: let the last star swallow one more character and retry.
		if starPx >= 0 && starNx < len(name) {
			_, nw := utf8.DecodeRuneInString(name[starNx:])
			starNx += nw
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

func hasWildcard(s string) bool { return strings.ContainsAny(s, "*?") }

// splitTableName splits "namespace.name" at its first dot.
func splitTableName(s string) (ns, name string, dotted bool) {
	ns, name, dotted = strings.Cut(s, ".")
	if !dotted {
		return "", s, false
	}
	return ns, name, true
}

// targetKind returns the database family of a target URL and the URL without
// its scheme; kind is "" for a scheme txsink does not know.
func targetKind(u string) (kind, rest string) {
	switch {
	case u == "sqlite::memory:":
		return "sqlite", ":memory:"
	case strings.HasPrefix(u, "sqlite://"):
		return "sqlite", u[len("sqlite://"):]
	case strings.HasPrefix(u, "mysql://"):
		return "mysql", u[len("mysql://"):]
	case strings.HasPrefix(u, "postgres://"):
		return "postgres", u[len("postgres://"):]
	case strings.HasPrefix(u, "postgresql://"):
		return "postgres", u[len("postgresql://"):]
	case strings.HasPrefix(u, "starrocks://"):
		return "starrocks", u[len("starrocks://"):]
	}
	return "", u
}

// checkURL returns what is wrong with a target URL, or "". Its messages never
// repeat the URL, which may hold a password.
func checkURL(u string) string {
	if u == "" {
		return "" // the required check reports it
	}
	kind, rest := targetKind(u)
	switch kind {
	case "":
		scheme, _, ok := strings.Cut(u, "://")
		if !ok {
			return "is not a URL (no scheme://)"
		}
		if strings.ContainsAny(scheme, "@/:") {
			return "is not a URL"
		}
		return fmt.Sprintf("scheme %q is not supported", scheme)
	case "sqlite":
		path, _, _ := strings.Cut(rest, "?")
		if path == "" {
			return "names no database file"
		}
		return ""
	}
	p, err := url.Parse(u)
	if err != nil {
		// url.Error repeats the URL; keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("is not a valid URL (%v); percent-encode special characters in the user name and password", err)
	}
	if kind == "mysql" || kind == "starrocks" {
		// PostgreSQL may leave both out (a local socket, the user's
		// database); MySQL and StarRocks need them to know where
		// progress is kept.
		if p.Host == "" {
			return "has no host"
		}
		if strings.Trim(p.Path, "/") == "" {
			return "names no database (add /database after the host)"
		}
	}
	return ""
}

// RedactURL returns u with its password, and the value of any password query
// parameter, replaced by "xxxxx", for logs and messages (see redact.URL).
func RedactURL(u string) string { return redact.URL(u) }

// expandEnv replaces each ${NAME} in a URL template with lookup(NAME). Values
// substituted inside the user-info part (between "://" and "@") are
// percent-encoded so that a password may hold '@', ':' or '/'; elsewhere they
// are inserted as they are. Only the braced form is expanded, so a '$'
// written in the file stays a '$'.
func expandEnv(tmpl string, lookup func(string) (string, bool)) (string, error) {
	userStart, userEnd := -1, -1
	if i := strings.Index(tmpl, "://"); i >= 0 {
		auth := tmpl[i+3:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			userStart, userEnd = i+3, i+3+at
		}
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		j := strings.Index(tmpl[i:], "${")
		if j < 0 {
			b.WriteString(tmpl[i:])
			break
		}
		j += i
		b.WriteString(tmpl[i:j])
		end := strings.IndexByte(tmpl[j:], '}')
		if end < 0 {
			return "", errors.New("has a ${ without its closing }")
		}
		name := tmpl[j+2 : j+end]
		if !validEnvName(name) {
			return "", fmt.Errorf("${%s} is not a valid environment variable reference; write ${NAME} with letters, digits and _", name)
		}
		val, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set; export it before starting txsink", name)
		}
		if j >= userStart && j < userEnd {
			val = escapeUserinfo(val)
		}
		b.WriteString(val)
		i = j + end + 1
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// escapeUserinfo percent-encodes every byte but RFC 3986's unreserved
// characters, so the value cannot end the user name or password early.
func escapeUserinfo(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// suggest returns the known key a misspelt key most likely meant: the closest
// by edit distance if at most 2 (ignoring case), else the only known key that
// ends in key after a '.' or '-' (so "max-rows" finds
// "buffer-flush.max-rows"); "" if none.
func suggest(key string, known []string) string {
	best, bestD := "", 3
	lk := strings.ToLower(key)
	for _, k := range known {
		if d := editDistance(lk, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best
	}
	var suffixed []string
	for _, k := range known {
		if strings.HasSuffix(k, "."+lk) || strings.HasSuffix(k, "-"+lk) {
			suffixed = append(suffixed, k)
		}
	}
	if len(suffixed) == 1 {
		return suffixed[0]
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
