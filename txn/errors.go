package txn

import (
	"errors"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/errkind"
)

// The sentinels Step returns, directly or wrapped in an *Error. Test with
// errors.Is.
var (
	// ErrBackPressure is returned by Step AFTER it accepted the change: the
	// buffer holds at least 2×BufferSize and a commit can free some of it.
	// It is a signal, not a failure. The engine MUST stop reading (call no
	// Step) until Pressure() is below PressureHard, and meanwhile cut,
	// commit and Advance plans; Ready is guaranteed to return a plan in
	// that state whenever none is in flight, so waiting cannot deadlock.
	ErrBackPressure = errors.New("txn: buffered changes reached 2×transaction.multi-table.buffer-size; stop reading until a commit frees memory")

	// ErrMaxTxnBytes is wrapped by the *Error Step returns when one open
	// source transaction would grow past Config.MaxTxnBytes. Permanent.
	ErrMaxTxnBytes = errors.New("source transaction exceeds sink.transaction.multi-table.max-txn-bytes")

	// ErrInterleaved is wrapped by the *Error Step returns when a change of
	// transaction B arrives on a partition whose transaction A has not
	// ended (both ids known). Committing either would split a source
	// transaction, so the input is refused. Permanent.
	ErrInterleaved = errors.New("a change of another source transaction arrived before the open one ended")
)

// Error is a change Step refuses. It names the partition, the source
// transaction and the positions a person needs to find it. It is permanent:
// retrying the same input cannot help, and the Machine is left as it was
// before the refused Step (the change was not taken).
type Error struct {
	// Partition is the partition the change came from.
	Partition string
	// TxnID is the open source transaction's id ("" when the format carries
	// none).
	TxnID string
	// Pos is where the refused change was read.
	Pos changelog.Position
	// Start is where the open transaction's first change was read (zero
	// when the refused change would have started it).
	Start changelog.Position
	// Bytes is what the open transaction would hold with the refused change
	// (max-txn-bytes refusals).
	Bytes int64
	// Limit is the max-txn-bytes it exceeds (max-txn-bytes refusals).
	Limit int64
	// Decoded says Bytes and Limit count the memory of the transaction's
	// decoded changes (changelog.Change.MemBytes), as the engine bounds a
	// transaction, rather than their Size; the message then says so, and
	// what to do with both options the limit comes from.
	Decoded bool
	// Other is the transaction id of the refused change (ErrInterleaved).
	Other string
	// Err is ErrMaxTxnBytes or ErrInterleaved.
	Err error
}

// Error renders, for example:
//
//	p0:17: partition p0 transaction t9 (started at p0:3): source transaction exceeds sink.transaction.multi-table.max-txn-bytes: 1048600 bytes > 1048576; raise max-txn-bytes (0 = unlimited) or split the transaction upstream
//
// and with Decoded:
//
//	p0:17: partition p0 transaction t9 (started at p0:3): source transaction exceeds sink.transaction.multi-table.max-txn-bytes: its decoded changes take 1048600 bytes of memory > 1048576; nothing of it is committed, and the stored progress stays before it. If the host has the memory, raise max-txn-bytes (its default, auto, is sink.transaction.multi-table.buffer-size: raise that with it to keep memory bounded by the buffer; unlimited for no limit) and run again, or split the transaction upstream
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": partition ")
	b.WriteString(e.Partition)
	if e.TxnID != "" {
		b.WriteString(" transaction ")
		b.WriteString(e.TxnID)
	}
	if e.Start != (changelog.Position{}) {
		b.WriteString(" (started at ")
		b.WriteString(e.Start.String())
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	switch e.Err {
	case ErrMaxTxnBytes:
		if e.Decoded {
			b.WriteString(": its decoded changes take ")
			b.WriteString(strconv.FormatInt(e.Bytes, 10))
			b.WriteString(" bytes of memory > ")
			b.WriteString(strconv.FormatInt(e.Limit, 10))
			b.WriteString("; nothing of it is committed, and the stored progress stays before it. If the host has the memory, " +
				"raise max-txn-bytes (its default, auto, is sink.transaction.multi-table.buffer-size: raise that with it to keep " +
				"memory bounded by the buffer; unlimited for no limit) and run again, or split the transaction upstream")
			break
		}
		b.WriteString(": ")
		b.WriteString(strconv.FormatInt(e.Bytes, 10))
		b.WriteString(" bytes > ")
		b.WriteString(strconv.FormatInt(e.Limit, 10))
		b.WriteString("; raise max-txn-bytes (0 = unlimited) or split the transaction upstream")
	case ErrInterleaved:
		b.WriteString(": got transaction ")
		b.WriteString(e.Other)
		b.WriteString("; the source format must deliver each partition's transactions one after the other, the last change of each marked as its end")
	}
	return b.String()
}

// Kind reports errkind.Permanent: the source transaction cannot be
// committed whole under the configuration (it is too large, or another
// interleaves it), and retrying it meets the same refusal; it is not a
// change that could be quarantined alone.
func (e *Error) Kind() errkind.Kind { return errkind.Permanent }

// Where names the refused change's position.
func (e *Error) Where() errkind.Where { return errkind.Where{Pos: e.Pos} }

// Unwrap returns ErrMaxTxnBytes or ErrInterleaved.
func (e *Error) Unwrap() error { return e.Err }
