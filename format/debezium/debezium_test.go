package debezium

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

var testPos = changelog.Position{Partition: "p0.jsonl", Offset: 4096, Seq: 10}

const testSource = `{"version":"2.5.0.Final","connector":"mysql","name":"srv","db":"inventory","table":"orders"}`

// bare builds a bare envelope; before and after are JSON texts.
func bare(op, before, after string) []byte {
	return []byte(`{"before":` + before + `,"after":` + after + `,"source":` + testSource +
		`,"op":"` + op + `","ts_ms":1700000000000,"transaction":null}`)
}

// field is one column of a Connect schema built by connect.
type field struct {
	name, typ, logical string
	params             string // JSON object text, or ""
}

func (f field) json() string {
	s := `{"type":"` + f.typ + `","optional":true,"field":"` + f.name + `"`
	if f.logical != "" {
		s += `,"name":"` + f.logical + `","version":1`
	}
	if f.params != "" {
		s += `,"parameters":` + f.params
	}
	return s + "}"
}

// connect builds a Kafka Connect envelope {"schema":..,"payload":..} whose
// before and after images have the given fields.
func connect(fields []field, op, before, after string) []byte {
	var fs []string
	for _, f := range fields {
		fs = append(fs, f.json())
	}
	value := `{"type":"struct","fields":[` + strings.Join(fs, ",") + `],"optional":true,"name":"srv.inventory.orders.Value","field":"%s"}`
	schema := `{"type":"struct","fields":[` + fmt.Sprintf(value, "before") + "," + fmt.Sprintf(value, "after") +
		`,{"type":"struct","fields":[],"field":"source"},{"type":"string","field":"op"}],"name":"srv.inventory.orders.Envelope"}`
	return []byte(`{"schema":` + schema + `,"payload":` + string(bare(op, before, after)) + `}`)
}

// decodeOne decodes a record that must give exactly one change.
func decodeOne(t *testing.T, d *Decoder, rec []byte) changelog.Change {
	t.Helper()
	cs, err := d.Decode(rec, testPos)
	if err != nil {
		t.Fatalf("Decode(%s): %v", rec, err)
	}
	if len(cs) != 1 {
		t.Fatalf("Decode(%s) gave %d changes, want 1", rec, len(cs))
	}
	c := cs[0]
	if c.Pos != testPos || int(c.Size) != len(rec) {
		t.Errorf("Pos, Size = %v, %d; want %v, %d", c.Pos, c.Size, testPos, len(rec))
	}
	return c
}

// decodeErr decodes a record that must fail, and checks the error is a
// complete *format.Error.
func decodeErr(t *testing.T, d *Decoder, rec []byte) *format.Error {
	t.Helper()
	cs, err := d.Decode(rec, testPos)
	if err == nil {
		t.Fatalf("Decode(%s) = %v, want an error", rec, cs)
	}
	if cs != nil {
		t.Errorf("Decode returned changes %v with the error", cs)
	}
	var fe *format.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *format.Error", err, err)
	}
	if fe.Pos != testPos || fe.Format != Name || fe.Reason == "" || fe.Hint == "" {
		t.Errorf("incomplete error %#v", fe)
	}
	if msg := fe.Error(); !strings.HasPrefix(msg, Name+": p0.jsonl:10: ") || !strings.Contains(msg, fe.Hint) {
		t.Errorf("Error() = %q, want it to start with the position and hold the hint", msg)
	}
	return fe
}

