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

// TestServerCondition classifies the errors of the server's own state,
// which no row causes, by error number.
func TestServerCondition(t *testing.T) {
	d := &Dialect{MariaDB: true}
	tests := []struct {
		number uint16
		want   bool
	}{
		{1021, true},  // ER_DISK_FULL
		{1114, true},  // ER_RECORD_FILE_FULL: the table is full
		{1041, true},  // ER_OUT_OF_RESOURCES
		{1037, true},  // ER_OUTOFMEMORY
		{1026, true},  // ER_ERROR_ON_WRITE
		{1142, true},  // ER_TABLEACCESS_DENIED_ERROR
		{1290, true},  // ER_OPTION_PREVENTS_STATEMENT (--read-only)
		{1406, false}, // ER_DATA_TOO_LONG: a row's value
		{1048, false}, // ER_BAD_NULL_ERROR
		{4025, false}, // ER_CONSTRAINT_FAILED (MariaDB CHECK)
		{1062, false}, // ER_DUP_ENTRY
	}
	for _, tc := range tests {
		if got := d.ServerCondition(fmt.Errorf("write: %w", &mysqldrv.MySQLError{Number: tc.number})); got != tc.want {
			t.Errorf("ServerCondition(%d) = %v, want %v", tc.number, got, tc.want)
		}
	}
	if d.ServerCondition(io.ErrUnexpectedEOF) {
		t.Error("ServerCondition of a lost connection = true")
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
