package mysql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Versioner = (*Dialect)(nil)

// autoIncrement matches the counter SHOW CREATE TABLE shows, which moves
// with every insert and says nothing of the shape.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// ShapeVersion implements target.Versioner with a digest of SHOW CREATE
// TABLE (without its AUTO_INCREMENT counter): every column, type,
// default, collation, index and constraint is in it.
func (d *Dialect) ShapeVersion(ctx context.Context, q sqlsink.Querier, name schema.Name) (string, error) {
	tbl := d.Quote(name.Name)
	if name.Namespace != "" {
		tbl = d.Quote(name.Namespace) + "." + tbl
	}
	var n, create string
	if err := q.QueryRowContext(ctx, "SHOW CREATE TABLE "+tbl).Scan(&n, &create); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(autoIncrement.ReplaceAllString(create, "")))
	return hex.EncodeToString(sum[:16]), nil
}
