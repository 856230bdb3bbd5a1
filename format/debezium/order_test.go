package debezium

import (
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestOrder checks the place in its source's log each connector's record
// decodes to, and the records that have none.
func TestOrder(t *testing.T) {
	pg := func(source, op, txn string) []byte {
		return []byte(`{"before":{"id":1},"after":{"id":1},"source":` + source + `,"op":"` + op + `","transaction":` + txn + `}`)
	}
	const pgSource = `{"version":"2.7.0.Final","connector":"postgresql","name":"shop","db":"shop","schema":"public","table":"orders","snapshot":"false","txId":771,"lsn":24023128,"sequence":"[\"24023000\",\"24023128\"]"}`
	tests := []struct {
		name string
		rec  []byte
		want changelog.Order
	}{
		{"postgresql", pg(pgSource, "u", "null"), changelog.Order{Log: "postgresql:shop", At: [2]uint64{24023000, 24023128}}},
		{"postgresql with total_order", pg(pgSource, "c", `{"id":"771:24023128","total_order":3,"data_collection_order":1}`),
			changelog.Order{Log: "postgresql:shop", At: [2]uint64{24023000, 24023128}, N: 3}},
		{"postgresql before any commit", pg(`{"connector":"postgresql","name":"shop","schema":"public","table":"orders","sequence":"[null,\"77\"]"}`, "d", "null"),
			changelog.Order{Log: "postgresql:shop", At: [2]uint64{0, 77}}},
		{"postgresql without sequence (before Debezium 1.4)", pg(`{"connector":"postgresql","name":"shop","schema":"public","table":"orders","lsn":77}`, "u", "null"), changelog.Order{}},
		{"postgresql snapshot: a new start", pg(`{"connector":"postgresql","name":"shop","schema":"public","table":"orders","snapshot":"true","sequence":"[null,\"77\"]"}`, "r", "null"),
			changelog.Order{Log: "postgresql:shop", Restart: true}},
		{"postgresql snapshot's last record", pg(`{"connector":"postgresql","name":"shop","schema":"public","table":"orders","snapshot":"last","sequence":"[null,\"77\"]"}`, "c", "null"),
			changelog.Order{Log: "postgresql:shop", Restart: true}},
		{"mysql", pg(`{"connector":"mysql","name":"srv","server_id":223344,"file":"mysql-bin.000003","pos":154,"row":2,"snapshot":false,"db":"inventory","table":"orders"}`, "u", "null"),
			changelog.Order{Log: "mysql:srv:223344", At: [2]uint64{3, 154}}},
		{"mariadb", pg(`{"connector":"mariadb","name":"srv","server_id":1,"file":"mariadb-bin.000012","pos":9000,"row":0,"db":"inventory","table":"orders"}`, "c", `{"id":"0-1-5","total_order":1}`),
			changelog.Order{Log: "mariadb:srv:1", At: [2]uint64{12, 9000}, N: 1}},
		{"mysql snapshot: a new start of every server_id's log", pg(`{"connector":"mysql","name":"srv","server_id":0,"file":"mysql-bin.000003","pos":154,"row":0,"snapshot":"true","db":"inventory","table":"orders"}`, "r", "null"),
			changelog.Order{Log: "mysql:srv", Restart: true}},
		{"mysql without pos", pg(`{"connector":"mysql","name":"srv","file":"mysql-bin.000003","db":"inventory","table":"orders"}`, "u", "null"), changelog.Order{}},
		{"sqlserver: no usable place", pg(`{"connector":"sqlserver","name":"srv","change_lsn":"00000027:00000758:0003","commit_lsn":"00000027:00000758:0005","db":"inventory","schema":"dbo","table":"orders"}`, "u", "null"), changelog.Order{}},
		{"no name", pg(`{"connector":"mysql","file":"mysql-bin.000003","pos":154,"db":"inventory","table":"orders"}`, "u", "null"), changelog.Order{}},
		{"unusable sequence", pg(`{"connector":"postgresql","name":"shop","schema":"public","table":"orders","sequence":"[\"x\",\"77\"]"}`, "u", "null"), changelog.Order{}},
	}
	// A decoder not told to read places (the files and Kafka sources'
	// sessions) reads none, at no cost; one told to (NATS) reads them.
	off, on := newDecoder(t, nil), newDecoder(t, nil)
	on.ReadOrders()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c := decodeOne(t, off, tt.rec); c.Order != nil {
				t.Errorf("without ReadOrders: Order = %+v, want nil", *c.Order)
			}
			c := decodeOne(t, on, tt.rec)
			var got changelog.Order
			if c.Order != nil {
				got = *c.Order
				if got.IsZero() {
					t.Error("Order set to the zero Order, want nil")
				}
			}
			if got != tt.want {
				t.Errorf("Order = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestOrderNotAfter checks when a change is a copy of one applied.
func TestOrderNotAfter(t *testing.T) {
	at := func(a, b uint64, n uint32) changelog.Order {
		return changelog.Order{Log: "l", At: [2]uint64{a, b}, N: n}
	}
	tests := []struct {
		name    string
		o, last changelog.Order
		want    bool
	}{
		{"before", at(1, 5, 0), at(1, 6, 0), true},
		{"earlier commit, later LSN", at(1, 9, 0), at(2, 3, 0), true},
		{"after", at(2, 3, 0), at(1, 9, 0), false},
		{"equal without total_order: maybe the next row of a COPY", at(1, 5, 0), at(1, 5, 0), false},
		{"equal with total_order: the same event", at(1, 5, 4), at(1, 5, 4), true},
		{"another row of one binlog event, or of a compressed payload", at(3, 154, 0), at(3, 154, 0), false},
		{"the next event of a compressed payload, with total_order", at(3, 154, 6), at(3, 154, 5), false},
		{"later in its transaction", at(1, 5, 5), at(1, 5, 4), false},
	}
	for _, tt := range tests {
		if got := tt.o.NotAfter(tt.last); got != tt.want {
			t.Errorf("%s: NotAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}
