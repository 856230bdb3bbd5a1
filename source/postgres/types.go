package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/txsink/txsink/format/native"
)

// The postgres source declares each table's columns on every record it
// writes (txsink-json's "types" member, in PostgreSQL's spelling), so
// that schema.create can create a target table the target lacks and
// schema.evolve can add a column the source adds: the types come from
// the catalog for the snapshot, and from the Relation messages (type OID
// and modifier) for the stream, where the catalog read at start adds the
// primary key, which columns take no NULL, and the names of types of the
// user's. The text is built once per table version and shared by its
// records.
//
// A NOT NULL column that can be stored out of line (TOASTed: text, bytea,
// json, numeric, any type whose storage is not plain) is declared
// NULL-able: an update that leaves its value unchanged does not carry it,
// and the target's upsert must then take the row without it.

// tableCatalog is what the catalog said about a published table when the
// stream opened.
type tableCatalog struct {
	pk      []string
	notNull map[string]bool
	// types holds each column's type as format_type writes it.
	types map[string]string
}

// loadCatalog reads the primary key, NOT NULL columns and column types of
// every table of publication pub.
func loadCatalog(ctx context.Context, c *pgconn.PgConn, pub string) (map[string]*tableCatalog, error) {
	rows, err := query(ctx, c, `SELECT pt.schemaname, pt.tablename, a.attname,
	format_type(a.atttypid, a.atttypmod), a.attnotnull AND a.attstorage = 'p', coalesce(array_position(i.indkey::int2[], a.attnum), 0)
FROM pg_publication_tables pt
JOIN pg_namespace n ON n.nspname = pt.schemaname
JOIN pg_class cl ON cl.relnamespace = n.oid AND cl.relname = pt.tablename
JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_index i ON i.indrelid = cl.oid AND i.indisprimary
WHERE pt.pubname = $1
ORDER BY 1, 2, 6, a.attnum`, pub)
	if err != nil {
		return nil, fmt.Errorf("postgres source: read the columns of publication %s's tables: %w", pub, err)
	}
	out := map[string]*tableCatalog{}
	for _, r := range rows {
		name := string(r[0]) + "." + string(r[1])
		tc := out[name]
		if tc == nil {
			tc = &tableCatalog{notNull: map[string]bool{}, types: map[string]string{}}
			out[name] = tc
		}
		col := string(r[2])
		tc.types[col] = string(r[3])
		if string(r[4]) == "t" {
			tc.notNull[col] = true
		}
		if string(r[5]) != "0" {
			tc.pk = append(tc.pk, col)
		}
	}
	return out, nil
}

// typeName writes a built-in type as format_type(oid, typmod) does; for
// another type, the catalog's name of the column's type (fallback), else
// its OID, which coltype.ParsePostgres refuses, naming it.
func typeName(oid uint32, typmod int32, fallback string) string {
	paren := func(n int32) string {
		if n < 0 {
			return ""
		}
		return "(" + strconv.Itoa(int(n)) + ")"
	}
	switch oid {
	case pgtype.BoolOID:
		return "boolean"
	case pgtype.ByteaOID:
		return "bytea"
	case pgtype.Int2OID:
		return "smallint"
	case pgtype.Int4OID:
		return "integer"
	case pgtype.Int8OID:
		return "bigint"
	case pgtype.TextOID:
		return "text"
	case pgtype.JSONOID:
		return "json"
	case pgtype.JSONBOID:
		return "jsonb"
	case pgtype.Float4OID:
		return "real"
	case pgtype.Float8OID:
		return "double precision"
	case pgtype.BPCharOID:
		if typmod < 4 {
			return "text" // bpchar without a length: blank-trimmed text
		}
		return "character" + paren(typmod-4)
	case pgtype.VarcharOID:
		if typmod < 4 {
			return "character varying"
		}
		return "character varying" + paren(typmod-4)
	case pgtype.DateOID:
		return "date"
	case pgtype.TimeOID:
		return "time" + paren(typmod) + " without time zone"
	case pgtype.TimestampOID:
		return "timestamp" + paren(typmod) + " without time zone"
	case pgtype.TimestamptzOID:
		return "timestamp" + paren(typmod) + " with time zone"
	case pgtype.NumericOID:
		if typmod < 4 {
			return "numeric"
		}
		m := typmod - 4
		return "numeric(" + strconv.Itoa(int(m>>16&0xffff)) + "," + strconv.Itoa(int(int16(m&0xffff))) + ")"
	case pgtype.UUIDOID:
		return "uuid"
	}
	if fallback != "" {
		return fallback
	}
	return "type with OID " + strconv.FormatUint(uint64(oid), 10)
}

// relationTypes builds the "types" text of a Relation message's table: its
// columns' types, the catalog's primary key (else the replica identity's
// columns, when it is the default or an index: under FULL every column is
// flagged, under NOTHING none) and the catalog's NOT NULL columns.
func relationTypes(r *relation, ident uint8, typmods []int32, cat *tableCatalog) ([]byte, error) {
	t := &native.Types{Dialect: native.DialectPostgres}
	for i, name := range r.names {
		fallback := ""
		if cat != nil {
			fallback = cat.types[name]
		}
		t.Columns = append(t.Columns, native.TypedColumn{Name: name, Type: typeName(r.oids[i], typmods[i], fallback)})
		if cat != nil && cat.notNull[name] {
			t.NotNull = append(t.NotNull, name)
		}
	}
	switch {
	case cat != nil && len(cat.pk) > 0:
		t.Key = cat.pk
	case ident == 'd' || ident == 'i':
		for i, k := range r.key {
			if k {
				t.Key = append(t.Key, r.names[i])
			}
		}
	}
	// A key column the relation lacks (the catalog read at start is
	// older or newer than the message) declares no key.
	for _, k := range t.Key {
		if !slices.Contains(r.names, k) {
			t.Key = nil
			break
		}
	}
	return native.AppendTypes(nil, t)
}

// snapshotTypes builds the "types" text of a table the snapshot copies,
// from the catalog as the snapshot sees it.
func snapshotTypes(ctx context.Context, c *pgconn.PgConn, rel string, pk []keyCol) ([]byte, error) {
	rows, err := query(ctx, c, `SELECT attname, format_type(atttypid, atttypmod), attnotnull AND attstorage = 'p' FROM pg_attribute
WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, rel)
	if err != nil {
		return nil, err
	}
	t := &native.Types{Dialect: native.DialectPostgres}
	for _, r := range rows {
		t.Columns = append(t.Columns, native.TypedColumn{Name: string(r[0]), Type: string(r[1])})
		if string(r[2]) == "t" {
			t.NotNull = append(t.NotNull, string(r[0]))
		}
	}
	for _, k := range pk {
		t.Key = append(t.Key, k.name)
	}
	return native.AppendTypes(nil, t)
}
