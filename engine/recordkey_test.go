package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/internal/testdb"
	"github.com/txsink/txsink/source/kafka"
)

// dbzKey is a Debezium record key with the schema envelope (the key
// converter's schemas.enable=true): the Connect struct of the table's
// key columns, here tenant and id.
func dbzKey(tenant, id int) string {
	return fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"tenant"},`+
		`{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"dbserver1.inventory.orders.Key"},`+
		`"payload":{"tenant":%d,"id":%d}}`, tenant, id)
}

// TestKeyFromRecordKey reads Debezium records from Kafka whose keys
// carry the key schema, into an empty database on every server, with
// schema.create: missing and no primary-key on the tables entry: the
// table is created with the PRIMARY KEY the key schema declares, in its
// order, and an update of one key lands on its row.
func TestKeyFromRecordKey(t *testing.T) {
	fields := `[{"type":"string","optional":true,"field":"name"},{"type":"int64","optional":false,"field":"id"},{"type":"int32","optional":false,"field":"tenant"}]`
	value := func(op, before, after string) string {
		return `{"schema":` + fmt.Sprintf(dbzSchema, fields) + `,"payload":{"before":` + before + `,"after":` + after +
			`,"source":{"db":"inventory","table":"orders"},"op":"` + op + `"}}`
	}
	forEachDialect(t, func(t *testing.T, db *testdb.DB) {
		recs := []*kgo.Record{
			{Topic: "orders", Key: []byte(dbzKey(1, 7)), Value: []byte(value("c", "null", `{"name":"a","id":7,"tenant":1}`))},
			{Topic: "orders", Key: []byte(dbzKey(2, 7)), Value: []byte(value("c", "null", `{"name":"b","id":7,"tenant":2}`))},
			{Topic: "orders", Key: []byte(dbzKey(1, 7)), Value: []byte(value("u", `{"name":"a","id":7,"tenant":1}`, `{"name":"c","id":7,"tenant":1}`))},
		}
		brokers := newKafka(t, 1, "orders")
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cfg := kafkaPipeline(db, brokers, "g", "orders")
		cfg.Source.Format = "debezium-json"
		cfg.Tables = []config.Table{{Source: "inventory.*"}}
		cfg.Schema.Create = config.SchemaCreateMissing
		hook, done := reached(map[string]int64{kafka.PartitionName("orders", 0): int64(len(recs))})
		runUntil(t, newEngine(t, cfg, engine.WithCommitHook(hook)), done)
		st, err := tableOf(t, db, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(st.PrimaryKey) != "[tenant id]" {
			t.Errorf("primary key %v, want [tenant id] (the key schema's)", st.PrimaryKey)
		}
		if got, want := query(t, db, "SELECT tenant, id, name FROM "+db.Quote("orders")+" ORDER BY tenant"), "1|7|c\n2|7|b"; got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
}
