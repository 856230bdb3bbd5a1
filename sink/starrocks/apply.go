package starrocks

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Apply writes u as one multi-table transaction under the label
// Label(pipeline, owner, seq): first the parts of u (commit.Unit.Parts)
// the transaction Stream left open lacks — all of them, in a new
// transaction, when none is open, when it holds other parts, or when a
// part failed — then u's own rows, each part as Stream loads one: per
// table one load at a time (deletes first, with __op = 1, then the rows,
// with __op = 0; a group of rows that carries fewer columns than the
// table is a load of its own, whose columns header leaves the others to
// their defaults), then its dead letters (DeadLetterLoad); then the
// progress load, then the claims check (see Claim), then COMMIT. A load
// refused for TXN_IN_PROCESSING is retried; a commit answer that is not
// OK or does not arrive is resolved through the label's state. On any
// error the transaction is rolled back (or was aborted by the server) and
// nothing of u is visible — except when the commit's outcome stayed
// unknown, which Committed resolves.
func (t *Target) Apply(ctx context.Context, u *commit.Unit) error {
	for _, b := range u.Batches {
		if b.Truncate {
			// A stream load cannot empty a table in its transaction (not
			// a sink.Truncater): refused before anything is sent.
			return &sink.Error{Op: "truncate", Table: b.Table.String(), Pos: b.TruncatePos.String(), At: b.TruncatePos,
				Err:  errors.New("a StarRocks target cannot empty a table inside a unit's transaction"),
				Hint: "set source.truncate: refuse (and empty the target table yourself when the source truncates it), or use a target that applies TRUNCATE (MariaDB/MySQL, PostgreSQL, SQLite)"}
		}
	}
	var unclaimed []string
	for _, p := range u.Progress {
		if _, ok := t.epochs[claimKey(u.Pipeline, p.Partition)]; !ok {
			unclaimed = append(unclaimed, p.Partition)
		}
	}
	if len(unclaimed) > 0 {
		if _, err := t.Claim(ctx, u.Pipeline, unclaimed); err != nil {
			return err
		}
	}
	x, loaded := t.takeShared(ctx, u)
	if x == nil {
		var err error
		if x, err = t.begin(ctx, u.Pipeline); err != nil {
			return err
		}
	}
	label := x.Label
	done := false
	defer func() {
		if !done {
			// The rollback's own error is not interesting next to the
			// unit's: the server aborts the transaction at its timeout.
			_ = x.Rollback(context.WithoutCancel(ctx))
		}
	}()
	for i := loaded; i < len(u.Parts); i++ {
		if err := t.loadPart(ctx, x, u.Parts[:i], u.Parts[i]); err != nil {
			return err
		}
	}
	if err := t.loadPart(ctx, x, u.Parts, u); err != nil {
		return err
	}
	if len(u.Progress) > 0 {
		epochs := make(map[string]int64, len(u.Progress))
		for _, p := range u.Progress {
			epochs[p.Partition] = t.epochs[claimKey(u.Pipeline, p.Partition)]
		}
		pl, err := ProgressLoad(u.Pipeline, label, u.Progress, epochs, u.Marks, t.clock.Now())
		if err != nil {
			return &sink.Error{Op: "write progress", Table: ProgressTable, Err: err}
		}
		if _, err := x.Load(ctx, ProgressTable, pl.Columns, pl.Body); err != nil {
			return t.wrap("write progress", ProgressTable, err)
		}
	}
	if err := t.checkOwner(ctx, u.Pipeline, u.Progress); err != nil {
		return err
	}
	faults := fault.From(ctx)
	if faults != nil && faults.BeforeCommit != nil {
		if err := faults.BeforeCommit(u); err != nil {
			return err
		}
	}
	if err := x.Commit(ctx); err != nil {
		var se *Error
		if errors.As(err, &se) && se.State == "" {
			// Neither the commit's answer nor the label's state arrived:
			// Committed finds out.
			done = true
			t.unsure[u.Pipeline] = unsureCommit{label: label, progress: slices.Clone(u.Progress)}
			return t.wrap("commit", "", err)
		}
		if ferr := t.checkOwner(ctx, u.Pipeline, u.Progress); ferr != nil {
			// A claim aborted the transaction: this instance is fenced.
			return ferr
		}
		return t.wrap("commit", "", err)
	}
	done = true
	delete(t.unsure, u.Pipeline)
	if faults != nil && faults.AfterCommit != nil {
		if err := faults.AfterCommit(u); err != nil {
			t.unsure[u.Pipeline] = unsureCommit{label: label, progress: slices.Clone(u.Progress)}
			return &sink.Error{Op: "commit", Transient: true, Err: err}
		}
	}
	return nil
}

