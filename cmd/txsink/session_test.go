package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// TestURLSessionParameters is finding 7 of issue 24 as a user meets it,
// with TZ=Asia/Kolkata (and PGTZ) in txsink's environment: a target URL
// with a parameter that would change how values are written (?loc=Local
// storing 10:00Z as 15:30, ?time_zone='+05:00' shifting TIMESTAMPs, an
// empty sql_mode making up an empty string for a missing NOT NULL column,
// PostgreSQL's TimeZone or options) makes
// txsink check and txsink run exit non-zero naming it, with nothing
// written; with connection and timeout parameters the run stores the
// instant and the wall-clock time exactly, and a missing NOT NULL column
// is refused, not made up.
func TestURLSessionParameters(t *testing.T) {
	t.Setenv("TZ", "Asia/Kolkata")
	t.Setenv("PGTZ", "Asia/Kolkata")
	t.Setenv("PGOPTIONS", "")
	cases := map[string]struct {
		ddl     string
		refused []string // query parameters, each named by its refusal
		allowed string
		read    string
	}{
		"mysql": {
			ddl:     "CREATE TABLE vals (id INT NOT NULL PRIMARY KEY, ts TIMESTAMP(6) NULL, dt DATETIME(6) NULL, nn VARCHAR(10) NOT NULL)",
			refused: []string{"loc=Local", "time_zone=%27%2B05%3A00%27", "sql_mode=%27%27"},
			allowed: "timeout=10s&wait_timeout=600",
			read:    "SELECT id, CAST(UNIX_TIMESTAMP(ts) AS SIGNED), CAST(dt AS CHAR), nn FROM vals ORDER BY id",
		},
		"postgres": {
			ddl:     "CREATE TABLE vals (id INT NOT NULL PRIMARY KEY, ts TIMESTAMPTZ(6) NULL, dt TIMESTAMP(6) NULL, nn VARCHAR(10) NOT NULL)",
			refused: []string{"TimeZone=Asia%2FKolkata", "options=-c%20DateStyle%3DSQL%2CDMY"},
			allowed: "application_name=txsink&statement_timeout=60000",
			read:    "SELECT id, extract(epoch FROM ts)::bigint, dt::text, nn FROM vals ORDER BY id",
		},
	}
	for _, dialect := range []string{"mysql", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			tc := cases[dialect]
			db := testdb.Open(t, dialect)
			db.Exec(t, tc.ddl)
			dir := t.TempDir()
			src := filepath.Join(dir, "p0.jsonl")
			write := func(lines ...string) {
				t.Helper()
				if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			good := `{"op":"+I","table":"shop.vals","row":{"id":1,"ts":"2024-05-01T10:00:00Z","dt":"2024-05-01 10:00:00.123456","nn":"x"}}`
			write(good)
			config := func(params string) string {
				t.Helper()
				url := db.URL + "?" + params
				if strings.Contains(db.URL, "?") {
					url = db.URL + "&" + params
				}
				p := filepath.Join(dir, "pipeline.yaml")
				yaml := "name: session\nsource:\n  type: file\n  paths: [p0.jsonl]\n  format: txsink-json\n" +
					"target:\n  url: " + strconv.Quote(url) + "\ntables:\n  - source: shop.vals\n    target: vals\n"
				if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			for _, params := range tc.refused {
				name, _, _ := strings.Cut(params, "=")
				cfg := config(params)
				for _, cmd := range []string{"check", "run"} {
					code, stdout, stderr := runTxsink(t, cmd, "--config", cfg)
					if code == 0 || !strings.Contains(stderr, "target url: parameter "+name+": ") {
						t.Errorf("txsink %s with ?%s: exit code %d, want non-zero with the refusal of %s\nstdout:\n%s\nstderr:\n%s",
							cmd, params, code, name, stdout, tail(stderr))
					}
				}
				if got := sessionRows(t, db, "SELECT COUNT(*) FROM vals"); got != "0" {
					t.Errorf("?%s: %s rows written, want none", params, got)
				}
			}

			cfg := config(tc.allowed)
			if code, stdout, stderr := runTxsink(t, "run", "--config", cfg); code != 0 {
				t.Fatalf("run with ?%s: exit code %d\nstdout:\n%s\nstderr:\n%s", tc.allowed, code, stdout, tail(stderr))
			}
			// 2024-05-01 10:00:00Z is 1714557600 s after the epoch.
			if got, want := sessionRows(t, db, tc.read), "1|1714557600|2024-05-01 10:00:00.123456|x"; got != want {
				t.Errorf("stored:\n%s\nwant\n%s", got, want)
			}
			write(good, `{"op":"+I","table":"shop.vals","row":{"id":2,"ts":"2024-05-01T10:00:00Z"}}`)
			if code, stdout, stderr := runTxsink(t, "run", "--config", cfg); code == 0 || !strings.Contains(stderr, "p0.jsonl:2") {
				t.Errorf("a row without its NOT NULL column: exit code %d, want a refusal at p0.jsonl:2\nstdout:\n%s\nstderr:\n%s", code, stdout, tail(stderr))
			}
			if got := sessionRows(t, db, "SELECT COUNT(*) FROM vals WHERE id = 2"); got != "0" {
				t.Errorf("the row without its NOT NULL column was written")
			}
		})
	}
}

// sessionRows runs q on db and returns its rows, columns joined by "|" and
// rows by newlines, NULL as "NULL".
func sessionRows(t *testing.T, db *testdb.DB, q string) string {
	t.Helper()
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
