package starrocks

// The dead-letter table: a Primary Key table loaded in the unit's
// multi-table transaction, beside the unit's rows and progress, so a
// quarantined source transaction is recorded exactly when the progress
// moves past it — once.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/sink"
)

// Target keeps quarantined source transactions (bad-input: dead-letter).
var _ sink.DeadLetterer = (*Target)(nil)

// DeadLetterTable holds the quarantined source transactions.
const DeadLetterTable = sink.DeadLetterTable

// DeadLetterDDL creates the dead-letter table: the SQL targets' columns,
// in StarRocks' types. StarRocks has no auto-increment key a load can
// rely on, so a dead letter is keyed by where its change was read
// (pipeline, partition — hashed, as in txsink_progress, to stay within
// the 128 bytes of a key — position and seq): a unit applied again
// stores the same dead letter again, over itself. The text columns hold
// up to StarRocks' 1 MiB (VARCHAR(1048576), in bytes); a longer value is
// cut and the reason says so. raw holds the record as text, or, when it
// is not UTF-8, in base64 with raw_base64 true.
const DeadLetterDDL = "CREATE TABLE IF NOT EXISTS " + DeadLetterTable + " (" +
	"pipeline_id VARCHAR(32) NOT NULL, partition_id VARCHAR(32) NOT NULL, position BIGINT NOT NULL, seq BIGINT NOT NULL, " +
	"pipeline VARCHAR(1024) NOT NULL, source_partition VARCHAR(4096) NOT NULL, " +
	"txn_id VARCHAR(1048576) NOT NULL, raw VARCHAR(1048576) NOT NULL, raw_base64 BOOLEAN NOT NULL, " +
	"reason VARCHAR(1048576) NOT NULL, label VARCHAR(128) NULL, created_at DATETIME NOT NULL" +
	") PRIMARY KEY (pipeline_id, partition_id, position, seq) DISTRIBUTED BY HASH(pipeline_id, partition_id)"

// maxText is the byte length of the dead-letter table's long VARCHARs.
const maxText = 1048576

var deadLetterColumns = []string{"pipeline_id", "partition_id", "position", "seq", "pipeline", "source_partition",
	"txn_id", "raw", "raw_base64", "reason", "label", "created_at", "__op"}

// SetupDeadLetters creates the dead-letter table if the catalog lacks it,
// as Setup creates txsink's other tables.
func (t *Target) SetupDeadLetters(ctx context.Context) error {
	if _, err := Describe(ctx, t.db, t.catalog, t.dbName, DeadLetterTable); err == nil {
		return nil
	}
	if _, err := t.db.ExecContext(ctx, DeadLetterDDL); err != nil {
		return &sink.Error{Op: "create dead-letter table", Table: DeadLetterTable, Err: err, Transient: isTransientSQL(err)}
	}
	return nil
}

// cut returns s, valid UTF-8, within n bytes (cut at a character), and
// whether it was cut.
func cut(s string, n int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// DeadLetterLoad is the load that stores pipeline's quarantined source
// transactions dls, stamped now, in the transaction labelled label: the
// one whose progress moves past them.
func DeadLetterLoad(pipeline, label string, dls []commit.DeadLetter, now time.Time) (Load, error) {
	type row struct {
		PipelineID  string `json:"pipeline_id"`
		PartitionID string `json:"partition_id"`
		Position    int64  `json:"position"`
		Seq         int64  `json:"seq"`
		Pipeline    string `json:"pipeline"`
		Partition   string `json:"source_partition"`
		TxnID       string `json:"txn_id"`
		Raw         string `json:"raw"`
		RawBase64   bool   `json:"raw_base64"`
		Reason      string `json:"reason"`
		Label       string `json:"label"`
		CreatedAt   string `json:"created_at"`
		Op          int    `json:"__op"`
	}
	rows := make([]row, len(dls))
	for i, d := range dls {
		raw, b64 := string(d.Raw), false
		if !utf8.Valid(d.Raw) {
			raw, b64 = base64.StdEncoding.EncodeToString(d.Raw), true
		}
		var notes []string
		txn, cutTxn := cut(d.TxnID, maxText)
		if cutTxn {
			notes = append(notes, fmt.Sprintf("txn_id cut to %d of its %d bytes", len(txn), len(d.TxnID)))
		}
		if r, cutRaw := cut(raw, maxText); cutRaw {
			notes = append(notes, fmt.Sprintf("raw cut to %d of its %d bytes", len(r), len(raw)))
			raw = r
		}
		reason := d.Reason
		if len(notes) > 0 {
			reason = "(" + strings.Join(notes, "; ") + ", StarRocks' VARCHAR holds 1 MiB) " + reason
		}
		reason, _ = cut(reason, maxText)
		part, _ := cut(d.Pos.Partition, 4096)
		rows[i] = row{nameID(pipeline), nameID(d.Pos.Partition), d.Pos.Offset, d.Pos.Seq, pipeline, part,
			txn, raw, b64, reason, label, now.UTC().Format("2006-01-02 15:04:05.999999"), 0}
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return Load{}, fmt.Errorf("starrocks: encode the dead letters of pipeline %s: %w", pipeline, err)
	}
	return Load{Columns: deadLetterColumns, Body: body, Rows: len(rows)}, nil
}

// DeadLetters lists the quarantined transactions of pipeline, oldest
// first (by the time their commit stored them, then by partition and
// position). StarRocks has no sequence a load can draw from: a dead
// letter's ID is its place in this list, counted from 1. A target without
// the table has none.
func (t *Target) DeadLetters(ctx context.Context, pipeline string) ([]sink.DeadLetter, error) {
	if _, err := Describe(ctx, t.db, t.catalog, t.dbName, DeadLetterTable); err != nil {
		return nil, nil // no table: nothing was ever quarantined
	}
	rows, err := t.db.QueryContext(ctx, "SELECT source_partition, position, seq, txn_id, raw, raw_base64, reason, created_at FROM "+DeadLetterTable+
		" WHERE pipeline_id = ? AND pipeline = ? ORDER BY created_at, source_partition, position, seq", nameID(pipeline), pipeline)
	if err != nil {
		return nil, &sink.Error{Op: "read dead letters", Table: DeadLetterTable, Err: err, Transient: isTransientSQL(err)}
	}
	defer rows.Close()
	var out []sink.DeadLetter
	for rows.Next() {
		r := sink.DeadLetter{Pipeline: pipeline, ID: int64(len(out) + 1)}
		var raw string
		var b64 bool
		var created sql.NullString
		if err := rows.Scan(&r.Partition, &r.Offset, &r.Seq, &r.TxnID, &raw, &b64, &r.Reason, &created); err != nil {
			return nil, &sink.Error{Op: "read dead letters", Table: DeadLetterTable, Err: err}
		}
		r.Raw = []byte(raw)
		if b64 {
			if r.Raw, err = base64.StdEncoding.DecodeString(raw); err != nil {
				return nil, &sink.Error{Op: "read dead letters", Table: DeadLetterTable, Err: fmt.Errorf("the raw record at %s:%d is marked base64 and is not: %w", r.Partition, r.Seq, err)}
			}
		}
		r.CreatedAt = created.String
		if tm, err := time.Parse("2006-01-02 15:04:05.999999", created.String); err == nil {
			r.CreatedAt = tm.UTC().Format(time.RFC3339) // as the SQL targets list it
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, &sink.Error{Op: "read dead letters", Table: DeadLetterTable, Err: err, Transient: isTransientSQL(err)}
	}
	return out, nil
}
