package diagnose_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
	"github.com/txsink/txsink/internal/testdb"
)

// TestKafkaSource checks a kafka source: the brokers are asked for the
// topics (a missing one and a transaction topic of two partitions are
// errors), and every partition is sampled from its start without joining
// the group, so a value its column cannot hold is found in a topic as in
// a file.
func TestKafkaSource(t *testing.T) {
	db := testdb.SQLite(t)
	db.Exec(t, plainTable(db.Dialect)...)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "shop"), kfake.SeedTopics(2, "shop.transaction"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := []*kgo.Record{
		{Topic: "shop", Partition: 0, Value: []byte(`{"op":"c","after":{"id":1,"name":"ok"},"source":{"db":"shop","table":"t"}}`)},
		{Topic: "shop", Partition: 1, Value: []byte(`{"op":"c","after":{"id":2,"name":"ok"},"source":{"db":"shop","table":"t"}}`)},
		{Topic: "shop", Partition: 1, Value: []byte(`{"op":"c","after":{"id":3,"name":null},"source":{"db":"shop","table":"t"}}`)},
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	yaml := "name: diag\nsource:\n  type: kafka\n  brokers: [" + brokers[0] + "]\n  topics: [shop, gone]\n" +
		"  transaction-topic: shop.transaction\n  group: g\n  format: debezium-json\n" +
		"target:\n  url: \"" + db.URL + "\"\ntables:\n  - source: shop.t\n" +
		"sink:\n  transaction.multi-table.enabled: true\n"
	cfg, err := config.Parse([]byte(yaml), t.TempDir())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := diagnose.Run(ctx, cfg, diagnose.Options{Sample: diagnose.DefaultSample})
	if err != nil {
		t.Fatal(err)
	}
	checkFindings(t, db.Dialect, rep, []want{
		{sev: diagnose.Error, check: "source", contains: []string{"gone", "the brokers have no topic gone"}},
		{sev: diagnose.Error, check: "source", contains: []string{"shop.transaction", "has 2 partitions"}},
		{sev: diagnose.Error, check: "value", contains: []string{"shop/1:1", "column name", "NOT NULL"}},
	})
	if rep.Records != 3 || rep.Partitions != 4 {
		t.Errorf("sampled %d records of %d partitions, want 3 of 4", rep.Records, rep.Partitions)
	}
}
