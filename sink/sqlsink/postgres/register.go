package postgres

import (
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// The session Open makes writes nothing by itself, so a read-only open is
// the same.
func init() {
	sink.Register("postgres", sqlsink.URLDriver(Open))
	sink.Register("postgresql", sqlsink.URLDriver(Open))
}