func TestDecodeOps(t *testing.T) {
	d := newDecoder(t, nil)
	d.ReadOrders()
	row1 := changelog.Row{Names: []string{"id", "amount"}, Values: []changelog.Value{changelog.Number("1"), changelog.Number("9.99")}}
	row2 := changelog.Row{Names: []string{"id", "amount"}, Values: []changelog.Value{changelog.Number("2"), changelog.Number("12.50")}}
	table := changelog.Table{Namespace: "inventory", Name: "orders"}
	for _, tc := range []struct {
		op, before, after string
		want              changelog.Change
	}{
		{"c", "null", `{"id":1,"amount":9.99}`, changelog.Change{Kind: changelog.Insert, After: row1}},
		// A snapshot's record: a new start of its connector's logs.
		{"r", "null", `{"id":1,"amount":9.99}`, changelog.Change{Kind: changelog.Insert, After: row1, Order: &changelog.Order{Log: "mysql:srv", Restart: true}}},
		// A key change: the +U keeps Before so the engine can see it.
		{"u", `{"id":1,"amount":9.99}`, `{"id":2,"amount":12.50}`, changelog.Change{Kind: changelog.UpdateAfter, Before: row1, After: row2}},
		{"d", `{"id":1,"amount":9.99}`, "null", changelog.Change{Kind: changelog.Delete, Before: row1}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			rec := bare(tc.op, tc.before, tc.after)
			c := decodeOne(t, d, rec)
			want := tc.want
			want.Table, want.Pos, want.Size = table, testPos, int32(len(rec))
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got  %#v\nwant %#v", c, want)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	d := newDecoder(t, nil)
	after := `{"z":1,"a":-0.000123e-7,"m":"caf\u00e9\n\"q\"","big":123456789012345678901234567890.123456789,` +
		`"t":true,"f":false,"n":null,"obj":{"k":[1, 2.50,{"x":null}]},"arr":[ "a" ],"empty":""}`
	c := decodeOne(t, d, bare("c", "null", after))
	want := changelog.Row{
		Names: []string{"z", "a", "m", "big", "t", "f", "n", "obj", "arr", "empty"},
		Values: []changelog.Value{
			changelog.Number("1"), changelog.Number("-0.000123e-7"), "café\n\"q\"",
			changelog.Number("123456789012345678901234567890.123456789"), true, false, nil,
			changelog.JSON(`{"k":[1, 2.50,{"x":null}]}`), changelog.JSON(`[ "a" ]`), "",
		},
	}
	if !reflect.DeepEqual(c.After, want) {
		t.Errorf("After =\n%#v\nwant\n%#v", c.After, want)
	}
}

// TestDecodeDoesNotRetainInput: callers reuse their buffers (Kafka clients
// do), so a change must not alias the record.
func TestDecodeDoesNotRetainInput(t *testing.T) {
	d := newDecoder(t, nil)
	rec := bare("c", "null", `{"id":1,"name":"scooter","doc":{"a":1}}`)
	c := decodeOne(t, d, rec)
	for i := range rec {
		rec[i] = 'x'
	}
	want := changelog.Row{Names: []string{"id", "name", "doc"}, Values: []changelog.Value{changelog.Number("1"), "scooter", changelog.JSON(`{"a":1}`)}}
	if !reflect.DeepEqual(c.After, want) {
		t.Errorf("After changed with the input buffer: %#v", c.After)
	}
	if c.Table.String() != "inventory.orders" {
		t.Errorf("Table changed with the input buffer: %v", c.Table)
	}
}

func TestDecodeTable(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct{ source, want string }{
		{`{"db":"inventory","table":"orders"}`, "inventory.orders"},
		{`{"db":"postgres","schema":"public","table":"orders"}`, "public.orders"},
		{`{"db":"inventory","schema":null,"table":"orders"}`, "inventory.orders"},
		{`{"db":"inventory","schema":"","table":"orders"}`, "inventory.orders"},
		{`{"table":"orders"}`, "orders"},
	} {
		rec := []byte(`{"op":"c","after":{"id":1},"source":` + tc.source + `}`)
		if got := decodeOne(t, d, rec).Table.String(); got != tc.want {
			t.Errorf("source %s: table %q, want %q", tc.source, got, tc.want)
		}
	}
}

func TestDecodeNoChange(t *testing.T) {
	d := newDecoder(t, nil)
	for _, rec := range []string{
		"", " \n\t", "null", " null\n",
		`{"schema":null,"payload":null}`,
		`{"status":"BEGIN","id":"571:53195829","ts_ms":1486500577125,"event_count":null,"data_collections":null}`,
		`{"schema":{"type":"struct","fields":[{"type":"string","field":"status"}]},"payload":{"status":"BEGIN","id":"x"}}`,
	} {
		cs, err := d.Decode([]byte(rec), testPos)
		if err != nil || cs != nil {
			t.Errorf("Decode(%q) = %v, %v; want no change and no error", rec, cs, err)
		}
	}
	if cs, err := d.Decode(nil, testPos); err != nil || cs != nil {
		t.Errorf("Decode(nil) = %v, %v", cs, err)
	}
}

// TestDecodeSkippedRecords decodes the records beside the rows that
// txsink skips, with and without the Connect schema: a schema change event
// of the connector's schema change topic (a table's, a database's) and a
// PostgreSQL logical decoding message (op "m"). Each is one row-less
// change of its kind, naming the table or the database, never an error.
func TestDecodeSkippedRecords(t *testing.T) {
	d := newDecoder(t, nil)
	tests := []struct {
		file  string
		kind  changelog.Kind
		table changelog.Table
	}{
		{"schema-change-mysql.json", changelog.SchemaChange, changelog.Table{Namespace: "inventory", Name: "customers"}},
		{"schema-change-mysql-connect.json", changelog.SchemaChange, changelog.Table{Namespace: "inventory", Name: "orders"}},
		{"schema-change-database.json", changelog.SchemaChange, changelog.Table{Namespace: "inventory"}},
		{"message-postgres.json", changelog.Message, changelog.Table{Namespace: "postgres"}},
		{"message-postgres-connect.json", changelog.Message, changelog.Table{Namespace: "postgres"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c := decodeOne(t, d, readTestdata(t, tt.file))
			if c.Kind != tt.kind || c.Table != tt.table || !c.Kind.Skipped() {
				t.Errorf("kind, table = %v, %#v; want %v, %#v", c.Kind, c.Table, tt.kind, tt.table)
			}
			if !c.Before.IsZero() || !c.After.IsZero() || c.TxnID != "" || c.TxnEnd {
				t.Errorf("a skipped record carries a row or a transaction: %+v", c)
			}
		})
	}
	// Without its "databaseName", a record with no op and no schema
	// change field is still refused as no Debezium envelope.
	if _, err := d.Decode([]byte(`{"source":{"db":"inventory","table":"customers"},"ts_ms":1}`), testPos); err == nil {
		t.Error("a record without op or schema change fields decoded")
	}
}

func TestDecodeEndEvent(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		rec    string
		id     string
		events int
	}{
		{`{"status":"END","id":"571:53195832","event_count":2,"data_collections":[{"data_collection":"s1.a","event_count":2}]}`, "571", 2},
		{`{"status":"END","id":"0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10","ts_ms":"1486500577691","event_count":"3"}`, "0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10", 3},
		{`{"schema":{"type":"struct","fields":[]},"payload":{"status":"END","id":"x","event_count":1}}`, "x", 1},
		{`{"status":"END","id":"y"}`, "y", 0},
	} {
		cs, err := d.Decode([]byte(tc.rec), testPos)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Decode(%s) = %v, %v; want one EndTxn", tc.rec, cs, err)
		}
		if c := cs[0]; c.Kind != changelog.EndTxn || !c.TxnEnd || c.TxnID != tc.id || int(c.TxnEvents) != tc.events || c.Pos != testPos {
			t.Errorf("Decode(%s) = %+v; want EndTxn %q with %d events", tc.rec, c, tc.id, tc.events)
		}
	}
	for _, rec := range []string{`{"status":"END","event_count":2}`, `{"status":"END","id":"x","event_count":"many"}`, `{"status":"END","id":"x","event_count":-1}`} {
		decodeErr(t, d, []byte(rec))
	}
}

