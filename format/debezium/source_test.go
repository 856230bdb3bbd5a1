package debezium

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// sourceMySQL and sourcePostgres are "source" blocks as Debezium 2.7's
// connectors write them.
const (
	sourceMySQL = `{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":"shop",` +
		`"sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null}`
	sourcePostgres = `{"version":"2.7.3.Final","connector":"postgresql","name":"pg","ts_ms":1733220000700,"snapshot":"false","db":"postgres",` +
		`"sequence":"[\"22910216\",\"22910504\"]","schema":"public","table":"customers","txId":752,"lsn":22910504,"xmin":null}`
)

// readSourceBoth reads src (followed by the rest of an envelope, as in a
// record) with readSourceAt and with readSourceMembers, the general way,
// each with and without the place in the log, and fails t when they
// differ in what they read or where they end. It returns whether
// readSourceAt took the block without the place (with it, a sequence
// longer than two LSNs is left to the general way).
func readSourceBoth(t *testing.T, src string) bool {
	t.Helper()
	data := []byte(src + `,"op":"c","ts_ms":1767225600000}`)
	took := false
	for _, order := range []bool{false, true} {
		fast, slow := envelope{readOrder: order}, envelope{readOrder: order}
		sf, ss := jsonscan.New(data), jsonscan.New(data)
		ok := readSourceAt(&sf, &fast, nil)
		if !ok && sf.Pos() != 0 {
			t.Errorf("%s: readSourceAt failed but moved the scanner to %d", src, sf.Pos())
		}
		if !order {
			took = ok
		}
		err := readSourceMembers(&ss, &slow, nil)
		if !ok {
			continue
		}
		if err != nil {
			t.Errorf("%s: readSourceAt took a block readSourceMembers refuses: %v", src, err)
			continue
		}
		if sf.Pos() != ss.Pos() || fast.table != slow.table || fast.hasSource != slow.hasSource || !reflect.DeepEqual(fast.order, slow.order) {
			t.Errorf("%s (orders %v): readSourceAt read %v %v %+v to %d; readSourceMembers %v %v %+v to %d", src, order,
				fast.table, fast.hasSource, fast.order, sf.Pos(), slow.table, slow.hasSource, slow.order, ss.Pos())
		}
	}
	return took
}