// begin opens a multi-table transaction under the pipeline's next label,
// claiming the pipeline first when this instance has no label namespace
// for it yet.
func (t *Target) begin(ctx context.Context, pipeline string) (*Txn, error) {
	owner := t.owner[pipeline]
	if owner == 0 {
		// Partitions were claimed through another pipeline's name only.
		if _, err := t.Claim(ctx, pipeline, nil); err != nil {
			return nil, err
		}
		owner = t.owner[pipeline]
	}
	label := Label(pipeline, owner, t.seq[pipeline]+1)
	x, err := t.client.Begin(ctx, label)
	if err != nil {
		var se *Error
		if errors.As(err, &se) && (se.Code == CodeLabelAlreadyExists || se.Code == CodeOK) {
			// The label is known to the server (an earlier begin whose
			// answer was lost): the next unit takes the next one.
			t.seq[pipeline]++
		}
		return nil, t.wrap("begin", "", err)
	}
	// The server knows the label now: the next unit takes the next, so an
	// instance's labels have no gaps (see abortLingering).
	t.seq[pipeline]++
	return x, nil
}

// loadPart loads part's batches and dead letters into x, after the parts
// in earlier, which x holds already.
func (t *Target) loadPart(ctx context.Context, x *Txn, earlier []*commit.Unit, part *commit.Unit) error {
	for _, b := range part.Batches {
		if err := t.loadBatch(ctx, x, b, earlier); err != nil {
			return err
		}
	}
	if len(part.DeadLetters) > 0 {
		dl, err := DeadLetterLoad(part.Pipeline, x.Label, part.DeadLetters, t.clock.Now())
		if err != nil {
			return &sink.Error{Op: "write dead letters", Table: DeadLetterTable, Err: err}
		}
		if _, err := x.Load(ctx, DeadLetterTable, dl.Columns, dl.Body); err != nil {
			return t.wrap("write dead letters", DeadLetterTable, err)
		}
	}
	return nil
}

// loadBatch sends one table's part of a unit, one load at a time, after
// the parts in earlier, which x holds already (their rows decide the
// look-ups of stored rows that soft deletes and partial images need).
func (t *Target) loadBatch(ctx context.Context, x *Txn, b *commit.Batch, earlier []*commit.Unit) error {
	tbl, err := t.table(ctx, b.Table)
	if err != nil {
		return err
	}
	var known map[string]bool
	if len(earlier) > 0 && (b.Rules.SoftDelete != "" && len(b.Deletes) > 0 || hasPartial(b)) {
		known = loadedKeys(earlier, tbl)
	}
	if b.Rules.SoftDelete != "" && len(b.Deletes) > 0 {
		if b, err = t.softDeletes(ctx, tbl, b, known); err != nil {
			return err
		}
	}
	for _, part := range split(tbl, b) {
		view := part.table
		ld, err := EncodeBatch(view, part.batch)
		if err != nil {
			return rowError(err, b.Table.Name)
		}
		if ld.Rows == 0 {
			continue
		}
		if ld.Options.PartialUpdate {
			if err := t.requireRows(ctx, tbl, part.batch.Upserts[0], known); err != nil {
				return err
			}
		}
		if _, err := x.LoadWith(ctx, tbl.Name, ld.Columns, ld.Body, ld.Options); err != nil {
			return t.loadError(ctx, view, part.batch, err)
		}
	}
	return nil
}

func hasPartial(b *commit.Batch) bool {
	for _, g := range b.Upserts {
		if g.Partial {
			return true
		}
	}
	return false
}

// batchPart is a part of a batch loaded alone: the deletes and the rows
// that carry every column, or one group that carries fewer (of new rows
// whose other columns take their defaults, or a partial update's, whose
// other columns keep their stored values), with the table seen as having
// those columns only.
type batchPart struct {
	table *Table
	batch *commit.Batch
}