// TestDecodeTransactionID: the transaction block's id, grouped by
// TxnKey, and its total_order, the event's place in the transaction,
// when it is a whole number that fits (0 otherwise: not used).
func TestDecodeTransactionID(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		txn, want string
		order     int32
	}{
		{`null`, "", 0},
		{`{"id":"571:53195832","total_order":1,"data_collection_order":1}`, "571", 1}, // PostgreSQL txId:LSN
		{`{"id":"571:x","total_order":2}`, "571:x", 2},
		{`{"id":"0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10","total_order":"1","data_collection_order":"1"}`, "0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10", 0},
		{`{"total_order":3,"id":12345}`, "12345", 3},
		{`{"id":"7","total_order":2147483647}`, "7", 2147483647},
		{`{"id":"7","total_order":2147483648}`, "7", 0},
		{`{"id":"7","total_order":1.5}`, "7", 0},
		{`{"id":"7","total_order":-1}`, "7", 0},
		{`{"id":"7","total_order":null}`, "7", 0},
		// The block as connectors write it, which the decoder reads in
		// place, and the same with what it leaves to the general way.
		{`{"id":"t1","total_order":4,"data_collection_order":2}`, "t1", 4},
		{`{"id":"","total_order":0,"data_collection_order":0}`, "", 0},
		{`{"id":"t1","total_order":2147483648,"data_collection_order":1}`, "t1", 0},
		{`{"id":"t1","total_order":4,"data_collection_order":2.5}`, "t1", 4},
		{`{"id":"t\u00e9","total_order":4,"data_collection_order":2}`, "t\u00e9", 4},
		{`{"id":"té","total_order":4,"data_collection_order":2}`, "té", 4},
		{`{ "id":"t1","total_order":4,"data_collection_order":2}`, "t1", 4},
		{`{"id":null,"total_order":4,"data_collection_order":2}`, "", 4},
	} {
		rec := []byte(`{"op":"c","after":{"id":1},"source":` + testSource + `,"transaction":` + tc.txn + `}`)
		c := decodeOne(t, d, rec)
		if c.TxnID != tc.want || c.TxnOrder != tc.order {
			t.Errorf("transaction %s: TxnID %q, TxnOrder %d; want %q, %d", tc.txn, c.TxnID, c.TxnOrder, tc.want, tc.order)
		}
	}
}

