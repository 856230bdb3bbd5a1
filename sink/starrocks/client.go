// Package starrocks is txsink's client of StarRocks' Stream Load
// transaction interface, multi-table mode (StarRocks >= 4.0): begin, load,
// commit and rollback of one transaction spanning the tables of one
// database, over net/http.
//
// What it guarantees:
//   - A commit is never taken on a non-OK answer's word, nor lost to a
//     missing answer: the label's state is read with get_load_state, and
//     COMMITTED or VISIBLE is a commit (as the StarRocks Flink connector
//     does). Commit reports success only when the server says OK or the
//     label's state says committed.
//   - Every documented spelling of a status is accepted (see Code).
//   - Failures are *Error values whose Kind (package errkind) says whether
//     a retry of the transaction may cure them (Transient), the server
//     refused rows (BadInput, with the server's error log), or the
//     pipeline must stop (Permanent).
//   - A load that meets TXN_IN_PROCESSING (another load of the same label
//     and table in flight) is retried with backoff on the client's clock.
//   - Redirects are followed with the credentials (curl's
//     --location-trusted), whatever the BE's host; several FE addresses
//     are tried in turn when one does not answer. A load or a begin is
//     never sent twice: after a lost answer it may have been done, so the
//     error is returned (transient: the transaction is redone).
//   - Loads send strict_mode: true and max_filter_ratio: 0, so the server
//     filters no row silently.
//
// It follows the API as StarRocks' v4.0 documentation describes it and is
// tested against package starrocksfake only, unless TXSINK_TEST_STARROCKS_URL
// points the tests at a real cluster.
package starrocks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/clock"
)

// Config says where the cluster is and how to talk to it.
type Config struct {
	// LoadURLs are the FEs' HTTP base URLs (http://fe:8030 or https://...),
	// tried in turn when one does not answer. At least one.
	LoadURLs []string
	// User and Password are sent as Basic auth on every request.
	User, Password string
	// Database is the one database the transactions load.
	Database string
	// HTTPClient sends the requests (TLS is configured on its Transport);
	// default a client with a 60s timeout. Its redirect policy is replaced.
	HTTPClient *http.Client
	// TxnTimeout is the begin's timeout header: the server aborts a
	// transaction not committed within it. Default 600s.
	TxnTimeout time.Duration
	// Clock times the retries of TXN_IN_PROCESSING and of get_load_state;
	// default clock.Real.
	Clock clock.Clock
	// Retries bounds those retries; default 8 (backoff 100ms doubling to 5s).
	Retries int
}

// Client sends transactions to one database. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client

	mu   sync.Mutex
	next int // index of the FE that answered last

	stats *stats
}

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	if len(cfg.LoadURLs) == 0 {
		return nil, errors.New("starrocks: no load URL: give the FE's http://host:8030")
	}
	for i, u := range cfg.LoadURLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("starrocks: load URL %q is not http(s)://host:port", u)
		}
		cfg.LoadURLs[i] = strings.TrimSuffix(u, "/")
	}
	if cfg.Database == "" {
		return nil, errors.New("starrocks: no database")
	}
	if cfg.TxnTimeout == 0 {
		cfg.TxnTimeout = 600 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real
	}
	if cfg.Retries == 0 {
		cfg.Retries = 8
	}
	hc := &http.Client{Timeout: 60 * time.Second}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	// Redirects are followed by do, which keeps the credentials and the body.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{cfg: cfg, http: hc, stats: newStats()}, nil
}

// reply is a decoded answer. TxnId is a JSON number.
type reply struct {
	Status            string `json:"Status"`
	Message           string `json:"Message"`
	Label             string `json:"Label"`
	TxnID             int64  `json:"TxnId"`
	ExistingJobStatus string `json:"ExistingJobStatus"`
	State             string `json:"State"`
	ErrorURL          string `json:"ErrorURL"`
	NumberTotalRows   int64  `json:"NumberTotalRows"`
	NumberLoadedRows  int64  `json:"NumberLoadedRows"`
	NumberFiltered    int64  `json:"NumberFilteredRows"`
	LoadBytes         int64  `json:"LoadBytes"`
}

// request is one API call: the path under the FE, its method, headers and
// body.
type request struct {
	op, method, path string
	header           map[string]string
	body             []byte
	label, table     string
	// once marks a request that must not be sent twice: a load (its rows
	// would be added twice) and a begin (beginning a label in use rolls
	// its transaction back).
	once bool
}

