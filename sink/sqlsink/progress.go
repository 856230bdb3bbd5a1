package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// Progress returns the positions stored for pipeline, by partition. A
// pipeline that never committed has none.
func (t *DB) Progress(ctx context.Context, pipeline string) (map[string]changelog.Position, error) {
	d := t.dialect
	q := "SELECT " + d.Quote("source_partition") + ", " + d.Quote("position") + ", " + d.Quote("seq") +
		" FROM " + d.Quote(ProgressTable) + " WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1)
	rows, err := t.db.QueryContext(ctx, q, pipeline)
	if err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	defer rows.Close()
	out := map[string]changelog.Position{}
	for rows.Next() {
		var p changelog.Position
		if err := rows.Scan(&p.Partition, &p.Offset, &p.Seq); err != nil {
			return nil, t.wrap("read progress", ProgressTable, "", err)
		}
		out[p.Partition] = p
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	return out, nil
}

func claimKey(pipeline, partition string) string { return pipeline + "\x00" + partition }

// Claim makes this instance the owner of partitions of pipeline: in one
// transaction it raises each partition's epoch in the progress table
// (creating the row at position 0 if there is none) and reads the
// positions stored there. From then on a commit of any earlier owner finds
// its epoch stale and fails with sink.ErrFenced, so only one instance commits
// for a partition. The claim waits for a commit in flight on those
// partitions (it holds their progress rows), so the positions it returns
// include it.
func (t *DB) Claim(ctx context.Context, pipeline string, partitions []string) (map[string]changelog.Position, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, t.wrap("claim partitions", ProgressTable, "", err)
	}
	defer tx.Rollback()
	var claim, read strings.Builder
	t.dialect.ProgressClaim(&claim)
	d := t.dialect
	read.WriteString("SELECT " + d.Quote("position") + ", " + d.Quote("seq") + ", " + d.Quote("epoch") + " FROM " + d.Quote(ProgressTable) +
		" WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1) + " AND " + d.Quote("source_partition") + " = " + placeholder(d, 2))
	out := make(map[string]changelog.Position, len(partitions))
	epochs := make(map[string]int64, len(partitions))
	for _, part := range partitions {
		if _, err := tx.ExecContext(ctx, claim.String(), pipeline, part); err != nil {
			return nil, t.wrap("claim partition "+part, ProgressTable, "", err)
		}
		p := changelog.Position{Partition: part}
		var epoch int64
		if err := tx.QueryRowContext(ctx, read.String(), pipeline, part).Scan(&p.Offset, &p.Seq, &epoch); err != nil {
			return nil, t.wrap("claim partition "+part, ProgressTable, "", err)
		}
		out[part], epochs[part] = p, epoch
	}
	if err := tx.Commit(); err != nil {
		return nil, t.wrap("claim partitions", ProgressTable, "", err)
	}
	for part, ep := range epochs {
		t.epochs[claimKey(pipeline, part)] = ep
	}
	return out, nil
}

// advance moves the unit's partitions to their new positions, checking in
// the same statement that this instance still owns each of them.
func (t *DB) advance(ctx context.Context, tx *sql.Tx, u *commit.Unit) error {
	if len(u.Progress) == 0 {
		return nil
	}
	var sb strings.Builder
	t.dialect.ProgressAdvance(&sb)
	q := sb.String()
	for _, p := range u.Progress {
		epoch := t.epochs[claimKey(u.Pipeline, p.Partition)]
		var mark any // NULL: no mark
		if m, ok := u.Marks[p.Partition]; ok && m != "" {
			mark = m
		}
		res, err := tx.ExecContext(ctx, q, p.Offset, p.Seq, mark, u.Pipeline, p.Partition, epoch)
		if err != nil {
			return t.wrap("write progress", ProgressTable, "", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return t.wrap("write progress", ProgressTable, "", err)
		}
		if n != 1 {
			return &sink.Error{Op: "commit", Table: ProgressTable, Err: fmt.Errorf("partition %s of pipeline %s: %w (this instance's claim, epoch %d, is stale)", p.Partition, u.Pipeline, sink.ErrFenced, epoch),
				Hint: fencedHint}
		}
	}
	return nil
}

// Committed reports whether u is already in the target: every partition of
// u stands at or past u's position, under this instance's claim. After an
// error whose outcome is unknown — above all a connection lost during
// COMMIT, which the server may have carried out — it tells a retry that
// would apply the unit twice from one that is needed. It answers from the
// progress rows, which are written only in the units' own transactions.
func (t *DB) Committed(ctx context.Context, u *commit.Unit) (bool, error) {
	if len(u.Progress) == 0 {
		return false, nil
	}
	d := t.dialect
	q := "SELECT " + d.Quote("position") + ", " + d.Quote("epoch") + " FROM " + d.Quote(ProgressTable) +
		" WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1) + " AND " + d.Quote("source_partition") + " = " + placeholder(d, 2)
	for _, p := range u.Progress {
		var pos, epoch int64
		err := t.db.QueryRowContext(ctx, q, u.Pipeline, p.Partition).Scan(&pos, &epoch)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, t.wrap("read progress", ProgressTable, "", err)
		}
		if mine, ok := t.epochs[claimKey(u.Pipeline, p.Partition)]; ok && epoch != mine {
			return false, &sink.Error{Op: "commit", Table: ProgressTable, Err: fmt.Errorf("partition %s of pipeline %s: %w (epoch %d, this instance's %d)", p.Partition, u.Pipeline, sink.ErrFenced, epoch, mine),
				Hint: fencedHint}
		}
		if pos < p.Offset {
			return false, nil
		}
	}
	return true, nil
}

// markColumn holds each position's fingerprint (see commit.Unit.Marks).
const markColumn = "position_mark"

// addMarkColumn adds the mark column to a progress table created before
// txsink stored marks. Instances that start together may race to add it:
// the loser's ALTER fails, and the column is then there.
func (t *DB) addMarkColumn(ctx context.Context) error {
	d := t.dialect
	// The column is named unquoted: SQLite takes a double-quoted name that
	// matches no column for a string literal, so a quoted probe would
	// always succeed.
	probe := "SELECT " + markColumn + " FROM " + d.Quote(ProgressTable) + " WHERE 1=0"
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var rows *sql.Rows
		if rows, err = t.db.QueryContext(ctx, probe); err == nil {
			return rows.Close()
		}
		if _, err = t.db.ExecContext(ctx, "ALTER TABLE "+d.Quote(ProgressTable)+" ADD COLUMN "+d.Quote(markColumn)+" TEXT"); err == nil {
			return nil
		}
	}
	return t.wrap("add column "+markColumn+" to the progress table", ProgressTable, "", err)
}