func TestDecodeAllowMissingBefore(t *testing.T) {
	rec := bare("u", "null", `{"id":1}`)
	fe := decodeErr(t, newDecoder(t, nil), rec)
	if fe.Reason != `The "before" field of UPDATE message is null` ||
		!strings.Contains(fe.Hint, "REPLICA IDENTITY FULL") || !strings.Contains(fe.Hint, OptionAllowMissingBefore+`: "true"`) {
		t.Errorf("error %q", fe)
	}
	c := decodeOne(t, newDecoder(t, format.Options{OptionAllowMissingBefore: "true"}), rec)
	if c.Kind != changelog.UpdateAfter || !c.Before.IsZero() || c.After.Len() != 1 {
		t.Errorf("with the option: %#v, want a plain +U", c)
	}
	// The option does not excuse a delete without its key.
	fe = decodeErr(t, newDecoder(t, format.Options{OptionAllowMissingBefore: "true"}), bare("d", "null", "null"))
	if !strings.Contains(fe.Reason, "delete") {
		t.Errorf("error %q", fe)
	}
}

func TestNewOptions(t *testing.T) {
	for _, tc := range []struct {
		opts    format.Options
		wantErr string
	}{
		{nil, ""},
		{format.Options{OptionAllowMissingBefore: "false"}, ""},
		{format.Options{OptionAllowMissingBefore: " TRUE "}, ""},
		{format.Options{"debezium.allow-missing-befor": "true"}, `"debezium.allow-missing-befor"`},
		{format.Options{OptionAllowMissingBefore: "yes please"}, `want "true" or "false"`},
	} {
		_, err := New(tc.opts)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("New(%v) = %v, want error containing %q", tc.opts, err, tc.wantErr)
		}
	}
}

