package engine

import (
	"bytes"
	"context"
	"runtime"
	"sync"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/source"
)

// Decoding runs on a pool of goroutines shared by every partition of a
// Run, so that one partition's records decode on several cores while the
// loop reduces and the committer writes. Each partition hands the pool
// batches of raw records (decodeJobs) and takes the decoded batches back
// in the order it handed them over (see decodeStream): Run's loop sees
// every partition's records in source order, as when each partition
// decoded on its own goroutine, and a decoding error stops a partition at
// the same record.
//
// Measured on the insert-only bench (one partition), decoding was half of
// txsink's CPU time, all on the partition's goroutine, while the database
// waited for the next unit.

// decodeWorkers is how many goroutines decode: one per core Go uses.
func decodeWorkers() int { return max(1, runtime.GOMAXPROCS(0)) }

// Limits of one decodeJob. A job is small enough that several of one
// partition are in flight at once, and large enough that handing it over
// (two channel operations) costs little against decoding it: a Debezium
// record takes about a microsecond. Larger jobs (512 records or 256 KiB)
// kept the cores busier on one partition (1.80 cores against 1.69 in the
// update-heavy bench) but cost more than they won on eight: the plain
// loop over the txn bench's partitions took 1.9 to 2.4 s of CPU against
// 1.5 to 1.6, most of the difference in the collector (write barriers on
// clearing and filling the larger arenas, and their scanning).
const (
	jobRecords = batchMax
	jobBytes   = 64 << 10
)

// decodePool is a fixed set of goroutines decoding decodeJobs with one
// Decoder (which format.Decoder requires to be safe for concurrent use).
type decodePool struct {
	dec  format.Decoder
	jobs chan *decodeJob
	wg   sync.WaitGroup
	// recycle: jobs decode into arenas the loop recycles once it holds
	// nothing of their changes (see changelog.Arena): the plain loop when
	// it has taken the batch (the per-key buffer copies what it keeps, see
	// releaseBatch), the transaction loop once the transactions of their
	// changes have ended, reduced (txnLoop.release).
	recycle  bool
	arenaDec format.ArenaDecoder // dec as an ArenaDecoder, when recycle
	// held: the loop holds arenas until the transactions of the changes
	// in them end (transaction mode), so only the jobs of a stream of one
	// partition use them. A job of several (a Kafka stream's) would be
	// held by its slowest partition: one open transaction there would
	// keep every arena with a change of it, and the other partitions'
	// changes in them, past what the transaction buffer counts.
	held bool
}

// How the loop recycles the arenas jobs decode into (newDecodePool).
const (
	noArenas    = iota // the loop keeps changes as decoded
	batchArenas        // once it has taken the batch (plain mode)
	heldArenas         // once their transactions end (transaction mode)
)

// newDecodePool starts n decoding goroutines; close stops them. arenas
// says whether and how jobs decode into recycled arenas (see
// decodePool.recycle).
func newDecodePool(dec format.Decoder, n int, arenas int) *decodePool {
	p := &decodePool{dec: dec, jobs: make(chan *decodeJob, n)}
	if ad, ok := dec.(format.ArenaDecoder); ok && arenas != noArenas {
		p.recycle, p.arenaDec, p.held = true, ad, arenas == heldArenas
	}
	p.wg.Add(n)
	for range n {
		go p.work()
	}
	return p
}

// close stops the pool once every job handed to it is decoded. No job may
// be submitted after it.
func (p *decodePool) close() {
	close(p.jobs)
	p.wg.Wait()
}

func (p *decodePool) work() {
	defer p.wg.Done()
	for j := range p.jobs {
		j.decode(p)
		close(j.done)
	}
}

// rawRecord is one record of a job, before decoding.
type rawRecord struct {
	data []byte
	key  []byte // the record's key (Kafka's), nil for none
	pos  changelog.Position
	end  int64 // the partition's end as the reader knew it, or -1
}

