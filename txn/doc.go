// Package txn is the pure core of source-transaction mode
// (sink.transaction.multi-table.enabled, seed 001): it groups the changes
// of each source partition into whole source transactions, freezes them
// into chunks, and plans commits that hold only whole transactions, so that
// everything one upstream transaction wrote, across all its tables, becomes
// visible in the target at once.
//
// It is a state machine over changes and an injected clock, in the style of
// etcd's raft: no goroutines, no time.Now, no randomness, no I/O. The engine
// feeds it (Step, Tick), asks it what to commit (Ready), commits, and tells
// it so (Advance).
//
// # Model
//
// A source transaction is the run of changes of one partition up to and
// including the one whose TxnEnd is set. Per partition the Machine keeps an
// active chunk (finished transactions not yet frozen, then the open
// transaction) and a FIFO of frozen chunks. A relational target commits all
// tables in one transaction, so the freeze and commit unit is the
// partition's chunk, and the seed's per-(partition, table) regions are not
// kept apart.
//
// What the Machine holds: the changes of each partition's open
// transaction, and, of finished ones, counts and a value the caller builds
// as each ends (Machine[T].Finished; the engine's is the per-key
// reduction of the transactions). A plan hands the values back, one per
// chunk. The decoded changes of a transaction are needed only until it
// ends, so their memory goes then, not when their plan commits.
//
// Freezing ("switching", seed 001):
//
//   - At a transaction end the active chunk freezes if MiniSwitchInterval
//     has passed since the partition's last switch AND it holds at least
//     MinSwitchBytes. The byte threshold is waived after a whole
//     CommitInterval since the last switch, or once the buffer is half
//     full. The first end of a partition always switches. Transactions
//     ending in between accumulate: N source transactions, 1 chunk.
//   - Tick freezes the finished transactions of a partition whose last end
//     is MiniSwitchInterval old (the source-idle fallback), and under
//     memory pressure every partition's finished transactions.
//   - An open transaction never freezes and is never in a plan. Unlike the
//     seed's chunks, an active chunk splits at its last end, so finished
//     transactions in front of an open one do not wait for it.
//
// Committing: Ready cuts a Plan of ALL frozen chunks of ALL partitions when
// CommitInterval has passed since the previous plan, when Bytes() reaches
// BufferSize, when the finished transactions reach CommitRows rows or
// CommitBytes (it then freezes them all first), or on an explicit flush.
// One plan is in flight at a time. One partition's open transaction never
// holds back another's frozen chunks. Per partition, plans follow source
// order.
//
// Rows, for CommitRows, are what the caller counts with StepCounted, or,
// with Step, the changes that can become a row write: an UpdateBefore is
// not one (its UpdateAfter is the row) and neither is an EndTxn marker.
// An update thus counts once. Step counts before reduction (the Machine
// knows no keys); the engine counts a key's later changes zero, so that
// buffer-flush.max-rows counts rows after reduction, as in plain mode.
//
// Freshness: a finished transaction freezes within MiniSwitchInterval
// (CommitInterval for a steady trickle below MinSwitchBytes) and is in a
// plan at the next commit tick: within CommitInterval + MiniSwitchInterval
// under steady load (plus the duration of a commit still in flight), up to 2×CommitInterval for a trickle below
// MinSwitchBytes (the seed's own budget for that case).
//
// Memory: Bytes() counts the Size of every change not yet advanced. At
// BufferSize commits stop waiting for the interval; at 2×BufferSize Step
// returns ErrBackPressure and the engine stops reading until a commit
// frees memory. If all buffered bytes are open transactions nothing can be
// freed, so the Machine keeps accepting (PressureOverrun) and only
// MaxTxnBytes bounds a single transaction, with an *Error naming
// max-txn-bytes, the partition, the transaction and the position.
//
// # Engine loop
//
// One goroutine owns the Machine. A sketch of the engine side, with
// reading, committing and timers reduced to functions:
//
//	m, err := txn.New[*reduce.Buffer](cfg)
//	if err != nil { return err }
//	for {
//		// Commit whatever is due. Ready runs Tick, so one timer at
//		// NextDeadline drives all time-based work.
//		for plan := m.Ready(clock.Now(), false); plan != nil; plan = m.Ready(clock.Now(), false) {
//			// One target transaction: merge the chunks' values into
//			// one unit, apply it, write plan.Progress, COMMIT. Retry the
//			// whole plan on transient errors; stop on permanent ones.
//			if err := commitPlan(ctx, plan); err != nil { return err }
//			m.Advance(plan) // only after COMMIT succeeded
//		}
//		if m.Pressure() == txn.PressureHard {
//			continue // do not read: the loop above frees memory first
//		}
//		if m.Pressure() == txn.PressureOverrun {
//			log.Warn("buffer full of open transactions; reading on until one ends")
//		}
//		deadline, ok := m.NextDeadline()
//		select {
//		case c, more := <-changes: // one partition's changes in source order
//			if !more {
//				// End of input or shutdown: commit every finished
//				// transaction; the open tail is dropped and read again
//				// after restart (progress does not cover it).
//				for plan := m.Ready(clock.Now(), true); plan != nil; plan = m.Ready(clock.Now(), true) {
//					if err := commitPlan(ctx, plan); err != nil { return err }
//					m.Advance(plan)
//				}
//				return nil
//			}
//			if c.TxnEnd {
//				// Reduce the transaction Open holds, and c, into the
//				// partition's finished transactions, before c is stepped.
//				reduceInto(m.Finished(c.Pos.Partition), m.Open(c.Pos.Partition), c)
//			}
//			switch err := m.Step(c, clock.Now()); {
//			case errors.Is(err, txn.ErrBackPressure):
//				// c was taken; the next iteration commits before reading.
//			case err != nil:
//				return err // *txn.Error: max-txn-bytes or interleaved input
//			}
//		case <-timerAt(deadline, ok): // never fires when !ok
//		}
//	}
//
// Committing a plan synchronously, as above, is the simplest correct use.
// An engine may also commit on another goroutine and keep stepping
// meanwhile (Step is allowed while a plan is in flight), as long as only
// the owning goroutine touches the Machine.
package txn