// TestDecodeErrors: every way a record can be bad gives a *format.Error
// with the position, the table when it is known, and a hint.
func TestDecodeErrors(t *testing.T) {
	d := newDecoder(t, nil)
	decimal := []field{{name: "price", typ: "bytes", logical: logicalDecimal, params: `{"scale":"2"}`}}
	for _, tc := range []struct {
		name, rec           string
		reason, hint, table string
	}{
		{"truncated JSON", `{"source":` + testSource + `,"op":"c","after":{"id":1`, "invalid JSON", "one Debezium change event", "inventory.orders"},
		{"trailing data", string(bare("c", "null", `{"id":1}`)) + `{}`, "invalid JSON", "JSON", "inventory.orders"},
		{"bad escape", `{"source":` + testSource + `,"op":"c\x","after":{"id":1}}`, "invalid JSON", "JSON", "inventory.orders"},
		{"bad escape before source", `{"op":"c\x","after":{"id":1},"source":` + testSource + `}`, "invalid JSON", "JSON", ""},
		{"not an object", `[1,2]`, "record is a JSON array", "JSON", ""},
		{"a string", `"c"`, "record is a JSON string", "JSON", ""},
		{"non-JSON white space", "\u00a0null", "invalid JSON", "JSON", ""},
		{"flattened row", `{"id":1004,"first_name":"Anne"}`, `no "op" field`, "ExtractNewRecordState", ""},
		{"unknown op", string(bare("x", "null", `{"id":1}`)), `unknown op "x"`, `"c" (create)`, "inventory.orders"},
		{"op not a string", `{"op":1,"after":{"id":1},"source":` + testSource + `}`, `"op" must be a string`, "Debezium envelope", "inventory.orders"},
		{"truncate", string(bare("t", "null", "null")), "truncate", "skipped.operations=t", "inventory.orders"},
		{"update without before", string(bare("u", "null", `{"id":1}`)), `The "before" field of UPDATE message is null`, "REPLICA IDENTITY FULL", "inventory.orders"},
		{"delete without before", string(bare("d", "null", "null")), `delete event has no "before" image`, "primary key", "inventory.orders"},
		{"create without after", string(bare("c", "null", "null")), `create event has no "after" image`, `"after"`, "inventory.orders"},
		{"read without after", string(bare("r", "null", "null")), `read (snapshot) event has no "after" image`, `"after"`, "inventory.orders"},
		{"update without after", string(bare("u", `{"id":1}`, "null")), `update event has no "after" image`, `"after"`, "inventory.orders"},
		{"no source", `{"op":"c","after":{"id":1}}`, `no "source" block`, "source.table", ""},
		{"null source", `{"op":"c","after":{"id":1},"source":null}`, `no "source" block`, "source.table", ""},
		{"no table", `{"op":"c","after":{"id":1},"source":{"db":"inventory"}}`, `"source" has no "table"`, "source.table", ""},
		{"source not an object", `{"op":"c","after":{"id":1},"source":"inventory.orders"}`, `"source" must be an object`, "source", ""},
		{"table not a string", `{"op":"c","after":{"id":1},"source":{"db":"a","table":7}}`, `"source.table" must be a string`, "envelope", ""},
		{"duplicate op", `{"op":"c","op":"d","after":{"id":1},"source":` + testSource + `}`, `field "op" appears twice`, "envelope", "inventory.orders"},
		{"after a number", string(bare("c", "null", "5")), `"after" must be an object or null, not a number`, "envelope", "inventory.orders"},
		{"after empty", string(bare("c", "null", "{}")), `"after" image has no columns`, "envelope", "inventory.orders"},
		{"duplicate column", string(bare("c", "null", `{"id":1,"id":2}`)), `"after" image: duplicate column "id"`, "envelope", "inventory.orders"},
		{"transaction id an object", `{"op":"c","after":{"id":1},"source":` + testSource + `,"transaction":{"id":{}}}`, `"transaction.id" must be a string`, "envelope", "inventory.orders"},
		{"transaction order with a leading zero", `{"op":"c","after":{"id":1},"source":` + testSource + `,"transaction":{"id":"t1","total_order":1,"data_collection_order":01}}`, "invalid JSON", "", "inventory.orders"},
		{"transaction id not text", `{"op":"c","after":{"id":1},"source":` + testSource + `,"transaction":{"id":"t` + "\xff" + `","total_order":1,"data_collection_order":1}}`, "invalid UTF-8", "", "inventory.orders"},
		{"transaction a string", `{"op":"c","after":{"id":1},"source":` + testSource + `,"transaction":"t1"}`, `"transaction" must be an object`, "envelope", "inventory.orders"},
		{"payload and envelope", `{"schema":null,"payload":` + string(bare("c", "null", `{"id":1}`)) + `,"op":"c"}`, `both a Kafka Connect "payload"`, "envelope", "inventory.orders"},
		{"payload a string", `{"schema":null,"payload":"x"}`, `"payload" must be an object`, "envelope", ""},
		{"schema a string", `{"schema":"x","payload":` + string(bare("c", "null", `{"id":1}`)) + `}`, `"schema" must be an object`, "envelope", "inventory.orders"},
		{"invalid schema", `{"schema":{"type":5},"payload":` + string(bare("c", "null", `{"id":1}`)) + `}`, "invalid Kafka Connect schema", "schema", "inventory.orders"},
		{"decimal without scale", string(connect([]field{{name: "price", typ: "bytes", logical: logicalDecimal}}, "c", "null", `{"price":"AQ=="}`)),
			"invalid Kafka Connect schema", "schema", "inventory.orders"},
		{"decimal not base64", string(connect(decimal, "c", "null", `{"price":"!!"}`)),
			`"after" image: column "price" (org.apache.kafka.connect.data.Decimal): invalid base64`, "schema", "inventory.orders"},
		{"decimal a bool", string(connect(decimal, "u", `{"price":true}`, `{"price":"AQ=="}`)),
			`"before" image: column "price" (org.apache.kafka.connect.data.Decimal): want a base64 string, got a boolean`, "schema", "inventory.orders"},
		{"date not an integer", string(connect([]field{{name: "d", typ: "int32", logical: logicalDate}}, "c", "null", `{"d":1.5}`)),
			`column "d" (io.debezium.time.Date): want an integer, got "1.5"`, "schema", "inventory.orders"},
		{"date out of range", string(connect([]field{{name: "d", typ: "int32", logical: logicalDate}}, "c", "null", `{"d":2932897}`)),
			"outside years 1-9999", "schema", "inventory.orders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := decodeErr(t, d, []byte(tc.rec))
			if !strings.Contains(fe.Reason, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tc.reason)
			}
			if !strings.Contains(fe.Hint, tc.hint) {
				t.Errorf("Hint = %q, want it to contain %q", fe.Hint, tc.hint)
			}
			if fe.Table != tc.table {
				t.Errorf("Table = %q, want %q", fe.Table, tc.table)
			}
		})
	}
}

// twos returns n as big-endian two's-complement bytes of minimal length,
// the way Java's BigInteger.toByteArray (and so Kafka Connect) writes it.
func twos(n *big.Int) []byte {
	for k := 1; ; k++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*k-1))
		if n.Cmp(lim) < 0 && n.Cmp(new(big.Int).Neg(lim)) >= 0 {
			m := new(big.Int).Set(n)
			if n.Sign() < 0 {
				m.Add(m, new(big.Int).Lsh(big.NewInt(1), uint(8*k)))
			}
			return m.FillBytes(make([]byte, k))
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func bigInt(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad big int %q", s)
	}
	return n
}

