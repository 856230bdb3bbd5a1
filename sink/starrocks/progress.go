package starrocks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/schema"
)

// ProgressTable is where the StarRocks target keeps each pipeline's
// positions: a Primary Key table loaded in the same multi-table
// transaction as the data, so the target's own state is the checkpoint.
const ProgressTable = schema.ProgressTable

// ProgressDDL creates the progress table. StarRocks bounds a primary key
// to 128 bytes, so the key is (pipeline_id, partition_id), hashes of the
// names, which are kept whole beside them.
const ProgressDDL = "CREATE TABLE IF NOT EXISTS " + ProgressTable + " (" +
	"pipeline_id VARCHAR(32) NOT NULL, partition_id VARCHAR(32) NOT NULL, " +
	"pipeline VARCHAR(1024) NOT NULL, source_partition VARCHAR(4096) NOT NULL, " +
	"position BIGINT NOT NULL, seq BIGINT NOT NULL, epoch BIGINT NOT NULL, " +
	"position_mark STRING NULL, label VARCHAR(128) NULL, updated_at DATETIME NOT NULL" +
	") PRIMARY KEY (pipeline_id, partition_id) DISTRIBUTED BY HASH(pipeline_id, partition_id)"

// progressColumns is the columns header of a progress load.
var progressColumns = []string{"pipeline_id", "partition_id", "pipeline", "source_partition", "position", "seq", "epoch", "position_mark", "label", "updated_at", "__op"}

func nameID(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

// Label is the deterministic label of a pipeline's commit number seq under
// epoch: the same unit retried keeps its label, so StarRocks' per-database
// label uniqueness lets it land at most once (a second begin answers
// LABEL_ALREADY_EXISTS), and a new epoch never reuses an old one's labels.
// Labels hold letters, digits, '-' and '_' and stay within 128 bytes.
func Label(pipeline string, epoch, seq int64) string {
	return fmt.Sprintf("txsink-%s-%d-%d", nameID(pipeline)[:16], epoch, seq)
}

// ProgressRow is one partition's stored progress.
type ProgressRow struct {
	changelog.Position
	// Epoch counts the claims of the partition.
	Epoch int64
	// Mark is the position's fingerprint, "" when none was stored.
	Mark string
	// Label is the label of the transaction that stored the row.
	Label string
}

// ProgressLoad is the load that stores positions for pipeline, each
// partition's under its epoch in epochs, with marks by partition (a
// partition without one is stored without one), stamped now and with the
// label of the transaction it goes into: the one that carries the data
// those positions cover.
func ProgressLoad(pipeline, label string, positions []changelog.Position, epochs map[string]int64, marks map[string]string, now time.Time) (Load, error) {
	type row struct {
		PipelineID  string  `json:"pipeline_id"`
		PartitionID string  `json:"partition_id"`
		Pipeline    string  `json:"pipeline"`
		Partition   string  `json:"source_partition"`
		Position    int64   `json:"position"`
		Seq         int64   `json:"seq"`
		Epoch       int64   `json:"epoch"`
		Mark        *string `json:"position_mark"`
		Label       string  `json:"label"`
		UpdatedAt   string  `json:"updated_at"`
		Op          int     `json:"__op"`
	}
	rows := make([]row, len(positions))
	for i, p := range positions {
		var mark *string
		if m, ok := marks[p.Partition]; ok {
			mark = &m
		}
		rows[i] = row{nameID(pipeline), nameID(p.Partition), pipeline, p.Partition, p.Offset, p.Seq, epochs[p.Partition], mark, label, now.UTC().Format("2006-01-02 15:04:05.999999"), 0}
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return Load{}, fmt.Errorf("starrocks: encode the progress of pipeline %s: %w", pipeline, err)
	}
	return Load{Columns: progressColumns, Body: body, Rows: len(rows)}, nil
}

// ReadProgress returns the progress stored for pipeline, by partition,
// read over the MySQL protocol: what has committed, nothing of an open
// transaction.
func ReadProgress(ctx context.Context, q Querier, pipeline string) (map[string]ProgressRow, error) {
	rows, err := q.QueryContext(ctx, "SELECT source_partition, position, seq, epoch, position_mark, label FROM "+ProgressTable+" WHERE pipeline_id = ? AND pipeline = ?", nameID(pipeline), pipeline)
	if err != nil {
		return nil, fmt.Errorf("starrocks: read the progress of pipeline %s from %s: %w", pipeline, ProgressTable, err)
	}
	defer rows.Close()
	out := map[string]ProgressRow{}
	for rows.Next() {
		var r ProgressRow
		var mark, label *string
		if err := rows.Scan(&r.Partition, &r.Offset, &r.Seq, &r.Epoch, &mark, &label); err != nil {
			return nil, fmt.Errorf("starrocks: read the progress of pipeline %s from %s: %w", pipeline, ProgressTable, err)
		}
		if mark != nil {
			r.Mark = *mark
		}
		if label != nil {
			r.Label = *label
		}
		out[r.Partition] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("starrocks: read the progress of pipeline %s from %s: %w", pipeline, ProgressTable, err)
	}
	return out, nil
}
