package starrocks

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/sink/starrocks/starrocksfake"
)

// TestCode maps every documented spelling of a status to its code.
func TestCode(t *testing.T) {
	for _, c := range []struct{ status, message, want string }{
		{"OK", "", CodeOK},
		{"Success", "OK", CodeOK},
		{"OK", "Transaction already commited", CodeOK},
		{"LABEL_ALREADY_EXISTS", "Label [l] has already been used.", CodeLabelAlreadyExists},
		{"Label Already Exists", "", CodeLabelAlreadyExists},
		{"TXN_NOT_EXISTS", "", CodeTxnNotExists},
		{"FAILED", "TXN_NOT_EXISTS", CodeTxnNotExists},
		{"FAILED", "Transcation Not Exist", CodeTxnNotExists},
		{"TXN_IN_PROCESSING", "Transaction is in processing", CodeTxnInProcessing},
		{"FAILED", "TXN_IN_PROCESSING: Transaction is in processing", CodeTxnInProcessing},
		{"Publish Timeout", "", CodePublishTimeout},
		{"FAILED", "publish timeout", CodePublishTimeout},
		{"FAILED", "commit timeout", CodeFailed},
		{"Fail", "too many filtered rows", CodeFailed},
		{"INVALID_ARGUMENT", "", CodeInvalidArgument},
		{"FAILED", "", CodeFailed},
		{"INTERNAL_ERROR", "x", "INTERNAL_ERROR"},
	} {
		if got := Code(c.status, c.message); got != c.want {
			t.Errorf("Code(%q, %q) = %q, want %q", c.status, c.message, got, c.want)
		}
	}
}

const (
	ordersDDL = "CREATE TABLE orders (id BIGINT NOT NULL, note VARCHAR(8), total DECIMAL(10,2)) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)"
	itemsDDL  = "CREATE TABLE items (order_id BIGINT NOT NULL, line INT NOT NULL, sku VARCHAR(16)) PRIMARY KEY (order_id, line) DISTRIBUTED BY HASH(order_id)"
	eventsDDL = "CREATE TABLE events (id BIGINT NOT NULL, what VARCHAR(20)) DUPLICATE KEY (id) DISTRIBUTED BY HASH(id)"
)

var (
	orderCols = []string{"id", "note", "total", "__op"}
	itemCols  = []string{"order_id", "line", "sku", "__op"}
)

func begin(t *testing.T, c *Client, label string) *Txn {
	t.Helper()
	x, err := c.Begin(context.Background(), label)
	if err != nil {
		t.Fatalf("begin %s: %v", label, err)
	}
	return x
}

func load(t *testing.T, x *Txn, table string, cols []string, rows string) LoadResult {
	t.Helper()
	res, err := x.Load(context.Background(), table, cols, []byte(rows))
	if err != nil {
		t.Fatalf("load %s: %v", table, err)
	}
	return res
}

// TestTransaction: two tables under one label are invisible until the
// commit, then visible together; deletes by key.
func TestTransaction(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, ordersDDL, itemsDDL)
	c := cl.client(t)
	ctx := context.Background()
	x := begin(t, c, "tx1")
	if x.ID == 0 {
		t.Error("no transaction id")
	}
	if res := load(t, x, "orders", orderCols, `[{"id":1,"note":"a","total":"1.50","__op":0},{"id":2,"note":"b","total":"2","__op":0}]`); res.Loaded != 2 {
		t.Errorf("loaded %d, want 2", res.Loaded)
	}
	load(t, x, "items", itemCols, `[{"order_id":1,"line":1,"sku":"s1","__op":0},{"order_id":2,"line":1,"sku":"s2","__op":0}]`)
	if n := cl.count(t, "SELECT (SELECT COUNT(*) FROM orders) + (SELECT COUNT(*) FROM items)"); n != 0 {
		t.Fatalf("%d rows visible before the commit", n)
	}
	if err := x.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := cl.count(t, "SELECT (SELECT COUNT(*) FROM orders) * 10 + (SELECT COUNT(*) FROM items)"); n != 22 {
		t.Fatalf("orders*10+items = %d, want 22", n)
	}
	if s, err := c.LoadState(ctx, "tx1"); err != nil || !Committed(s) {
		t.Fatalf("state %q, %v; want committed", s, err)
	}
	x = begin(t, c, "tx2")
	load(t, x, "orders", orderCols, `[{"id":1,"__op":1}]`)
	if err := x.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
		t.Fatalf("%d orders after the delete, want 1", n)
	}
}