func TestDecimal(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		unscaled string
		scale    int
		want     string
	}{
		{"12345", 2, "123.45"},
		{"-12345", 2, "-123.45"},
		{"-5", 2, "-0.05"},
		{"5", 4, "0.0005"},
		{"0", 2, "0.00"},
		{"0", 0, "0"},
		{"42", 0, "42"},
		{"-42", 0, "-42"},
		{"127", 0, "127"},
		{"128", 0, "128"}, // needs a leading 0x00 byte
		{"-128", 1, "-12.8"},
		{"-129", 1, "-12.9"},
		{"1250", 2, "12.50"}, // trailing zeros are part of the scale
		{"123", -2, "12300"},
		{"0", -2, "0"},
		{"-9223372036854775808", 0, "-9223372036854775808"}, // 8 bytes, the fast path's edge
		{"9223372036854775807", 3, "9223372036854775.807"},
		{"9223372036854775808", 0, "9223372036854775808"}, // 9 bytes
		{"-9223372036854775809", 0, "-9223372036854775809"},
		{"12345678901234567890123456789012345678", 10, "1234567890123456789012345678.9012345678"}, // DECIMAL(38,10)
		{"-12345678901234567890123456789012345678", 38, "-0.12345678901234567890123456789012345678"},
		{"-1", 40, "-0.0000000000000000000000000000000000000001"},
	} {
		name := fmt.Sprintf("%s/scale%d", tc.unscaled, tc.scale)
		t.Run(name, func(t *testing.T) {
			fields := []field{{name: "v", typ: "bytes", logical: logicalDecimal, params: fmt.Sprintf(`{"scale":"%d","connect.decimal.precision":"38"}`, tc.scale)}}
			rec := connect(fields, "c", "null", `{"v":"`+b64(twos(bigInt(t, tc.unscaled)))+`"}`)
			if got := decodeOne(t, d, rec).After.Values[0]; got != changelog.Number(tc.want) {
				t.Errorf("got %#v, want Number %q", got, tc.want)
			}
			// The same through VariableScaleDecimal.
			vsd := connect([]field{{name: "v", typ: "struct", logical: logicalVarDecimal}}, "c", "null",
				fmt.Sprintf(`{"v":{"scale":%d,"value":"%s"}}`, tc.scale, b64(twos(bigInt(t, tc.unscaled)))))
			if got := decodeOne(t, d, vsd).After.Values[0]; got != changelog.Number(tc.want) {
				t.Errorf("VariableScaleDecimal: got %#v, want Number %q", got, tc.want)
			}
		})
	}
	// JsonConverter's decimal.format=NUMERIC writes the number itself.
	fields := []field{{name: "v", typ: "bytes", logical: logicalDecimal, params: `{"scale":2}`}}
	if got := decodeOne(t, d, connect(fields, "c", "null", `{"v":12.50}`)).After.Values[0]; got != changelog.Number("12.50") {
		t.Errorf("numeric decimal: got %#v", got)
	}
}

// TestDecimalRandom checks decimalText against math/big over many values
// and scales.
func TestDecimalRandom(t *testing.T) {
	n := big.NewInt(1)
	for i := 0; i < 400; i++ {
		n.Mul(n, big.NewInt(-7))
		n.Add(n, big.NewInt(int64(i)))
		for _, scale := range []int{0, 1, 3, 9, 30} {
			got, err := decimalText(twos(n), scale)
			if err != nil {
				t.Fatal(err)
			}
			want := new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)
			if string(got) != want {
				t.Fatalf("decimalText(%v, %d) = %s, want %s", n, scale, got, want)
			}
		}
	}
}

