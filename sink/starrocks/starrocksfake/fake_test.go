package starrocksfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/clock/clocktest"
	"github.com/txsink/txsink/sink/sinktest"
)

// call sends one request as curl --location-trusted does (following the
// FE's 307 with the credentials) and returns the HTTP status and the JSON
// answer.
func call(t *testing.T, f *Fake, method, url string, h map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("root", "")
	req.Header.Set("Expect", "100-continue")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a map[string]any
	if resp.StatusCode == 200 {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&a); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %v\n%s", method, url, err, b)
		}
	}
	return resp.StatusCode, a
}

func op(t *testing.T, f *Fake, name string, h map[string]string, body string) map[string]any {
	t.Helper()
	method := http.MethodPost
	if name == "load" {
		method = http.MethodPut
	}
	code, a := call(t, f, method, f.URL()+"/api/transaction/"+name, h, body)
	if code != 200 {
		t.Fatalf("%s: HTTP %d", name, code)
	}
	return a
}

func want(t *testing.T, a map[string]any, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if got := str(a[kv[i]]); got != kv[i+1] {
			t.Errorf("%s = %q, want %q (answer %v)", kv[i], got, kv[i+1], a)
		}
	}
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func count(t *testing.T, f *Fake, q string) int {
	t.Helper()
	var n int
	if err := f.SQL().QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func newFake(t *testing.T, ddl ...string) (*Fake, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := New(t, Options{Clock: clk})
	for _, s := range ddl {
		if err := f.Exec(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return f, clk
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocumentedSingleTableTransaction runs the documentation's example:
// table1, example1.csv, begin, load, prepare, commit.
func TestDocumentedSingleTableTransaction(t *testing.T) {
	f, _ := newFake(t, readFile(t, "table1.sql"))
	label := "streamload_txn_example1_table1"
	h := map[string]string{"label": label, "db": f.Database(), "table": "table1"}
	a := op(t, f, "begin", h, "")
	want(t, a, "Status", "OK", "Message", "", "Label", label, "BeginTxnTimeMs", "0")
	if _, ok := a["TxnId"].(json.Number); !ok {
		t.Errorf("TxnId is %T, want a JSON number", a["TxnId"])
	}
	id := str(a["TxnId"])
	load := map[string]string{"label": label, "db": f.Database(), "table": "table1", "column_separator": ","}
	a = op(t, f, "load", load, readFile(t, "example1.csv"))
	want(t, a, "Status", "OK", "Label", label, "TxnId", id, "NumberTotalRows", "4", "NumberLoadedRows", "4", "NumberFilteredRows", "0")
	if n := count(t, f, "SELECT COUNT(*) FROM table1"); n != 0 {
		t.Fatalf("%d rows visible before commit, want 0", n)
	}
	want(t, op(t, f, "prepare", map[string]string{"label": label, "db": f.Database(), "prepared_timeout": "300"}, ""), "Status", "OK", "TxnId", id)
	if s := f.LabelState(label); s != "PREPARED" {
		t.Fatalf("state %s, want PREPARED", s)
	}
	want(t, op(t, f, "commit", map[string]string{"label": label, "db": f.Database()}, ""), "Status", "OK", "Message", "", "NumberLoadedRows", "4")
	if n := count(t, f, "SELECT COUNT(*) FROM table1 WHERE score >= 23"); n != 4 {
		t.Fatalf("%d rows after commit, want 4", n)
	}
	want(t, op(t, f, "commit", map[string]string{"label": label, "db": f.Database()}, ""), "Status", "OK", "Message", "Transaction already commited")
	want(t, op(t, f, "begin", h, ""), "Status", "LABEL_ALREADY_EXISTS", "ExistingJobStatus", "FINISHED")
	_, a = call(t, f, http.MethodGet, f.URL()+"/api/"+f.Database()+"/get_load_state?label="+label, nil, "")
	want(t, a, "Status", "OK", "State", "VISIBLE")
	_, a = call(t, f, http.MethodGet, f.URL()+"/api/"+f.Database()+"/get_load_state?label=nope", nil, "")
	want(t, a, "State", "UNKNOWN")
}

// TestRedirectAndAuth: loads and single-table operations go to the BE by
// a 307; multi-table operations are answered by the FE; both check Basic auth.
func TestRedirectAndAuth(t *testing.T) {
	f, _ := newFake(t, readFile(t, "table1.sql"))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, op string
		h          map[string]string
		code       int
	}{
		{http.MethodPut, "load", map[string]string{"label": "x"}, http.StatusTemporaryRedirect},
		{http.MethodPost, "begin", map[string]string{"label": "x", "table": "table1"}, http.StatusTemporaryRedirect},
		{http.MethodPost, "begin", map[string]string{"label": "x", "transaction_type": "multi"}, http.StatusOK},
		{http.MethodPut, "load", map[string]string{"label": "x", "transaction_type": "multi", "table": "table1"}, http.StatusTemporaryRedirect},
	} {
		req, _ := http.NewRequest(c.method, f.URL()+"/api/transaction/"+c.op, nil)
		req.SetBasicAuth("root", "")
		req.Header.Set("db", f.Database())
		for k, v := range c.h {
			req.Header.Set(k, v)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %s %v: HTTP %d, want %d", c.method, c.op, c.h, resp.StatusCode, c.code)
		}
		if c.code == http.StatusTemporaryRedirect && !strings.HasPrefix(resp.Header.Get("Location"), f.BEURL()+"/api/transaction/"+c.op) {
			t.Errorf("%s: Location %q, want the BE", c.op, resp.Header.Get("Location"))
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/api/transaction/begin", nil)
	req.SetBasicAuth("root", "wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: HTTP %d, want 401", resp.StatusCode)
	}
}

const ordersDDL = "CREATE TABLE orders (id BIGINT NOT NULL, note VARCHAR(4), total DECIMAL(10,2)) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)"
const itemsDDL = "CREATE TABLE items (order_id BIGINT NOT NULL, line INT NOT NULL, sku STRING) PRIMARY KEY (order_id, line) DISTRIBUTED BY HASH(order_id)"
const eventsDDL = "CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES (\"replication_num\" = \"1\")"

func multi(f *Fake, label string, kv ...string) map[string]string {
	h := map[string]string{"label": label, "db": f.Database(), "transaction_type": "multi"}
	for i := 0; i < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

func jsonLoad(f *Fake, label, table, columns string) map[string]string {
	return multi(f, label, "table", table, "format", "json", "strip_outer_array", "true", "columns", columns, "strict_mode", "true")
}

// TestMultiTableVisibleAtCommit: loads into two tables under one label are
// invisible until the commit, then visible together; __op deletes.
func TestMultiTableVisibleAtCommit(t *testing.T) {
	f, _ := newFake(t, ordersDDL, itemsDDL)
	a := op(t, f, "begin", multi(f, "m1"), "")
	want(t, a, "Status", "OK", "Label", "m1")
	want(t, op(t, f, "load", jsonLoad(f, "m1", "orders", "id,note,total,__op"),
		`[{"id":1,"note":"ab","total":"9.50","__op":0},{"id":2,"note":"cd","total":1,"__op":0}]`), "Status", "OK", "NumberLoadedRows", "2")
	want(t, op(t, f, "load", jsonLoad(f, "m1", "items", "order_id,line,sku,__op"),
		`[{"order_id":1,"line":1,"sku":"a"},{"order_id":1,"line":2,"sku":"b"},{"order_id":2,"line":1,"sku":"c"}]`), "Status", "OK")
	if n := count(t, f, "SELECT (SELECT COUNT(*) FROM orders) + (SELECT COUNT(*) FROM items)"); n != 0 {
		t.Fatalf("%d rows visible in an open transaction", n)
	}
	want(t, op(t, f, "commit", multi(f, "m1"), ""), "Status", "OK")
	if n := count(t, f, "SELECT (SELECT COUNT(*) FROM orders) * 10 + (SELECT COUNT(*) FROM items)"); n != 23 {
		t.Fatalf("orders*10+items = %d, want 23", n)
	}
	// A delete sends only the key; the last change of a key in a load wins.
	op(t, f, "begin", multi(f, "m2"), "")
	want(t, op(t, f, "load", jsonLoad(f, "m2", "orders", "id,note,total,__op"),
		`[{"id":1,"__op":1},{"id":2,"note":"x","total":"2.00","__op":0},{"id":2,"note":"y","total":"3.00","__op":0}]`), "Status", "OK")
	want(t, op(t, f, "commit", multi(f, "m2"), ""), "Status", "OK")
	var note string
	if err := f.SQL().QueryRow("SELECT GROUP_CONCAT(CONCAT(id, note, total)) FROM orders").Scan(&note); err != nil || note != "2y3.00" {
		t.Fatalf("orders = %q, %v; want 2y3.00", note, err)
	}
}

// TestMultiTableRules: the FE answers multi-table operations with FAILED
// and the code in the message; the transaction_type must match; a load
// needs a table of the database.
func TestMultiTableRules(t *testing.T) {
	f, _ := newFake(t, ordersDDL)
	op(t, f, "begin", multi(f, "r1"), "")
	a := op(t, f, "load", map[string]string{"label": "r1", "db": f.Database(), "table": "orders", "format": "json"}, `{"id":1}`)
	want(t, a, "Status", "INVALID_ARGUMENT")
	want(t, op(t, f, "load", jsonLoad(f, "r1", "nope", "id"), `[]`), "Status", "INVALID_ARGUMENT")
	a = op(t, f, "commit", multi(f, "unknown"), "")
	want(t, a, "Status", "FAILED")
	if !strings.HasPrefix(str(a["Message"]), "TXN_NOT_EXISTS") {
		t.Errorf("Message %q, want TXN_NOT_EXISTS first", a["Message"])
	}
	// Beginning a label in use answers LABEL_ALREADY_EXISTS and rolls the
	// running transaction back.
	want(t, op(t, f, "begin", multi(f, "r1"), ""), "Status", "LABEL_ALREADY_EXISTS", "ExistingJobStatus", "RUNNING")
	if s := f.LabelState("r1"); s != "ABORTED" {
		t.Errorf("state %s after a begin reused the label, want ABORTED", s)
	}
	// An aborted transaction's label may be used again.
	want(t, op(t, f, "begin", multi(f, "r1"), ""), "Status", "OK")
	want(t, op(t, f, "rollback", multi(f, "r1"), ""), "Status", "OK")
	want(t, op(t, f, "load", jsonLoad(f, "r1", "orders", "id"), `[{"id":1}]`), "Status", "TXN_NOT_EXISTS")
}

// TestTxnInProcessing: a second load of one (label, table) while the first
// is in flight is refused as TXN_IN_PROCESSING; another table is not.
func TestTxnInProcessing(t *testing.T) {
	f, _ := newFake(t, ordersDDL, itemsDDL)
	op(t, f, "begin", multi(f, "p1"), "")
	reading := make(chan string, 10)
	f.mu.Lock()
	f.loadReading = reading
	f.mu.Unlock()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, f.BEURL()+"/api/transaction/load", pr)
	req.SetBasicAuth("root", "")
	for k, v := range jsonLoad(f, "p1", "orders", "id,__op") {
		req.Header.Set(k, v)
	}
	done := make(chan map[string]any)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- map[string]any{"error": err.Error()}
			return
		}
		defer resp.Body.Close()
		var a map[string]any
		json.NewDecoder(resp.Body).Decode(&a)
		done <- a
	}()
	if got := <-reading; got != "p1/orders" {
		t.Fatalf("reading %s", got)
	}
	io.WriteString(pw, `[{"id":1,"__op":0}`)
	a := op(t, f, "load", jsonLoad(f, "p1", "orders", "id,__op"), `[{"id":2}]`)
	want(t, a, "Status", "TXN_IN_PROCESSING", "Label", "p1")
	want(t, op(t, f, "load", jsonLoad(f, "p1", "items", "order_id,line"), `[{"order_id":1,"line":1}]`), "Status", "OK")
	want(t, op(t, f, "commit", multi(f, "p1"), ""), "Status", "FAILED")
	io.WriteString(pw, `]`)
	pw.Close()
	want(t, <-done, "Status", "OK")
	want(t, op(t, f, "load", jsonLoad(f, "p1", "orders", "id,__op"), `[{"id":2}]`), "Status", "OK")
	want(t, op(t, f, "commit", multi(f, "p1"), ""), "Status", "OK")
	if n := count(t, f, "SELECT COUNT(*) FROM orders"); n != 2 {
		t.Fatalf("%d orders, want 2", n)
	}
}

// TestTimeouts: timeout and idle_transaction_timeout abort on the fake's
// clock; a commit then finds no transaction.
func TestTimeouts(t *testing.T) {
	f, clk := newFake(t, ordersDDL)
	op(t, f, "begin", multi(f, "t1", "timeout", "10"), "")
	op(t, f, "begin", multi(f, "t2", "idle_transaction_timeout", "3"), "")
	op(t, f, "begin", multi(f, "t3"), "")
	clk.Advance(4 * time.Second)
	if s := f.LabelState("t2"); s != "ABORTED" {
		t.Errorf("idle t2: %s, want ABORTED", s)
	}
	if s := f.LabelState("t1"); s != "PREPARE" {
		t.Errorf("t1 before its timeout: %s, want PREPARE", s)
	}
	clk.Advance(7 * time.Second)
	if s := f.LabelState("t1"); s != "ABORTED" {
		t.Errorf("t1 after its timeout: %s, want ABORTED", s)
	}
	a := op(t, f, "commit", multi(f, "t1"), "")
	if !strings.HasPrefix(str(a["Message"]), "TXN_NOT_EXISTS") {
		t.Errorf("commit after timeout: %v, want TXN_NOT_EXISTS", a)
	}
	clk.Advance(590 * time.Second) // the default 600s
	if s := f.LabelState("t3"); s != "ABORTED" {
		t.Errorf("t3 after the default timeout: %s, want ABORTED", s)
	}
}

// TestValues: VARCHAR lengths in bytes, strict-mode filtering with an
// ErrorURL naming the row, the failed load aborting its transaction;
// without strict mode an unqualified value becomes NULL.
func TestValues(t *testing.T) {
	f, _ := newFake(t, ordersDDL)
	cases := []struct {
		name, body, strict, ratio string
		status, loaded, filter    string
	}{
		{"4 bytes fit VARCHAR(4)", `[{"id":1,"note":"abcd"}]`, "true", "", "OK", "1", "0"},
		{"2 characters of 6 bytes do not", `[{"id":1,"note":"日本"}]`, "true", "", "INTERNAL_ERROR", "", "1"},
		{"DECIMAL overflow", `[{"id":1,"total":"123456789.00"}]`, "true", "", "INTERNAL_ERROR", "", "1"},
		{"NULL key", `[{"id":null}]`, "true", "", "INTERNAL_ERROR", "", "1"},
		{"non-strict: unqualified becomes NULL", `[{"id":1,"note":"日本"}]`, "false", "", "OK", "1", "0"},
		{"max_filter_ratio lets one of two go", `[{"id":1,"note":"日本"},{"id":2}]`, "true", "0.5", "OK", "1", "1"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			label := "v" + string(rune('a'+i))
			op(t, f, "begin", multi(f, label), "")
			h := jsonLoad(f, label, "orders", "id,note,total")
			h["strict_mode"] = c.strict
			if c.ratio != "" {
				h["max_filter_ratio"] = c.ratio
			}
			a := op(t, f, "load", h, c.body)
			want(t, a, "Status", c.status, "NumberFilteredRows", c.filter)
			if c.status == "OK" {
				want(t, a, "NumberLoadedRows", c.loaded)
				op(t, f, "rollback", multi(f, label), "")
				return
			}
			if s := f.LabelState(label); s != "ABORTED" {
				t.Errorf("state %s after a failed load, want ABORTED", s)
			}
			resp, err := http.Get(str(a["ErrorURL"]))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("ErrorURL %v: %v", a["ErrorURL"], err)
			}
			log, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(log), "Row: {") {
				t.Errorf("error log does not name the row: %s", log)
			}
		})
	}
}

