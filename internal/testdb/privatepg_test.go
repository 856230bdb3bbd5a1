package testdb_test

import (
	"testing"

	"github.com/txsink/txsink/internal/testdb"
)

// TestPrivatePostgres checks that the private server has what logical
// replication needs, which the shared server lacks.
func TestPrivatePostgres(t *testing.T) {
	db := testdb.PrivatePostgres(t, "max_slot_wal_keep_size=64MB")
	for setting, want := range map[string]string{"wal_level": "logical", "max_replication_slots": "20", "max_slot_wal_keep_size": "64MB"} {
		var got string
		if err := db.SQL.QueryRow("SHOW " + setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
	db.Exec(t, "CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
}
