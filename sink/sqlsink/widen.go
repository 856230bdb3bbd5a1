package sqlsink

// Widening a column the source widened (schema: {evolve: widen}): which
// changes are safe widenings (decided here, for every dialect), and the
// statement each dialect renders for one (ColumnModifier).

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/schema/coltype"
	"github.com/txsink/txsink/sink"
)

var _ sink.Widener = (*DB)(nil)

// ColumnModifier is a TypeMapper whose server changes a column's type in
// place (MySQL and MariaDB MODIFY COLUMN, PostgreSQL ALTER COLUMN TYPE).
// A dialect without it (SQLite) changes no DDL to widen: see
// DeclaredTypes.
type ColumnModifier interface {
	TypeMapper
	// WidenedType returns the type of column cur with to's parameters
	// (its Bits, Length, Precision or FracDigits raised), in cur's own
	// spelling: the same type, wider. An error says why there is none.
	WidenedType(cur, to schema.Column) (string, error)
	// ModifyColumn returns the statement that gives column cur of table
	// name the type typ, keeping everything else the column has:
	// NULL-ability, default, character set and collation. It may read
	// the catalog through q.
	ModifyColumn(ctx context.Context, q Querier, name schema.Name, cur schema.Column, typ string) (string, error)
}

// DeclaredTypes is a dialect whose declared types are affinities the
// server does not enforce (SQLite): a widening changes no DDL, and the
// table's column is described wider for the rest of the run (DB keeps
// it), since the server stores the wider values as they are. Widens
// reports whether the server keeps every value of to exactly in cur
// ("" when it does, else why not and what to do).
type DeclaredTypes interface {
	Dialect
	Widens(cur, to schema.Column) string
}

// widened holds the columns a DeclaredTypes target widened without DDL:
// by table and column, the column as the catalog describes it and as it
// is held to since.
type widened struct {
	mu sync.Mutex
	m  map[string]widenedColumn
}

type widenedColumn struct{ from, to schema.Column }

func widenedKey(table, column string) string { return table + "\x00" + column }

// apply describes tbl's widened columns wider, while the catalog still
// declares them as it did when they were widened.
func (w *widened) apply(tbl *schema.Table) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range tbl.Columns {
		c := &tbl.Columns[i]
		if wc, ok := w.m[widenedKey(tbl.String(), c.Name)]; ok && wc.from.SQLType == c.SQLType {
			c.Precision, c.Scale, c.FracDigits, c.Length, c.Bits = wc.to.Precision, wc.to.Scale, wc.to.FracDigits, wc.to.Length, wc.to.Bits
		}
	}
}

// Widening decides whether a column of the target as cur describes it
// takes the type decl declares by a safe widening, and returns cur so
// widened: wider is false when decl is not wider (or does not say: a
// string without a length); change, when not "", names a change that is
// not a safe widening (a narrower type, another type, another scale),
// which txsink never makes. Only the type's own parameters are
// compared; a kind the target spells otherwise (a boolean as TINYINT(1),
// an unsigned 64-bit integer as DECIMAL or TEXT) is no change.
func Widening(cur schema.Column, decl coltype.Type) (to schema.Column, wider bool, change string) {
	to = cur
	other := func() (schema.Column, bool, string) {
		return cur, false, "a change of type"
	}
	switch decl.Kind {
	case coltype.Int:
		bits := decl.Bits
		class := schema.Int
		if decl.Unsigned {
			class = schema.Uint
		}
		switch {
		case cur.Class == schema.Int && decl.Unsigned:
			// A signed column holds the unsigned values of one width
			// less; the next signed width holds them all.
			if bits >= 64 {
				return other()
			}
			bits = map[int]int{8: 16, 16: 24, 24: 32, 32: 64}[bits]
		case cur.Class == schema.Uint && !decl.Unsigned:
			return other()
		case cur.Class != class:
			return cur, false, ""
		}
		if bits <= cur.Bits {
			return cur, false, ""
		}
		to.Bits = bits
		return to, true, ""
	case coltype.Decimal:
		if cur.Class != schema.Decimal || decl.Scale == coltype.VariableScale || decl.Precision == 0 {
			return cur, false, ""
		}
		switch {
		case decl.Scale != cur.Scale:
			return cur, false, "a change of scale (a decimal's precision is widened, its scale never)"
		case decl.Precision <= cur.Precision:
			return cur, false, ""
		}
		to.Precision = decl.Precision
		return to, true, ""
	case coltype.String, coltype.Bytes:
		class := schema.String
		if decl.Kind == coltype.Bytes {
			class = schema.Bytes
		}
		switch {
		case cur.Class != class:
			if cur.Class == schema.Unknown || cur.Class == schema.JSON {
				return cur, false, ""
			}
			return other()
		case decl.Length == 0 || cur.Length == 0 || decl.Length <= cur.Length:
			return cur, false, ""
		case decl.Fixed != cur.Fixed:
			return cur, false, "a change from fixed to variable length or back"
		}
		to.Length = decl.Length
		return to, true, ""
	case coltype.Time, coltype.DateTime, coltype.Timestamp:
		class := kindClass[decl.Kind]
		switch {
		case cur.Class != class:
			if cur.Class == schema.Time || cur.Class == schema.DateTime || cur.Class == schema.Timestamp || cur.Class == schema.Date {
				return other()
			}
			return cur, false, ""
		case decl.Frac <= cur.FracDigits:
			return cur, false, ""
		}
		to.FracDigits = min(decl.Frac, coltype.MaxFrac)
		return to, to.FracDigits > cur.FracDigits, ""
	}
	return cur, false, ""
}

