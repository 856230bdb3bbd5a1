package mysql

import (
	"strings"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// TestDSNRefusesValueParameters: a URL parameter that would change what a
// value becomes is refused by DSN, naming it, saying why and what to do;
// parameters that only say how to connect reach the driver; txsink's
// session settings stay whatever else the URL holds.
func TestDSNRefusesValueParameters(t *testing.T) {
	const base = "mysql://u:secret@127.0.0.1:3306/shop?"
	refused := []struct{ query, name, why string }{
		{"loc=Local", "loc", "set loc=UTC"},
		{"loc=Asia%2FKolkata", "loc", "moves every one by its offset"},
		{"time_zone=%27%2B05%3A00%27", "time_zone", "shifts every TIMESTAMP"},
		{"TIME_ZONE=SYSTEM", "TIME_ZONE", "runs every session in UTC"},
		{"sql_mode=%27%27", "sql_mode", "strict mode"},
		{"SQL_MODE=ANSI", "SQL_MODE", "strict mode"},
		{"parseTime=false", "parseTime", "set parseTime=true"},
		{"clientFoundRows=false", "clientFoundRows", "txsink_progress"},
		{"multiStatements=false", "multiStatements", "one query"},
		{"interpolateParams=false", "interpolateParams", "escape"},
		{"timeTruncate=1s", "timeTruncate", "never rounds"},
		{"charset=latin1", "charset", "with '?'"},
		{"charset=utf8mb4,utf8", "charset", "with '?'"},
		{"collation=latin1_swedish_ci", "collation", "with '?'"},
		{"character_set_client=latin1", "character_set_client", "utf8mb4"},
		{"collation_connection=latin1_bin", "collation_connection", "utf8mb4"},
		{"names=latin1", "names", "utf8mb4"},
		{"allowAllFiles=true", "allowAllFiles", "any file"},
		{"strict=true", "strict", "no longer has it"},
		{"autocommit=0", "autocommit", "one transaction"},
		{"sql_select_limit=1", "sql_select_limit", "progress reads"},
		{"unique_checks=0", "unique_checks", "duplicates"},
		{"foreign_key_checks=0", "foreign_key_checks", "foreign keys"},
		{"explicit_defaults_for_timestamp=0", "explicit_defaults_for_timestamp", "current time"},
		{"max_error_count=0", "max_error_count", "warnings"},
		{"div_precision_increment=2", "div_precision_increment", "SET div_precision_increment"},
		{"tls_ca=x.pem", "tls_ca", "cannot vouch"},
		{"columnsWithAlias=true", "columnsWithAlias", "renames"},
	}
	for _, tc := range refused {
		dsn, err := DSN(base + tc.query)
		if err == nil {
			t.Errorf("%s: DSN = %q, want a refusal", tc.query, dsn)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "target url: parameter "+tc.name+": ") || !strings.Contains(msg, tc.why) || !strings.Contains(msg, "remove "+tc.name+" from the URL") {
			t.Errorf("%s: %v\nwant it to name %s, say %q and what to do", tc.query, err, tc.name, tc.why)
		}
		if strings.Contains(msg, "secret") {
			t.Errorf("%s: the error shows the password: %v", tc.query, err)
		}
	}

	// Every refused parameter is named, one line each, in order.
	_, err := DSN(base + "time_zone=SYSTEM&loc=Local&sql_mode=")
	if err == nil || strings.Count(err.Error(), "\n") != 2 || !strings.HasPrefix(err.Error(), "target url: parameter loc: ") ||
		!strings.Contains(err.Error(), "\ntarget url: parameter sql_mode: ") || !strings.Contains(err.Error(), "\ntarget url: parameter time_zone: ") {
		t.Errorf("three refused parameters: %v", err)
	}

	allowed := []struct {
		query string
		check func(*mysqldrv.Config) bool
	}{
		{"timeout=5s&readTimeout=30s&writeTimeout=30s", func(c *mysqldrv.Config) bool { return c.Timeout.Seconds() == 5 && c.ReadTimeout.Seconds() == 30 }},
		{"parseTime=true&loc=UTC&clientFoundRows=1&multiStatements=true&interpolateParams=true", func(*mysqldrv.Config) bool { return true }},
		{"charset=utf8mb4&collation=utf8mb4_bin", func(c *mysqldrv.Config) bool { return c.Collation == "utf8mb4_bin" }},
		{"wait_timeout=600&innodb_lock_wait_timeout=5&LOCK_WAIT_TIMEOUT=5&max_statement_time=30",
			func(c *mysqldrv.Config) bool {
				return c.Params["wait_timeout"] == "600" && c.Params["LOCK_WAIT_TIMEOUT"] == "5"
			}},
		{"allowCleartextPasswords=true&compress=true&maxAllowedPacket=0&rejectReadOnly=true&checkConnLiveness=false",
			func(c *mysqldrv.Config) bool {
				return c.AllowCleartextPasswords && c.RejectReadOnly && !c.CheckConnLiveness
			}},
		{"tls=preferred&bulk-load=off", func(c *mysqldrv.Config) bool { return c.TLSConfig == "preferred" && c.Params["bulk-load"] == "" }},
	}
	for _, tc := range allowed {
		dsn, err := DSN(base + tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		cfg, err := mysqldrv.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s: DSN %q does not parse: %v", tc.query, dsn, err)
		}
		if !tc.check(cfg) {
			t.Errorf("%s: the driver's configuration does not have it: %+v", tc.query, cfg)
		}
		if !cfg.ParseTime || cfg.Loc.String() != "UTC" || !cfg.ClientFoundRows || !cfg.MultiStatements || !cfg.InterpolateParams ||
			cfg.Params["time_zone"] != "'+00:00'" || !strings.Contains(cfg.Params["sql_mode"], "STRICT_ALL_TABLES") {
			t.Errorf("%s: txsink's session is not kept: %+v", tc.query, cfg)
		}
	}
}