// decodeJob is a batch of one partition's records, decoded by the pool.
type decodeJob struct {
	recs []rawRecord
	// arenas hold the records' bytes when the reader lent them (a file
	// reader's buffer is reused by its next read), arena being the one
	// filled; none when the records own their bytes (Kafka's).
	arena  *[]byte
	arenas []*[]byte
	// leases keep the blocks of lent records (see addLent) from reuse
	// until the job is decoded; leaseBuf is their first room (a job's
	// records lie in one block or two).
	leases   []lease
	leaseBuf [2]lease
	// keepRaw keeps each record's bytes in decoded.raw, for the
	// dead-letter table; keepGoing decodes past a record that fails
	// (the dead-letter policy), else the batch ends at it.
	keepRaw, keepGoing bool
	bytes              int // the records' bytes, for decodeStream.full
	// mem is the arena the job's changes are decoded into, nil for the
	// heap; the last record of out carries it to the loop.
	mem  *changelog.Arena
	out  []decoded
	done chan struct{}
}

func (j *decodeJob) decode(p *decodePool) {
	j.out = getBatch()
	held := false // some change is in j.mem
	for _, r := range j.recs {
		var changes []changelog.Change
		var err error
		if j.mem != nil {
			changes, err = p.arenaDec.DecodeIn(j.mem, r.data, r.pos)
		} else {
			changes, err = p.dec.Decode(r.data, r.pos)
		}
		if r.key != nil {
			format.KeyTypes(p.dec, changes, r.key)
		}
		held = held || len(changes) > 0
		d := decoded{pos: r.pos, size: len(r.data), changes: changes, err: err, end: r.end, inArena: j.mem != nil}
		if j.keepRaw {
			d.raw = r.data
		}
		j.out = append(j.out, d)
		if err != nil && !j.keepGoing {
			break
		}
	}
	if j.mem != nil {
		if held {
			j.out[len(j.out)-1].mem = j.mem
		} else {
			// Nothing to wait for (a job of BEGIN events, say), and a
			// loop that holds arenas until the changes in them are
			// committed would hold this one for nothing.
			putArena(j.mem)
		}
		j.mem = nil
	}
	if !j.keepRaw {
		for _, a := range j.arenas {
			arenas.Put(a)
		}
		j.arenas, j.arena = nil, nil
	}
	// Lent records are never kept raw (readPartition copies them then),
	// so their blocks are done with.
	for i, l := range j.leases {
		l.Release()
		j.leases[i] = nil
	}
	j.leases = j.leases[:0]
	// The records' bytes live on in out where the dead-letter policy
	// keeps them; the list of them is done with.
	clear(j.recs)
	recs := j.recs[:0]
	recordLists.Put(&recs)
	j.recs = nil
}

// Each job's lists of records and of decoded records are recycled: new
// ones per job were two fifths of the bytes a run into MariaDB allocated
// (txsink bench, insert-only).
var (
	recordLists = sync.Pool{New: func() any { l := make([]rawRecord, 0, jobRecords); return &l }}
	batches     = sync.Pool{New: func() any { l := make([]decoded, 0, jobRecords); return &l }}
)

func getBatch() []decoded { return (*batches.Get().(*[]decoded))[:0] }

// releaseBatch recycles a batch the loop has taken: its list, and with
// recycle (a loop that copies what it keeps of every change) the arenas
// its changes are in. A batch not from getBatch (one record sent on its
// own) is left to the collector.
func releaseBatch(ds []decoded, recycle bool) {
	if recycle {
		for i := range ds {
			if a := ds[i].mem; a != nil {
				putArena(a)
			}
		}
	}
	if cap(ds) >= jobRecords {
		clear(ds)
		ds = ds[:0]
		batches.Put(&ds)
	}
}

// changeArenas recycles the arenas jobs decode into (see
// decodePool.recycle).
var changeArenas = sync.Pool{New: func() any { return new(changelog.Arena) }}

func getChangeArena() *changelog.Arena { return changeArenas.Get().(*changelog.Arena) }

// putArena resets a and keeps it for another job.
func putArena(a *changelog.Arena) {
	a.Reset()
	changeArenas.Put(a)
}

// failed reports whether the job's output ends at a record that failed
// and stops its partition.
func (j *decodeJob) failed() bool {
	return !j.keepGoing && len(j.out) > 0 && j.out[len(j.out)-1].err != nil
}

