package starrocks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/schema"
)

const typesDDL = `CREATE TABLE kinds (
	id BIGINT NOT NULL, flag BOOLEAN, small SMALLINT, big LARGEINT, price DECIMAL(38,10),
	ratio DOUBLE, code CHAR(3), name VARCHAR(10) NOT NULL, body STRING, day DATE, at DATETIME, doc JSON
) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`

// TestDescribe reads columns, classes, lengths, the key and the kind from
// the catalog.
func TestDescribe(t *testing.T) {
	cl := newCluster(t)
	cl.ddl(t, typesDDL, eventsDDL)
	ctx := context.Background()
	tbl, err := Describe(ctx, cl.SQL, cl.catalog, cl.db, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Model != PrimaryKeys || !tbl.TakesDeletes() || strings.Join(tbl.PrimaryKey, ",") != "id" || tbl.String() != cl.db+".kinds" {
		t.Fatalf("model %s, key %v, name %s", tbl.Model, tbl.PrimaryKey, tbl)
	}
	for _, w := range []struct {
		name     string
		class    schema.Class
		bits     int
		prec     int
		scale    int
		length   int
		nullable bool
	}{
		{"id", schema.Int, 64, 0, 0, 0, false},
		{"flag", schema.Bool, 0, 0, 0, 0, true},
		{"small", schema.Int, 16, 0, 0, 0, true},
		{"big", schema.Decimal, 0, 39, 0, 0, true},
		{"price", schema.Decimal, 0, 38, 10, 0, true},
		{"ratio", schema.Float, 64, 0, 0, 0, true},
		{"code", schema.String, 0, 0, 0, 3, true},
		{"name", schema.String, 0, 0, 0, 10, false},
		{"body", schema.String, 0, 0, 0, 65533, true},
		{"day", schema.Date, 0, 0, 0, 0, true},
		{"at", schema.DateTime, 0, 0, 0, 0, true},
		{"doc", schema.JSON, 0, 0, 0, 0, true},
	} {
		c, ok := tbl.Column(w.name)
		if !ok {
			t.Errorf("no column %s", w.name)
			continue
		}
		if c.Class != w.class || c.Bits != w.bits || c.Precision != w.prec || c.Scale != w.scale || c.Length != w.length || c.Nullable != w.nullable {
			t.Errorf("%s: %+v, want %+v", w.name, *c, w)
		}
		if c.Class == schema.String && tbl.ByteLength[w.name] != w.length {
			t.Errorf("%s: byte length %d", w.name, tbl.ByteLength[w.name])
		}
	}
	ev, err := Describe(ctx, cl.SQL, cl.catalog, cl.db, "events")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Model != DuplicateKeys || len(ev.PrimaryKey) != 0 || ev.RefuseChanges(false) != nil {
		t.Errorf("events: model %s key %v", ev.Model, ev.PrimaryKey)
	}
	if err := ev.RefuseChanges(true); err == nil || !strings.Contains(err.Error(), "Primary Key") || errkind.Of(err) != errkind.Permanent {
		t.Errorf("deletes into a Duplicate Key table: %v", err)
	}
	_, err = Describe(ctx, cl.SQL, cl.catalog, cl.db, "nope")
	var de *DescribeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), cl.db+".nope") {
		t.Errorf("a missing table: %v", err)
	}
}