// TestReadSourceAt checks that the blocks Debezium's MySQL, MariaDB and
// PostgreSQL connectors write are read in place, with what the general
// way reads from them, and that every other block is left to it.
func TestReadSourceAt(t *testing.T) {
	pg := strings.NewReplacer
	for _, tc := range []struct {
		name string
		src  string
		fast bool
	}{
		{"mysql", sourceMySQL, true},
		{"postgresql", sourcePostgres, true},
		{"mariadb", strings.Replace(sourceMySQL, `"mysql"`, `"mariadb"`, 1), true},
		{"mysql 2.5: gtid, thread", pg(`"gtid":null`, `"gtid":"5d0bc1e2-d6a4-11ee-a2d6-0242ac120002:42"`, `"thread":7`, `"thread":null`).Replace(sourceMySQL), true},
		{"mysql with query", strings.Replace(sourceMySQL, `"query":null`, `"query":"INSERT INTO orders VALUES (1)"`, 1), true},
		{"mysql 2.6+: ts_us, ts_ns", strings.Replace(sourceMySQL, `"sequence":null,`, `"sequence":null,"ts_us":1767225600000000,"ts_ns":1767225600000000000,`, 1), true},
		{"mysql without sequence", strings.Replace(sourceMySQL, `"sequence":null,`, ``, 1), true},
		{"mysql snapshot", strings.Replace(sourceMySQL, `"snapshot":"false"`, `"snapshot":"last"`, 1), true},
		{"mysql table null", strings.Replace(sourceMySQL, `"table":"orders"`, `"table":null`, 1), true},
		{"mysql db null", strings.Replace(sourceMySQL, `"db":"shop"`, `"db":null`, 1), true},
		{"mysql empty table", strings.Replace(sourceMySQL, `"table":"orders"`, `"table":""`, 1), true},
		{"mysql DEL in a name", strings.Replace(sourceMySQL, `"shop"`, "\"sh\x7fop\"", 1), true},
		{"postgresql sequence null", strings.Replace(sourcePostgres, `"[\"22910216\",\"22910504\"]"`, `null`, 1), true},
		{"postgresql first LSN null", strings.Replace(sourcePostgres, `[\"22910216\",`, `[null,`, 1), true},
		{"postgresql txId null", strings.Replace(sourcePostgres, `"txId":752`, `"txId":null`, 1), true},
		{"postgresql xmin", strings.Replace(sourcePostgres, `"xmin":null`, `"xmin":12`, 1), true},
		{"postgresql empty schema", strings.Replace(sourcePostgres, `"schema":"public"`, `"schema":""`, 1), true},
		{"postgresql schema null", strings.Replace(sourcePostgres, `"schema":"public"`, `"schema":null`, 1), true},
		{"postgresql 2.6+: ts_us, ts_ns", strings.Replace(sourcePostgres, `"schema":`, `"ts_us":1,"ts_ns":1000,"schema":`, 1), true},
		{"postgresql long sequence", strings.Replace(sourcePostgres, `22910216`, strings.Repeat("1", 60), 1), true},

		// Left to the general way.
		{"white space", strings.Replace(sourceMySQL, `,"db"`, `, "db"`, 1), false},
		{"white space first", "{ " + sourceMySQL[1:], false},
		{"members in another order", pg(`"db":"shop","sequence":null,`, `"sequence":null,"db":"shop",`).Replace(sourceMySQL), false},
		{"a member more", strings.Replace(sourceMySQL, `"query":null`, `"query":null,"extra":1`, 1), false},
		{"a member less", strings.Replace(sourceMySQL, `"row":0,`, ``, 1), false},
		{"table twice", strings.Replace(sourceMySQL, `"query":null`, `"query":null,"table":"items"`, 1), false},
		{"escaped table", strings.Replace(sourceMySQL, `"orders"`, `"ord\u0065rs"`, 1), false},
		{"escaped quote in db", strings.Replace(sourceMySQL, `"shop"`, `"sh\"op"`, 1), false},
		{"non-ASCII db", strings.Replace(sourceMySQL, `"shop"`, `"boutique_é"`, 1), false},
		{"boolean snapshot", strings.Replace(sourceMySQL, `"snapshot":"false"`, `"snapshot":false`, 1), false},
		{"null snapshot", strings.Replace(sourceMySQL, `"snapshot":"false"`, `"snapshot":null`, 1), false},
		{"negative pos", strings.Replace(sourceMySQL, `"pos":4711`, `"pos":-1`, 1), false},
		{"fraction", strings.Replace(sourceMySQL, `"ts_ms":1767225600000`, `"ts_ms":1767225600000.5`, 1), false},
		{"exponent", strings.Replace(sourceMySQL, `"server_id":1`, `"server_id":1e3`, 1), false},
		{"leading zero", strings.Replace(sourceMySQL, `"pos":4711`, `"pos":04711`, 1), false},
		{"number as string", strings.Replace(sourceMySQL, `"pos":4711`, `"pos":"4711"`, 1), false},
		{"table a number", strings.Replace(sourceMySQL, `"table":"orders"`, `"table":7`, 1), false},
		{"gtid an object", strings.Replace(sourceMySQL, `"gtid":null`, `"gtid":{}`, 1), false},
		{"sequence with another escape", strings.Replace(sourcePostgres, `[\"22910216\",`, `[\"22910216\",\n`, 1), false},
		{"sequence ends in a backslash", strings.Replace(sourcePostgres, `\"22910504\"]"`, `\"22910504\"]\\"`, 1), false},
		{"sequence a number", strings.Replace(sourcePostgres, `"[\"22910216\",\"22910504\"]"`, `5`, 1), false},
		{"postgresql with mysql's tail", strings.Replace(sourceMySQL, `"table":`, `"schema":"s","table":`, 1), false},
		{"mysql with postgresql's tail", strings.Replace(sourcePostgres, `"schema":"public",`, ``, 1), false},
		{"message: no snapshot", strings.Replace(sourcePostgres, `"snapshot":"false",`, ``, 1), false},
		{"sql server", `{"version":"2.7.3.Final","connector":"sqlserver","name":"s","ts_ms":1,"snapshot":"false","db":"d","sequence":null,"schema":"dbo","table":"t","change_lsn":"x","commit_lsn":"y","event_serial_no":1}`, false},
		{"unterminated", strings.TrimSuffix(sourceMySQL, "}"), false},
		{"control character", strings.Replace(sourceMySQL, `"bench"`, "\"be\tnch\"", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readSourceBoth(t, tc.src); got != tc.fast {
				t.Errorf("readSourceAt took the block: %v, want %v", got, tc.fast)
			}
		})
	}
}

// TestReadSourceAtEnd checks a block the record ends in, with fewer than
// 16 bytes after its last key: left to the general way.
func TestReadSourceAtEnd(t *testing.T) {
	data := []byte(sourceMySQL)
	for n := len(data) - 20; n <= len(data); n++ {
		s := jsonscan.New(data[:n])
		var e envelope
		if readSourceAt(&s, &e, nil) {
			t.Errorf("%d bytes: taken", n)
		}
	}
}

// FuzzReadSourceAt checks that whatever block readSourceAt takes, the
// general way takes too, with the same meaning and end.
func FuzzReadSourceAt(f *testing.F) {
	for _, src := range []string{sourceMySQL, sourcePostgres, strings.Replace(sourceMySQL, `"sequence":null,`, `"sequence":null,"ts_us":1,"ts_ns":2,`, 1)} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		readSourceBoth(t, src)
	})
}
