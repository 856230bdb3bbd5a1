package mysql

import (
	"strings"

	"github.com/txsink/txsink/schema"
)

// compareOf says how MariaDB/MySQL compares a text column of the given
// collation; fixed marks a CHAR column, whose trailing spaces the server
// strips as it stores a value, whatever the collation's pad attribute.
//
// Reproduced exactly: binary collations (every charset's _bin, PAD SPACE
// unless _nopad_; MySQL 8's 0900 ones are NO PAD), and MariaDB's
// utf8mb4/utf8mb3 general_ci and general_nopad_ci, whose weights package
// collate holds (read from the server, and checked against it by
// TestCompareMatchesServer). Any other collation (unicode_ci, uca1400,
// 0900_ai_ci, latin1_swedish_ci, …) is marked Unsupported: its weights
// are not guessed.
func compareOf(collation string, fixed bool) schema.Compare {
	c := schema.Compare{Collation: collation, PadSpace: fixed}
	lc := strings.ToLower(collation)
	nopad := strings.Contains(lc, "_nopad_") || strings.Contains(lc, "_0900_")
	switch {
	case lc == "" || lc == "binary":
		c.Collation = ""
	case strings.HasSuffix(lc, "_bin"):
		c.PadSpace = c.PadSpace || !nopad
	case lc == "utf8mb4_general_ci" || lc == "utf8mb3_general_ci" || lc == "utf8_general_ci":
		c.Fold, c.PadSpace = schema.FoldGeneralCI, true
	case lc == "utf8mb4_general_nopad_ci" || lc == "utf8mb3_general_nopad_ci" || lc == "utf8_general_nopad_ci":
		c.Fold = schema.FoldGeneralCI
	default:
		c.Unsupported = "only binary collations and utf8mb4_general_ci are reproduced"
	}
	return c
}