// TestDeletesOnlyIntoPrimaryKeyTables: a load naming __op into a Duplicate
// Key table fails and aborts its transaction.
func TestDeletesOnlyIntoPrimaryKeyTables(t *testing.T) {
	f, _ := newFake(t, eventsDDL)
	op(t, f, "begin", multi(f, "d1"), "")
	a := op(t, f, "load", jsonLoad(f, "d1", "events", "id,what,__op"), `[{"id":1,"__op":1}]`)
	want(t, a, "Status", "INVALID_ARGUMENT")
	if !strings.Contains(str(a["Message"]), "Primary Key") {
		t.Errorf("message %q does not say why", a["Message"])
	}
	// Without __op a Duplicate Key table appends every row.
	op(t, f, "begin", multi(f, "d2"), "")
	op(t, f, "load", jsonLoad(f, "d2", "events", "id,what"), `[{"id":1,"what":"a"},{"id":1,"what":"a"}]`)
	op(t, f, "commit", multi(f, "d2"), "")
	if n := count(t, f, "SELECT COUNT(*) FROM events"); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// TestFaults: a dropped commit answer leaves the work done; 503 and a
// leader change leave it undone.
func TestFaults(t *testing.T) {
	f, _ := newFake(t, ordersDDL)
	op(t, f, "begin", multi(f, "f1"), "")
	op(t, f, "load", jsonLoad(f, "f1", "orders", "id"), `[{"id":1}]`)
	f.Inject(OpCommit, HTTP503, LeaderChange, DropAnswer)
	if code, _ := call(t, f, http.MethodPost, f.URL()+"/api/transaction/commit", multi(f, "f1"), ""); code != 503 {
		t.Fatalf("HTTP %d, want the injected 503", code)
	}
	want(t, op(t, f, "commit", multi(f, "f1"), ""), "Status", "FAILED")
	if s := f.LabelState("f1"); s != "PREPARE" {
		t.Fatalf("state %s after 503 and leader change, want PREPARE", s)
	}
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/api/transaction/commit", nil)
	req.SetBasicAuth("root", "")
	for k, v := range multi(f, "f1") {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the dropped answer arrived")
	}
	if s := f.LabelState("f1"); s != "VISIBLE" {
		t.Fatalf("state %s after the dropped answer, want VISIBLE", s)
	}
}

// TestCatalogAndDDL: the catalog holds StarRocks' spellings; bad DDL is
// refused.
func TestCatalogAndDDL(t *testing.T) {
	f, _ := newFake(t, ordersDDL, eventsDDL)
	var model, pk string
	q := "SELECT TABLE_MODEL, PRIMARY_KEY FROM " + f.CatalogSchema() + ".tables_config WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"
	if err := f.SQL().QueryRow(q, f.Database(), "orders").Scan(&model, &pk); err != nil || model != "PRI_KEYS" || pk != "`id`" {
		t.Fatalf("orders: %q %q %v", model, pk, err)
	}
	if err := f.SQL().QueryRow(q, f.Database(), "events").Scan(&model, &pk); err != nil || model != "DUP_KEYS" || pk != "" {
		t.Fatalf("events: %q %q %v", model, pk, err)
	}
	var ct string
	var n int
	if err := f.SQL().QueryRow("SELECT COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH FROM "+f.CatalogSchema()+".columns WHERE TABLE_NAME = 'orders' AND COLUMN_NAME = 'note'").Scan(&ct, &n); err != nil || ct != "varchar(4)" || n != 4 {
		t.Fatalf("orders.note: %q %d %v", ct, n, err)
	}
	for _, bad := range []string{
		"CREATE TABLE b (id INT, d DECIMAL(39,2)) PRIMARY KEY (id)",
		"CREATE TABLE b (v INT, id INT) PRIMARY KEY (id)",
		"CREATE TABLE b (id INT, v INT) AGGREGATE KEY (id)",
		"CREATE TABLE b (id INT) PRIMARY KEY (nope)",
		"INSERT INTO orders VALUES (1)",
	} {
		if err := f.Exec(context.Background(), bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestPlainStreamLoad: the plain stream load answers Success, then Label
// Already Exists for the same label.
func TestPlainStreamLoad(t *testing.T) {
	f, _ := newFake(t, readFile(t, "table1.sql"))
	url := f.URL() + "/api/" + f.Database() + "/table1/_stream_load"
	h := map[string]string{"label": "s1", "column_separator": ","}
	_, a := call(t, f, http.MethodPut, url, h, readFile(t, "example1.csv"))
	want(t, a, "Status", "Success", "Message", "OK", "NumberLoadedRows", "4")
	_, a = call(t, f, http.MethodPut, url, h, readFile(t, "example1.csv"))
	want(t, a, "Status", "Label Already Exists", "ExistingJobStatus", "FINISHED")
	_, a = call(t, f, http.MethodPut, url, map[string]string{"label": "s2", "column_separator": ","}, "5,x\n")
	want(t, a, "Status", "Fail", "Message", "too many filtered rows")
}

// rows reads q's rows as "a|b" lines.
func rows(t *testing.T, f *Fake, q string) string {
	t.Helper()
	return sinktest.Rows(t, f.SQL(), q)
}

// TestDocumentedConditionalUpdate runs the documentation's example of
// conditional updates (table5, example5.csv, merge_condition: version): a
// row replaces the stored one only when its version is greater or equal.
func TestDocumentedConditionalUpdate(t *testing.T) {
	f, _ := newFake(t, "CREATE TABLE `table5` (`id` int(11) NOT NULL COMMENT \"user ID\", `version` int NOT NULL COMMENT \"version\", "+
		"`score` int(11) NOT NULL COMMENT \"user score\") ENGINE=OLAP PRIMARY KEY(`id`) DISTRIBUTED BY HASH(`id`)",
		"INSERT INTO table5 VALUES (101, 2, 80), (102, 2, 90)")
	url := f.URL() + "/api/" + f.Database() + "/table5/_stream_load"
	_, a := call(t, f, http.MethodPut, url, map[string]string{"label": "label10", "column_separator": ",", "merge_condition": "version"}, "101,1,100\n102,3,100\n")
	want(t, a, "Status", "Success")
	if got := rows(t, f, "SELECT id, version, score FROM table5 ORDER BY id"); got != "101|2|80\n102|3|100" {
		t.Errorf("table5 =\n%s\nwant the documentation's 101|2|80 and 102|3|100", got)
	}
}

// TestDocumentedPartialUpdate runs the documentation's example of partial
// updates (table4, example4.csv, partial_update: true, columns id,name): a
// stored row keeps the columns the load does not carry; a row not stored
// is inserted with them at their defaults (a NOT NULL INT without one: 0).
func TestDocumentedPartialUpdate(t *testing.T) {
	f, _ := newFake(t, "CREATE TABLE `table4` (`id` int(11) NOT NULL COMMENT \"user ID\", `name` varchar(65533) NOT NULL COMMENT \"user name\", "+
		"`score` int(11) NOT NULL COMMENT \"user score\") ENGINE=OLAP PRIMARY KEY(`id`) DISTRIBUTED BY HASH(`id`)",
		"INSERT INTO table4 VALUES (101, 'Tom', 80)")
	url := f.URL() + "/api/" + f.Database() + "/table4/_stream_load"
	_, a := call(t, f, http.MethodPut, url, map[string]string{"label": "label7", "column_separator": ",", "partial_update": "true", "columns": "id,name"}, "101,Lily\n102,Rose\n103,Alice\n")
	want(t, a, "Status", "Success")
	if got := rows(t, f, "SELECT id, name, score FROM table4 ORDER BY id"); got != "101|Lily|80\n102|Rose|0\n103|Alice|0" {
		t.Errorf("table4 =\n%s\nwant the documentation's 101|Lily|80, 102|Rose|0, 103|Alice|0", got)
	}
}

// TestConditionsInTransactions: merge_condition and partial_update in a
// multi-table transaction, load by load: an equal version replaces, a
// delete is not conditioned (as documented), a partial update with a
// condition changes only its columns and only when not older, a partial
// row not stored takes the columns' DEFAULT or NULL; refused are a
// condition on a key column or a missing column, either header into a
// table that is not a Primary Key table, and a partial update whose
// columns lack a key column or the condition column.
func TestConditionsInTransactions(t *testing.T) {
	f, _ := newFake(t, "CREATE TABLE v (id INT NOT NULL, ver BIGINT NOT NULL, a VARCHAR(10), b INT DEFAULT \"7\") PRIMARY KEY (id) DISTRIBUTED BY HASH(id)",
		"CREATE TABLE d (id INT NOT NULL, ver BIGINT) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)",
		"INSERT INTO v VALUES (1, 5, 'one', 1), (2, 5, 'two', 2), (3, 5, 'three', 3), (4, 5, 'four', 4)")
	db := f.Database()
	begin := func(label string) {
		t.Helper()
		want(t, op(t, f, "begin", map[string]string{"label": label, "db": db, "transaction_type": "multi"}, ""), "Status", "OK")
	}
	load := func(label, table string, h map[string]string, body string) map[string]any {
		t.Helper()
		hh := map[string]string{"label": label, "db": db, "table": table, "transaction_type": "multi", "format": "json", "strip_outer_array": "true", "strict_mode": "true"}
		for k, v := range h {
			hh[k] = v
		}
		return op(t, f, "load", hh, body)
	}
	commit := func(label string) {
		t.Helper()
		want(t, op(t, f, "commit", map[string]string{"label": label, "db": db, "transaction_type": "multi"}, ""), "Status", "OK")
	}
	begin("t1")
	want(t, load("t1", "v", map[string]string{"merge_condition": "ver", "columns": "id,ver,a,b,__op"},
		`[{"id":1,"ver":5,"a":"one-eq","b":10,"__op":0},{"id":2,"ver":4,"a":"two-old","b":20,"__op":0},{"id":3,"ver":1,"__op":1},{"id":9,"ver":1,"a":"new","b":90,"__op":0}]`), "Status", "OK")
	want(t, load("t1", "v", map[string]string{"merge_condition": "ver", "partial_update": "true", "columns": "id,ver,a"},
		`[{"id":4,"ver":6,"a":"four-new"},{"id":1,"ver":1,"a":"one-old"},{"id":8,"ver":1,"a":"eight"}]`), "Status", "OK")
	commit("t1")
	got := rows(t, f, "SELECT id, ver, a, b FROM v ORDER BY id")
	if want := "1|5|one-eq|10\n2|5|two|2\n4|6|four-new|4\n8|1|eight|7\n9|1|new|90"; got != want {
		t.Errorf("v =\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct {
		name, table string
		h           map[string]string
		msg         string
	}{
		{"a key column", "v", map[string]string{"merge_condition": "id"}, "key column"},
		{"no such column", "v", map[string]string{"merge_condition": "nope"}, "no column nope"},
		{"a Duplicate Key table", "d", map[string]string{"merge_condition": "ver"}, "Primary Key tables only"},
		{"partial into a Duplicate Key table", "d", map[string]string{"partial_update": "true", "columns": "id,ver"}, "Primary Key tables only"},
		{"partial without the key", "v", map[string]string{"partial_update": "true", "columns": "ver,a"}, "key column id"},
		{"partial without the condition", "v", map[string]string{"partial_update": "true", "merge_condition": "ver", "columns": "id,a"}, "merge_condition column ver"},
		{"partial without columns", "v", map[string]string{"partial_update": "true"}, "columns header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			label := "bad-" + strings.ReplaceAll(c.name, " ", "-")
			begin(label)
			a := load(label, c.table, c.h, `[{"id":1,"ver":9,"a":"x"}]`)
			if str(a["Status"]) == "OK" || !strings.Contains(str(a["Message"]), c.msg) {
				t.Errorf("load: %v, want a refusal saying %q", a, c.msg)
			}
		})
	}
}

// TestLoadsOfOneLabelApplyInOrder: the loads of one transaction into one
// table apply in the order they were sent, as StarRocks applies a
// transaction's loads: a key upserted by one load, deleted by the next
// and upserted by a third ends with the third's row; a partial_update
// load changes the row an earlier load of the same transaction wrote,
// keeping that load's other columns. (The autonomous flush of txsink
// streams a commit's parts as loads of one label and relies on this.)
func TestLoadsOfOneLabelApplyInOrder(t *testing.T) {
	f, _ := newFake(t, ordersDDL)
	op(t, f, "begin", multi(f, "o1"), "")
	for _, body := range []string{
		`[{"id":1,"note":"a","total":"1.00","__op":0},{"id":2,"note":"b","total":"2.00","__op":0}]`,
		`[{"id":1,"__op":1}]`,
		`[{"id":1,"note":"c","total":"3.00","__op":0}]`,
	} {
		want(t, op(t, f, "load", jsonLoad(f, "o1", "orders", "id,note,total,__op"), body), "Status", "OK")
	}
	want(t, op(t, f, "load", multi(f, "o1", "table", "orders", "format", "json", "strip_outer_array", "true", "columns", "id,note", "partial_update", "true"),
		`[{"id":2,"note":"z"}]`), "Status", "OK")
	if got := rows(t, f, "SELECT id, note, total FROM orders ORDER BY id"); got != "" {
		t.Fatalf("orders in the open transaction =\n%s\nwant nothing visible", got)
	}
	want(t, op(t, f, "commit", multi(f, "o1"), ""), "Status", "OK")
	if got := rows(t, f, "SELECT id, note, total FROM orders ORDER BY id"); got != "1|c|3\n2|z|2" {
		t.Errorf("orders =\n%s\nwant 1|c|3 and 2|z|2 (totals 3.00 and 2.00)", got)
	}
}
