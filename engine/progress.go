package engine

// Progress: the position stored for each partition, read at start
// (engine.New, claimed with fencing) and moved by every commit. A record
// at or before its partition's stored position is never applied again.

import (
	"context"
	"maps"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Progress returns the position stored for partition, and whether there is
// one. Sources start reading after it.
func (e *Engine) Progress(partition string) (changelog.Position, bool) {
	p, ok := e.stored()[partition]
	return p, ok
}

// setProgress replaces the stored positions with a copy of them that set
// changes.
func (e *Engine) setProgress(set func(m map[string]changelog.Position)) {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	m := maps.Clone(e.stored())
	if m == nil {
		m = map[string]changelog.Position{}
	}
	set(m)
	e.progress.Store(&m)
}

// stored returns the stored positions (see progress): read only.
func (e *Engine) stored() map[string]changelog.Position {
	if m := e.progress.Load(); m != nil {
		return *m
	}
	return nil
}

// Applied reports whether the record at pos was committed already.
func (e *Engine) Applied(pos changelog.Position) bool {
	p, ok := e.stored()[pos.Partition]
	return ok && pos.Offset <= p.Offset
}

// appliedAt remembers one partition's stored position, with the map of
// stored positions it was read from.
type appliedAt struct {
	m    *map[string]changelog.Position
	part string
	pos  changelog.Position
	ok   bool
}

// applied is Applied for the goroutine that calls Add (Run's loop): a
// partition's records come in runs and the stored positions change only
// with a commit, so it looks the partition up again only when either
// changed. A look-up for every record was 2% of txsink's instructions
// on the insert-only bench, mostly hashing the partition's name.
func (e *Engine) applied(pos changelog.Position) bool {
	a := &e.appliedAt
	if m := e.progress.Load(); m != a.m || pos.Partition != a.part {
		a.m, a.part, a.ok = m, pos.Partition, false
		if m != nil {
			a.pos, a.ok = (*m)[pos.Partition]
		}
	}
	return a.ok && pos.Offset <= a.pos.Offset
}

// partitions lists the partitions the configured source reads, when it
// knows them before reading (a source.Lister: files).
func (e *Engine) partitions() []string {
	if l, ok := e.src.(source.Lister); ok {
		return l.Partitions()
	}
	return nil
}

// checkStoredPartitions refuses stored progress the source cannot resume
// from (see source.ProgressChecker): for files, progress of a partition
// the configuration does not read.
func (e *Engine) checkStoredPartitions(stored map[string]changelog.Position) error {
	if c, ok := e.src.(source.ProgressChecker); ok {
		return c.CheckProgress(stored)
	}
	return nil
}

// rewind moves a stream partition's stored position back to its start:
// a stream is read from its first byte on every run.
func (e *Engine) rewind(ctx context.Context, part string) error {
	if pos, ok := e.Progress(part); !ok || pos.Offset == 0 && pos.Seq == 0 {
		return nil
	}
	if err := e.rewindTarget(ctx, part); err != nil {
		return err
	}
	e.setProgress(func(m map[string]changelog.Position) { m[part] = changelog.Position{Partition: part} })
	e.forgetOrders(part)
	e.mu.Lock()
	ps := e.partLocked(part)
	ps.Committed, ps.CommittedSeq, ps.Read = 0, 0, 0
	e.mu.Unlock()
	e.log.Info("reading a stream from its start: the position of an earlier run is not resumed", "partition", part)
	return nil
}
