package starrocksfake

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// txn is one transaction of the fake.
type txn struct {
	id       int64
	label    string
	multi    bool
	table    string // a single-table transaction's table
	state    string
	begun    time.Time
	active   time.Time
	prepared time.Time
	timeout  time.Duration
	idle     time.Duration
	prepTO   time.Duration
	reason   string
	order    []string
	ops      map[string][]rowOp
	inflight map[string]bool
	total    int64
	loaded   int64
	filtered int64
	bytes    int64
}

type rowOp struct {
	del  bool
	vals []any // by table column; a delete's non-key values are nil
	// mode is how the upserts of the row's load meet the stored rows;
	// nil for a plain load (the row replaces the stored one).
	mode *loadMode
}

// loadMode is what a load's merge_condition and partial_update headers
// ask of its upserts.
type loadMode struct {
	// cond is the merge_condition column: a row replaces the stored
	// row of its key only when its value there is greater than or equal
	// to the stored one. Deletes are not conditioned.
	cond string
	// set, for partial_update: true, marks the columns the load carries
	// (the columns header): a stored row keeps the others; a row not
	// stored is inserted with them at their DEFAULT, NULL or the type's
	// zero.
	set []bool
}

func seconds(h string, def time.Duration) (time.Duration, error) {
	if h == "" {
		return def, nil
	}
	n, err := strconv.Atoi(h)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a number of seconds", h)
	}
	return time.Duration(n) * time.Second, nil
}

// expireLocked aborts transactions past their timeouts.
func (f *Fake) expireLocked() {
	now := f.opt.Clock.Now()
	for _, x := range f.labels {
		switch {
		case x.state == "PREPARE" && x.timeout > 0 && now.Sub(x.begun) > x.timeout:
			x.abort("the transaction timed out")
		case x.state == "PREPARE" && x.idle > 0 && len(x.inflight) == 0 && now.Sub(x.active) > x.idle:
			x.abort("the transaction was idle too long")
		case x.state == "PREPARED" && now.Sub(x.prepared) > x.prepTO:
			x.abort("the prepared transaction timed out")
		}
	}
}

func (x *txn) abort(reason string) {
	x.state, x.reason, x.ops, x.order = "ABORTED", reason, nil, nil
}

// fail is a non-OK answer: the status code name, or "FAILED" with the code
// in the message when the FE answers.
func fail(role, code, msg string, x *txn) answer {
	a := answer{"Status": code, "Message": msg}
	if role == "FE" && code != "LABEL_ALREADY_EXISTS" {
		a["Status"], a["Message"] = "FAILED", code+": "+msg
	}
	if x != nil {
		a["Label"], a["TxnId"] = x.label, x.id
	}
	return a
}

func (f *Fake) checkDB(r *http.Request) string {
	switch db := r.Header.Get("db"); {
	case db == "":
		return "No database selected: the db header is missing"
	case db != f.dbName():
		return "Database " + db + " does not exist"
	}
	return ""
}

