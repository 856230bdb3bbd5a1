package postgres

import (
	"fmt"
	"strconv"

	"github.com/txsink/txsink/source"
)

// snapshots lists the accepted values of source.snapshot, its default
// first.
var snapshots = []string{SnapshotInitial, SnapshotNever}

// truncates lists the accepted values of source.truncate, its default
// first.
var truncates = []string{TruncateRefuse, TruncateDeleteAll}

// Defaults and bounds of the snapshot's keys. A key's Default would make
// it look set in other sources' sections: Open fills these in for 0.
const (
	defaultParallel  = 2
	maxParallel      = 64
	defaultChunkRows = 10000
)

// Summary implements source.Keyed.
func (Driver) Summary() string {
	return "a PostgreSQL database by logical replication; `format: " + Format + "` and transaction mode"
}

// Keys implements source.Keyed: the keys of Config, documented here once
// (docs/config.md prints them). Open checks them again for a Config
// built in Go.
func (Driver) Keys() []source.Key {
	return []source.Key{source.URLKey, {
		Name: "tables", Type: source.KeyStrings,
		Want: "a list of tables, such as [public.orders, public.order_items]", DefaultDoc: "none",
		Doc: "The tables to stream (`schema.table`, or `table` in `public`): txsink keeps a publication of its own, " +
			"named as the slot, publishing exactly these (it creates it, or alters it to match). Set `tables` or `publication`.",
	}, {
		Name: "publication", Type: source.KeyString,
		Want: "the name of an existing publication", DefaultDoc: "none",
		Doc: "An existing publication to stream, instead of `tables`.",
	}, {
		Name: "slot", Type: source.KeyString,
		Want: "a replication slot name: lower-case letters, digits and _", DefaultDoc: "txsink_<pipeline name>",
		Doc: "The logical replication slot (pgoutput), created when missing. The target's progress table holds the " +
			"position (the last committed transaction's commit LSN + 1); the slot is told only positions the target " +
			"committed. txsink never drops it: a slot left behind keeps WAL on the server, drop it with " +
			"`txsink drop-slot --config FILE` when the pipeline is retired.",
	}, {
		Name: "snapshot", Type: source.KeyString,
		Want: "initial or never", DefaultDoc: SnapshotInitial,
		Doc: "`initial`: when txsink creates the slot, it copies the tables as of the slot's consistent point " +
			"(the slot's exported snapshot), then streams from that point: every transaction is in the copy or in " +
			"the stream, once. Each table is copied in chunks of its primary key order (`snapshot.chunk-rows`), " +
			"`snapshot.parallel` tables at a time, each chunk committed with its progress. A run stopped or killed " +
			"during the copy resumes from each table's last committed chunk, as of a new consistent point, and " +
			"streams from the slot's, skipping the changes the new copy already holds (docs/postgres-snapshot.md " +
			"gives the argument); a table without a primary key is copied as one chunk. The target is consistent " +
			"with the source once the stream passed the last resume point. `never`: stream from where the slot is " +
			"(its creation, for a new one), copying no row.",
		Check: source.OneOf("snapshot", snapshots),
	}, {
		Name: "truncate", Type: source.KeyString,
		Want: "refuse or delete-all", DefaultDoc: TruncateRefuse,
		Doc: "What a TRUNCATE of a published table does. `refuse`: the pipeline stops at it with an error naming " +
			"the tables, and the target is never emptied by it. `delete-all`: it is applied at its place in its " +
			"transaction: every row of the target table is deleted (`DELETE FROM`, inside the unit's transaction, " +
			"also on MariaDB) before the transaction's later changes of it, in the same commit; the tables one " +
			"TRUNCATE names (CASCADE's included: PostgreSQL lists them) are emptied together, referencing tables " +
			"first. RESTART IDENTITY needs nothing of the target, which gets the source's key values. Refused at " +
			"start with a target that cannot (StarRocks), and at the TRUNCATE for a table whose tables entry sets " +
			"`version-column` or `delete: soft`, or whose target table takes other source tables' rows too; a " +
			"table with `delete: ignore` keeps its rows.",
		Check: source.OneOf("truncate", truncates),
	}, {
		Name: "snapshot.parallel", Type: source.KeyInt, DefaultDoc: strconv.Itoa(defaultParallel),
		Want: fmt.Sprintf("a number of tables from 1 to %d", maxParallel),
		Doc: "How many tables the initial snapshot copies at once, each on a connection of its own " +
			"(`max_connections` must allow them).",
		Check: func(v any) string {
			if n := v.(int); n < 0 || n > maxParallel { // 0: absent
				return fmt.Sprintf("%d tables at once is out of range", n)
			}
			return ""
		},
	}, {
		Name: "snapshot.chunk-rows", Type: source.KeyInt, DefaultDoc: strconv.Itoa(defaultChunkRows), Unit: "rows",
		Want: "a number of rows, 1 or more",
		Doc: "The rows of a snapshot chunk: one source transaction, committed with the snapshot's progress. " +
			"The transaction mode holds a chunk in memory until it is committed; a stop loses at most the chunks " +
			"not yet committed.",
		Check: func(v any) string {
			if n := v.(int); n < 0 { // 0: absent
				return fmt.Sprintf("%d rows per chunk is out of range", n)
			}
			return ""
		},
	}}
}

// Validate implements source.Validator: what the source needs of the rest
// of the pipeline. Plain mode may commit part of a source transaction,
// and PostgreSQL resumes only at transaction boundaries, so transaction
// mode is required; the records are txsink-json, so is the format.
func (Driver) Validate(_ source.Settings, p source.Pipeline) []source.Problem {
	var probs []source.Problem
	if !p.Transactions {
		probs = append(probs, source.Problem{Key: "type", Msg: "postgres resumes only at source transaction boundaries (commit LSNs), which needs " +
			"sink.transaction.multi-table.enabled: true, so that only whole transactions are committed; set it"})
	}
	if p.Format != "" && p.Format != Format {
		probs = append(probs, source.Problem{Key: "format", Msg: fmt.Sprintf("is %s, but the postgres source writes %s; set format: %s", p.Format, Format, Format)})
	}
	return probs
}