// PlanWiden returns what widening column cur of table name to decl takes
// (sink.Widener), running nothing: the dialect's ALTER (ColumnModifier),
// or none on a DeclaredTypes target; a change that is no safe widening
// is Refused, with the statement that makes it for a DBA to review.
func (t *DB) PlanWiden(ctx context.Context, name schema.Name, cur schema.Column, decl coltype.Column) (*sink.Widening, error) {
	to, wider, change := Widening(cur, decl.Type)
	if !wider && change == "" {
		return nil, nil
	}
	w := &sink.Widening{Column: cur.Name, From: typeText(cur), To: decl.Type.Source, Target: to, Refused: change}
	if w.To == "" {
		w.To = decl.Type.String()
	}
	if dt, ok := t.dialect.(DeclaredTypes); ok {
		if w.Refused == "" {
			w.Refused = dt.Widens(cur, to)
		} else {
			w.Refused += "; " + dt.Name() + " has no ALTER COLUMN: make the table again with the column's new type (see https://sqlite.org/lang_altertable.html#otheralter)"
		}
		return w, nil
	}
	cm, ok := t.dialect.(ColumnModifier)
	if !ok {
		if w.Refused == "" {
			w.Refused = fmt.Sprintf("the %s target cannot widen columns", t.dialect.Name())
		}
		return w, nil
	}
	var typ string
	var err error
	if change == "" {
		typ, err = cm.WidenedType(cur, to)
	} else {
		decl.Default = nil // MODIFY keeps the column's own
		typ, err = columnType(t.dialect, cm, decl, false)
	}
	if err != nil {
		if w.Refused == "" {
			w.Refused = err.Error()
		}
		return w, nil
	}
	stmt, err := cm.ModifyColumn(ctx, t.db, name, cur, typ)
	if err != nil {
		return nil, t.wrap("widen column", name.String(), "", fmt.Errorf("column %s: %w", cur.Name, err))
	}
	w.Statements = []string{stmt}
	return w, nil
}

// Widen makes w (sink.Widener): the catalog is read first, and a column
// another instance widened already is left as it is; on a DeclaredTypes
// target the column is held to its wider type for the rest of the run.
func (t *DB) Widen(ctx context.Context, name schema.Name, w *sink.Widening) error {
	if w.Refused != "" {
		return &sink.Error{Op: "widen column", Table: name.String(), Err: fmt.Errorf("column %s: %s", w.Column, w.Refused), Hint: "this is a bug: txsink widens only what PlanWiden allows"}
	}
	tbl, err := t.dialect.Describe(ctx, t.db, name)
	if err != nil {
		return t.wrap("widen column", name.String(), "", err)
	}
	cur, ok := tbl.Column(w.Column)
	if !ok {
		return &sink.Error{Op: "widen column", Table: name.String(), Err: fmt.Errorf("column %s is gone from the target table", w.Column),
			Hint: "txsink reads the definition again; if the column was dropped, add it back or route the change elsewhere", Transient: true}
	}
	if _, ok := t.dialect.(DeclaredTypes); ok {
		t.widened.mu.Lock()
		if t.widened.m == nil {
			t.widened.m = map[string]widenedColumn{}
		}
		t.widened.m[widenedKey(tbl.String(), cur.Name)] = widenedColumn{from: *cur, to: w.Target}
		t.widened.mu.Unlock()
		return nil
	}
	if wideEnough(*cur, w.Target) {
		return nil
	}
	for _, stmt := range w.Statements {
		if _, err := t.db.ExecContext(ctx, stmt); err != nil {
			return t.wrap("widen column", name.String(), "", fmt.Errorf("column %s: %s: %w", w.Column, stmt, err))
		}
	}
	return nil
}

// typeText renders cur's type for messages: the catalog's name, with
// the length, precision and scale when the name lacks them
// (PostgreSQL's information_schema writes "numeric").
func typeText(cur schema.Column) string {
	switch {
	case strings.Contains(cur.SQLType, "("):
	case cur.Class == schema.Decimal && cur.Precision > 0:
		return fmt.Sprintf("%s(%d,%d)", cur.SQLType, cur.Precision, cur.Scale)
	case (cur.Class == schema.String || cur.Class == schema.Bytes) && cur.Length > 0:
		return fmt.Sprintf("%s(%d)", cur.SQLType, cur.Length)
	}
	return cur.SQLType
}

// wideEnough reports whether cur holds every value of the type to
// describes: another instance widened it.
func wideEnough(cur, to schema.Column) bool {
	return cur.Class == to.Class && cur.Bits >= to.Bits && cur.Precision >= to.Precision && cur.Scale == to.Scale &&
		(cur.Length == 0 || cur.Length >= to.Length) && cur.FracDigits >= to.FracDigits
}
