package starrocks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

func pos(line int64) changelog.Position {
	return changelog.Position{Partition: "f.jsonl", Offset: line}
}

// TestEncodeAndLoad: a commit unit's batches, encoded, loaded and committed
// in one transaction, leave the rows the unit describes: deletes first,
// the last write of a key winning, inserts appended.
func TestEncodeAndLoad(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, typesDDL, eventsDDL)
	ctx := context.Background()
	kinds, err := Describe(ctx, cl.SQL, cl.catalog, cl.db, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	events, err := Describe(ctx, cl.SQL, cl.catalog, cl.db, "events")
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range kinds.Columns {
		cols = append(cols, c.Name)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
	row := func(id int64, name string) []any {
		return []any{id, true, int64(-7), "170141183460469231731687303715884105727", "12345.6789012345", 0.25, "ab", name, "long text", "2026-03-04", at, `{"a":[1,2]}`}
	}
	c := cl.client(t)
	for i, b := range [][]*commit.Batch{
		{{Table: &kinds.Table, Upserts: []commit.Group{{Columns: cols, Rows: [][]any{row(1, "one"), row(2, "two"), row(3, "three")}, Pos: []changelog.Position{pos(1), pos(2), pos(3)}}}},
			{Table: &events.Table, Inserts: []commit.Group{{Columns: []string{"id", "what"}, Rows: [][]any{{int64(1), "a"}, {int64(1), "a"}}}}}},
		{{Table: &kinds.Table, Deletes: [][]any{{int64(1)}, {int64(2)}}, DeletePos: []changelog.Position{pos(4), pos(5)},
			Upserts: []commit.Group{{Columns: cols, Rows: [][]any{row(2, "deux"), row(3, "tres")}}}}},
	} {
		x := begin(t, c, "enc"+string(rune('0'+i)))
		for _, batch := range b {
			tbl := kinds
			if batch.Table.Name == "events" {
				tbl = events
			}
			l, err := EncodeBatch(tbl, batch)
			if err != nil {
				t.Fatal(err)
			}
			load(t, x, tbl.Name, l.Columns, string(l.Body))
		}
		if err := x.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var names string
	if err := cl.SQL.QueryRow("SELECT GROUP_CONCAT(CONCAT(id, name) ORDER BY id) FROM kinds").Scan(&names); err != nil || names != "2deux,3tres" {
		t.Fatalf("kinds: %q, %v; want 2deux,3tres", names, err)
	}
	var price, day, doc string
	var big string
	var atText string
	if err := cl.SQL.QueryRow("SELECT CAST(big AS CHAR), CAST(price AS CHAR), CAST(day AS CHAR), CAST(at AS CHAR), CAST(doc AS CHAR) FROM kinds WHERE id = 2").Scan(&big, &price, &day, &atText, &doc); err != nil {
		t.Fatal(err)
	}
	if big != "170141183460469231731687303715884105727" || price != "12345.6789012345" || day != "2026-03-04" || !strings.HasPrefix(atText, "2026-03-04 05:06:07.123456") || strings.ReplaceAll(doc, " ", "") != `{"a":[1,2]}` {
		t.Errorf("values read back: %s %s %s %s %s", big, price, day, atText, doc)
	}
	if n := cl.count(t, "SELECT COUNT(*) FROM events"); n != 2 {
		t.Errorf("%d events, want 2 (a Duplicate Key table appends)", n)
	}
}

// TestEncodeRefusals: what EncodeBatch refuses, naming the place.
func TestEncodeRefusals(t *testing.T) {
	kinds := &Table{Table: schema.Table{Namespace: "db", Name: "t", PrimaryKey: []string{"id"},
		Columns: []schema.Column{{Name: "id", Class: schema.Int, Bits: 64}, {Name: "name", Class: schema.String, Length: 4}}},
		Model: PrimaryKeys, ByteLength: map[string]int{"name": 4}}
	dup := &Table{Table: schema.Table{Namespace: "db", Name: "d", Columns: kinds.Columns}, Model: DuplicateKeys, ByteLength: kinds.ByteLength}
	agg := &Table{Table: kinds.Table, Model: AggregateKeys}
	uniq := &Table{Table: schema.Table{Namespace: "db", Name: "u", PrimaryKey: []string{"id"}, Columns: kinds.Columns}, Model: UniqueKeys, ByteLength: kinds.ByteLength}
	for _, c := range []struct {
		name  string
		tbl   *Table
		batch commit.Batch
		kind  errkind.Kind
		where errkind.Where
	}{
		{"4 characters of 8 bytes", kinds, commit.Batch{Upserts: []commit.Group{{Columns: []string{"id", "name"}, Rows: [][]any{{int64(7), "ÄÖÜß"}}, Pos: []changelog.Position{pos(9)}}}},
			errkind.BadInput, errkind.Where{Pos: pos(9), Table: "db.t", Key: "(7)", Column: "name"}},
		{"deletes into a Duplicate Key table", dup, commit.Batch{Deletes: [][]any{{int64(1)}}}, errkind.Permanent, errkind.Where{Table: "db.d"}},
		{"an Aggregate table", agg, commit.Batch{}, errkind.Permanent, errkind.Where{Table: "db.t"}},
		{"a version column on a Unique Key table", uniq, commit.Batch{Rules: commit.Rules{Version: "name"}}, errkind.Permanent, errkind.Where{Table: "db.u"}},
		{"a delete with a version column", kinds, commit.Batch{Rules: commit.Rules{Version: "name"}, Deletes: [][]any{{int64(3)}}, DeletePos: []changelog.Position{pos(4)}, DeleteVersions: []any{"a"}},
			errkind.Permanent, errkind.Where{Pos: pos(4), Table: "db.t", Key: "(3)", Column: "name"}},
		{"a NULL version", kinds, commit.Batch{Rules: commit.Rules{Version: "name"}, Upserts: []commit.Group{{Columns: []string{"id", "name"}, Rows: [][]any{{int64(7), nil}}, Pos: []changelog.Position{pos(5)}}}},
			errkind.BadInput, errkind.Where{Pos: pos(5), Table: "db.t", Key: "(7)", Column: "name"}},
		{"soft deletes not made updates", kinds, commit.Batch{Rules: commit.Rules{SoftDelete: "name"}, Deletes: [][]any{{int64(1)}}, SoftValues: []any{true}}, errkind.Permanent, errkind.Where{Table: "db.t"}},
		{"a partial image into a Unique Key table", uniq, commit.Batch{Upserts: []commit.Group{{Columns: []string{"id", "name"}, Rows: [][]any{{int64(1), "a"}}, Partial: true}}}, errkind.Permanent, errkind.Where{Table: "db.u"}},
		{"a partial image beside deletes", kinds, commit.Batch{Deletes: [][]any{{int64(2)}}, Upserts: []commit.Group{{Columns: []string{"id", "name"}, Rows: [][]any{{int64(1), "a"}}, Partial: true}}}, errkind.Permanent, errkind.Where{Table: "db.t"}},
		{"a row without all columns", kinds, commit.Batch{Upserts: []commit.Group{{Columns: []string{"id"}, Rows: [][]any{{int64(1)}}}}}, errkind.Permanent, errkind.Where{Table: "db.t"}},
		{"NaN", &Table{Table: schema.Table{Namespace: "db", Name: "f", Columns: []schema.Column{{Name: "x", Class: schema.Float, Bits: 64}}}, Model: DuplicateKeys},
			commit.Batch{Inserts: []commit.Group{{Columns: []string{"x"}, Rows: [][]any{{nanValue()}}}}}, errkind.BadInput, errkind.Where{Table: "db.f", Column: "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := EncodeBatch(c.tbl, &c.batch)
			if errkind.Of(err) != c.kind {
				t.Fatalf("%v: kind %v, want %v", err, errkind.Of(err), c.kind)
			}
			if w, _ := errkind.WhereOf(err); w != c.where {
				t.Errorf("%v: where %+v, want %+v", err, w, c.where)
			}
		})
	}
}

func nanValue() float64 { var z float64; return z / z }
