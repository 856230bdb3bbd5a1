package starrocks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/sink"
)

// ClaimsTable holds the claims of each pipeline's partitions: which epoch
// owns each, and the pipeline's epoch counter (the row of partition "").
// Its name begins with txsink_progress, so no change can route into it
// (schema.Reserved).
const ClaimsTable = ProgressTable + "_claims"

// ClaimsDDL creates the claims table. Claims live apart from the progress
// rows because a StarRocks load replaces a whole row and has no
// conditional update of it: a claim that rewrote a progress row would race
// the commit of the owner it fences and could set the position back.
const ClaimsDDL = "CREATE TABLE IF NOT EXISTS " + ClaimsTable + " (" +
	"pipeline_id VARCHAR(32) NOT NULL, partition_id VARCHAR(32) NOT NULL, " +
	"pipeline VARCHAR(1024) NOT NULL, source_partition VARCHAR(4096) NOT NULL, " +
	"epoch BIGINT NOT NULL, owner BIGINT NOT NULL, updated_at DATETIME NOT NULL" +
	") PRIMARY KEY (pipeline_id, partition_id) DISTRIBUTED BY HASH(pipeline_id, partition_id)"

var claimColumns = []string{"pipeline_id", "partition_id", "pipeline", "source_partition", "epoch", "owner", "updated_at", "__op"}

// counter is the partition name of a pipeline's epoch counter row.
const counter = ""

// claimRow is one row of the claims table.
type claimRow struct {
	epoch int64 // the epoch that owns the partition (the counter: the last granted)
	owner int64 // the owner's label namespace (see Target.owner)
}

func claimKey(pipeline, partition string) string { return pipeline + "\x00" + partition }

func (t *Target) readClaims(ctx context.Context, pipeline string) (map[string]claimRow, error) {
	rows, err := t.db.QueryContext(ctx, "SELECT source_partition, epoch, owner FROM "+ClaimsTable+" WHERE pipeline_id = ? AND pipeline = ?", nameID(pipeline), pipeline)
	if err != nil {
		return nil, &sink.Error{Op: "read claims", Table: ClaimsTable, Err: err, Transient: isTransientSQL(err)}
	}
	defer rows.Close()
	out := map[string]claimRow{}
	for rows.Next() {
		var p string
		var r claimRow
		if err := rows.Scan(&p, &r.epoch, &r.owner); err != nil {
			return nil, &sink.Error{Op: "read claims", Table: ClaimsTable, Err: err}
		}
		out[p] = r
	}
	if err := rows.Err(); err != nil {
		return nil, &sink.Error{Op: "read claims", Table: ClaimsTable, Err: err, Transient: isTransientSQL(err)}
	}
	return out, nil
}

