package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink/sqlsink"
)

var _ sqlsink.Versioner = Dialect{}

// ShapeVersion implements target.Versioner with a digest of the table's
// CREATE statement as sqlite_master keeps it, which ALTER TABLE rewrites.
func (Dialect) ShapeVersion(ctx context.Context, q sqlsink.Querier, name schema.Name) (string, error) {
	var create string
	if err := q.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", name.Name).Scan(&create); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(create))
	return hex.EncodeToString(sum[:16]), nil
}
