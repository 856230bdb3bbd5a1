// Package file reads newline-delimited records from files, one file being
// one partition of the changelog.
//
// Each line is one record. Positions count bytes and lines: a record's
// Pos.Offset is the byte offset just past its line terminator, where reading
// resumes once it is applied, and Pos.Seq is its 1-based line number, so an
// error can point at "path:line". Lines may end in "\n" or "\r\n"; lines of
// only whitespace are skipped but still counted.
//
// A Reader stops at the end of the file, or, in follow mode, waits for the
// file to grow the way tail -f does. Standard input ("-"), pipes and other
// inputs that cannot seek are read as streams: resuming skips bytes by
// reading them, and their end is final.
//
// A typical loop, with progress taken from the target:
//
//	r, err := file.Open(path, progress, follow)
//	if err != nil {
//		return err
//	}
//	defer r.Close()
//	for {
//		rec, err := r.Next(ctx)
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err
//		}
//		// decode rec.Data; apply; persist rec.Pos with the data
//	}
package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Defaults of a Reader's tunable fields.
const (
	// DefaultMaxRecordBytes is the default of Reader.MaxRecordBytes: 64 MiB.
	DefaultMaxRecordBytes = 64 << 20
	// DefaultPollInterval is the default of Reader.PollInterval. It adds
	// to the time a followed change takes to become visible, so it is
	// kept well under the default commit interval; a stat and a read of
	// nothing every 50ms cost nothing to speak of.
	DefaultPollInterval = 50 * time.Millisecond
)

// bufferSize is the size of the blocks a Reader reads into. A line cut by a
// block's end is copied to the start of the next block, and a line longer
// than a block goes into a larger one made for it. BenchmarkNext reads
// 220-byte records equally fast with 64 KiB and 1 MiB buffers, and a block
// is paid once per partition (plus those its lent records hold), so the
// size is a middle: large records (a few KiB with Debezium schemas) are
// rarely cut without a thousand partitions costing a gigabyte.
const bufferSize = 256 << 10

// The errors a Reader wraps; test for them with errors.Is.
var (
	// ErrFileChanged means the file is not the one reading began on: a
	// resume offset lies past its end, it shrank while being read, or its
	// path now names another file. Offsets recorded for it can no longer be
	// trusted.
	ErrFileChanged = errors.New("file truncated or replaced")
	// ErrRecordTooLong means a line exceeds Reader.MaxRecordBytes.
	ErrRecordTooLong = errors.New("record too long")
)

// Record is one line of a file: source.Record. Data excludes the line
// terminator and is a fresh allocation owned by the caller: it stays valid
// after later calls to Next. That costs one allocation per record; a later
// version may trade it for reused buffers, and will say so here.
type Record = source.Record

// stdin is what Open reads for "-"; tests replace it.
var stdin io.Reader = os.Stdin

// Reader reads the lines of one file or stream. It is not safe for
// concurrent use, except Size.
type Reader struct {
	// MaxRecordBytes is the longest line accepted, in bytes, excluding its
	// terminator; a longer one stops the Reader with ErrRecordTooLong rather
	// than growing memory without bound. Default DefaultMaxRecordBytes. Set
	// it before the first Next.
	MaxRecordBytes int
	// PollInterval is how often a following Reader checks a file for growth
	// once it has read everything. Default DefaultPollInterval. Set it
	// before the first Next.
	PollInterval time.Duration

	name string
	// osPath is the file's path when it differs from name.
	osPath string
	// file is what records' Pos.File says: the file's name when it is
	// one of a partition's several files, else "". markName is the
	// file's name in marks (see Mark.File).
	file     string
	markName string
	f        *os.File  // a regular file; nil for a stream
	guard    *guard    // reads f, checking it is not rewritten; nil for a stream
	pump     *pump     // a stream's reading goroutine; nil for a regular file
	closer   io.Closer // closed by Close: the file Open opened; nil if the caller owns the input
	in       io.Reader // guard or pump
	follow   bool

	// Invariant: offset and seq describe the input up to the end of the last
	// line consumed (returned or skipped). blk.b[head:tail] holds the bytes
	// read after it, of which the first scanned hold no '\n'. blk is nil
	// before the first read and once the Reader is done.
	offset     int64
	seq        int64
	blk        *block
	head, tail int
	scanned    int
	pending    error // a read's error, returned once what came with it is consumed
	// midLine: the start offset falls just after a last line that had no
	// terminator (a non-following reader returned it at the end of the
	// file). A terminator arriving right there completes that line instead
	// of starting an empty one, so line numbers stay true.
	midLine bool

	size   atomic.Int64
	err    error // permanent: returned by every later Next
	timer  *time.Timer
	onWait func() // test hook: called each time Next starts waiting for growth
	// moveOn, when set, is asked by a following Reader each time it finds
	// the file has not grown: true means the file is finished (a later
	// file of its partition exists), so the Reader stops following and
	// ends at the file's end.
	moveOn func() (bool, error)
}

