package diagnose_test

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/sink/starrocks"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
	"github.com/txsink/txsink/sink/starrocks/starrockstest"
)

// TestStarRocksCheck runs txsink check against the StarRocks fake (or the
// cluster TXSINK_TEST_STARROCKS_URL names, starrockstest): it
// names the server's version; each table's kind and key (a Primary Key
// table by its key, a Duplicate Key table written append-only, a warning
// for a Unique Key table written append-only); and reports as errors what
// a run would refuse: changes into a Duplicate Key table not declared
// append-only (with StarRocks' way out: recreate it), and a sampled value
// longer in bytes than its VARCHAR, though not in characters. It writes nothing: the fake receives no HTTP
// request at all.
func TestStarRocksCheck(t *testing.T) {
	c := starrockstest.New(t, starrocksfake.Options{Version: "4.0.3 check"}, starrocks.ProgressDDL, starrocks.ClaimsDDL,
		`CREATE TABLE names (id BIGINT NOT NULL, name VARCHAR(4) NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`,
		`CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)`,
		`CREATE TABLE log (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)`,
		`CREATE TABLE users (id BIGINT NOT NULL, email VARCHAR(64)) UNIQUE KEY (id) DISTRIBUTED BY HASH(id)`)
	db := c.TestDB()
	db.Dialect = "starrocks"
	version := "4.0.3"
	if c.Fake == nil {
		if err := c.SQL.QueryRow("SELECT current_version()").Scan(&version); err != nil {
			t.Fatal(err)
		}
		version = strings.Fields(version)[0]
	}
	rep := runCase(t, db, tcase{
		tables: "  - source: shop.names\n  - source: shop.events\n    append-only: true\n  - source: shop.log\n  - source: shop.users\n    append-only: true\n",
		records: []string{
			`{"op":"+I","table":"shop.names","row":{"id":1,"name":"abcd"}}`,
			`{"op":"+I","table":"shop.names","row":{"id":2,"name":"ééé"}}`,
			`{"op":"+I","table":"shop.events","row":{"id":1,"what":"x"}}`,
			`{"op":"+I","table":"shop.users","row":{"id":1,"email":"a@b"}}`,
		},
	})
	checkFindings(t, "starrocks", rep, []want{
		{sev: diagnose.Info, check: "target", contains: []string{"target", "StarRocks " + version, "multi-table", "fake"}},
		{sev: diagnose.Info, check: "target", contains: []string{"names", "Primary Key table keyed by (id)", "count bytes"}},
		{sev: diagnose.Info, check: "target", contains: []string{"events", "Duplicate Key table, written append-only"}},
		{sev: diagnose.Warning, check: "target", contains: []string{"users", "Unique Key table keyed by (id)", "replaces"}},
		{sev: diagnose.Error, check: "key", contains: []string{"log", "no PRIMARY KEY", "append-only"}},
		{sev: diagnose.Info, check: "target", contains: []string{"log", "Duplicate Key table (DUP_KEYS)", "recreate it as a Primary Key table"}},
		{sev: diagnose.Error, check: "value", contains: []string{"names", "name", "bytes"}},
	})
	if c.Fake == nil {
		t.Log("not checked on a real cluster (only the fake logs requests): that check sends no HTTP request")
		return
	}
	for _, r := range c.Fake.Requests() {
		t.Errorf("check sent %s %s to the %s: it must write nothing", r.Method, r.Path, r.Role)
	}
}
