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
		{&pgconn.PgError{Code: "40001"}, true},  // serialization_failure
		{&pgconn.PgError{Code: "40P01"}, true},  // deadlock_detected
		{&pgconn.PgError{Code: "55P03"}, true},  // lock_not_available
		{&pgconn.PgError{Code: "08006"}, true},  // connection_failure
		{&pgconn.PgError{Code: "57P01"}, true},  // admin_shutdown
		{&pgconn.PgError{Code: "53300"}, true},  // too_many_connections
		{&pgconn.PgError{Code: "25P03"}, true},  // idle_in_transaction_session_timeout
		{&pgconn.PgError{Code: "25P04"}, true},  // transaction_timeout
		{&pgconn.PgError{Code: "53100"}, false}, // disk_full: retrying does not free the disk
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

// TestServerCondition classifies the errors of the server's own state,
// which no row causes, by SQLSTATE.
func TestServerCondition(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"53100", true},  // disk_full
		{"53200", true},  // out_of_memory
		{"53400", true},  // configuration_limit_exceeded
		{"58030", true},  // io_error
		{"XX000", true},  // internal_error
		{"25006", true},  // read_only_sql_transaction
		{"42501", true},  // insufficient_privilege
		{"22021", false}, // character_not_in_repertoire: a row's value
		{"23514", false}, // check_violation
		{"23502", false}, // not_null_violation
		{"22001", false}, // string_data_right_truncation
	}
	for _, tc := range tests {
		if got := (Dialect{}).ServerCondition(fmt.Errorf("write: %w", &pgconn.PgError{Code: tc.code})); got != tc.want {
			t.Errorf("ServerCondition(%s) = %v, want %v", tc.code, got, tc.want)
		}
	}
	if (Dialect{}).ServerCondition(errors.New("something else")) {
		t.Error("ServerCondition of an error without SQLSTATE = true")
	}
}
