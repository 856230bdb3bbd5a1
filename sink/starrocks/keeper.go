package starrocks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// Target keeps its progress rows readable whole and movable: the marks
// stored with the positions are how a file replaced under its position is
// told apart on resume, and txsink reset forgets positions.
var _ sink.ProgressKeeper = (*Target)(nil)

// Stored returns pipeline's progress rows, ordered by partition.
func (t *Target) Stored(ctx context.Context, pipeline string) ([]sink.Stored, error) {
	return t.StoredOn(ctx, t.db, pipeline)
}

// StoredOn is Stored through q (sink.Catalog).
func (t *Target) StoredOn(ctx context.Context, q sink.Querier, pipeline string) ([]sink.Stored, error) {
	rows, err := q.QueryContext(ctx, "SELECT source_partition, position, seq, position_mark, epoch, updated_at FROM "+ProgressTable+
		" WHERE pipeline_id = ? AND pipeline = ? ORDER BY source_partition", nameID(pipeline), pipeline)
	if err != nil {
		return nil, &sink.Error{Op: "read progress", Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	defer rows.Close()
	var out []sink.Stored
	for rows.Next() {
		var s sink.Stored
		var mark sql.NullString
		var updated sql.NullString
		if err := rows.Scan(&s.Partition, &s.Offset, &s.Seq, &mark, &s.Epoch, &updated); err != nil {
			return nil, &sink.Error{Op: "read progress", Table: ProgressTable, Err: err}
		}
		s.Mark, s.UpdatedAt = mark.String, updated.String
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, &sink.Error{Op: "read progress", Table: ProgressTable, Err: err, Transient: isTransientSQL(err)}
	}
	return out, nil
}

// Marks returns the marks stored for pipeline, by partition; a partition
// stored without one is absent.
func (t *Target) Marks(ctx context.Context, pipeline string) (map[string]string, error) {
	rows, err := t.Stored(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	return sink.MarksOf(rows), nil
}

// Rewind moves a partition this instance claimed back to its start, with
// no mark: a unit of no rows whose progress is position 0, fenced as any
// unit is.
func (t *Target) Rewind(ctx context.Context, pipeline, partition string) error {
	if _, ok := t.epochs[claimKey(pipeline, partition)]; !ok {
		return fmt.Errorf("rewind partition %s: not claimed by this instance", partition)
	}
	return t.Apply(ctx, &commit.Unit{Pipeline: pipeline, Progress: []changelog.Position{{Partition: partition}}})
}

// Forget deletes the progress rows of pipeline's partitions (all of them
// for nil) and their claims, in one transaction, and returns the rows it
// deleted. It claims them first, so an instance still running for one of
// them is fenced: its next commit finds another epoch, then none.
func (t *Target) Forget(ctx context.Context, pipeline string, partitions []string) ([]sink.Stored, error) {
	all, err := t.Stored(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	var gone []sink.Stored
	var names []string
	for _, s := range all {
		if partitions == nil || slices.Contains(partitions, s.Partition) {
			gone = append(gone, s)
			names = append(names, s.Partition)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if _, err := t.Claim(ctx, pipeline, names); err != nil {
		return nil, err
	}
	type key struct {
		PipelineID  string `json:"pipeline_id"`
		PartitionID string `json:"partition_id"`
		Op          int    `json:"__op"`
	}
	keys := make([]key, len(names))
	for i, p := range names {
		keys[i] = key{nameID(pipeline), nameID(p), 1}
	}
	body, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	label := Label(pipeline, t.owner[pipeline], t.seq[pipeline]+1)
	x, err := t.client.Begin(ctx, label)
	if err != nil {
		return nil, t.wrap("forget progress", ProgressTable, err)
	}
	t.seq[pipeline]++
	committed := false
	defer func() {
		if !committed {
			_ = x.Rollback(context.WithoutCancel(ctx))
		}
	}()
	cols := []string{"pipeline_id", "partition_id", "__op"}
	for _, table := range []string{ProgressTable, ClaimsTable} {
		if _, err := x.Load(ctx, table, cols, body); err != nil {
			return nil, t.wrap("forget progress", table, err)
		}
	}
	if err := t.checkOwner(ctx, pipeline, positionsOf(names)); err != nil {
		return nil, err
	}
	if err := x.Commit(ctx); err != nil {
		return nil, t.wrap("forget progress", ProgressTable, err)
	}
	committed = true
	if err := t.waitVisible(ctx, label); err != nil {
		return nil, err
	}
	for _, p := range names {
		delete(t.epochs, claimKey(pipeline, p))
	}
	return gone, nil
}

func positionsOf(partitions []string) []changelog.Position {
	out := make([]changelog.Position, len(partitions))
	for i, p := range partitions {
		out[i].Partition = p
	}
	return out
}
