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

// TestErrorClasses classifies by SQLSTATE the errors of the server's own
// state, which no row causes (ServerCondition), and the refusals of one
// row for its own values, which the dead-letter policy quarantines
// (RowFault), apart from those that depend on other rows.
func TestErrorClasses(t *testing.T) {
	tests := []struct {
		code        string
		server, row bool
	}{
		{"53100", true, false},  // disk_full
		{"53200", true, false},  // out_of_memory
		{"53400", true, false},  // configuration_limit_exceeded
		{"58030", true, false},  // io_error
		{"XX000", true, false},  // internal_error
		{"25006", true, false},  // read_only_sql_transaction
		{"42501", true, false},  // insufficient_privilege
		{"22021", false, true},  // character_not_in_repertoire: a row's value (a NUL byte into text)
		{"23514", false, true},  // check_violation
		{"23502", false, true},  // not_null_violation
		{"22001", false, true},  // string_data_right_truncation
		{"22003", false, true},  // numeric_value_out_of_range
		{"22P02", false, true},  // invalid_text_representation
		{"23503", false, false}, // foreign_key_violation: another row's
		{"23505", false, false}, // unique_violation: another row's
		{"23P01", false, false}, // exclusion_violation: another row's
		{"40P01", false, false}, // deadlock_detected
	}
	for _, tc := range tests {
		err := fmt.Errorf("write: %w", &pgconn.PgError{Code: tc.code})
		if got := (Dialect{}).ServerCondition(err); got != tc.server {
			t.Errorf("ServerCondition(%s) = %v, want %v", tc.code, got, tc.server)
		}
		if got := (Dialect{}).RowFault(err); got != tc.row {
			t.Errorf("RowFault(%s) = %v, want %v", tc.code, got, tc.row)
		}
	}
	if (Dialect{}).ServerCondition(errors.New("something else")) || (Dialect{}).RowFault(errors.New("something else")) {
		t.Error("ServerCondition or RowFault of an error without SQLSTATE = true")
	}
}
