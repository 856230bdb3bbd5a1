package txn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

// driver plays a byte string as a random interleaving of partitions,
// transactions, clock ticks, Ready, Advance and flushes, and checks after
// every operation that:
//
//   - every plan holds only whole source transactions, and per partition
//     continues exactly where the previous plan stopped (order, no loss, no
//     duplicates); its Progress, Txns and Bytes agree with its Changes;
//   - per partition, committed ++ in flight ++ frozen ++ finished ++ open
//     == input, where frozen and finished are the values kept with
//     Finished, and each chunk's counts agree with its value;
//   - Bytes() equals the sum over what is buffered;
//   - the rows and bytes counted for CommitRows and CommitBytes equal
//     the finished transactions stepped and not yet in a plan, where a row
//     is any change but an UpdateBefore or an EndTxn marker;
//   - NextDeadline is exact: before it Ready does nothing, at it something;
//   - back-pressure never deadlocks: PressureHard with no plan in flight
//     means Ready returns a plan;
//   - at the end, with every transaction closed and flushed, everything was
//     committed once and Bytes() is zero.
type driver struct {
	t       testing.TB
	m       *Machine[changes]
	now     time.Time
	input   map[string][]changelog.Change // accepted changes per partition
	cut     map[string]int                // changes per partition in plans cut so far
	done    map[string]int                // changes per partition in advanced plans
	txn     map[string]int                // current transaction number per partition
	open    map[string]int64              // bytes of the open transaction per partition
	plan    *Plan[changes]
	names   []string
	refused int
}

func (d *driver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf(format+"\nstate:\n%s", append(args, d.m.Describe())...)
}

func runOps(t testing.TB, data []byte) {
	if len(data) < 5 {
		return
	}
	cfg := Config{
		CommitInterval:     time.Duration(data[0]%8) * 100 * time.Millisecond, // 0 (timer off) .. 700ms
		MiniSwitchInterval: time.Duration(data[1]%6) * 50 * time.Millisecond,
		MinSwitchBytes:     int64(data[2]%4) * 300,
		BufferSize:         500 + int64(data[3]%8)*500,
		MaxTxnBytes:        int64(data[4]%3) * 700, // 0 = unlimited
		CommitRows:         int(data[0]/8%4) * 3,   // 0 = off
		CommitBytes:        int64(data[1]/8%3) * 250,
	}
	m, err := newKeeping(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, m: m, now: t0, input: map[string][]changelog.Change{}, cut: map[string]int{},
		done: map[string]int{}, txn: map[string]int{}, open: map[string]int64{}, names: []string{"p0", "p1", "p2"}}
	ops := data[5:]
	for i := 0; i < len(ops); i++ {
		arg := byte(0)
		if i+1 < len(ops) {
			arg = ops[i+1]
		}
		switch op := ops[i] % 10; {
		case op < 5: // step (half of all operations)
			i++
			end := arg&3 == 0
			kind := stepKinds[int(ops[i-1]/10)%len(stepKinds)]
			if end && arg&0x20 != 0 {
				kind = changelog.EndTxn // a Debezium END marker
			}
			d.step(d.names[int(ops[i-1]>>4)%len(d.names)], kind, int(arg>>2)*8, end, arg&0x80 != 0 && arg&0x40 != 0)
		case op < 7:
			i++
			d.now = d.now.Add(time.Duration(arg) * 5 * time.Millisecond)
			d.ready(false, arg&1 == 0)
		case op == 7:
			d.now = d.now.Add(time.Duration(arg) * time.Millisecond)
			d.tick()
		case op == 8:
			d.advance()
		default:
			d.ready(true, true)
		}
		d.check()
	}
	// Close every open transaction, then flush until nothing is left.
	for _, p := range d.names {
		if d.open[p] > 0 || (len(d.input[p]) > 0 && !d.input[p][len(d.input[p])-1].TxnEnd) {
			d.step(p, changelog.EndTxn, 0, true, false)
		}
	}
	d.advance()
	for n := 0; ; n++ {
		if n > 3 {
			d.fatalf("flush did not drain the machine")
		}
		if !d.ready(true, true) {
			break
		}
		d.check()
	}
	d.check()
	if m.Bytes() != 0 || m.OpenTxns() != 0 || m.cleanParts != 0 || m.frozen != 0 {
		d.fatalf("after the final flush: bytes %d, open %d, finished in %d partitions, %d frozen", m.Bytes(), m.OpenTxns(), m.cleanParts, m.frozen)
	}
	if _, ok := m.NextDeadline(); ok {
		d.fatalf("a deadline with nothing buffered")
	}
	for _, p := range d.names {
		if d.done[p] != len(d.input[p]) {
			d.fatalf("%s: %d of %d changes committed", p, d.done[p], len(d.input[p]))
		}
	}
}

