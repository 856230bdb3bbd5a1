package engine_test

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/internal/testdb"
)

// dbzDefaults is a Debezium record of inventory.orders with the schema
// envelope whose fields declare defaults in Connect's JSON (a Decimal's
// as base64 bytes, a Timestamp's as milliseconds), and, when extra, a
// column the source added later with a default of its own.
func dbzDefaults(extra bool, after string) string {
	fields := `[{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"int32","optional":true,"default":7,"field":"qty"},` +
		`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"},"default":"` + dbzDecimal(1250) + `","field":"price"},` +
		`{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","default":1589355606123,"field":"seen"},` +
		`{"type":"boolean","optional":false,"default":true,"field":"flag"},` +
		`{"type":"string","optional":true,"default":"it's \\ n/a","field":"note"}`
	if extra {
		fields += `,{"type":"int32","optional":false,"default":42,"field":"extra"}`
	}
	fields += `]`
	return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":null,"after":` + after +
		`,"source":{"db":"inventory","table":"orders"},"op":"c"}}`
}

// TestSourceDefaults starts from an empty database on every server: the
// table created from Debezium's schema has each column's source default,
// so a row whose image leaves a column out (a partial image) gets what
// the source would have given it; a column the source adds later is
// added with its default, which the rows already there take, as they
// did at the source.
func TestSourceDefaults(t *testing.T) {
	lines := []string{
		dbzDefaults(false, `{"id":1}`),
		dbzDefaults(true, `{"id":2,"qty":1,"price":"`+dbzDecimal(5)+`","seen":0,"flag":false,"note":"x","extra":3}`),
	}
	// The query reads decimals and date-times alike on every server.
	want := map[string]string{
		"mysql":    "1|7|12.5|2020-05-13 07:40:06.123|1|it's \\ n/a|42\n2|1|0.05|1970-01-01 00:00:00.000|0|x|3",
		"postgres": "1|7|12.5|2020-05-13 07:40:06.123|true|it's \\ n/a|42\n2|1|0.05|1970-01-01 00:00:00.000|false|x|3",
	}
	want["sqlite"] = want["mysql"]
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		cfg := creatingPipeline(t, db, "debezium-json", []string{"id"}, lines)
		cfg.Schema.Evolve = []string{config.SchemaEvolveAddColumns}
		if err := runOnce(t, cfg); err != nil {
			t.Fatal(err)
		}
		if got := query(t, db, "SELECT id, qty, price, seen, flag, note, extra FROM "+db.Quote("orders")+" ORDER BY id"); got != want[db.Dialect] {
			t.Errorf("got\n%s\nwant\n%s", got, want[db.Dialect])
		}
	})
}
