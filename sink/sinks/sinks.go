// Package sinks links every sink into the program that imports it: each
// sink package registers its sink.Driver for its URL schemes from init
// (see package sink): mysql:// and mariadb:// (MySQL and MariaDB),
// postgres:// and postgresql://, sqlite:// (a file) and sqlite::memory:,
// starrocks:// (StarRocks 4.0 or later, tested against a fake only).
// The command imports this package; engine and diagnose open targets
// through the registry only (sink.Open). To add a sink, add its import
// here.
package sinks

import (
	// Registered sinks.
	_ "github.com/txsink/txsink/sink/sqlsink/mysql"
	_ "github.com/txsink/txsink/sink/sqlsink/postgres"
	_ "github.com/txsink/txsink/sink/sqlsink/sqlite"
	_ "github.com/txsink/txsink/sink/starrocks"
)
