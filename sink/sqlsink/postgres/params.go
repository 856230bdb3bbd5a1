package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The session a postgres:// URL opens is txsink's: TimeZone UTC, DateStyle
// ISO, IntervalStyle postgres and client_encoding UTF8, sent with every
// connection's start-up (session), whatever the server, the database or
// the role sets. pgx passes every URL parameter it does not read itself
// to the server as a session setting, so a URL parameter that would
// change how values are written or read (?TimeZone=Asia/Kolkata,
// ?options=-c DateStyle=SQL,DMY) is refused when the target is opened,
// and so by txsink check too, naming it, rather than applied. What a URL
// may carry:
//
//   - pgxParams, pgx's own connection parameters (host, sslmode, ...);
//   - sessionSettings, the settings that only bound a wait, name the
//     application, choose the schemas (search_path: txsink writes into
//     its first schema) or size memory;
//   - options holding only "-c name=value" of those.
//
// Everything else is refused: the settings refusedSettings names, with the
// reason, and any other, since txsink cannot vouch that it leaves values
// as the changelog gave them. The environment is read as pgx reads it:
// PGOPTIONS is held to the same rule, PGTZ is overridden by TimeZone=UTC.

// session holds the settings every connection starts with.
var session = map[string]string{
	"TimeZone":        "UTC",
	"DateStyle":       "ISO, MDY",
	"IntervalStyle":   "postgres",
	"client_encoding": "UTF8",
}

// pgxParams are the URL parameters pgx reads itself: how to reach,
// authenticate and talk to the server, never what a value becomes.
var pgxParams = []string{
	"channel_binding", "connect_timeout", "database", "default_query_exec_mode", "description_cache_capacity",
	"host", "krbspn", "krbsrvname", "max_protocol_version", "min_protocol_version", "passfile", "password",
	"port", "require_auth", "service", "servicefile", "sslcert", "sslcertmode", "sslkey", "sslnegotiation",
	"sslpassword", "sslrootcert", "sslsni", "sslmode", "statement_cache_capacity", "target_session_attrs", "user",
}

// sessionSettings are the session settings a URL may carry (in lower
// case: the server reads names in any case).
var sessionSettings = []string{
	"application_name", "client_connection_check_interval", "idle_in_transaction_session_timeout",
	"idle_session_timeout", "lock_timeout", "maintenance_work_mem", "search_path", "statement_timeout",
	"tcp_keepalives_count", "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_user_timeout",
	"temp_buffers", "transaction_timeout", "work_mem",
}

// refusedSettings says why txsink refuses the settings that change how
// the server reads or writes values, by lower-case name.
var refusedSettings = map[string]string{
	"timezone": "txsink runs every session in UTC (TimeZone=UTC), so a timestamp with time zone is the instant " +
		"the changelog gave and one without is its wall-clock time; another zone shifts what is converted between them",
	"datestyle": "txsink runs every session with DateStyle=ISO, MDY; another style reads the day and month " +
		"of some dates the other way round and writes dates as other text",
	"intervalstyle": "txsink runs every session with IntervalStyle=postgres; another style reads some " +
		"interval text otherwise (under sql_standard '-1 2:03:04' is minus 1 day minus 2:03:04)",
	"client_encoding": "txsink's sessions are UTF8, which holds every character; another encoding converts text, " +
		"and what it cannot hold is lost",
	"extra_float_digits":          "below 1, floats read as text are rounded",
	"bytea_output":                "it changes what bytea values read as text are",
	"standard_conforming_strings": "it changes what a backslash in a string literal means",
	"backslash_quote":             "it changes what a backslash in a string literal means",
	"array_nulls":                 "with array_nulls off, NULL in an array literal is the text NULL",
	"xmloption":                   "it changes which XML text an xml column takes",
	"xmlbinary":                   "it changes how binary values are written into XML",
	"lc_monetary":                 "it changes how money values are read and written",
	"lc_numeric":                  "it changes how numbers are formatted as text",
	"lc_time":                     "it changes how dates are formatted as text",
	"timezone_abbreviations":      "it changes which zone an abbreviation in a timestamp means",
	"default_text_search_config": "it changes what to_tsvector and its kin in the target's defaults, triggers " +
		"and generated columns make of text",
	"transform_null_equals": "it makes = NULL true for NULL in the target's defaults, checks and triggers",
	"session_replication_role": "under replica the target's triggers and foreign keys do not fire, and txsink's " +
		"exactly-once promise covers what they do",
	"default_transaction_read_only": "txsink writes its flushes and progress in read-write transactions",
	"transaction_read_only":         "txsink writes its flushes and progress in read-write transactions",
}