// stepKinds are the kinds of the row changes the driver steps, inserts
// twice as often as the others.
var stepKinds = []changelog.Kind{changelog.Insert, changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter, changelog.Delete}

// modelRow is the model's own word on what CommitRows counts: every
// change but an update's before image and a transaction END marker.
func modelRow(k changelog.Kind) bool {
	return k == changelog.Insert || k == changelog.UpdateAfter || k == changelog.Delete
}

// step steps one change of kind k of partition p; end closes its
// transaction.
func (d *driver) step(p string, k changelog.Kind, size int, end, noID bool) {
	if d.open[p] == 0 && (len(d.input[p]) == 0 || d.input[p][len(d.input[p])-1].TxnEnd) {
		d.txn[p]++
	}
	// Open holds the partition's changes since its last transaction end.
	open := d.input[p]
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].TxnEnd {
			open = open[i+1:]
			break
		}
	}
	if got := d.m.Open(p); len(got) != len(open) || len(open) > 0 && got[0].Pos != open[0].Pos {
		d.fatalf("Open(%s) holds %d changes, want the %d since its last end", p, len(got), len(open))
	}
	seq := int64(len(d.input[p]) + 1)
	c := changelog.Change{Kind: k, Table: changelog.Table{Name: fmt.Sprint("t", seq%3)},
		Pos: changelog.Position{Partition: p, Offset: seq, Seq: seq}, Size: int32(size), TxnEnd: end}
	if !noID {
		c.TxnID = fmt.Sprintf("%s-%d", p, d.txn[p])
	}
	err := stepKeeping(d.m, c, d.now)
	var te *Error
	switch {
	case errors.As(err, &te):
		lim := d.m.Config().MaxTxnBytes
		if !errors.Is(err, ErrMaxTxnBytes) || lim == 0 || d.open[p]+int64(size) <= lim || te.Partition != p || te.Pos != c.Pos {
			d.fatalf("step %v: unexpected refusal: %v", c.Pos, err)
		}
		d.refused++
		return // not taken
	case err != nil && !errors.Is(err, ErrBackPressure):
		d.fatalf("step: %v", err)
	}
	if lim := d.m.Config().MaxTxnBytes; lim > 0 && d.open[p]+int64(size) > lim {
		d.fatalf("step %v: open transaction grew to %d bytes past max-txn-bytes %d", c.Pos, d.open[p]+int64(size), lim)
	}
	d.input[p] = append(d.input[p], c)
	d.open[p] += int64(size)
	if end {
		d.open[p] = 0
	}
	if errors.Is(err, ErrBackPressure) != (d.m.Pressure() == PressureHard) {
		d.fatalf("Step returned %v at pressure %s", err, d.m.Pressure())
	}
	// An engine stops reading under back-pressure and commits until it
	// can read again. That must always be possible.
	for n := 0; d.m.Pressure() == PressureHard; n++ {
		if n > 2 {
			d.fatalf("back-pressure did not clear")
		}
		if d.m.InFlight() != nil {
			d.advance()
			continue
		}
		if !d.ready(false, true) {
			d.fatalf("back-pressure with no plan in flight, and Ready has none")
		}
	}
}

func (d *driver) tick() {
	before := d.frozenChunks()
	dl, ok := d.m.NextDeadline()
	d.m.Tick(d.now)
	if d.frozenChunks() != before && (!ok || d.now.Before(dl)) {
		d.fatalf("Tick froze a chunk before the deadline (%v, %v)", dl, ok)
	}
}

