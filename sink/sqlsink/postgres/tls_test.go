package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTLS connects with sslmode=require (libpq's parameters, which pgx
// reads: sslmode, sslrootcert, sslcert, sslkey) and checks on the server
// that the session is encrypted.
func TestTLS(t *testing.T) {
	base := os.Getenv("TXSINK_TEST_POSTGRES_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	url := strings.Replace(base, "sslmode=disable", "sslmode=require", 1)
	if !strings.Contains(url, "sslmode=require") {
		url += "&sslmode=require"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := Open(ctx, url)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL not reachable: %v", err)
		}
		t.Skipf("PostgreSQL not reachable (start it with scripts/test-services.sh): %v", err)
	}
	defer db.Close()
	var ssl bool
	if err := db.DB().QueryRowContext(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
		t.Fatal(err)
	}
	if !ssl {
		t.Error("sslmode=require gave an unencrypted session")
	}
}
