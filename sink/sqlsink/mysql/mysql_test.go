package mysql

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"
)

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"8.0.20", true}, {"8.0.19", false}, {"8.0.32-log", true}, {"8.4.0", true},
		{"5.7.44", false}, {"9.1.0-commercial", true}, {"8.0", false},
	}
	for _, tc := range tests {
		if got := versionAtLeast(tc.v, 8, 0, 20); got != tc.want {
			t.Errorf("versionAtLeast(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestDSN(t *testing.T) {
	tests := []struct {
		url  string
		want []string // substrings of the DSN
		err  string
	}{
		{"mysql://u:p%40ss@127.0.0.1:3306/shop", []string{"u:p@ss@tcp(127.0.0.1:3306)/shop", "STRICT_ALL_TABLES", "time_zone=%27%2B00%3A00%27", "interpolateParams=true"}, ""},
		{"mysql://u@db.local/shop?tls=preferred", []string{"tcp(db.local:3306)/shop", "tls=preferred"}, ""},
		{"mysql://u@127.0.0.1:3306/", nil, "name the database"},
		{"postgres://u@h/db", nil, "not mysql://"},
	}
	for _, tc := range tests {
		dsn, err := DSN(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("DSN(%q) err = %v, want %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("DSN(%q): %v", tc.url, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(dsn, w) {
				t.Errorf("DSN(%q) = %q, lacks %q", tc.url, dsn, w)
			}
		}
	}
}

func TestTransient(t *testing.T) {
	d := &Dialect{MariaDB: true}
	tests := []struct {
		err  error
		want bool
	}{
		{&mysqldrv.MySQLError{Number: 1213, Message: "Deadlock found"}, true},
		{&mysqldrv.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, true},
		{&mysqldrv.MySQLError{Number: 2006}, true},
		{&mysqldrv.MySQLError{Number: 2013}, true},
		{&mysqldrv.MySQLError{Number: 1927}, true},
		{fmt.Errorf("apply: %w", &mysqldrv.MySQLError{Number: 1213}), true},
		{driver.ErrBadConn, true},
		{mysqldrv.ErrInvalidConn, true},
		{io.ErrUnexpectedEOF, true},
		{&mysqldrv.MySQLError{Number: 1406, Message: "Data too long"}, false},
		{&mysqldrv.MySQLError{Number: 1048, Message: "Column cannot be null"}, false},
		{&mysqldrv.MySQLError{Number: 1366, Message: "Incorrect integer value"}, false},
		{&mysqldrv.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{errors.New("something else"), false},
	}
	for _, tc := range tests {
		if got := d.Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestErrorClasses classifies by error number the errors of the server's
// own state, which no row causes (ServerCondition), and the refusals of
// one row for its own values, which the dead-letter policy quarantines
// (RowFault), apart from those that depend on other rows.
func TestErrorClasses(t *testing.T) {
	d := &Dialect{MariaDB: true}
	tests := []struct {
		number      uint16
		server, row bool
	}{
		{1021, true, false},  // ER_DISK_FULL
		{1114, true, false},  // ER_RECORD_FILE_FULL: the table is full
		{1041, true, false},  // ER_OUT_OF_RESOURCES
		{1037, true, false},  // ER_OUTOFMEMORY
		{1026, true, false},  // ER_ERROR_ON_WRITE
		{1142, true, false},  // ER_TABLEACCESS_DENIED_ERROR
		{1290, true, false},  // ER_OPTION_PREVENTS_STATEMENT (--read-only)
		{1406, false, true},  // ER_DATA_TOO_LONG: a row's value
		{1048, false, true},  // ER_BAD_NULL_ERROR
		{1364, false, true},  // ER_NO_DEFAULT_FOR_FIELD
		{1264, false, true},  // ER_WARN_DATA_OUT_OF_RANGE
		{1366, false, true},  // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
		{4025, false, true},  // ER_CONSTRAINT_FAILED (MariaDB CHECK)
		{3819, false, true},  // ER_CHECK_CONSTRAINT_VIOLATED (MySQL 8)
		{1062, false, false}, // ER_DUP_ENTRY: another row's
		{1452, false, false}, // ER_NO_REFERENCED_ROW_2: a foreign key, another row's
		{1213, false, false}, // ER_LOCK_DEADLOCK
	}
	for _, tc := range tests {
		err := fmt.Errorf("write: %w", &mysqldrv.MySQLError{Number: tc.number})
		if got := d.ServerCondition(err); got != tc.server {
			t.Errorf("ServerCondition(%d) = %v, want %v", tc.number, got, tc.server)
		}
		if got := d.RowFault(err); got != tc.row {
			t.Errorf("RowFault(%d) = %v, want %v", tc.number, got, tc.row)
		}
	}
	if d.ServerCondition(io.ErrUnexpectedEOF) || d.RowFault(io.ErrUnexpectedEOF) {
		t.Error("ServerCondition or RowFault of a lost connection = true")
	}
}

func TestGeneratedExtra(t *testing.T) {
	for extra, want := range map[string]bool{
		"":                     false,
		"auto_increment":       false,
		"VIRTUAL GENERATED":    true,
		"STORED GENERATED":     true,
		"PERSISTENT GENERATED": true,
		"DEFAULT_GENERATED":    false, // MySQL 8: DEFAULT (expr)
		"DEFAULT_GENERATED on update CURRENT_TIMESTAMP": false,
	} {
		if got := generated(extra); got != want {
			t.Errorf("generated(%q) = %t, want %t", extra, got, want)
		}
	}
}