// TestLabels: a committed label cannot begin again; a rolled back one can;
// rolling back a label with no open transaction is not an error.
func TestLabels(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, ordersDDL)
	c := cl.client(t)
	ctx := context.Background()
	x := begin(t, c, "l1")
	load(t, x, "orders", orderCols, `[{"id":1,"__op":0}]`)
	if err := x.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := c.Begin(ctx, "l1")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeLabelAlreadyExists || errkind.Of(err) != errkind.Permanent {
		t.Fatalf("begin on a committed label: %v, want a permanent LABEL_ALREADY_EXISTS", err)
	}
	if !strings.Contains(err.Error(), "l1") {
		t.Errorf("error %q does not name the label", err)
	}
	x = begin(t, c, "l2")
	if err := x.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.LoadState(ctx, "l2"); s != "ABORTED" {
		t.Errorf("state %s after rollback, want ABORTED", s)
	}
	if err := c.Rollback(ctx, "never-begun"); err != nil {
		t.Errorf("rollback of an unknown label: %v", err)
	}
	begin(t, c, "l2") // an aborted label is free again
	if err := c.Rollback(ctx, "l2"); err != nil {
		t.Fatal(err)
	}
}

// TestRefusals: a row the server filters is BadInput naming the table and
// carrying the server's log of the row; __op into a Duplicate Key table
// is permanent; both abort the transaction.
func TestRefusals(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, ordersDDL, eventsDDL)
	c := cl.client(t)
	ctx := context.Background()
	x := begin(t, c, "r1")
	_, err := x.Load(ctx, "orders", orderCols, []byte(`[{"id":1,"note":"ünïcödé","__op":0}]`)) // 7 characters, 11 bytes
	if errkind.Of(err) != errkind.BadInput {
		t.Fatalf("a VARCHAR(8) value of 11 bytes: %v, want bad input", err)
	}
	t.Logf("a refused row reads: %v", err)
	if w, _ := errkind.WhereOf(err); w.Table != "orders" {
		t.Errorf("Where().Table = %q", w.Table)
	}
	var e *Error
	if errors.As(err, &e); e.ErrorURL == "" {
		t.Errorf("no ErrorURL in %v", err)
	}
	if cl.fake != nil && !strings.Contains(err.Error(), "ünïcödé") {
		t.Errorf("error %q does not show the row", err)
	}
	if err := x.Commit(ctx); errkind.Of(err) != errkind.Transient {
		t.Errorf("commit after a failed load: %v, want transient (the transaction is gone)", err)
	}
	x = begin(t, c, "r2")
	_, err = x.Load(ctx, "events", []string{"id", "what", "__op"}, []byte(`[{"id":1,"__op":1}]`))
	if err == nil || errkind.Of(err) == errkind.Transient {
		t.Fatalf("__op into a Duplicate Key table: %v, want a refusal", err)
	}
	bad := cl.client(t, func(c *Config) { c.Password = "wrong" })
	_, err = bad.Begin(ctx, "r3")
	if !errors.As(err, &e) || e.HTTPStatus != 401 || errkind.Of(err) != errkind.Permanent {
		t.Errorf("wrong password: %v, want a permanent HTTP 401", err)
	}
}

// TestCommitResolvedByLabelState: a lost commit answer and a FAILED
// "publish timeout" answer of a commit that landed are both a commit; a
// 503 before the commit is not, and leaves it to be retried.
func TestCommitResolvedByLabelState(t *testing.T) {
	cl := newCluster(t)
	f := cl.needFake(t)
	cl.ddl(t, ordersDDL)
	c := cl.client(t)
	ctx := context.Background()
	for i, fault := range []starrocksfake.Fault{starrocksfake.DropAnswer, starrocksfake.PublishTimeout} {
		label := []string{"lost", "publish"}[i]
		x := begin(t, c, label)
		load(t, x, "orders", orderCols, `[{"id":`+string(rune('1'+i))+`,"__op":0}]`)
		f.Inject(starrocksfake.OpCommit, fault)
		if err := x.Commit(ctx); err != nil {
			t.Fatalf("%s: %v, want a commit", label, err)
		}
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM orders"); n != 2 {
		t.Fatalf("%d orders, want 2", n)
	}
	x := begin(t, c, "unavailable")
	load(t, x, "orders", orderCols, `[{"id":9,"__op":0}]`)
	f.Inject(starrocksfake.OpCommit, starrocksfake.HTTP503)
	err := x.Commit(ctx)
	var e *Error
	if !errors.As(err, &e) || errkind.Of(err) != errkind.Transient || e.State != "PREPARE" {
		t.Fatalf("commit meeting a 503: %v, want transient with the state PREPARE", err)
	}
	if err := x.Commit(ctx); err != nil {
		t.Fatalf("commit again: %v", err)
	}
}

