// Package postgres is txsink's dialect for PostgreSQL, over jackc/pgx
// (through its database/sql driver, so package sqlsink drives every dialect
// the same way).
//
// Upserts are INSERT ... ON CONFLICT (key) DO UPDATE SET c = EXCLUDED.c;
// deletes match a list of key tuples. Groups of a hundred rows or more are
// written with COPY inside the unit's transaction (Dialect.Load). Sessions
// run in UTC, DateStyle ISO, IntervalStyle postgres and UTF8, whatever the
// server says, so TIMESTAMP WITH TIME ZONE values read back as the
// instants written; URL parameters that would change that are refused.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/txsink/txsink/internal/redact"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/sink/sqlsink"
)

// Dialect is the PostgreSQL dialect. It has no state.
type Dialect struct{}

// Open connects to a postgres:// or postgresql:// URL, in a session of
// txsink's (see params.go): a URL parameter that could change what a
// value becomes is refused, naming it, before anything connects.
func Open(ctx context.Context, rawURL string) (*sqlsink.DB, error) {
	cfg, err := connConfig(rawURL)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if (Dialect{}).Transient(err) {
			err = &sink.UnreachableError{Err: err}
		}
		return nil, fmt.Errorf("connect %s: %w", redact.URL(rawURL), err)
	}
	return sqlsink.New(db, Dialect{}), nil
}

// Name returns "postgres".
func (Dialect) Name() string { return "postgres" }

// AddsColumnIfNotExists is true: PostgreSQL has ADD COLUMN IF NOT EXISTS
// (sqlsink.ColumnAdder), which, run after another transaction added the
// column and committed, waits for its lock and then does nothing.
func (Dialect) AddsColumnIfNotExists() bool { return true }

// TransactionalDDL is true: an ALTER TABLE commits with the unit that
// runs it (sqlsink.TransactionalDDL).
func (Dialect) TransactionalDDL() bool { return true }

// Quote quotes an identifier with double quotes.
func (Dialect) Quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// WritePlaceholder writes "$n".
func (Dialect) WritePlaceholder(b *strings.Builder, n int) {
	var digits [20]byte
	b.WriteByte('$')
	b.Write(strconv.AppendInt(digits[:0], int64(n), 10))
}

// MaxParams is the protocol's 65,535 parameters per statement.
func (Dialect) MaxParams() int { return 65535 }

// MaxStatementBytes bounds one statement's values to 64 MiB.
func (Dialect) MaxStatementBytes() int { return 64 << 20 }

// Upsert writes
//
//	INSERT INTO "t" ("id","v") VALUES ($1,$2),($3,$4)
//	ON CONFLICT ("id") DO UPDATE SET "v"=EXCLUDED."v"
//
// or ON CONFLICT ("id") DO NOTHING when every column is a key column.
// Key columns whose equal values can be spelled differently are set too
// (sqlsink.Assigns), so the row takes the new spelling.
func (d Dialect) Upsert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	d.Insert(b, t, cols, rows)
	sqlsink.WriteOnConflict(b, d, t, cols, "EXCLUDED")
}

var _ sqlsink.Guarder = Dialect{}

// GuardedUpsert writes Upsert's statement with the version guard:
//
//	... ON CONFLICT ("id") DO UPDATE SET "v"=EXCLUDED."v" WHERE "t"."v" IS NULL OR "t"."v" <= EXCLUDED."v"
//
// A row the WHERE keeps is not counted among the affected rows, which
// is how the refused rows are counted.
func (d Dialect) GuardedUpsert(b *strings.Builder, t *schema.Table, cols []string, rows int, ver string) {
	d.Upsert(b, t, cols, rows)
	sqlsink.WriteGuardCondition(b, d, d.Quote(t.Name), "EXCLUDED", ver)
}

// Insert writes INSERT INTO "t" ("a","b") VALUES ($1,$2),($3,$4).
func (d Dialect) Insert(b *strings.Builder, t *schema.Table, cols []string, rows int) {
	sqlsink.WriteInsert(b, d, t, cols, rows)
}

// Delete writes DELETE FROM "t" WHERE "id" IN ($1,$2), or
// WHERE ("a","b") IN (($1,$2),($3,$4)) for a composite key.
func (d Dialect) Delete(b *strings.Builder, t *schema.Table, rows int) {
	b.WriteString("DELETE FROM ")
	b.WriteString(sqlsink.QuotedTable(d, t))
	b.WriteString(" WHERE ")
	sqlsink.WriteKeyIn(b, d, t.PrimaryKey, rows)
}

