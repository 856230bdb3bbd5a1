package sqlsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
)

// Versioner is an optional interface of a Dialect whose catalog can say,
// cheaply, whether a table's shape changed: its columns, their types,
// nullability, defaults, collations and constraints. A table altered while
// txsink runs (a column narrowed, a timestamp's precision cut, a column
// widened) would otherwise be written with values converted for its old
// shape, and the server would round or truncate them without a word.
type Versioner interface {
	// ShapeVersion returns a text that changes whenever table name's
	// definition changes; name.Namespace "" is the connection's database
	// or schema. It runs on q, which may be the unit's transaction.
	ShapeVersion(ctx context.Context, q Querier, name schema.Name) (string, error)
}

// checkShapes fails the unit, inside its transaction and after its
// statements, when one of its tables is no longer the shape its values were
// converted for. Checked there it cannot be passed by: an ALTER waits for
// the locks the unit's writes hold (a metadata lock on MySQL and MariaDB,
// a table lock on PostgreSQL, the database's write lock on SQLite), and
// one that came before the writes is seen.
func (t *DB) checkShapes(ctx context.Context, tx Querier, u *commit.Unit, planned map[string]string) error {
	b, err := t.alteredBatch(ctx, tx, u, planned)
	if err != nil {
		return t.wrap("check the definition of", b.Table.String(), "", err)
	}
	if b != nil {
		return &sink.Error{Op: "commit", Table: b.Table.String(), Err: fmt.Errorf("%w (it was changed while txsink ran)", sink.ErrShapeChanged),
			Hint: "nothing of this unit was written; txsink reads the definition again and converts the changes anew"}
	}
	return nil
}

// alteredBatch returns the first batch of u whose table is no longer the
// shape its values were converted for (nil when none is, or the dialect
// cannot tell). On an error it returns the batch whose check failed.
// planned holds the versions the unit's in-unit ALTERs left (see
// expectedVersion).
func (t *DB) alteredBatch(ctx context.Context, q Querier, u *commit.Unit, planned map[string]string) (*commit.Batch, error) {
	v, ok := t.dialect.(Versioner)
	if !ok {
		return nil, nil
	}
	for _, b := range u.Batches {
		if b.Table.Version == "" {
			continue
		}
		now, err := v.ShapeVersion(ctx, q, schema.Name{Namespace: b.Table.Namespace, Name: b.Table.Name})
		if err != nil {
			return b, err
		}
		if now != t.expectedVersion(b.Table, planned) {
			return b, nil
		}
	}
	return nil, nil
}

// staleRefusal returns, for a statement of u the server refused, an
// ErrShapeChanged error when one of u's tables was altered since it was
// described: the statement was written for the old definition (a column
// since dropped, a length since cut, NOT NULL since added), so the
// server's refusal says nothing the new definition would, and the engine
// describes the table again and converts the changes anew. It returns nil
// when no table changed, or when the catalog cannot be read (the refusal
// is then reported as it is).
func (t *DB) staleRefusal(ctx context.Context, u *commit.Unit, refusal error) error {
	b, err := t.alteredBatch(ctx, t.db, u, nil)
	if err != nil || b == nil {
		return nil
	}
	cause := refusal
	var te *sink.Error
	if errors.As(refusal, &te) {
		cause = te.Err
	}
	return &sink.Error{Op: "write", Table: b.Table.String(),
		Err:  fmt.Errorf("%w (it was changed while txsink ran; the server refused a statement written for its old definition: %v)", sink.ErrShapeChanged, cause),
		Hint: "nothing of this unit was written; txsink reads the definition again and converts the changes anew"}
}

// ShapeChanged reports whether table tbl was altered since it was
// described (false when its dialect cannot tell). A value the old shape
// refuses may fit the new one: the engine asks before it calls the value
// bad input.
func (t *DB) ShapeChanged(ctx context.Context, tbl *schema.Table) (bool, error) {
	v, ok := t.dialect.(Versioner)
	if !ok || tbl.Version == "" {
		return false, nil
	}
	now, err := v.ShapeVersion(ctx, t.db, schema.Name{Namespace: tbl.Namespace, Name: tbl.Name})
	if err != nil {
		return false, t.wrap("check the definition of", tbl.String(), "", err)
	}
	return now != t.expectedVersion(tbl, nil), nil
}