func split(tbl *Table, b *commit.Batch) []batchPart {
	full := &commit.Batch{Table: b.Table, Rules: b.Rules, Deletes: b.Deletes, DeletePos: b.DeletePos, DeleteVersions: b.DeleteVersions, SoftValues: b.SoftValues}
	parts := []batchPart{{tbl, full}}
	for _, kind := range []bool{false, true} {
		groups := b.Upserts
		if kind {
			groups = b.Inserts
		}
		for _, g := range groups {
			if len(g.Columns) == len(tbl.Columns) && !g.Partial {
				if kind {
					full.Inserts = append(full.Inserts, g)
				} else {
					full.Upserts = append(full.Upserts, g)
				}
				continue
			}
			view := *tbl
			view.Columns = nil
			for _, c := range tbl.Columns {
				if slices.Contains(g.Columns, c.Name) {
					view.Columns = append(view.Columns, c)
				}
			}
			nb := &commit.Batch{Table: b.Table, Rules: b.Rules}
			if kind {
				nb.Inserts = []commit.Group{g}
			} else {
				nb.Upserts = []commit.Group{g}
			}
			parts = append(parts, batchPart{&view, nb})
		}
	}
	return parts
}

// rowError turns EncodeBatch's refusal into a sink error naming the row.
func rowError(err error, table string) error {
	var re *RowError
	if !errors.As(err, &re) {
		return &sink.Error{Op: "write", Table: table, Err: err}
	}
	e := &sink.Error{Op: "write", Table: table, Key: re.Key, Err: err, Refused: re.Kind() == errkind.BadInput,
		Hint: "nothing of this flush was committed"}
	if re.Pos.Partition != "" {
		e.Pos, e.At = re.Pos.String(), re.Pos
	}
	return e
}

// loadError is the error of a failed load. When the server filtered rows
// (strict mode: a value StarRocks refuses that txsink let through), the
// row at fault is found by bisection, each half loaded in a transaction
// of its own that is always rolled back, and named with its key and
// position.
func (t *Target) loadError(ctx context.Context, tbl *Table, b *commit.Batch, err error) error {
	var se *Error
	if !errors.As(err, &se) || se.Kind() != errkind.BadInput {
		return t.wrap("write", tbl.Name, err)
	}
	rows := flatten(b)
	lo, hi := 0, len(rows)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		bad, perr := t.probeRows(ctx, tbl, rows[lo:mid])
		if perr != nil {
			break
		}
		if bad {
			hi = mid
		} else {
			lo = mid
		}
	}
	e := &sink.Error{Op: "write", Table: tbl.Name, Err: reasonOnly{se},
		Hint: "the target refused this row; fix the value at the source or the target table's definition, then run again (nothing of this flush was committed)"}
	if hi-lo == 1 && len(rows) > 0 {
		r := rows[lo]
		e.Key, e.Pos, e.At, e.Refused = r.key, r.pos.String(), r.pos, r.pos.Partition != ""
	}
	return e
}

// oneRow is one row of a batch, alone.
type oneRow struct {
	batch *commit.Batch
	key   string
	pos   changelog.Position
}

func flatten(b *commit.Batch) []oneRow {
	var out []oneRow
	for i, k := range b.Deletes {
		r := oneRow{batch: &commit.Batch{Table: b.Table, Rules: b.Rules, Deletes: [][]any{k}}, key: renderKey(k)}
		if i < len(b.DeletePos) {
			r.pos = b.DeletePos[i]
			r.batch.DeletePos = []changelog.Position{r.pos}
		}
		if i < len(b.DeleteVersions) {
			r.batch.DeleteVersions = []any{b.DeleteVersions[i]}
		}
		if i < len(b.SoftValues) {
			r.batch.SoftValues = []any{b.SoftValues[i]}
		}
		out = append(out, r)
	}
	for _, kind := range []bool{false, true} {
		groups := b.Upserts
		if kind {
			groups = b.Inserts
		}
		for _, g := range groups {
			for i, row := range g.Rows {
				one := commit.Group{Columns: g.Columns, Rows: [][]any{row}, Partial: g.Partial}
				r := oneRow{key: keyOf(b.Table, g.Columns, row)}
				if i < len(g.Pos) {
					r.pos = g.Pos[i]
					one.Pos = []changelog.Position{r.pos}
				}
				nb := &commit.Batch{Table: b.Table, Rules: b.Rules}
				if kind {
					nb.Inserts = []commit.Group{one}
				} else {
					nb.Upserts = []commit.Group{one}
				}
				r.batch = nb
				out = append(out, r)
			}
		}
	}
	return out
}

