package coerce

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/schema"
)

// TestDateTimeFractionScale: plainDateTime scales a fraction of every
// length, 1 to 9 digits, to nanoseconds by one product (nanoScale), as
// the general path reads it; longer fractions, and ones with more
// significant digits than the column keeps, are left to it.
func TestDateTimeFractionScale(t *testing.T) {
	for n := 1; n <= 10; n++ {
		for _, digits := range []string{"123456789X"[:n], strings.Repeat("9", n), strings.Repeat("0", n-1) + "1", strings.Repeat("0", n)} {
			digits = strings.ReplaceAll(digits, "X", "0")
			for _, fd := range []int{0, 3, 6, 9} {
				col := timeCol(schema.DateTime, fd)
				sameAsGeneral(t, toDateTimeAny, col, "2026-11-01 09:23:45."+digits)
			}
		}
	}
}