var _ source.Reader = (*Reader)(nil)

// Open opens the file at path for reading from start, a position Next
// returned earlier for the same path (the zero Position reads from the
// beginning). start.Offset is the byte offset to resume at, start.Seq the
// number of lines before it; the next record gets line start.Seq+1.
//
// path "-" reads standard input, and an input that cannot seek (a pipe, a
// FIFO) is read as a stream; see OpenReader. With follow, a regular file is
// watched for growth instead of ending at EOF.
//
// Open fails with ErrFileChanged if start.Offset is past the end of the
// file: the file was truncated or replaced after its progress was recorded.
func Open(path string, start changelog.Position, follow bool) (*Reader, error) {
	if err := checkStart(path, start); err != nil {
		return nil, err
	}
	if path == "-" {
		return OpenReader("-", stdin, start)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		r, err := OpenReader(path, f, start)
		if err != nil {
			f.Close()
			return nil, err
		}
		r.closer = f
		return r, nil
	}
	if start.Offset > fi.Size() {
		f.Close()
		return nil, &posError{fmt.Sprintf("%s: the resume offset %d is past the end of the file (%d bytes): "+
			"the file was truncated or replaced after its progress was recorded; restore the original file, "+
			"or reset this partition's progress to read the new file from its start", path, start.Offset, fi.Size()), ErrFileChanged}
	}
	r, err := regularReader(path, f, fi.Size(), start, follow)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// regularReader reads the regular file f, of size bytes and named name in
// messages, from start, which the caller has checked lies within it. The
// caller keeps ownership of f.
func regularReader(name string, f *os.File, size int64, start changelog.Position, follow bool) (*Reader, error) {
	g := &guard{f: f, off: start.Offset, name: name}
	r := newReader(name, g, start)
	r.f, r.follow, r.guard = f, follow, g
	r.size.Store(size)
	if start.Offset > 0 {
		if err := g.prime(); err != nil {
			return nil, fmt.Errorf("%s: resume at byte %d: %w", name, start.Offset, err)
		}
		r.midLine = g.lastByte() != '\n'
		if _, err := f.Seek(start.Offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("%s: resume at byte %d: %w", name, start.Offset, err)
		}
	}
	return r, nil
}

// OpenReader reads the stream in as a partition named name, from start. A
// stream cannot seek, so OpenReader skips start.Offset bytes by reading them
// (blocking until they arrive) and fails with ErrFileChanged if the stream
// ends first. The end of a stream is final: Next returns io.EOF.
//
// A goroutine reads in ahead, so that Next can return when its context is
// done even while a Read blocks. The caller keeps ownership of in: Close
// does not close it, and the goroutine exits once its pending Read returns.
func OpenReader(name string, in io.Reader, start changelog.Position) (*Reader, error) {
	if err := checkStart(name, start); err != nil {
		return nil, err
	}
	p := newPump(in)
	r := newReader(name, p, start)
	r.pump = p
	r.size.Store(-1)
	if start.Offset > 0 {
		// The bytes before start are read and dropped (one copy, into
		// io.Discard's buffer), not read into blocks: none of them is
		// returned.
		skipped, err := io.CopyN(io.Discard, p, start.Offset-1)
		var last [1]byte
		if err == nil {
			_, err = io.ReadFull(p, last[:])
			skipped++
		}
		if err != nil {
			p.stop()
			if err == io.EOF {
				return nil, &posError{fmt.Sprintf("%s: the input ended after %d bytes, before the resume offset %d: "+
					"it is not the input the partition's progress was recorded for; supply that input, "+
					"or reset this partition's progress", name, skipped, start.Offset), ErrFileChanged}
			}
			return nil, fmt.Errorf("%s: skip to the resume offset %d: %w", name, start.Offset, err)
		}
		r.midLine = last[0] != '\n'
	}
	return r, nil
}

func checkStart(name string, start changelog.Position) error {
	if start.Offset < 0 || start.Seq < 0 {
		return fmt.Errorf("%s: invalid resume position (offset %d, line %d): both must be 0 or more", name, start.Offset, start.Seq)
	}
	return nil
}

func newReader(name string, in io.Reader, start changelog.Position) *Reader {
	return &Reader{
		MaxRecordBytes: DefaultMaxRecordBytes,
		PollInterval:   DefaultPollInterval,
		name:           name,
		in:             in,
		offset:         start.Offset,
		seq:            start.Seq,
	}
}

// Next returns the next non-blank line. At the end of the input it returns
// io.EOF, except that a following Reader on a regular file waits for more.
// A last line without a terminator is a record at the end of the input, but
// a following Reader waits for its terminator instead.
//
// When ctx is done while Next waits (for a file to grow, for a stream's
// next bytes), Next returns ctx.Err(); nothing read is lost, and the Reader
// may be used again.
//
// Any other error is permanent (a line over MaxRecordBytes, a file changed
// under the Reader, a read error): Next returns it from then on.
func (r *Reader) Next(ctx context.Context) (Record, error) { return r.next(ctx, false) }

// NextBorrowed is Next, except that the record's Data may point into the
// Reader's buffer: it is valid only until the next call to Next or
// NextBorrowed. A caller done with each record before reading the next
// (one that decodes it into values of their own) saves a copy of every
// line, a tenth of txsink's CPU on a large file.
func (r *Reader) NextBorrowed(ctx context.Context) (Record, error) { return r.next(ctx, true) }

// NextLentBatch appends to recs the records that calls of NextBorrowed
// would return next, up to max of them (at least one), and returns them
// with the lease of the block of the Reader's input they lie in. It reads
// the input only when no whole line is buffered, as NextBorrowed does
// (waiting when it would), and stops before it would read again, so
// that a caller can hand the records on before the Reader may wait. It
// returns a record or an error, as NextBorrowed does; an error met after
// the first record is returned by the next call.
//
// The records' Data stay valid, whatever the Reader does next, until the
// lease is released: it holds a reference for the caller, who calls
// lease.Release once done with them (and lease.Retain for every further
// holder). A caller that hands records to other goroutines (to decode
// several at once) saves copying every line, and calling the Reader for
// each.
func (r *Reader) NextLentBatch(ctx context.Context, recs []Record, max int) ([]Record, Lease, error) {
	rec, err := r.next(ctx, true)
	if err != nil {
		return recs, nil, err
	}
	recs, b := r.lend(recs, rec, max)
	return recs, b, nil
}

// lend appends rec, just returned by next, and the whole lines buffered
// after it to recs, up to max records, without reading, and returns them
// with their block, retained for the caller. An error (a line over the
// limit) is the Reader's from then on, for the next call to return.
func (r *Reader) lend(recs []Record, rec Record, max int) ([]Record, *block) {
	b := r.blk // rec's: next moves to another block only to read
	// Retained before the lines after rec are looked at: a line over the
	// limit releases the Reader's own reference.
	b.Retain()
	recs = append(recs, rec)
	for range max - 1 {
		recs = append(recs, Record{})
		if ok, _ := r.scan(&recs[len(recs)-1], true); !ok {
			return recs[:len(recs)-1], b
		}
	}
	return recs, b
}

// scan sets *rec to the next whole line buffered, skipping blank ones,
// and reports whether there was one. It never reads. Data points into the
// block when borrow, else it is a copy.
func (r *Reader) scan(rec *Record, borrow bool) (bool, error) {
	for r.blk != nil {
		b := r.blk.b
		// One search from the first byte not searched yet: a line read in
		// several pieces is not searched again from its start.
		i := bytes.IndexByte(b[r.head+r.scanned:r.tail], '\n')
		if i < 0 {
			r.scanned = r.tail - r.head
			if r.scanned > r.MaxRecordBytes+2 { // +2: room for "\r\n"
				return false, r.tooLong(r.scanned)
			}
			return false, nil
		}
		end := r.head + r.scanned + i + 1
		line := b[r.head:end:end]
		r.head, r.scanned = end, 0
		if len(line) > r.MaxRecordBytes+2 {
			return false, r.tooLong(len(line))
		}
		if ok, err := r.consume(rec, line, true, borrow); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

func (r *Reader) next(ctx context.Context, borrow bool) (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	select {
	case <-ctx.Done():
		return Record{}, ctx.Err()
	default:
	}
	if r.pump != nil {
		r.pump.ctx = ctx
		// A stale context must not cancel a later read (or Close's cleanup).
		defer func() { r.pump.ctx = context.Background() }()
	}
	var rec Record
	for {
		if ok, err := r.scan(&rec, borrow); ok || err != nil {
			if err != nil {
				return Record{}, err
			}
			return rec, nil
		}
		err := r.pending
		r.pending = nil
		if err == nil {
			if err = r.fill(); err == nil {
				continue
			}
			if r.tail-r.head > r.scanned {
				// Bytes came with the error: look at them first.
				r.pending = err
				continue
			}
		}
		switch {
		case err == io.EOF:
			if r.follow {
				if err := r.waitForGrowth(ctx); err != nil {
					return Record{}, err
				}
				continue
			}
			if r.tail > r.head {
				line := r.blk.b[r.head:r.tail:r.tail]
				r.head, r.scanned = r.tail, 0
				if ok, err := r.consume(&rec, line, false, borrow); ok || err != nil {
					if err != nil {
						return Record{}, err
					}
					return rec, nil
				}
			}
			r.err = io.EOF
			r.release()
			return Record{}, io.EOF
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			// The stream's goroutine gave up waiting; what was read stays
			// buffered for the next call.
			return Record{}, err
		case errors.Is(err, ErrFileChanged):
			r.err = err // the guard's message names the file already
			r.release()
			return Record{}, r.err
		default:
			r.err = fmt.Errorf("%s: read after line %d: %w", r.name, r.seq, err)
			r.release()
			return Record{}, r.err
		}
	}
}

// maxEmptyReads is how many reads in a row may return nothing before a
// Reader gives up with io.ErrNoProgress, as bufio's readers do.
const maxEmptyReads = 100

// fill reads once more after what is buffered, first moving to a new
// block when the current one is full (or there is none): the unconsumed
// bytes are copied to its start, and a block full of one unfinished line
// is followed by one twice as large.
func (r *Reader) fill() error {
	if r.blk == nil || r.tail == len(r.blk.b) {
		rest := r.tail - r.head
		size := bufferSize
		for size <= rest {
			size *= 2
		}
		var nb *block
		if rest == 0 {
			// Released first: a block nobody retained is taken again.
			r.release()
			nb = newBlock(size)
		} else {
			nb = newBlock(size)
			copy(nb.b, r.blk.b[r.head:r.tail])
			r.release()
		}
		r.blk, r.head, r.tail, r.scanned = nb, 0, rest, min(r.scanned, rest)
	}
	for range maxEmptyReads {
		n, err := r.in.Read(r.blk.b[r.tail:])
		if n < 0 || n > len(r.blk.b)-r.tail {
			return fmt.Errorf("invalid read of %d bytes", n)
		}
		r.tail += n
		if n > 0 || err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// release gives up the Reader's reference to its block.
func (r *Reader) release() {
	if r.blk != nil {
		r.blk.Release()
		r.blk, r.head, r.tail, r.scanned = nil, 0, 0, 0
	}
}

// Buffered reports whether Next can return the next line from what it has
// read already, without reading the input (which may wait: a followed
// file at its end, a pipe). Callers that batch records send their batch
// when it is false.
func (r *Reader) Buffered() bool {
	if r.err != nil {
		return false
	}
	if r.blk == nil {
		return false
	}
	return bytes.IndexByte(r.blk.b[r.head+r.scanned:r.tail], '\n') >= 0
}

// MayWait reports whether the next Next may wait for input that is not
// there yet: no whole line is buffered, and the input is a stream (a read
// waits for its writer) or a followed file read up to the size last seen.
// Next on a regular file otherwise returns at once, with a line or io.EOF.
// Callers that hold records back (to decode several at once) hand them on
// when it is true.
func (r *Reader) MayWait() bool {
	if r.err != nil || (r.pump == nil && !r.follow) {
		// Checked first: a reader asks before each record, and a regular
		// file read to its end never waits.
		return false
	}
	if r.Buffered() {
		return false
	}
	if r.pump != nil {
		return true
	}
	return r.offset+int64(r.tail-r.head) >= r.size.Load()
}

// consume accounts for one line (with its terminator if terminated) and
// sets *rec to it, unless it is blank: it reports whether it did. The
// record's Data is a view of line when borrow, else a copy.
func (r *Reader) consume(rec *Record, line []byte, terminated, borrow bool) (bool, error) {
	r.offset += int64(len(line))
	data := line
	if terminated {
		data = data[:len(data)-1]
	}
	if n := len(data); n > 0 && data[n-1] == '\r' {
		data = data[:n-1] // bytes.TrimSuffix, without its call to compare one byte
	}
	if r.midLine {
		r.midLine = false
		if terminated && len(data) == 0 {
			return false, nil // the terminator of the line before start
		}
	}
	if len(data) > r.MaxRecordBytes {
		return false, r.tooLong(len(data))
	}
	r.seq++
	if r.f != nil && r.offset > r.size.Load() {
		// Size never reports less than has been read, even between polls.
		r.size.Store(r.offset)
	}
	if blank(data) {
		return false, nil
	}
	if borrow {
		// A caller's append must not write into the block.
		data = data[:len(data):len(data)]
	} else {
		data = bytes.Clone(data)
	}
	*rec = Record{Data: data, Pos: changelog.Position{Partition: r.name, File: r.file, Offset: r.offset, Seq: r.seq}}
	return true, nil
}

func (r *Reader) tooLong(n int) error {
	r.release()
	r.err = &posError{fmt.Sprintf("%s:%d: the line is longer than the %d-byte record limit (at least %d bytes); "+
		"check that the input is newline-delimited, or raise the limit if records this large are expected",
		r.name, r.seq+1, r.MaxRecordBytes, n), ErrRecordTooLong}
	return r.err
}

// blank reports whether b holds only ASCII whitespace.
func blank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// waitForGrowth sleeps one poll interval, then checks that the file is still
// the one being read: it must not have shrunk below what was read, and when
// it has not grown, its path must still name it (not a rotated successor).
func (r *Reader) waitForGrowth(ctx context.Context) error {
	if r.onWait != nil {
		r.onWait()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	if err := sleep(ctx, &r.timer, r.PollInterval); err != nil {
		return err
	}
	fi, err := r.f.Stat()
	if err != nil {
		r.err = fmt.Errorf("%s: %w", r.name, err)
		return r.err
	}
	size := fi.Size()
	r.size.Store(size)
	read := r.offset + int64(r.tail-r.head) // an unfinished last line at most
	switch {
	case size < read:
		r.err = &posError{fmt.Sprintf("%s: the file shrank to %d bytes while being read at byte %d "+
			"(truncated or rewritten in place), so records already applied may have changed; restore the file "+
			"and restart, or reset this partition's progress", r.name, size, read), ErrFileChanged}
		return r.err
	case size == read:
		if r.moveOn != nil {
			done, err := r.moveOn()
			if err != nil {
				r.err = err
				return err
			}
			if done {
				// What is left is read to the end, a last line without
				// its terminator included: a later file exists, so this
				// one is finished.
				r.follow = false
				return nil
			}
		}
		if now, err := os.Stat(r.path()); err != nil || !os.SameFile(fi, now) {
			r.err = &posError{fmt.Sprintf("%s: the path no longer names the file being read "+
				"(it was removed, renamed or rotated after %d bytes); txsink does not follow a file replaced under "+
				"its name: write each new file under a name that sorts after the last (numbered or dated) and "+
				"make the partition a glob, such as partitions: [\"logs/app-*.jsonl\"]", r.name, read), ErrFileChanged}
			return r.err
		}
	}
	return nil
}

// sleep waits one poll interval d (DefaultPollInterval when d <= 0) on the
// timer *t, made at the first call, or until ctx is done.
func sleep(ctx context.Context, t **time.Timer, d time.Duration) error {
	if d <= 0 {
		d = DefaultPollInterval
	}
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-ctx.Done():
		(*t).Stop()
		return ctx.Err()
	case <-(*t).C:
		return nil
	}
}

// path returns the file system path of the file read.
func (r *Reader) path() string {
	if r.osPath != "" {
		return r.osPath
	}
	return r.name
}

// Mark fingerprints byte offset at of the file (see Mark), for a position
// a record of this Reader reported. It reads the file, not the Reader's
// buffer, and may be called from any goroutine until Close. A stream has
// no mark: it returns ok false.
func (r *Reader) Mark(at int64) (m Mark, ok bool, err error) {
	if r.f == nil {
		return Mark{}, false, nil
	}
	m, err = markOf(r.f, r.markName, at)
	if err != nil {
		return Mark{}, false, fmt.Errorf("%s: fingerprint the position at byte %d: %w", r.name, at, err)
	}
	return m, true, nil
}

// Size returns the file's size in bytes as last seen (at Open, at each poll
// while following, and never less than what has been read), for progress
// reports; -1 for a stream. It is safe
// to call concurrently with Next.
func (r *Reader) Size() int64 { return r.size.Load() }

// Close releases the file. Next afterwards fails with os.ErrClosed. Close
// must not run concurrently with Next; cancel Next's context first.
func (r *Reader) Close() error {
	if errors.Is(r.err, os.ErrClosed) {
		return nil
	}
	r.err = fmt.Errorf("%s: %w", r.name, os.ErrClosed)
	r.release()
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.pump != nil {
		r.pump.stop()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// posError is a permanent error with a full message and a sentinel to match.
type posError struct {
	msg  string
	kind error
}

func (e *posError) Error() string { return e.msg }
func (e *posError) Unwrap() error { return e.kind }

// pumpChunk is the size of the pieces a stream is read in.
const pumpChunk = 64 << 10

// pump reads a stream on its own goroutine, so that a Read that blocks (on
// a terminal, a quiet pipe) does not keep Next from honouring its context.
// Two buffers circulate between the goroutine and the consumer: one being
// filled while the other is drained, so no data is copied twice and none is
// lost when the consumer stops waiting.
type pump struct {
	// ctx bounds the consumer's wait in Read; the Reader sets it per Next.
	ctx    context.Context
	filled chan chunk  // from the goroutine: data or the final error
	free   chan []byte // back to the goroutine: drained buffers
	done   chan struct{}
	once   sync.Once

	buf []byte // the buffer being drained; nil if none
	cur []byte // its undrained part
	err error  // the stream's final error, once seen
}

type chunk struct {
	data []byte
	err  error
}

func newPump(in io.Reader) *pump {
	p := &pump{
		ctx:    context.Background(),
		filled: make(chan chunk, 1),
		free:   make(chan []byte, 2),
		done:   make(chan struct{}),
	}
	p.free <- make([]byte, pumpChunk)
	p.free <- make([]byte, pumpChunk)
	go p.run(in)
	return p
}

func (p *pump) run(in io.Reader) {
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		case <-p.done:
			return
		}
		n, err := in.Read(buf[:cap(buf)])
		if n > 0 {
			select {
			case p.filled <- chunk{data: buf[:n]}:
			case <-p.done:
				return
			}
		} else {
			p.free <- buf // cannot block: only two buffers exist
		}
		if err != nil {
			select {
			case p.filled <- chunk{err: err}:
			case <-p.done:
			}
			return
		}
	}
}

// Read implements io.Reader for the Reader's bufio.Reader.
func (p *pump) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		if p.buf != nil {
			p.free <- p.buf
			p.buf = nil
		}
		if p.err != nil {
			return 0, p.err
		}
		select {
		case c := <-p.filled:
			if c.err != nil {
				p.err = c.err
				return 0, c.err
			}
			p.buf, p.cur = c.data, c.data
		case <-p.ctx.Done():
			return 0, p.ctx.Err()
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

func (p *pump) stop() { p.once.Do(func() { close(p.done) }) }

// guardWindow is how many bytes before its read offset a guard checks.
const guardWindow = 256

// guard reads a regular file for a Reader and checks, after every read,
// that the bytes just before it are still those read before them. A file
// truncated and refilled between two reads (copytruncate followed at once by
// a burst larger than the old size) never shows a shrink to a size check,
// and reading on at the old offset would start in the middle of a record of
// other content; the bytes before the offset tell. A pread of 256 bytes per
// read of up to 256 KiB costs nothing to speak of.
type guard struct {
	f    *os.File
	name string
	off  int64 // the file offset of the next Read
	// last holds, right-aligned, the n bytes of the file before off.
	last [guardWindow]byte
	n    int
}

// prime loads the bytes before g.off from the file: the guard of a Reader
// that resumes there.
func (g *guard) prime() error {
	g.n = int(min(g.off, guardWindow))
	_, err := g.f.ReadAt(g.last[guardWindow-g.n:], g.off-int64(g.n))
	return err
}

// lastByte returns the byte before off; prime or a read must have set it.
func (g *guard) lastByte() byte { return g.last[guardWindow-1] }

// Read reads from the file, then checks the bytes before what it read.
func (g *guard) Read(p []byte) (int, error) {
	n, err := g.f.Read(p)
	if n > 0 && g.n > 0 {
		var now [guardWindow]byte
		_, rerr := g.f.ReadAt(now[:g.n], g.off-int64(g.n))
		if rerr != nil || !bytes.Equal(now[:g.n], g.last[guardWindow-g.n:]) {
			return 0, &posError{fmt.Sprintf("%s: the bytes before byte %d changed while the file was read "+
				"(it was truncated and refilled, as by copytruncate, or rewritten in place), so what follows is not "+
				"the continuation of what was applied; restore the file and restart, or reset this partition's progress",
				g.name, g.off), ErrFileChanged}
		}
	}
	if n >= guardWindow {
		copy(g.last[:], p[n-guardWindow:n])
		g.n = guardWindow
	} else if n > 0 {
		copy(g.last[:], g.last[n:])
		copy(g.last[guardWindow-n:], p[:n])
		g.n = min(guardWindow, g.n+n)
	}
	g.off += int64(n)
	return n, err
}