func TestTemporal(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct {
		logical, typ, value, want string
	}{
		{logicalDate, "int32", "0", "1970-01-01"},
		{logicalDate, "int32", "-1", "1969-12-31"},
		{logicalDate, "int32", "18395", "2020-05-13"},
		{logicalDate, "int32", "-719162", "0001-01-01"},
		{logicalDate, "int32", "2932896", "9999-12-31"},
		{logicalDate, "int32", "-25567", "1900-01-01"},
		{logicalConnectDate, "int32", "11016", "2000-02-29"},
		{logicalDate, "int32", `"18395"`, "2020-05-13"}, // the docs' quoted int64s
		{logicalTimestamp, "int64", "1589355606100", "2020-05-13 07:40:06.1"},
		{logicalTimestamp, "int64", "1589355606000", "2020-05-13 07:40:06"},
		{logicalTimestamp, "int64", "-1", "1969-12-31 23:59:59.999"},
		{logicalConnectTimestmp, "int64", "0", "1970-01-01 00:00:00"},
		{logicalMicroTimestamp, "int64", "1589355606123456", "2020-05-13 07:40:06.123456"},
		{logicalMicroTimestamp, "int64", "1589355606120000", "2020-05-13 07:40:06.12"},
		{logicalMicroTimestamp, "int64", "-2208988800000001", "1899-12-31 23:59:59.999999"},
		{logicalMicroTimestamp, "int64", "-62135596800000000", "0001-01-01 00:00:00"},
		{logicalNanoTimestamp, "int64", "1589355606123456789", "2020-05-13 07:40:06.123456789"},
		{logicalNanoTimestamp, "int64", "1589355606000000001", "2020-05-13 07:40:06.000000001"},
		{logicalTime, "int32", "3723004", "01:02:03.004"},
		{logicalConnectTime, "int32", "0", "00:00:00"},
		{logicalMicroTime, "int64", "86400000000", "24:00:00"},
		{logicalMicroTime, "int64", "3018759000000", "838:32:39"},
		{logicalMicroTime, "int64", "-1500000", "-00:00:01.5"},
		{logicalNanoTime, "int64", "45296789000001", "12:34:56.789000001"},
		// Types that stay as JSON gave them.
		{"io.debezium.time.ZonedTimestamp", "string", `"2020-05-13T07:40:06.1Z"`, "2020-05-13T07:40:06.1Z"},
		{"io.debezium.data.Json", "string", `"{\"a\":1}"`, `{"a":1}`},
		{"io.debezium.data.Enum", "string", `"red"`, "red"},
	} {
		t.Run(tc.logical+"/"+tc.value, func(t *testing.T) {
			fields := []field{{name: "id", typ: "int32"}, {name: "v", typ: tc.typ, logical: tc.logical}}
			c := decodeOne(t, d, connect(fields, "c", "null", `{"id":1,"v":`+tc.value+`}`))
			if got := c.After.Values[1]; got != tc.want {
				t.Errorf("got %#v, want %q", got, tc.want)
			}
			if got := c.After.Values[0]; got != changelog.Number("1") {
				t.Errorf("plain int32 column: got %#v, want Number 1", got)
			}
			// Without the schema the raw value stays.
			c = decodeOne(t, d, bare("c", "null", `{"id":1,"v":`+tc.value+`}`))
			if _, isString := c.After.Values[1].(string); strings.HasPrefix(tc.value, `"`) != isString {
				t.Errorf("schemaless: got %#v, want the raw JSON value", c.After.Values[1])
			}
		})
	}
}

// TestTemporalAgainstTime checks the date and timestamp arithmetic against
// package time over the whole supported range.
func TestTemporalAgainstTime(t *testing.T) {
	for days := int64(minDay); days <= maxDay; days += 997 {
		got, err := formatDate(days)
		want := time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		if err != nil || got != want {
			t.Fatalf("formatDate(%d) = %q, %v; want %q", days, got, err, want)
		}
	}
	const layout = "2006-01-02 15:04:05.999999999" // trims trailing zeros, like ours
	for i := int64(0); i < 20000; i++ {
		micros := (i*7919*1000003 + i*i*104729) % (253402300799 * 1e6)
		if i%2 == 1 {
			micros = -micros % (62135596800 * 1e6)
		}
		got, err := formatTimestamp(micros, 6)
		if want := time.UnixMicro(micros).UTC().Format(layout); err != nil || got != want {
			t.Fatalf("formatTimestamp(%d µs) = %q, %v; want %q", micros, got, err, want)
		}
		nanos := micros*1000 + i%1000
		if nanos/1000 != micros {
			continue // outside int64 nanoseconds
		}
		got, err = formatTimestamp(nanos, 9)
		if want := time.Unix(0, nanos).UTC().Format(layout); err != nil || got != want {
			t.Fatalf("formatTimestamp(%d ns) = %q, %v; want %q", nanos, got, err, want)
		}
	}
	if _, err := formatTimestamp(math.MaxInt64, 3); err == nil {
		t.Error("formatTimestamp(MaxInt64 ms) succeeded, want out of range")
	}
	if got := formatTime(math.MinInt64, 9); got != "-2562047:47:16.854775808" {
		t.Errorf("formatTime(MinInt64 ns) = %q", got)
	}
}

func TestBytes(t *testing.T) {
	d := newDecoder(t, nil)
	fields := []field{{name: "b", typ: "bytes"}, {name: "bits", typ: "bytes", logical: "io.debezium.data.Bits"}, {name: "raw", typ: "bytes"}}
	c := decodeOne(t, d, connect(fields, "c", "null", `{"b":"AQID","bits":"gA==","raw":"AP8"}`))
	want := []changelog.Value{[]byte{1, 2, 3}, []byte{0x80}, []byte{0, 0xff}}
	if !reflect.DeepEqual(c.After.Values, want) {
		t.Errorf("got %#v, want %#v", c.After.Values, want)
	}
}

