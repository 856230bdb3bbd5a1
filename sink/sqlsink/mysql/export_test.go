package mysql

// LoadCounts returns how many groups Load wrote or declined, by path
// ("insert", "replace", "stage", "declined", "rolled back"), for tests.
func LoadCounts(d *Dialect) map[string]int64 {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	out := map[string]int64{}
	for p, n := range d.bulk.counts {
		out[loadPath(p).String()] = n
	}
	return out
}

// LoadOff returns why the bulk path is off for the dialect's server, ""
// while it is on.
func LoadOff(d *Dialect) string {
	d.bulk.mu.Lock()
	defer d.bulk.mu.Unlock()
	return d.bulk.off
}

// NewRowReader returns the reader Load streams rows through.
var NewRowReader = newRowReader

// RowReaderErr returns why a reader from NewRowReader stopped before its
// last row, nil when it did not.
func RowReaderErr(r any) error { return r.(*rowReader).err }

// OneQueryOff reports whether the loader has gone back to three
// statements per load after its one query was refused.
func OneQueryOff(d *Dialect) bool { return d.bulk.oneQueryOff.Load() }

// CompareOf is compareOf, for tests.
var CompareOf = compareOf
