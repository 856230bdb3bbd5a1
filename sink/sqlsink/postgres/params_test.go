package postgres

import (
	"strings"
	"testing"
)

// TestConnConfigRefusesValueParameters: a URL parameter, a setting of its
// options or of PGOPTIONS that would change how values are read or
// written is refused, naming it, saying why and what to do; pgx's
// connection parameters and the settings that only bound waits or name
// things pass; every connection starts in txsink's session whatever the
// URL and PGTZ say.
func TestConnConfigRefusesValueParameters(t *testing.T) {
	t.Setenv("PGOPTIONS", "")
	t.Setenv("PGTZ", "")
	const base = "postgres://u:secret@127.0.0.1:5432/test?sslmode=disable&"
	refused := []struct{ query, name, why string }{
		{"TimeZone=Asia%2FKolkata", "parameter TimeZone", "runs every session in UTC"},
		{"timezone=UTC", "parameter timezone", "runs every session in UTC"},
		{"DateStyle=SQL%2C+DMY", "parameter DateStyle", "day and month"},
		{"datestyle=ISO", "parameter datestyle", "day and month"},
		{"IntervalStyle=sql_standard", "parameter IntervalStyle", "minus 1 day"},
		{"client_encoding=LATIN1", "parameter client_encoding", "UTF8"},
		{"extra_float_digits=-3", "parameter extra_float_digits", "rounded"},
		{"bytea_output=escape", "parameter bytea_output", "bytea"},
		{"array_nulls=off", "parameter array_nulls", "text NULL"},
		{"session_replication_role=replica", "parameter session_replication_role", "triggers"},
		{"default_transaction_read_only=on", "parameter default_transaction_read_only", "read-write"},
		{"lc_monetary=de_DE", "parameter lc_monetary", "money"},
		{"enable_seqscan=off", "parameter enable_seqscan", "cannot vouch"},
		{"options=-c%20TimeZone%3DAsia%2FKolkata", "parameter options: setting TimeZone", "runs every session in UTC"},
		{"options=-cDateStyle%3DSQL", "parameter options: setting DateStyle", "day and month"},
		{"options=--intervalstyle%3Diso_8601", "parameter options: setting intervalstyle", "interval"},
		{"options=-c%20statement_timeout%3D5s%20-c%20TimeZone%3DUTC", "parameter options: setting TimeZone", "UTC"},
		{"options=-d%205", `parameter options: option "-d"`, "not -c name=value"},
		{"options=-c+TimeZone%3DUTC", "parameter options: setting +TimeZone", "cannot vouch"}, // pgx reads + as itself
	}
	for _, tc := range refused {
		cfg, err := connConfig(base + tc.query)
		if err == nil {
			t.Errorf("%s: %v, want a refusal", tc.query, cfg.RuntimeParams)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "target url: "+tc.name+": ") || !strings.Contains(msg, tc.why) || !strings.Contains(msg, "remove ") {
			t.Errorf("%s: %v\nwant it to name %s, say %q and what to do", tc.query, err, tc.name, tc.why)
		}
		if strings.Contains(msg, "secret") {
			t.Errorf("%s: the error shows the password: %v", tc.query, err)
		}
	}

	t.Setenv("PGOPTIONS", "-c DateStyle=German")
	if _, err := connConfig(base + "application_name=x"); err == nil || !strings.HasPrefix(err.Error(), "environment variable PGOPTIONS: setting DateStyle: ") {
		t.Errorf("PGOPTIONS with DateStyle: %v, want a refusal naming PGOPTIONS and DateStyle", err)
	}
	t.Setenv("PGOPTIONS", "-c statement_timeout=60s")
	t.Setenv("PGTZ", "Asia/Kolkata")
	cfg, err := connConfig(base + "application_name=sink&search_path=shop%2Cpublic&statement_timeout=60000&lock_timeout=100&" +
		"connect_timeout=5&target_session_attrs=read-write&options=-c%20lock_timeout%3D5s%20--idle-session-timeout%3D0")
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.RuntimeParams
	for k, v := range map[string]string{"TimeZone": "UTC", "DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "client_encoding": "UTF8",
		"application_name": "sink", "search_path": "shop,public", "statement_timeout": "60000", "options": "-c lock_timeout=5s --idle-session-timeout=0"} {
		if p[k] != v {
			t.Errorf("RuntimeParams[%s] = %q, want %q (all: %v)", k, p[k], v, p)
		}
	}
	if _, ok := p["timezone"]; ok {
		t.Errorf("PGTZ's timezone is still sent beside TimeZone: %v", p)
	}
}