// unsent reports a transport error that proves the request never left:
// the connection was not made.
func unsent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// do sends r to an FE, following redirects with the credentials, and
// decodes the answer. A transport error or HTTP 5xx moves on to the next
// FE, except for a request sent once, which moves on only when the
// connection was never made: after a lost answer it may have been done.
func (c *Client) do(ctx context.Context, r request) (*reply, *Error) {
	c.mu.Lock()
	start := c.next
	c.mu.Unlock()
	var last *Error
	for i := range c.cfg.LoadURLs {
		k := (start + i) % len(c.cfg.LoadURLs)
		rep, err := c.doAt(ctx, c.cfg.LoadURLs[k]+r.path, r)
		if err == nil || err.Err == nil && err.HTTPStatus < 500 || r.once && !unsent(err.Err) {
			c.mu.Lock()
			c.next = k
			c.mu.Unlock()
			return rep, err
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

func (c *Client) doAt(ctx context.Context, target string, r request) (*reply, *Error) {
	fail := func(status int, msg string, err error) *Error {
		return (&Error{Op: r.op, URL: target, Label: r.label, Table: r.table, HTTPStatus: status, Message: msg, Err: err}).classify()
	}
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, r.method, target, bytes.NewReader(r.body))
		if err != nil {
			return nil, fail(0, "", err)
		}
		req.SetBasicAuth(c.cfg.User, c.cfg.Password)
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		if r.method == http.MethodPut {
			// The BE refuses a bad load before the body is sent.
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, fail(0, "", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fail(0, "", err)
		}
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			loc, err := resp.Location()
			if err != nil || hop >= 3 {
				return nil, fail(resp.StatusCode, "a redirect without a usable Location, or too many", err)
			}
			target = loc.String()
			continue
		case http.StatusOK:
		default:
			return nil, fail(resp.StatusCode, strings.TrimSpace(string(body)), nil)
		}
		var rep reply
		if err := json.Unmarshal(body, &rep); err != nil {
			return nil, fail(resp.StatusCode, fmt.Sprintf("the answer is not the JSON expected (%v): %.200s", err, body), nil)
		}
		return &rep, nil
	}
}

// answerError is the error of a non-OK answer.
func (c *Client) answerError(ctx context.Context, r request, rep *reply) *Error {
	e := &Error{Op: r.op, Label: r.label, Table: r.table, HTTPStatus: 200, Status: rep.Status,
		Code: Code(rep.Status, rep.Message), Message: rep.Message, ErrorURL: rep.ErrorURL}
	if strings.HasPrefix(rep.ErrorURL, "http") {
		e.ErrorLog = c.errorLog(ctx, rep.ErrorURL)
	}
	return e.classify()
}

// errorLog fetches the start of a load's error log; an empty string when
// it cannot be had (the error then names its URL).
func (c *Client) errorLog(ctx context.Context, u string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ""
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return string(b)
}

// Txn is one open multi-table transaction.
type Txn struct {
	c *Client
	// Label is the transaction's label, unique in the database.
	Label string
	// ID is the server's transaction id.
	ID int64

	loads atomic.Int64 // loads the server accepted
}

func (c *Client) txnHeader(label string) map[string]string {
	return map[string]string{"label": label, "db": c.cfg.Database, "transaction_type": "multi"}
}

// Begin opens a multi-table transaction under label. When the label is
// taken the error's Code is LABEL_ALREADY_EXISTS and its Status the
// ExistingJobStatus (RUNNING, FINISHED, ...): the caller decides, usually
// by LoadState.
func (c *Client) Begin(ctx context.Context, label string) (*Txn, error) {
	h := c.txnHeader(label)
	h["timeout"] = strconv.Itoa(int(c.cfg.TxnTimeout / time.Second))
	r := request{op: "begin", method: http.MethodPost, path: "/api/transaction/begin", header: h, label: label, once: true}
	rep, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if Code(rep.Status, rep.Message) != CodeOK {
		e := c.answerError(ctx, r, rep)
		if e.Code == CodeLabelAlreadyExists && rep.ExistingJobStatus != "" {
			e.Message = "the label is taken, its job is " + rep.ExistingJobStatus + ": " + e.Message
		}
		return nil, e
	}
	return &Txn{c: c, Label: label, ID: rep.TxnID}, nil
}

// LoadResult is what the server counted of one load.
type LoadResult struct {
	Rows, Loaded, Filtered, Bytes int64
}

// LoadOptions are what a load asks of how its upserts meet the stored
// rows of a Primary Key table ("Change data through loading"); the zero
// value replaces them.
type LoadOptions struct {
	// MergeCondition (the merge_condition header) names a column that is
	// not a key column: an upsert replaces the stored row of its key only
	// when its value there is greater than or equal to the stored one. The
	// server does not condition deletes, and does not say which rows it
	// kept.
	MergeCondition string
	// PartialUpdate (partial_update: true, row mode) updates only the
	// columns the load names of a stored row; a row whose key is not
	// stored is inserted with the others at their defaults.
	PartialUpdate bool
}

// Load sends rows, a JSON array of objects, into table under the
// transaction. columns lists the object keys to take, __op among them for
// a Primary Key table's upserts (0) and deletes (1). A load meeting
// TXN_IN_PROCESSING is retried with backoff; a filtered row fails the load
// (and, on the server, the transaction) with a BadInput error carrying the
// server's error log.
func (t *Txn) Load(ctx context.Context, table string, columns []string, rows []byte) (LoadResult, error) {
	return t.LoadWith(ctx, table, columns, rows, LoadOptions{})
}

// LoadWith is Load with opt's headers.
func (t *Txn) LoadWith(ctx context.Context, table string, columns []string, rows []byte, opt LoadOptions) (LoadResult, error) {
	h := t.c.txnHeader(t.Label)
	if opt.MergeCondition != "" {
		h["merge_condition"] = opt.MergeCondition
	}
	if opt.PartialUpdate {
		h["partial_update"] = "true"
	}
	h["table"] = table
	h["format"] = "json"
	h["strip_outer_array"] = "true"
	h["strict_mode"] = "true"
	h["max_filter_ratio"] = "0"
	if len(columns) > 0 {
		h["columns"] = strings.Join(columns, ",")
	}
	r := request{op: "load", method: http.MethodPut, path: "/api/transaction/load", header: h, body: rows, label: t.Label, table: table, once: true}
	var res LoadResult
	err := t.c.retry(ctx, func() *Error {
		rep, err := t.c.do(ctx, r)
		if err != nil {
			return err
		}
		if Code(rep.Status, rep.Message) != CodeOK {
			return t.c.answerError(ctx, r, rep)
		}
		res = LoadResult{Rows: rep.NumberTotalRows, Loaded: rep.NumberLoadedRows, Filtered: rep.NumberFiltered, Bytes: int64(len(rows))}
		t.loads.Add(1)
		t.c.stats.load(len(rows))
		return nil
	}, func(e *Error) bool { return e.Code == CodeTxnInProcessing })
	return res, err
}

// retry runs f until it succeeds, fails with an error again does not
// accept, or the retries are spent; it waits between tries on the clock.
func (c *Client) retry(ctx context.Context, f func() *Error, again func(*Error) bool) error {
	wait := 100 * time.Millisecond
	for i := 0; ; i++ {
		err := f()
		if err == nil {
			return nil
		}
		if i >= c.cfg.Retries || !again(err) {
			return err
		}
		tm := c.cfg.Clock.NewTimer(wait)
		select {
		case <-tm.C():
		case <-ctx.Done():
			tm.Stop()
			return err
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// Commit commits the transaction. A non-OK answer or none at all is not
// believed: the label's state decides, COMMITTED or VISIBLE meaning the
// commit landed. An error therefore means the transaction did not commit,
// or (Code "" and State "" with a transport error in Err) that neither the
// commit nor the state could be read: the caller must find out later,
// through the label, before deciding.
func (t *Txn) Commit(ctx context.Context) error {
	r := request{op: "commit", method: http.MethodPost, path: "/api/transaction/commit", header: t.c.txnHeader(t.Label), label: t.Label}
	rep, err := t.c.do(ctx, r)
	if err == nil && Code(rep.Status, rep.Message) == CodeOK {
		t.c.stats.commit(int(t.loads.Load()))
		return nil
	}
	if err == nil {
		err = t.c.answerError(ctx, r, rep)
	}
	state, serr := t.c.LoadState(ctx, t.Label)
	if serr != nil {
		return err // the outcome is unknown: err is transient, the label decides later
	}
	if Committed(state) {
		t.c.stats.commit(int(t.loads.Load()))
		return nil
	}
	err.State = state
	return err
}

// Committed reports whether a get_load_state state means the transaction
// committed: COMMITTED (published soon) or VISIBLE.
func Committed(state string) bool {
	s := strings.ToUpper(state)
	return s == "COMMITTED" || s == "VISIBLE"
}

// Rollback aborts the transaction.
func (t *Txn) Rollback(ctx context.Context) error { return t.c.Rollback(ctx, t.Label) }

// Rollback aborts the open transaction under label, such as one an earlier
// run left behind. A label the server has no open transaction for
// (TXN_NOT_EXISTS) is not an error: there is nothing to abort.
func (c *Client) Rollback(ctx context.Context, label string) error {
	r := request{op: "rollback", method: http.MethodPost, path: "/api/transaction/rollback", header: c.txnHeader(label), label: label}
	rep, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	switch Code(rep.Status, rep.Message) {
	case CodeOK, CodeTxnNotExists:
		return nil
	}
	return c.answerError(ctx, r, rep)
}

// LoadState returns the state of label's transaction: PREPARE, PREPARED,
// COMMITTED, VISIBLE, ABORTED or UNKNOWN (no such label). A transport
// failure or 5xx is retried with backoff.
func (c *Client) LoadState(ctx context.Context, label string) (string, error) {
	r := request{op: "get_load_state", method: http.MethodGet,
		path: "/api/" + url.PathEscape(c.cfg.Database) + "/get_load_state?label=" + url.QueryEscape(label), label: label}
	var state string
	err := c.retry(ctx, func() *Error {
		rep, err := c.do(ctx, r)
		if err != nil {
			return err
		}
		if Code(rep.Status, rep.Message) != CodeOK || rep.State == "" {
			e := c.answerError(ctx, r, rep)
			if rep.State == "" && e.Code == CodeOK {
				e.Code, e.Message = CodeFailed, "the answer has no State"
				e.classify()
			}
			return e
		}
		state = strings.ToUpper(rep.State)
		c.stats.labelState(state)
		return nil
	}, func(e *Error) bool { return e.Err != nil || e.HTTPStatus >= 500 })
	return state, err
}