// ready calls Ready and, if it returns a plan, checks it and advances it
// when advance is set. It reports whether a plan was cut.
func (d *driver) ready(flush, advance bool) bool {
	before := d.frozenChunks()
	dl, ok := d.m.NextDeadline()
	inFlight := d.m.InFlight() != nil
	// Every finished transaction goes into the plan when it is cut with
	// flush, under memory pressure or at the size limit: finished must
	// hold exactly that plan's changes.
	takesAll := flush || d.m.Bytes() >= d.m.cfg.BufferSize || d.m.SizeDue()
	var finished []changelog.Position
	for _, p := range d.m.parts {
		for _, ck := range d.m.unplanned(p) {
			for _, c := range ck.value {
				finished = append(finished, c.Pos)
			}
		}
		for _, c := range p.clean {
			finished = append(finished, c.Pos)
		}
	}
	p := d.m.Ready(d.now, flush)
	acted := p != nil || d.frozenChunks() != before
	if !flush {
		due := ok && !d.now.Before(dl)
		if acted != due {
			d.fatalf("deadline %v (ok %v) at %v, but Ready acted=%v", dl, ok, d.now, acted)
		}
	}
	if p == nil {
		return false
	}
	if inFlight {
		d.fatalf("a second plan while one is in flight")
	}
	if takesAll {
		changes := planChanges(p)
		if len(changes) != len(finished) {
			d.fatalf("a plan of %d changes, but finished held %d", len(changes), len(finished))
		}
		for i := range changes {
			if changes[i].Pos != finished[i] {
				d.fatalf("plan change %d is at %v, finished had %v", i, changes[i].Pos, finished[i])
			}
		}
	}
	d.checkPlan(p)
	d.plan = p
	if advance {
		d.advance()
	}
	return true
}

// planChanges returns a plan's changes in order, its chunks joined.
func planChanges(p *Plan[changes]) []changelog.Change {
	var out []changelog.Change
	for _, chunk := range p.Chunks {
		for _, c := range chunk.Value {
			out = append(out, *c)
		}
	}
	return out
}

func (d *driver) checkPlan(p *Plan[changes]) {
	for _, ck := range p.Chunks {
		if n := len(ck.Value); n == 0 || ck.Changes != n || ck.Last != ck.Value[n-1].Pos {
			d.fatalf("a chunk counts %d changes up to %v, but holds %d", ck.Changes, ck.Last, n)
		}
	}
	changes := planChanges(p)
	var bytes int64
	txns := 0
	var order []string
	for i := 0; i < len(changes); {
		part := changes[i].Pos.Partition
		for _, o := range order {
			if o == part {
				d.fatalf("partition %s appears twice in a plan", part)
			}
		}
		order = append(order, part)
		j := i
		for j < len(changes) && changes[j].Pos.Partition == part {
			bytes += int64(changes[j].Size)
			if changes[j].TxnEnd {
				txns++
			}
			j++
		}
		seg := changes[i:j]
		from := d.cut[part]
		if !seg[len(seg)-1].TxnEnd {
			d.fatalf("plan ends %s inside a source transaction, at %v", part, seg[len(seg)-1].Pos)
		}
		if from+len(seg) > len(d.input[part]) {
			d.fatalf("plan holds more of %s than was stepped", part)
		}
		for k := range seg {
			if seg[k].Pos != d.input[part][from+k].Pos {
				d.fatalf("plan holds %v where %v comes next in %s", seg[k].Pos, d.input[part][from+k].Pos, part)
			}
		}
		if n := len(order) - 1; n >= len(p.Progress) || p.Progress[n] != seg[len(seg)-1].Pos {
			d.fatalf("progress %v does not end %s at %v", p.Progress, part, seg[len(seg)-1].Pos)
		}
		d.cut[part] = from + len(seg)
		i = j
	}
	if len(p.Progress) != len(order) || p.Txns != txns || p.Bytes != bytes || len(changes) == 0 || p.Changes != len(changes) {
		d.fatalf("plan totals: progress %v txns %d/%d bytes %d/%d", p.Progress, p.Txns, txns, p.Bytes, bytes)
	}
}