// TestSchemaPayloadOrder: the Connect envelope may list "payload" before
// "schema"; the logical types still apply.
func TestSchemaPayloadOrder(t *testing.T) {
	d := newDecoder(t, nil)
	rec := string(connect([]field{{name: "d", typ: "int32", logical: logicalDate}}, "c", "null", `{"d":1}`))
	schema, payload, _ := strings.Cut(strings.TrimPrefix(rec, `{"schema":`), `,"payload":`)
	swapped := `{"payload":` + strings.TrimSuffix(payload, "}") + `,"schema":` + schema + `}`
	for _, r := range []string{rec, swapped, rec} { // the third hits the cache's fast path
		if got := decodeOne(t, d, []byte(r)).After.Values[0]; got != "1970-01-02" {
			t.Errorf("got %#v, want 1970-01-02", got)
		}
	}
}

// TestConcurrentDecode runs one decoder from many goroutines over records
// of two schemas, so the schema cache is contended (run with -race).
func TestConcurrentDecode(t *testing.T) {
	d := newDecoder(t, nil)
	recs := [][]byte{
		connect([]field{{name: "d", typ: "int32", logical: logicalDate}}, "c", "null", `{"d":1}`),
		connect([]field{{name: "d", typ: "int64", logical: logicalTimestamp}}, "c", "null", `{"d":1}`),
	}
	want := []changelog.Value{"1970-01-02", "1970-01-01 00:00:00.001"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k := (g + i) % 2
				cs, err := d.Decode(recs[k], testPos)
				if err != nil || len(cs) != 1 || cs[0].After.Values[0] != want[k] {
					errs <- fmt.Errorf("record %d: %v, %v", k, cs, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTxnKey(t *testing.T) {
	for id, want := range map[string]string{
		"571:53195832": "571", "571:x": "571:x", "x:571": "x:571", "571": "571", "": "",
		":1": ":1", "1:": "1:", "1:2:3": "1:2:3", "0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10": "0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10",
	} {
		if got := TxnKey(id); got != want {
			t.Errorf("TxnKey(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestDecodeAllocations guards the interning of tables, column names and
// transaction ids, and the building of a change with its rows in one
// allocation: once a decoder has seen them, an insert or an update costs
// the change with its rows' values and the headers they point to, and the
// rows' text, whatever the rows' width; a transaction's END costs its
// change, and its BEGIN nothing.
func TestDecodeAllocations(t *testing.T) {
	const source = `"source":{"version":"2.7.3.Final","connector":"mysql","db":"shop","table":"orders","pos":4711},`
	const row = `{"id":1,"customer":"Linus","status":"NEW","amount":969.60,"created_at":"2026-11-01 08:00:00.000","note":null}`
	for _, tc := range []struct {
		name string
		rec  string
		want float64
	}{
		{"insert", `{"before":null,"after":` + row + `,` + source + `"op":"c","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`, 2},
		{"update", `{"before":` + row + `,"after":` + row + `,` + source + `"op":"u","ts_ms":1767225600000,"transaction":{"id":"t1","total_order":1,"data_collection_order":1}}`, 2},
		{"begin", `{"status":"BEGIN","id":"t1","event_count":null,"data_collections":null,"ts_ms":1767225600000}`, 0},
		{"end", `{"status":"END","id":"t1","event_count":3,"data_collections":null,"ts_ms":1767225600000}`, 1},
	} {
		d := newDecoder(t, nil)
		rec := []byte(tc.rec)
		if _, err := d.Decode(rec, testPos); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := d.Decode(rec, testPos); err != nil {
				t.Fatal(err)
			}
		}); n != tc.want {
			t.Errorf("decoding a known table's %s allocates %v times, want %v", tc.name, n, tc.want)
		}
	}
}

// TestDeclaredColumns: a record in the Connect envelope declares its
// images' columns, whatever its images carry; a bare record, a tombstone
// and a record without images in its schema declare none.
func TestDeclaredColumns(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	fields := []field{{name: "id", typ: "int32"}, {name: "note", typ: "string"}}
	tests := []struct {
		name string
		rec  []byte
		cols []string
		ok   bool
	}{
		{"connect insert", connect(fields, "c", "null", `{"id":1,"note":"a"}`), []string{"id", "note"}, true},
		{"connect delete, no after image", connect(fields, "d", `{"id":1,"note":null}`, "null"), []string{"id", "note"}, true},
		{"bare", bare("c", "null", `{"id":1}`), nil, false},
		{"schema null", []byte(`{"schema":null,"payload":null}`), nil, false},
		{"boundary", []byte(`{"schema":{"type":"struct","fields":[{"type":"string","field":"status"}]},"payload":{"status":"END","id":"t1"}}`), nil, false},
		{"not JSON", []byte(`{`), nil, false},
	}
	for _, tt := range tests {
		cols, ok := d.DeclaredColumns(tt.rec)
		if ok != tt.ok || !reflect.DeepEqual(cols, tt.cols) {
			t.Errorf("%s: DeclaredColumns = %v, %v; want %v, %v", tt.name, cols, ok, tt.cols, tt.ok)
		}
	}
}
