package mysql

import (
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// The session Open makes writes nothing by itself, so a read-only open is
// the same.
func init() {
	sink.Register("mysql", sqlsink.URLDriver(Open))
	sink.Register("mariadb", sqlsink.URLDriver(Open))
}