func (d *driver) advance() {
	if d.plan == nil {
		return
	}
	d.m.Advance(d.plan)
	for _, c := range planChanges(d.plan) {
		d.done[c.Pos.Partition]++
	}
	d.plan = nil
}

func (d *driver) frozenChunks() int {
	n := 0
	for _, p := range d.m.parts {
		n += len(p.frozen)
	}
	return n
}

// check compares the Machine's buffers with the model.
func (d *driver) check() {
	var bytes int64
	// The finished transactions not in any plan cut so far, from the
	// model alone: the rows and bytes CommitRows and CommitBytes count.
	doneRows, doneBytes := 0, int64(0)
	for _, name := range d.names {
		in := d.input[name]
		finished := len(in)
		for finished > 0 && !in[finished-1].TxnEnd {
			finished--
		}
		for _, c := range in[d.cut[name]:finished] {
			if modelRow(c.Kind) {
				doneRows++
			}
			doneBytes += int64(c.Size)
		}
		p := d.m.byName[name]
		var buffered []changelog.Change
		if p != nil {
			for _, ck := range p.frozen {
				if n := len(ck.value); n == 0 || !ck.value[n-1].TxnEnd || ck.changes != n || ck.last != ck.value[n-1].Pos {
					d.fatalf("%s: a frozen chunk of %d changes up to %v holds %d, or does not end a source transaction", name, ck.changes, ck.last, n)
				}
				for _, c := range ck.value {
					buffered = append(buffered, *c)
				}
			}
			if n := len(p.clean); n != p.cleanChanges || (n > 0) != (p.cleanTxns > 0) || n > 0 && (!p.clean[n-1].TxnEnd || p.cleanLast != p.clean[n-1].Pos) {
				d.fatalf("%s: the finished part counts %d changes in %d transactions up to %v, but holds %d", name, p.cleanChanges, p.cleanTxns, p.cleanLast, n)
			}
			for _, c := range p.clean {
				buffered = append(buffered, *c)
			}
			for _, c := range p.open {
				if c.TxnEnd {
					d.fatalf("%s: the open transaction holds an end", name)
				}
				buffered = append(buffered, *c)
			}
		}
		want := d.input[name][d.done[name]:]
		if len(buffered) != len(want) {
			d.fatalf("%s: %d changes buffered, want %d", name, len(buffered), len(want))
		}
		for i := range want {
			if buffered[i].Pos != want[i].Pos {
				d.fatalf("%s: buffered %v where %v is next", name, buffered[i].Pos, want[i].Pos)
			}
			bytes += int64(want[i].Size)
		}
	}
	if d.m.Bytes() != bytes {
		d.fatalf("Bytes() = %d, model %d", d.m.Bytes(), bytes)
	}
	if d.m.doneRows != doneRows || d.m.doneBytes != doneBytes {
		d.fatalf("finished and not in a plan: %d rows, %d bytes; model %d, %d", d.m.doneRows, d.m.doneBytes, doneRows, doneBytes)
	}
	if due := (d.m.cfg.CommitRows > 0 && doneRows >= d.m.cfg.CommitRows) ||
		(d.m.cfg.CommitBytes > 0 && doneBytes >= d.m.cfg.CommitBytes); d.m.SizeDue() != due {
		d.fatalf("SizeDue() = %v with %d rows, %d bytes finished; model %v", d.m.SizeDue(), doneRows, doneBytes, due)
	}
}

// TestRandomInterleavings runs the driver over seeded random inputs.
func TestRandomInterleavings(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 0x7478))
		data := make([]byte, 5+r.IntN(600))
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runOps(t, data) })
	}
}

// FuzzMachine lets go test -fuzz hunt for inputs that break the driver's
// invariants: go test -fuzz FuzzMachine ./txn/
func FuzzMachine(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 1, 0, 0x04, 1, 0x10, 0, 2, 5, 9, 0x20, 1, 6, 200})
	f.Add([]byte{0, 0, 0, 0, 2, 0, 0xff, 0, 0xfc, 0, 0xfc, 0, 0xfc, 9, 8})
	f.Add([]byte{7, 5, 3, 7, 0, 0, 0xf0, 10, 0x00, 1, 0xf0, 5, 255, 6, 255, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4000 {
			return
		}
		runOps(t, data)
	})
}
