package sinks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/sink"
	_ "github.com/txsink/txsink/sink/sinks"
	"github.com/txsink/txsink/sink/sqlsink"
)

// withParams adds query parameters to a test database's URL.
func withParams(url, params string) string {
	if strings.Contains(url, "?") {
		return url + "&" + params
	}
	return url + "?" + params
}

// sessionCases are, per server, URL parameters Open must refuse (the name
// its error starts with) and allowed ones with the session settings they
// leave as txsink's.
var sessionCases = map[string]struct {
	refused map[string]string
	allowed string
	query   string // the session's settings, one row
	want    string
}{
	"mysql": {
		refused: map[string]string{
			"loc=Local":                    "target url: parameter loc: ",
			"time_zone=%27%2B05%3A00%27":   "target url: parameter time_zone: ",
			"sql_mode=%27%27":              "target url: parameter sql_mode: ",
			"parseTime=false":              "target url: parameter parseTime: ",
			"charset=latin1":               "target url: parameter charset: ",
			"collation=latin1_bin":         "target url: parameter collation: ",
			"character_set_results=latin1": "target url: parameter character_set_results: ",
			"timeTruncate=1h":              "target url: parameter timeTruncate: ",
			"sql_select_limit=1":           "target url: parameter sql_select_limit: ",
		},
		allowed: "timeout=10s&readTimeout=60s&wait_timeout=600&innodb_lock_wait_timeout=20&charset=utf8mb4&parseTime=true&loc=UTC",
		query: "SELECT @@session.time_zone, @@session.sql_mode LIKE '%STRICT_ALL_TABLES%', @@session.character_set_connection, " +
			"@@session.character_set_results, @@session.wait_timeout, @@session.innodb_lock_wait_timeout",
		want: "+00:00|1|utf8mb4|utf8mb4|600|20",
	},
	"postgres": {
		refused: map[string]string{
			"TimeZone=Asia%2FKolkata":                "target url: parameter TimeZone: ",
			"timezone=%2B05":                         "target url: parameter timezone: ",
			"DateStyle=SQL%2C%20DMY":                 "target url: parameter DateStyle: ",
			"IntervalStyle=sql_standard":             "target url: parameter IntervalStyle: ",
			"client_encoding=LATIN1":                 "target url: parameter client_encoding: ",
			"extra_float_digits=-15":                 "target url: parameter extra_float_digits: ",
			"options=-c%20TimeZone%3DAsia%2FKolkata": "target url: parameter options: setting TimeZone: ",
			"session_replication_role=replica":       "target url: parameter session_replication_role: ",
		},
		allowed: "application_name=txsink-test&statement_timeout=60000&lock_timeout=5000&connect_timeout=10&options=-c%20idle_session_timeout%3D0",
		query: "SELECT current_setting('TimeZone'), current_setting('DateStyle'), current_setting('IntervalStyle'), " +
			"current_setting('client_encoding'), current_setting('application_name'), current_setting('statement_timeout'), " +
			"current_schema() LIKE 'txsink_t_%'",
		want: "UTC|ISO, MDY|postgres|UTF8|txsink-test|1min|true",
	},
}

// TestSessionIsTxsinks is finding 7 of issue 24 on the real servers: each
// URL parameter that would change how values are written or read is
// refused by Open, naming it, though the server is there to connect to;
// a URL with connection and timeout parameters opens a session whose time
// zone, mode and character set are txsink's, even with PGTZ set.
func TestSessionIsTxsinks(t *testing.T) {
	t.Setenv("PGTZ", "Asia/Kolkata")
	t.Setenv("PGOPTIONS", "")
	for _, dialect := range []string{"mysql", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			tc := sessionCases[dialect]
			db := testdb.Open(t, dialect)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for params, want := range tc.refused {
				for _, open := range []func(context.Context, string, string) (sink.Sink, error){sink.Open, sink.OpenReadOnly} {
					d, err := open(ctx, withParams(db.URL, params), t.TempDir())
					if err == nil {
						d.Close()
					}
					if err == nil || !strings.HasPrefix(err.Error(), want) {
						t.Errorf("%s: err = %v, want it to start %q", params, err, want)
					}
				}
			}
			d, err := sink.Open(ctx, withParams(db.URL, tc.allowed), t.TempDir())
			if err != nil {
				t.Fatalf("%s: %v", tc.allowed, err)
			}
			defer d.Close()
			var got []string
			rows, err := d.(*sqlsink.DB).DB().QueryContext(ctx, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]string, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				got = append(got, vals...)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("session: %s, want %s", g, tc.want)
			}
		})
	}
}

// TestSchemes: the SQL sinks and StarRocks are registered under their URL schemes, and an
// unknown scheme's error lists them.
func TestSchemes(t *testing.T) {
	if got, want := strings.Join(sink.Schemes(), ","), "mariadb,mysql,postgres,postgresql,sqlite,starrocks"; got != want {
		t.Errorf("Schemes() = %s, want %s", got, want)
	}
	_, err := sink.Open(context.Background(), "oracle://host/db", "")
	if want := `target url: unknown scheme "oracle": use mariadb://, mysql://, postgres://, postgresql://, sqlite:// or starrocks://`; err == nil || err.Error() != want {
		t.Errorf("unknown scheme: err = %v, want %q", err, want)
	}
}