// ProgressSchema creates txsink_progress in the current schema.
func (Dialect) ProgressSchema() []string {
	return []string{`CREATE TABLE IF NOT EXISTS "` + sqlsink.ProgressTable + `" (
		"pipeline" TEXT NOT NULL,
		"source_partition" TEXT NOT NULL,
		"position" BIGINT NOT NULL,
		"seq" BIGINT NOT NULL,
		"epoch" BIGINT NOT NULL DEFAULT 0,
		"position_mark" TEXT,
		"updated_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
		PRIMARY KEY ("pipeline", "source_partition"))`}
}

// DeadLetterSchema creates txsink_dead_letters.
func (Dialect) DeadLetterSchema() []string {
	return []string{`CREATE TABLE IF NOT EXISTS "` + sqlsink.DeadLetterTable + `" (
		"id" BIGSERIAL PRIMARY KEY,
		"pipeline" TEXT NOT NULL,
		"source_partition" TEXT NOT NULL,
		"position" BIGINT NOT NULL,
		"seq" BIGINT NOT NULL,
		"txn_id" TEXT NOT NULL,
		"raw" BYTEA NOT NULL,
		"reason" TEXT NOT NULL,
		"created_at" TIMESTAMPTZ NOT NULL DEFAULT now())`}
}

// ProgressClaim writes the claim of one partition: a new row at epoch 1,
// or the existing row's epoch plus one.
func (d Dialect) ProgressClaim(b *strings.Builder) {
	b.WriteString(`INSERT INTO "` + sqlsink.ProgressTable + `" ("pipeline","source_partition","position","seq","epoch") VALUES (`)
	d.WritePlaceholder(b, 1)
	b.WriteByte(',')
	d.WritePlaceholder(b, 2)
	b.WriteString(`,0,0,1) ON CONFLICT ("pipeline","source_partition") DO UPDATE SET "epoch"="` + sqlsink.ProgressTable + `"."epoch"+1`)
}

// ProgressAdvance writes the fenced update of one partition's position.
func (d Dialect) ProgressAdvance(b *strings.Builder) {
	b.WriteString(`UPDATE "` + sqlsink.ProgressTable + `" SET "position"=`)
	d.WritePlaceholder(b, 1)
	b.WriteString(`,"seq"=`)
	d.WritePlaceholder(b, 2)
	b.WriteString(`,"position_mark"=`)
	d.WritePlaceholder(b, 3)
	b.WriteString(`,"updated_at"=now() WHERE "pipeline"=`)
	d.WritePlaceholder(b, 4)
	b.WriteString(` AND "source_partition"=`)
	d.WritePlaceholder(b, 5)
	b.WriteString(` AND "epoch"=`)
	d.WritePlaceholder(b, 6)
}

// Bind sends DateTime values (timestamp without time zone) as text so the
// server takes the wall-clock time as written, and everything else as is.
func (Dialect) Bind(col *schema.Column, v any) any {
	t, ok := v.(time.Time)
	if !ok {
		return v
	}
	switch col.Class {
	case schema.DateTime:
		return t.UTC().Format("2006-01-02 15:04:05.999999999")
	case schema.Date:
		return t.UTC().Format("2006-01-02")
	}
	return t.UTC()
}

// Transient reports serialization failures, deadlocks, lock timeouts,
// lost connections (class 08), shutdowns and killed backends (57P01-57P03),
// sessions ended by idle_in_transaction_session_timeout (25P03) or
// transaction_timeout (25P04), and too many connections.
func (Dialect) Transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03",
			strings.HasPrefix(pe.Code, "08"),
			// The server ended a session idle in a transaction
			// (idle_in_transaction_session_timeout) or a transaction
			// that ran too long (transaction_timeout): a new one may
			// finish in time.
			pe.Code == "25P03", pe.Code == "25P04",
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "53300":
			return true
		}
		return false
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ne) || errors.As(err, &ce) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF")
}

// ServerCondition reports the server's state that no row causes:
// insufficient resources (class 53: disk full, out of memory, too many
// connections), operator intervention (57), system errors (58: I/O),
// internal errors (XX), a read-only transaction or server (25006) and
// missing privileges (42501).
func (Dialect) ServerCondition(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch {
	case strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "57"), strings.HasPrefix(pe.Code, "58"),
		strings.HasPrefix(pe.Code, "XX"), pe.Code == "25006", pe.Code == "42501":
		return true
	}
	return false
}

// RowFault reports a data exception (class 22: text the encoding refuses,
// such as a NUL byte (22021), a value out of range or too long, a
// malformed value), a NOT NULL violation (23502) and a CHECK violation
// (23514): each about the row's own values.
func (Dialect) RowFault(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return strings.HasPrefix(pe.Code, "22") || pe.Code == "23502" || pe.Code == "23514"
}