// Claim makes this instance the owner of partitions of pipeline and
// returns their stored positions. What it guarantees, exactly:
//
//  1. Each claim is granted a new epoch, greater than every earlier one of
//     the pipeline, by a committed transaction under the label
//     Label(pipeline, epoch, 0): StarRocks keeps labels unique in a
//     database, so no two claims are granted one epoch. The transaction
//     raises the pipeline's counter and sets each partition's owning
//     epoch in txsink_progress_claims.
//  2. Before committing a unit, Apply reads the claims of the unit's
//     partitions (committed state, over the MySQL protocol) inside the
//     unit's open transaction, and rolls the unit back with ErrFenced
//     when another epoch owns one of them: a unit begun after a claim
//     became visible never commits for the earlier owner.
//  3. After its claim is visible, Claim aborts the earlier owner's
//     lingering transaction: an instance's units run one at a time under
//     consecutive labels of its own (Label(pipeline, owner, 1, 2, ...)),
//     so the last label the server knows is found in a few
//     get_load_state calls from the one stored with the partition's
//     progress, and rolled back if still open. A unit of the earlier
//     owner that passed its check (2) before the claim therefore either
//     committed before the abort — and the positions Claim returns,
//     read after it, include it — or fails.
//
// What remains (not guaranteed): the search in (3) assumes the earlier
// owner's labels since its last commit of the partition are still known to
// the server, which forgets labels after label_keep_max_second (3 days by
// default); an owner that lost a partition, kept running for longer
// without committing it, and then commits a unit whose check ran before
// the claim could land that unit after the claim, and the new owner would
// apply its changes again (rows by key converge; a Duplicate Key table's
// inserts would be doubled). The progress rows themselves are never set
// back: a claim does not write them.
func (t *Target) Claim(ctx context.Context, pipeline string, partitions []string) (map[string]changelog.Position, error) {
	var last error
	tried := int64(0)
	for attempt := 0; attempt < 8; attempt++ {
		claims, err := t.readClaims(ctx, pipeline)
		if err != nil {
			return nil, err
		}
		next := claims[counter].epoch
		for _, r := range claims {
			next = max(next, r.epoch)
		}
		next = max(next+1, tried+1)
		tried = next
		err = t.grant(ctx, pipeline, partitions, next)
		if err == nil {
			return t.settle(ctx, pipeline, partitions, claims, next)
		}
		last = err
		var se *Error
		if !errors.As(err, &se) || se.Code != CodeLabelAlreadyExists && se.Code != CodeTxnNotExists {
			return nil, t.wrap("claim partitions", ClaimsTable, err)
		}
		// Another instance claims beside this one: the epoch is its, or
		// its begin under the same label aborted this claim. Wait and try
		// a later epoch.
		if err := t.sleep(ctx, time.Duration(attempt+1)*50*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return nil, &sink.Error{Op: "claim partitions", Table: ClaimsTable, Err: last, Transient: true}
}

// settle finishes a claim granted at epoch: it aborts the lingering
// transactions of the partitions' earlier owners (as claims, read before
// the grant, names them), records the epoch, and returns the positions
// stored now — after the aborts, so they include a unit of an earlier
// owner that committed before them.
func (t *Target) settle(ctx context.Context, pipeline string, partitions []string, claims map[string]claimRow, epoch int64) (map[string]changelog.Position, error) {
	for _, p := range partitions {
		if old, ok := claims[p]; ok && old.owner != 0 && old.owner != t.owner[pipeline] {
			if err := t.abortLingering(ctx, pipeline, p, old.owner); err != nil {
				return nil, err
			}
		}
		t.epochs[claimKey(pipeline, p)] = epoch
	}
	stored, err := ReadProgress(ctx, t.db, pipeline)
	if err != nil {
		return nil, &sink.Error{Op: "claim partitions", Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	out := make(map[string]changelog.Position, len(partitions))
	for _, p := range partitions {
		pos := stored[p].Position
		pos.Partition = p
		out[p] = pos
	}
	return out, nil
}

// grant commits the claim of partitions at epoch, and waits until it is
// visible (a check reads committed rows).
func (t *Target) grant(ctx context.Context, pipeline string, partitions []string, epoch int64) error {
	owner := t.owner[pipeline]
	if owner == 0 {
		// This instance's label namespace is the epoch of its first claim,
		// granted to no one else.
		owner = epoch
	}
	label := Label(pipeline, epoch, 0)
	x, err := t.client.Begin(ctx, label)
	if err != nil {
		return err
	}
	type row struct {
		PipelineID  string `json:"pipeline_id"`
		PartitionID string `json:"partition_id"`
		Pipeline    string `json:"pipeline"`
		Partition   string `json:"source_partition"`
		Epoch       int64  `json:"epoch"`
		Owner       int64  `json:"owner"`
		UpdatedAt   string `json:"updated_at"`
		Op          int    `json:"__op"`
	}
	now := t.clock.Now().UTC().Format("2006-01-02 15:04:05.999999")
	rows := []row{{nameID(pipeline), nameID(counter), pipeline, counter, epoch, 0, now, 0}}
	for _, p := range partitions {
		rows = append(rows, row{nameID(pipeline), nameID(p), pipeline, p, epoch, owner, now, 0})
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	if _, err := x.Load(ctx, ClaimsTable, claimColumns, body); err != nil {
		_ = x.Rollback(ctx)
		return err
	}
	if err := x.Commit(ctx); err != nil {
		// Not committed, or not known to be: an open claim is rolled back
		// rather than left to the server's timeout (a committed one
		// refuses the rollback, and the next claim passes over it).
		_ = x.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := t.waitVisible(ctx, label); err != nil {
		return err
	}
	t.owner[pipeline] = owner
	return nil
}

// waitVisible waits until label's transaction is VISIBLE: a commit
// answered OK is; one resolved as COMMITTED through get_load_state is
// published soon.
func (t *Target) waitVisible(ctx context.Context, label string) error {
	wait := 20 * time.Millisecond
	for i := 0; ; i++ {
		state, err := t.client.LoadState(ctx, label)
		if err != nil {
			return err
		}
		if state == "VISIBLE" {
			return nil
		}
		if !Committed(state) || i >= 50 {
			return &sink.Error{Op: "commit", Err: fmt.Errorf("transaction %s is %s, not VISIBLE", label, state), Transient: true}
		}
		if err := t.sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, time.Second)
	}
}

func (t *Target) sleep(ctx context.Context, d time.Duration) error {
	tm := t.clock.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseLabel splits a label of Label into its epoch and seq.
func parseLabel(pipeline, label string) (epoch, seq int64, ok bool) {
	prefix := "txsink-" + nameID(pipeline)[:16] + "-"
	rest, found := strings.CutPrefix(label, prefix)
	if !found {
		return 0, 0, false
	}
	e, s, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	ep, err1 := strconv.ParseInt(e, 10, 64)
	sq, err2 := strconv.ParseInt(s, 10, 64)
	return ep, sq, err1 == nil && err2 == nil
}

// abortLingering rolls back the open transaction, if any, of the earlier
// owner of partition, whose labels are Label(pipeline, owner, 1, 2, ...):
// from the label stored with the partition's progress it gallops to the
// last label the server knows and rolls the last two back if open (an
// instance has one unit in flight; the one before may linger after a
// failed rollback). A committed one is waited for until visible, so the
// positions read next include it.
func (t *Target) abortLingering(ctx context.Context, pipeline, partition string, owner int64) error {
	stored, err := ReadProgress(ctx, t.db, pipeline)
	if err != nil {
		return &sink.Error{Op: "claim partition " + partition, Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	var from int64 // a seq known to be used (0: none)
	if ep, sq, ok := parseLabel(pipeline, stored[partition].Label); ok && ep == owner {
		from = sq
	}
	known := func(seq int64) (bool, error) {
		st, err := t.client.LoadState(ctx, Label(pipeline, owner, seq))
		return err == nil && st != "UNKNOWN", err
	}
	// Gallop: lo is used (or 0), hi is not.
	lo, step := from, int64(1)
	var hi int64
	for {
		ok, err := known(lo + step)
		if err != nil {
			return &sink.Error{Op: "claim partition " + partition, Err: err, Transient: true}
		}
		if !ok {
			hi = lo + step
			break
		}
		lo += step
		step *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := known(mid)
		if err != nil {
			return &sink.Error{Op: "claim partition " + partition, Err: err, Transient: true}
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	for seq := lo; seq >= 1 && seq >= lo-1; seq-- {
		label := Label(pipeline, owner, seq)
		st, err := t.client.LoadState(ctx, label)
		if err != nil {
			return &sink.Error{Op: "claim partition " + partition, Err: err, Transient: true}
		}
		switch {
		case st == "PREPARE" || st == "PREPARED":
			if err := t.client.Rollback(ctx, label); err != nil {
				// It committed meanwhile, or the rollback failed: the
				// state decides below.
				if st2, err2 := t.client.LoadState(ctx, label); err2 != nil || !Committed(st2) && st2 != "ABORTED" {
					return &sink.Error{Op: "claim partition " + partition, Err: fmt.Errorf("abort the earlier owner's transaction %s: %w", label, err), Transient: true}
				} else if Committed(st2) {
					if err := t.waitVisible(ctx, label); err != nil {
						return err
					}
				}
			}
		case Committed(st):
			if err := t.waitVisible(ctx, label); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOwner fails with ErrFenced when another epoch owns a partition of
// positions, as the claims table says now.
func (t *Target) checkOwner(ctx context.Context, pipeline string, positions []changelog.Position) error {
	claims, err := t.readClaims(ctx, pipeline)
	if err != nil {
		return err
	}
	for _, p := range positions {
		mine := t.epochs[claimKey(pipeline, p.Partition)]
		if got := claims[p.Partition].epoch; got != mine {
			return &sink.Error{Op: "commit", Table: ClaimsTable, Err: fmt.Errorf("partition %s of pipeline %s: %w (it is claimed by epoch %d; this instance's claim is epoch %d)", p.Partition, pipeline, sink.ErrFenced, got, mine),
				Hint: fencedHint}
		}
	}
	return nil
}

// fencedHint says what to do about sink.ErrFenced.
const fencedHint = "another instance with the same pipeline name claimed the partition, so this one stops without writing; run one instance per partition, or give each pipeline its own name"