func keyOf(t *schema.Table, cols []string, row []any) string {
	var kv []any
	for _, k := range t.PrimaryKey {
		if i := slices.Index(cols, k); i >= 0 {
			kv = append(kv, row[i])
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return renderKey(kv)
}

// probeRows loads rows in a transaction of their own, always rolled back,
// and reports whether the server refused them.
func (t *Target) probeRows(ctx context.Context, tbl *Table, rows []oneRow) (bool, error) {
	t.seq["\x00probe"]++
	x, err := t.client.Begin(ctx, fmt.Sprintf("txsink-probe-%s-%d", nameID(fmt.Sprint(t.clock.Now().UnixNano()))[:12], t.seq["\x00probe"]))
	if err != nil {
		return false, err
	}
	defer x.Rollback(context.WithoutCancel(ctx))
	for _, r := range rows {
		ld, err := EncodeBatch(tbl, r.batch)
		if err != nil {
			return true, nil
		}
		if _, err := x.LoadWith(ctx, tbl.Name, ld.Columns, ld.Body, ld.Options); err != nil {
			var se *Error
			if errors.As(err, &se) && se.Kind() == errkind.BadInput {
				return true, nil
			}
			return false, err
		}
	}
	return false, nil
}

// wrap turns a client error into a sink error, transient when the client
// says a retry of the transaction may cure it.
func (t *Target) wrap(op, table string, err error) error {
	var se *Error
	e := &sink.Error{Op: op, Table: table, Err: err}
	if errors.As(err, &se) {
		// The sink error says what to do, once: the client's error is
		// told by its reason.
		e.Err = reasonOnly{se}
		switch se.Kind() {
		case errkind.Transient:
			e.Transient = true
		case errkind.BadInput:
			e.Hint = "the server refused rows: fix the input or the table, then run again (nothing of this flush was committed)"
		}
		if table == "" {
			e.Table = se.Table
		}
	}
	return e
}

// Committed reports whether u is in the target. After a commit whose
// outcome stayed unknown, the label's state answers (COMMITTED or VISIBLE:
// it landed; an open transaction is rolled back first, then it did not);
// otherwise the progress rows do. It fails with ErrFenced when another
// instance claimed a partition of u.
func (t *Target) Committed(ctx context.Context, u *commit.Unit) (bool, error) {
	if len(u.Progress) == 0 {
		return false, nil
	}
	for _, p := range u.Progress {
		if _, ok := t.epochs[claimKey(u.Pipeline, p.Partition)]; !ok {
			// Apply failed before claiming it: nothing of u was sent.
			return false, nil
		}
	}
	if err := t.checkOwner(ctx, u.Pipeline, u.Progress); err != nil {
		return false, err
	}
	if us, ok := t.unsure[u.Pipeline]; ok && slices.Equal(us.progress, u.Progress) {
		state, err := t.client.LoadState(ctx, us.label)
		if err != nil {
			return false, t.wrap("read the commit's outcome", "", err)
		}
		switch {
		case Committed(state):
			if err := t.waitVisible(ctx, us.label); err != nil {
				return false, err
			}
			delete(t.unsure, u.Pipeline)
			return true, nil
		case state == "PREPARE" || state == "PREPARED":
			if err := t.client.Rollback(ctx, us.label); err != nil {
				return false, t.wrap("roll back the unsure commit", "", err)
			}
			return t.Committed(ctx, u)
		}
		delete(t.unsure, u.Pipeline)
		return false, nil
	}
	stored, err := ReadProgress(ctx, t.db, u.Pipeline)
	if err != nil {
		return false, &sink.Error{Op: "read progress", Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	for _, p := range u.Progress {
		if s, ok := stored[p.Partition]; !ok || s.Offset < p.Offset {
			return false, nil
		}
	}
	return true, nil
}