// decodeStream is one partition's way through the pool: it gathers raw
// records into jobs, hands them to the pool, and sends their decoded
// batches to out in order. It holds at most maxInFlight jobs handed over
// and not yet sent. Only the partition's goroutine uses it.
type decodeStream struct {
	pool        *decodePool
	out         chan<- []decoded
	keepRaw     bool
	keepGoing   bool
	maxInFlight int

	arenas   bool // its jobs decode into arenas (see decodePool.held)
	cur      *decodeJob
	inFlight []*decodeJob // handed to the pool, in order
	// stopped: a sent batch ended at a failed record; the partition
	// stops there, and nothing more is sent.
	stopped bool
}

// newDecodeStream returns a stream into pool and out; onePartition says
// that its records all come from one partition.
func newDecodeStream(pool *decodePool, out chan<- []decoded, keepRaw, keepGoing, onePartition bool) *decodeStream {
	return &decodeStream{pool: pool, out: out, keepRaw: keepRaw, keepGoing: keepGoing,
		maxInFlight: cap(pool.jobs) + 1, arenas: pool.recycle && (onePartition || !pool.held)}
}

func (s *decodeStream) job() *decodeJob {
	if s.cur == nil {
		s.cur = &decodeJob{recs: (*recordLists.Get().(*[]rawRecord))[:0], keepRaw: s.keepRaw, keepGoing: s.keepGoing}
		s.cur.leases = s.cur.leaseBuf[:0]
		if s.arenas {
			s.cur.mem = getChangeArena()
		}
	}
	return s.cur
}

// addBorrowed adds a record whose bytes are valid only until the reader's
// next read: they are copied into the job's arena.
func (s *decodeStream) addBorrowed(data []byte, pos changelog.Position, end int64) {
	j := s.job()
	if len(data) > jobBytes {
		// Too large for an arena: a copy of its own.
		j.recs = append(j.recs, rawRecord{data: bytes.Clone(data), pos: pos, end: end})
		j.bytes += len(data)
		return
	}
	if j.arena == nil || len(*j.arena)+len(data) > cap(*j.arena) {
		// The records already added point into the arena: start another
		// rather than grow (and move) it. full cuts the job at jobBytes,
		// so most jobs take one.
		j.arena = getArena()
		j.arenas = append(j.arenas, j.arena)
	}
	a := *j.arena
	start := len(a)
	a = append(a, data...)
	*j.arena = a
	j.recs = append(j.recs, rawRecord{data: a[start:len(a):len(a)], pos: pos, end: end})
	j.bytes += len(data)
}

// lease keeps a block of a reader's input, which records were lent from,
// from reuse: Retain takes a reference, Release gives it back. It is the
// file source's file.Lease (see file.Reader.NextLent).
type lease = interface {
	Retain()
	Release()
}

// addLent adds records lent from the block l keeps, whose reference it
// takes over: the records stay where they are, and each job they go to
// holds l until it is decoded. It hands every job it fills to the pool,
// and reports false as submit does.
func (s *decodeStream) addLent(ctx context.Context, recs []source.Record, l lease, part string) bool {
	for held := false; len(recs) > 0; held = true {
		j := s.job()
		if held {
			l.Retain() // a second job takes records of the batch
		}
		j.leases = append(j.leases, l)
		for len(recs) > 0 {
			r := &recs[0]
			pos := r.Pos
			if part != "" {
				pos.Partition = part
			}
			j.recs = append(j.recs, rawRecord{data: r.Data, pos: pos, end: -1})
			j.bytes += len(r.Data)
			recs = recs[1:]
			if s.full() {
				if !s.submit(ctx) {
					return false
				}
				break
			}
		}
	}
	return true
}

// arenas recycles the arenas of decoded jobs: a record's bytes are dead
// once it is decoded (decoded changes never point into them), unless the
// dead-letter policy keeps them.
var arenas = sync.Pool{New: func() any { a := make([]byte, 0, jobBytes); return &a }}

func getArena() *[]byte {
	a := arenas.Get().(*[]byte)
	*a = (*a)[:0]
	return a
}

