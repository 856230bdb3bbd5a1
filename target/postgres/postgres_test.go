package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "40001"}, true}, // serialization_failure
		{&pgconn.PgError{Code: "40P01"}, true}, // deadlock_detected
		{&pgconn.PgError{Code: "55P03"}, true}, // lock_not_available
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "53300"}, true}, // too_many_connections
		{fmt.Errorf("apply: %w", &pgconn.PgError{Code: "40P01"}), true},
		{&pgconn.PgError{Code: "22001"}, false}, // string_data_right_truncation
		{&pgconn.PgError{Code: "23502"}, false}, // not_null_violation
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "22P02"}, false}, // invalid_text_representation
		{errors.New("something else"), false},
	}
	for _, tc := range tests {
		if got := (Dialect{}).Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