// Stored returns the progress rows of pipeline, ordered by partition.
func (t *DB) Stored(ctx context.Context, pipeline string) ([]sink.Stored, error) {
	return t.StoredOn(ctx, t.db, pipeline)
}

// StoredOn is Stored through q, one connection of the caller's ("txsink
// check" reads on its read-only one).
func (t *DB) StoredOn(ctx context.Context, q Querier, pipeline string) ([]sink.Stored, error) {
	d := t.dialect
	query := "SELECT " + d.Quote("source_partition") + ", " + d.Quote("position") + ", " + d.Quote("seq") + ", " +
		d.Quote(markColumn) + ", " + d.Quote("epoch") + ", " + d.Quote("updated_at") + " FROM " + d.Quote(ProgressTable) +
		" WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1) + " ORDER BY " + d.Quote("source_partition")
	rows, err := q.QueryContext(ctx, query, pipeline)
	if err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	defer rows.Close()
	var out []sink.Stored
	for rows.Next() {
		var s sink.Stored
		var mark sql.NullString
		var updated any
		if err := rows.Scan(&s.Partition, &s.Offset, &s.Seq, &mark, &s.Epoch, &updated); err != nil {
			return nil, t.wrap("read progress", ProgressTable, "", err)
		}
		s.Mark = mark.String
		s.UpdatedAt = formatTime(updated)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("read progress", ProgressTable, "", err)
	}
	return out, nil
}

// Marks returns the marks stored for pipeline, by partition; a partition
// stored without one is absent.
func (t *DB) Marks(ctx context.Context, pipeline string) (map[string]string, error) {
	rows, err := t.Stored(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	return sink.MarksOf(rows), nil
}

// Rewind moves a partition this instance has claimed back to its start,
// with no mark: a stream's partition, which each run reads from its first
// byte, so that a position of an earlier run is neither skipped to nor
// taken for a commit of this one (see Committed).
func (t *DB) Rewind(ctx context.Context, pipeline, partition string) error {
	epoch, ok := t.epochs[claimKey(pipeline, partition)]
	if !ok {
		return fmt.Errorf("rewind partition %s: not claimed by this instance", partition)
	}
	var sb strings.Builder
	t.dialect.ProgressAdvance(&sb)
	res, err := t.db.ExecContext(ctx, sb.String(), 0, 0, nil, pipeline, partition, epoch)
	if err != nil {
		return t.wrap("rewind partition "+partition, ProgressTable, "", err)
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return &sink.Error{Op: "rewind partition " + partition, Table: ProgressTable, Err: fmt.Errorf("partition %s of pipeline %s: %w", partition, pipeline, sink.ErrFenced),
			Hint: fencedHint}
	}
	return nil
}

// fencedHint says what to do about sink.ErrFenced.
const fencedHint = "another instance with the same pipeline name claimed the partition, so this one stops without writing; run one instance per partition, or give each pipeline its own name"

// Forget deletes the progress rows of pipeline's partitions (all of them
// when partitions is nil), in one transaction, and returns the rows it
// deleted. A partition forgotten is read from its start by the next run.
// An instance still running for one of them is fenced: its next commit
// finds no row of its claim and fails without writing (see Claim).
func (t *DB) Forget(ctx context.Context, pipeline string, partitions []string) ([]sink.Stored, error) {
	all, err := t.Stored(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	var gone []sink.Stored
	for _, s := range all {
		if partitions == nil || contains(partitions, s.Partition) {
			gone = append(gone, s)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	d := t.dialect
	q := "DELETE FROM " + d.Quote(ProgressTable) + " WHERE " + d.Quote("pipeline") + " = " + placeholder(d, 1) +
		" AND " + d.Quote("source_partition") + " = " + placeholder(d, 2)
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, t.wrap("forget progress", ProgressTable, "", err)
	}
	defer tx.Rollback()
	for _, s := range gone {
		if _, err := tx.ExecContext(ctx, q, pipeline, s.Partition); err != nil {
			return nil, t.wrap("forget progress of partition "+s.Partition, ProgressTable, "", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, t.wrap("forget progress", ProgressTable, "", err)
	}
	return gone, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