// addOwned adds a record whose bytes, and its key's, stay valid.
func (s *decodeStream) addOwned(data, key []byte, pos changelog.Position, end int64) {
	j := s.job()
	j.recs = append(j.recs, rawRecord{data: data, key: key, pos: pos, end: end})
	j.bytes += len(data)
}

// full reports whether the job being gathered should be handed over.
func (s *decodeStream) full() bool {
	return s.cur != nil && (len(s.cur.recs) >= jobRecords || s.cur.bytes >= jobBytes)
}

// submit hands the job being gathered to the pool, first sending the
// oldest jobs in flight when there are too many. It reports false when
// the partition must stop: ctx ended, or a sent batch ended at a failed
// record.
func (s *decodeStream) submit(ctx context.Context) bool {
	if s.stopped {
		return false
	}
	if s.cur == nil || len(s.cur.recs) == 0 {
		return true
	}
	for len(s.inFlight) >= s.maxInFlight {
		if !s.sendOldest(ctx) {
			return false
		}
	}
	j := s.cur
	s.cur = nil
	j.done = make(chan struct{})
	select {
	case s.pool.jobs <- j:
	case <-ctx.Done():
		return false
	}
	s.inFlight = append(s.inFlight, j)
	// Send what is decoded already, without waiting.
	for len(s.inFlight) > 0 && s.inFlight[0].decoded() {
		if !s.sendOldest(ctx) {
			return false
		}
	}
	return true
}

// decoded reports whether the pool is done with j.
func (j *decodeJob) decoded() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// drain hands over the job being gathered and sends every job in flight,
// waiting for their decoding. It reports false as submit does.
func (s *decodeStream) drain(ctx context.Context) bool {
	if !s.submit(ctx) {
		return false
	}
	for len(s.inFlight) > 0 {
		if !s.sendOldest(ctx) {
			return false
		}
	}
	return true
}

// sendOldest waits for the oldest job in flight and sends its batch.
func (s *decodeStream) sendOldest(ctx context.Context) bool {
	j := s.inFlight[0]
	select {
	case <-j.done:
	case <-ctx.Done():
		return false
	}
	s.inFlight[0] = nil
	s.inFlight = s.inFlight[1:]
	// Once sent, the batch is the loop's, which recycles it.
	failed := j.failed()
	if len(j.out) > 0 {
		select {
		case s.out <- j.out:
		case <-ctx.Done():
			return false
		}
	}
	j.out = nil
	if failed {
		s.stopped = true
		return false
	}
	return true
}

// stop is what a partition's goroutine returns once the stream refused to
// go on: nil after a failed record (it is sent, and the loop stops on it),
// else ctx's error.
func (s *decodeStream) stop(ctx context.Context) error {
	if s.stopped {
		return nil
	}
	return ctx.Err()
}

// send sends d, a record of no job (a source's own error), behind every
// record before it. It reports false when ctx ended first.
func (s *decodeStream) send(ctx context.Context, d decoded) bool {
	if !s.drain(ctx) {
		return false
	}
	select {
	case s.out <- []decoded{d}:
		return true
	case <-ctx.Done():
		return false
	}
}

// decoded is one source record, decoded, on its way to the engine loop.
type decoded struct {
	pos     changelog.Position
	size    int
	raw     []byte // the record as read, for the dead-letter table
	changes []changelog.Change
	// mem, on the last record of a decoded job, is the arena the job's
	// changes are in, for the loop to recycle once it took them.
	mem *changelog.Arena
	err error
	// fatal marks an error of the source itself (not of one record's
	// content), which stops the pipeline under any bad-input policy.
	fatal bool
	// inArena says the changes are in their job's arena (mem, on the
	// job's last record), not on the heap: the arena's Bytes tell their
	// memory.
	inArena bool
	// ctl, when set, is no record but a change of the partitions this
	// instance owns (a Kafka rebalance). It travels in the records'
	// channel so that it is handled after every record read before it.
	ctl *control
	// end is the partition's end (file size, Kafka high watermark) when
	// the reader knows it, else -1.
	end int64
}
