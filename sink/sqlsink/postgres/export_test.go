package postgres

import "testing"

// Strategy names an upsert path for SetLoad.
type Strategy = strategy

// The upsert strategies of the bulk path.
const (
	Adaptive   = adaptive
	DirectOnly = directOnly
	StagedOnly = stagedOnly
)

// SetLoad makes Load take groups of at least minRows rows (staged ones
// included) and upsert them by s, until tb ends.
func SetLoad(tb testing.TB, minRows int, s Strategy) {
	tb.Helper()
	oldMin, oldStage, oldStrategy := loadMinRows, stageMinRows, loadStrategy
	loadMinRows, stageMinRows, loadStrategy = minRows, minRows, s
	tb.Cleanup(func() { loadMinRows, stageMinRows, loadStrategy = oldMin, oldStage, oldStrategy })
}

// LoadCounts returns how many loads tried COPY straight into their table,
// how many went through the staging table, and how many of the direct
// tries met an existing key and went on staged.
func LoadCounts() (direct, staged, retried int64) {
	return loads.direct.Load(), loads.staged.Load(), loads.retried.Load()
}

// CitextFold is citextFold, for tests.
var CitextFold = citextFold

// SetBinary turns COPY's binary format on or off until tb ends.
func SetBinary(tb testing.TB, on bool) {
	tb.Helper()
	old := binaryCopy
	binaryCopy = on
	tb.Cleanup(func() { binaryCopy = old })
}

// BinaryLoads returns how many loads went in COPY's binary format.
func BinaryLoads() int64 { return loads.binary.Load() }

// BinaryCopy is binaryCopy, for benchmarks that take turns between the
// formats.
var BinaryCopy = &binaryCopy