// txnOp handles begin, prepare, commit and rollback.
func (f *Fake) txnOp(role string, op Op, r *http.Request, multi bool) answer {
	label := r.Header.Get("label")
	if label == "" {
		return fail(role, "INVALID_ARGUMENT", "No label: the label header is missing", nil)
	}
	if msg := f.checkDB(r); msg != "" {
		return fail(role, "INVALID_ARGUMENT", msg, nil)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expireLocked()
	now := f.opt.Clock.Now()
	x := f.labels[label]
	if op == OpBegin {
		return f.beginLocked(role, r, label, multi, x, now)
	}
	if x == nil || x.state == "ABORTED" {
		return fail(role, "TXN_NOT_EXISTS", "Transaction with label "+label+" does not exist", x)
	}
	if x.multi != multi {
		return fail(role, "INVALID_ARGUMENT", "transaction "+label+" was begun with transaction_type "+ttype(x.multi)+", not "+ttype(multi), x)
	}
	switch op {
	case OpPrepare:
		switch {
		case x.state == "PREPARED":
			return counts(x, answer{"Status": "OK", "Message": "", "Label": label, "TxnId": x.id})
		case x.state != "PREPARE":
			return fail(role, "INVALID_ARGUMENT", "Transcation State Invalid: "+x.state, x)
		case len(x.inflight) > 0:
			return fail(role, "TXN_IN_PROCESSING", "Transaction is in processing", x)
		}
		d, err := seconds(r.Header.Get("prepared_timeout"), 86400*time.Second)
		if err != nil {
			return fail(role, "INVALID_ARGUMENT", "prepared_timeout: "+err.Error(), x)
		}
		x.state, x.prepared, x.prepTO = "PREPARED", now, d
		return counts(x, answer{"Status": "OK", "Message": "", "Label": label, "TxnId": x.id})
	case OpCommit:
		switch {
		case x.state == "VISIBLE":
			return answer{"Status": "OK", "Message": "Transaction already commited", "Label": label, "TxnId": x.id}
		case len(x.inflight) > 0:
			return fail(role, "TXN_IN_PROCESSING", "Transaction is in processing", x)
		}
		if err := f.applyLocked(x); err != nil {
			x.abort(err.Error())
			return fail(role, "INTERNAL_ERROR", "commit failed, the transaction is aborted: "+err.Error(), x)
		}
		x.state = "VISIBLE"
		a := counts(x, answer{"Status": "OK", "Message": "", "Label": label, "TxnId": x.id})
		x.ops = nil
		return a
	default: // rollback
		switch {
		case x.state == "VISIBLE":
			return fail(role, "INVALID_ARGUMENT", "Transaction "+label+" is already VISIBLE and cannot be rolled back", x)
		case len(x.inflight) > 0:
			return fail(role, "TXN_IN_PROCESSING", "Transaction is in processing", x)
		}
		x.abort("rolled back")
		return answer{"Status": "OK", "Message": "", "Label": label, "TxnId": x.id}
	}
}

func ttype(multi bool) string {
	if multi {
		return "multi"
	}
	return "(single table)"
}

func counts(x *txn, a answer) answer {
	a["NumberTotalRows"], a["NumberLoadedRows"], a["NumberFilteredRows"], a["NumberUnselectedRows"] = x.total, x.loaded, x.filtered, 0
	a["LoadBytes"], a["LoadTimeMs"], a["StreamLoadPlanTimeMs"], a["ReceivedDataTimeMs"], a["WriteDataTimeMs"], a["CommitAndPublishTimeMs"] = x.bytes, 0, 0, 0, 0, 0
	return a
}

func (f *Fake) beginLocked(role string, r *http.Request, label string, multi bool, x *txn, now time.Time) answer {
	if x != nil && x.state != "ABORTED" {
		status := "FINISHED"
		if x.state == "PREPARE" || x.state == "PREPARED" {
			status = "RUNNING"
		}
		if x.state == "PREPARE" {
			// "If you use the label of a transaction in progress to begin a
			// new one, the previous transaction fails and is rolled back."
			x.abort("a begin reused its label")
		}
		return answer{"Status": "LABEL_ALREADY_EXISTS", "ExistingJobStatus": status, "Message": "Label [" + label + "] has already been used."}
	}
	table := r.Header.Get("table")
	if !multi {
		if table == "" {
			return fail(role, "INVALID_ARGUMENT", "the table header is missing (a single-table transaction names its table; send transaction_type: multi for several)", nil)
		}
		if _, ok := f.tables[table]; !ok {
			return fail(role, "INVALID_ARGUMENT", "Table "+table+" does not exist", nil)
		}
	}
	timeout, err := seconds(r.Header.Get("timeout"), f.opt.DefaultTimeout)
	if err != nil {
		return fail(role, "INVALID_ARGUMENT", "timeout: "+err.Error(), nil)
	}
	idle, err := seconds(r.Header.Get("idle_transaction_timeout"), 0)
	if err != nil {
		return fail(role, "INVALID_ARGUMENT", "idle_transaction_timeout: "+err.Error(), nil)
	}
	f.nextTxn++
	nx := &txn{id: f.nextTxn, label: label, multi: multi, state: "PREPARE", begun: now, active: now, timeout: timeout, idle: idle,
		ops: map[string][]rowOp{}, inflight: map[string]bool{}}
	if !multi {
		nx.table = table
	}
	f.labels[label] = nx
	return answer{"Status": "OK", "Message": "", "Label": label, "TxnId": nx.id, "BeginTxnTimeMs": 0}
}

func (f *Fake) loadState(r *http.Request) answer {
	db := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/"), "/get_load_state")
	if db != f.dbName() {
		return answer{"Status": "FAILED", "Message": "Database " + db + " does not exist"}
	}
	label := r.URL.Query().Get("label")
	if label == "" {
		return answer{"Status": "FAILED", "Message": "No label"}
	}
	return answer{"Status": "OK", "Message": "", "State": f.LabelState(label)}
}

// load handles PUT /api/transaction/load on the BE.
func (f *Fake) load(r *http.Request, multi bool) answer {
	label, table := r.Header.Get("label"), r.Header.Get("table")
	if label == "" {
		return fail("BE", "INVALID_ARGUMENT", "No label: the label header is missing", nil)
	}
	if msg := f.checkDB(r); msg != "" {
		return fail("BE", "INVALID_ARGUMENT", msg, nil)
	}
	f.mu.Lock()
	f.expireLocked()
	x := f.labels[label]
	t := f.tables[table]
	var bad answer
	switch {
	case x == nil || x.state == "ABORTED":
		bad = fail("BE", "TXN_NOT_EXISTS", "Transaction with label "+label+" does not exist", x)
	case x.multi != multi:
		bad = fail("BE", "INVALID_ARGUMENT", "transaction "+label+" was begun with transaction_type "+ttype(x.multi)+", not "+ttype(multi), x)
	case x.state != "PREPARE":
		bad = fail("BE", "INVALID_ARGUMENT", "Transcation State Invalid: "+x.state, x)
	case table == "":
		bad = fail("BE", "INVALID_ARGUMENT", "the table header is missing", x)
	case t == nil:
		bad = fail("BE", "INVALID_ARGUMENT", "Table "+table+" does not exist", x)
	case !multi && table != x.table:
		bad = fail("BE", "INVALID_ARGUMENT", "transaction "+label+" is for table "+x.table+", not "+table+"; send transaction_type: multi to load several tables", x)
	case x.inflight[table]:
		a := fail("BE", "TXN_IN_PROCESSING", "Transaction is in processing", x)
		a["Label"] = label
		f.mu.Unlock()
		return a
	}
	if bad != nil {
		f.mu.Unlock()
		return bad
	}
	x.inflight[table] = true
	reading := f.loadReading
	f.mu.Unlock()
	if reading != nil {
		reading <- label + "/" + table
	}

	body, rerr := io.ReadAll(r.Body)
	res, perr := parseLoad(t, r.Header, body)

	took := false
	defer func() {
		// Deferred before the unlock, so run after it.
		if took && f.opt.Loaded != nil {
			f.opt.Loaded(label, table)
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(x.inflight, table)
	x.active = f.opt.Clock.Now()
	if x.state != "PREPARE" { // timed out or rolled back meanwhile
		return fail("BE", "TXN_NOT_EXISTS", "Transaction with label "+label+" is "+x.state+": "+x.reason, x)
	}
	if rerr != nil {
		x.abort("reading the load failed: " + rerr.Error())
		return fail("BE", "INTERNAL_ERROR", "reading the load body failed: "+rerr.Error()+"; the transaction is aborted", x)
	}
	if perr != nil {
		x.abort(perr.Error())
		return fail("BE", "INVALID_ARGUMENT", perr.Error()+"; the transaction is aborted", x)
	}
	x.total += res.total
	x.filtered += int64(len(res.errors))
	x.bytes += int64(len(body))
	if res.tooManyFiltered() {
		x.abort("too many filtered rows")
		a := fail("BE", "INTERNAL_ERROR", "too many filtered rows; the transaction is aborted", x)
		a["NumberTotalRows"], a["NumberFilteredRows"] = res.total, len(res.errors)
		a["ErrorURL"] = f.errorLogLocked(x, res.errors)
		return a
	}
	if _, seen := x.ops[table]; !seen {
		x.order = append(x.order, table)
	}
	x.ops[table] = append(x.ops[table], res.ops...)
	x.loaded += int64(len(res.ops))
	a := answer{"Status": "OK", "Message": "", "Label": label, "TxnId": x.id, "Seq": 0,
		"NumberTotalRows": res.total, "NumberLoadedRows": len(res.ops), "NumberFilteredRows": len(res.errors), "NumberUnselectedRows": 0,
		"LoadBytes": len(body), "StreamLoadPlanTimeMs": 0, "ReceivedDataTimeMs": 0}
	if len(res.errors) > 0 {
		a["ErrorURL"] = f.errorLogLocked(x, res.errors)
	}
	took = true
	return a
}

// streamLoad handles a plain stream load: one load, its own transaction.
func (f *Fake) streamLoad(r *http.Request) answer {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // api, db, table, _stream_load
	if len(parts) != 4 {
		return answer{"Status": "Fail", "Message": "bad path " + r.URL.Path}
	}
	db, table := parts[1], parts[2]
	if db != f.dbName() {
		return answer{"Status": "Fail", "Message": "Database " + db + " does not exist"}
	}
	label := r.Header.Get("label")
	f.mu.Lock()
	if label == "" {
		label = fmt.Sprintf("fake_stream_load_%d", f.nextTxn+1)
	}
	if x := f.labels[label]; x != nil && x.state != "ABORTED" {
		status := "FINISHED"
		if x.state != "VISIBLE" {
			status = "RUNNING"
		}
		f.mu.Unlock()
		return answer{"Status": "Label Already Exists", "ExistingJobStatus": status, "Label": label, "TxnId": x.id, "Message": "Label [" + label + "] has already been used."}
	}
	t := f.tables[table]
	if t == nil {
		f.mu.Unlock()
		return answer{"Status": "Fail", "Label": label, "Message": "Table " + table + " does not exist"}
	}
	f.nextTxn++
	x := &txn{id: f.nextTxn, label: label, state: "PREPARE", table: table, ops: map[string][]rowOp{}, inflight: map[string]bool{}}
	f.labels[label] = x
	f.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	res, perr := parseLoad(t, r.Header, body)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := answer{"TxnId": x.id, "Label": label, "NumberTotalRows": res.total, "NumberLoadedRows": len(res.ops),
		"NumberFilteredRows": len(res.errors), "NumberUnselectedRows": 0, "LoadBytes": len(body)}
	failWith := func(msg string) answer {
		x.abort(msg)
		out["Status"], out["Message"] = "Fail", msg
		return out
	}
	switch {
	case err != nil:
		return failWith(err.Error())
	case perr != nil:
		return failWith(perr.Error())
	case res.tooManyFiltered():
		out["ErrorURL"] = f.errorLogLocked(x, res.errors)
		return failWith("too many filtered rows")
	}
	x.ops[table], x.order = res.ops, []string{table}
	if err := f.applyLocked(x); err != nil {
		return failWith(err.Error())
	}
	x.state, x.ops = "VISIBLE", nil
	out["Status"], out["Message"] = "Success", "OK"
	return out
}

// applyLocked makes x's rows visible: one MariaDB transaction, so a reader
// sees all of x or none of it.
func (f *Fake) applyLocked(x *txn) error {
	ctx := context.Background()
	tx, err := f.data.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, name := range x.order {
		t := f.tables[name]
		if t == nil {
			return fmt.Errorf("table %s was dropped", name)
		}
		cols := make([]string, len(t.Columns))
		for i := range t.Columns {
			cols[i] = t.Columns[i].Name
		}
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
		head := "INSERT INTO " + quote(name) + " (" + quoteList(cols) + ")"
		var where []string
		for _, k := range t.Key {
			where = append(where, quote(k)+" = ?")
		}
		del := "DELETE FROM " + quote(name) + " WHERE " + strings.Join(where, " AND ")
		// Runs of upserts of one load go as multi-row statements, which
		// MariaDB applies in order (the last row of a key wins, as in a
		// load); deletes go one by one, keeping their place between them.
		ops := x.ops[name]
		for i := 0; i < len(ops); {
			if ops[i].del {
				if _, err := tx.ExecContext(ctx, del, ops[i].vals[:len(t.Key)]...); err != nil {
					return fmt.Errorf("table %s: %w", name, err)
				}
				i++
				continue
			}
			j := i
			var args []any
			for j < len(ops) && !ops[j].del && ops[j].mode == ops[i].mode && j-i < 500 {
				args = append(args, ops[j].vals...)
				j++
			}
			ins, onDup := head, onDuplicate(t, ops[i].mode)
			if onDup == "" && t.Model != DuplicateKeys {
				ins = strings.Replace(ins, "INSERT", "INSERT IGNORE", 1)
			}
			stmt := ins + " VALUES " + strings.TrimSuffix(strings.Repeat("("+ph+"), ", j-i), ", ") + onDup
			if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
				return fmt.Errorf("table %s: %w", name, err)
			}
			i = j
		}
	}
	return tx.Commit()
}

// onDuplicate is the ON DUPLICATE KEY UPDATE clause that gives an upsert
// of t under mode StarRocks' effect on a stored row of its key: replaced
// (a Primary Key or Unique Key table), aggregated (an Aggregate table),
// only where the load carries columns (partial_update), and only when the
// row's merge_condition column is not less than the stored one. NULL, on
// which the documentation is silent, is taken as older than any value.
// MariaDB assigns left to right, each assignment seeing the ones before,
// so the condition column is assigned last. "" for a Duplicate Key table,
// which appends, and for a table whose columns are all key columns.
func onDuplicate(t *Table, mode *loadMode) string {
	if t.Model == DuplicateKeys {
		return ""
	}
	cond := ""
	if mode != nil && mode.cond != "" {
		q := quote(mode.cond)
		cond = "(" + q + " IS NULL OR VALUES(" + q + ") >= " + q + ")"
	}
	var upd []string
	var last string
	for i, c := range t.Columns {
		if c.Key || mode != nil && mode.set != nil && !mode.set[i] {
			continue
		}
		q := quote(c.Name)
		var v string
		switch c.Agg {
		case "SUM":
			v = q + " + VALUES(" + q + ")"
		case "MAX":
			v = "GREATEST(" + q + ", VALUES(" + q + "))"
		case "MIN":
			v = "LEAST(" + q + ", VALUES(" + q + "))"
		default:
			v = "VALUES(" + q + ")"
		}
		if cond != "" {
			v = "IF(" + cond + ", " + v + ", " + q + ")"
		}
		if mode != nil && c.Name == mode.cond {
			last = q + " = " + v
			continue
		}
		upd = append(upd, q+" = "+v)
	}
	if last != "" {
		upd = append(upd, last)
	}
	if len(upd) == 0 {
		return ""
	}
	return " ON DUPLICATE KEY UPDATE " + strings.Join(upd, ", ")
}

// errorLogLocked keeps the lines of x's filtered rows and returns the
// ErrorURL that serves them.
func (f *Fake) errorLogLocked(x *txn, lines []string) string {
	name := fmt.Sprintf("error_log_%d_%d", x.id, len(f.errLogs))
	f.errLogs[name] = strings.Join(lines, "\n") + "\n"
	return f.be.URL + "/api/_load_error_log?file=" + name
}