// refusal says why session setting name (as written) is refused, "" when
// it may be sent.
func refusal(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if slices.Contains(sessionSettings, n) {
		return ""
	}
	if why, ok := refusedSettings[n]; ok {
		return why
	}
	return "pgx would send it to the server as a session setting, and txsink cannot vouch that it leaves values " +
		"as the changelog gave them (a URL may set " + strings.Join(sessionSettings, ", ") +
		", and pgx's connection parameters " + strings.Join(pgxParams, ", ") + ")"
}

// checkOptions returns why each setting of options (libpq's: "-c name=value",
// "-cname=value" or "--name=value", separated by white space, a backslash
// escaping the next character) is refused, one string per refusal.
func checkOptions(options string) []string {
	var words []string
	var w strings.Builder
	esc := false
	for _, r := range options {
		switch {
		case esc:
			w.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if w.Len() > 0 {
				words = append(words, w.String())
				w.Reset()
			}
		default:
			w.WriteRune(r)
		}
	}
	if w.Len() > 0 {
		words = append(words, w.String())
	}
	var out []string
	for i := 0; i < len(words); i++ {
		setting, ok := "", false
		switch word := words[i]; {
		case word == "-c" && i+1 < len(words):
			i++
			setting, ok = words[i], true
		case strings.HasPrefix(word, "-c") && len(word) > 2:
			setting, ok = word[2:], true
		case strings.HasPrefix(word, "--") && len(word) > 2:
			setting, ok = word[2:], true
		}
		name, _, hasValue := strings.Cut(setting, "=")
		if !ok || !hasValue || name == "" {
			out = append(out, fmt.Sprintf("option %q: not -c name=value, the only options txsink passes on", words[i]))
			continue
		}
		if why := refusal(name); why != "" {
			out = append(out, "setting "+name+": "+why)
		}
	}
	return out
}

// connConfig parses a postgres:// URL into pgx's configuration with
// txsink's session settings, or refuses it with an error naming every
// parameter (and setting of options) that could change what a value
// becomes. The settings judged are the ones pgx would send, as pgx read
// them: from the URL, the environment (PGOPTIONS, PGAPPNAME) and a service
// file, except PGTZ's time zone, which txsink's TimeZone overrides.
func connConfig(rawURL string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("target url: %w", err)
	}
	// The URL's own keys, to say where a refused setting comes from.
	var inURL url.Values
	if u, err := url.Parse(rawURL); err == nil {
		inURL, _ = url.ParseQuery(u.RawQuery)
	}
	keys := make([]string, 0, len(cfg.RuntimeParams))
	for k := range cfg.RuntimeParams {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		v := cfg.RuntimeParams[k]
		_, fromURL := inURL[k]
		if !fromURL && strings.EqualFold(k, "timezone") && v == os.Getenv("PGTZ") {
			continue
		}
		where, what := "target url: parameter "+k, "remove "+k+" from the URL"
		switch {
		case fromURL && k == "options":
			what = "remove it from options"
		case k == "options" && v == os.Getenv("PGOPTIONS"):
			where, what = "environment variable PGOPTIONS", "remove it from PGOPTIONS"
		case !fromURL:
			where, what = "target: session setting "+k+" from the environment or a service file", "remove it there"
		}
		if k == "options" {
			for _, why := range checkOptions(v) {
				errs = append(errs, fmt.Errorf("%s: %s; %s", where, why, what))
			}
			continue
		}
		if why := refusal(k); why != "" {
			errs = append(errs, fmt.Errorf("%s: %s; %s", where, why, what))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for k := range cfg.RuntimeParams {
		for s := range session {
			if strings.EqualFold(k, s) {
				delete(cfg.RuntimeParams, k)
			}
		}
	}
	for k, v := range session {
		cfg.RuntimeParams[k] = v
	}
	return cfg, nil
}