// TestTimedOutTransaction: a transaction the server aborted for its
// timeout fails the commit as transient, with the label's state.
func TestTimedOutTransaction(t *testing.T) {
	cl := newCluster(t)
	cl.needFake(t)
	cl.ddl(t, ordersDDL)
	c := cl.client(t)
	x := begin(t, c, "slow")
	load(t, x, "orders", orderCols, `[{"id":1,"__op":0}]`)
	cl.clock.Advance(c.cfg.TxnTimeout + 1)
	err := x.Commit(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTxnNotExists || e.State != "ABORTED" || errkind.Of(err) != errkind.Transient {
		t.Fatalf("commit after the timeout: %v, want transient TXN_NOT_EXISTS with the state ABORTED", err)
	}
}

// TestInProcessingRetried: a load answered TXN_IN_PROCESSING is retried
// after a backoff on the client's clock.
func TestInProcessingRetried(t *testing.T) {
	cl := newCluster(t)
	f := cl.needFake(t)
	cl.ddl(t, ordersDDL)
	c := cl.client(t)
	x := begin(t, c, "busy")
	f.Inject(starrocksfake.OpLoad, starrocksfake.InProcessing, starrocksfake.InProcessing)
	done := make(chan error, 1)
	go func() {
		_, err := x.Load(context.Background(), "orders", orderCols, []byte(`[{"id":1,"__op":0}]`))
		done <- err
	}()
	for range 2 {
		if _, err := cl.clock.AwaitTimer(context.Background()); err != nil {
			t.Fatal(err)
		}
		cl.clock.Advance(c.cfg.TxnTimeout / 100) // past any backoff, short of the transaction's timeout
	}
	if err := <-done; err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := x.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFailover: an FE that does not answer is passed over for the next.
func TestFailover(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, ordersDDL)
	dead := httptest.NewServer(nil)
	dead.Close()
	c := cl.client(t, func(c *Config) { c.LoadURLs = []string{dead.URL, cl.loadURL} })
	x := begin(t, c, "fo")
	load(t, x, "orders", orderCols, `[{"id":1,"__op":0}]`)
	if err := x.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
		t.Fatalf("%d orders, want 1", n)
	}
}

// TestRequestsAsDocumented: what the client sends is what the
// documentation's curl examples send.
func TestRequestsAsDocumented(t *testing.T) {
	cl := newCluster(t)
	f := cl.needFake(t)
	cl.ddl(t, ordersDDL)
	c := cl.client(t)
	x := begin(t, c, "doc")
	load(t, x, "orders", orderCols, `[{"id":1,"__op":0}]`)
	if err := x.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	var be, fe int
	for _, r := range f.Requests() {
		if r.Header.Get("Authorization") == "" || r.Header.Get("transaction_type") != "multi" || r.Header.Get("label") != "doc" || r.Header.Get("db") != cl.db {
			t.Errorf("%s %s %s: headers %v", r.Role, r.Method, r.Path, r.Header)
		}
		if strings.HasSuffix(r.Path, "/load") {
			if r.Role == "BE" {
				be++
			}
			for k, v := range map[string]string{"table": "orders", "format": "json", "strip_outer_array": "true", "strict_mode": "true",
				"max_filter_ratio": "0", "columns": "id,note,total,__op", "Expect": "100-continue"} {
				if r.Header.Get(k) != v {
					t.Errorf("load header %s = %q, want %q", k, r.Header.Get(k), v)
				}
			}
		} else if r.Role == "FE" {
			fe++
		}
	}
	if be != 1 || fe != 2 {
		t.Errorf("%d loads reached the BE and %d begin/commit the FE; want 1 and 2", be, fe)
	}
}

// TestLoadNeverSentTwice: a load whose answer is lost is not sent again to
// the next FE (its rows would be added twice): the error is transient and
// the transaction is redone by the caller.
func TestLoadNeverSentTwice(t *testing.T) {
	cl := newCluster(t)
	f := cl.needFake(t)
	cl.ddl(t, eventsDDL)
	c := cl.client(t, func(c *Config) { c.LoadURLs = []string{cl.loadURL, cl.loadURL} })
	x := begin(t, c, "once")
	f.Inject(starrocksfake.OpLoad, starrocksfake.DropAnswer)
	_, err := x.Load(context.Background(), "events", []string{"id", "what"}, []byte(`[{"id":1,"what":"a"}]`))
	if errkind.Of(err) != errkind.Transient {
		t.Fatalf("a lost load answer: %v, want transient", err)
	}
	if err := x.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM events"); n != 1 {
		t.Fatalf("%d events, want 1: the load was sent twice", n)
	}
}
