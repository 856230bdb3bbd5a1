package engine

// Copies: changes published again by the source's producer (Debezium
// Server, restarted, publishes once more what it published since its last
// offset flush, at new stream sequences or Kafka offsets). A format that
// tells a change's place in its source database's log (changelog.Order)
// lets them be told from news: within one log, a change whose place is
// not after the latest one consumed is a copy, dropped and counted
// (Stats.Copies). The latest places committed are stored with each
// partition's position, in the unit's own transaction (a suffix of its
// mark, see encodeMark), so a copy read after txsink restarted is dropped
// as one read in the same run is.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/source"
)

// orderSep starts the places stored after a partition's mark: the mark a
// source gives (a file's fingerprint, a stream's creation time) never
// holds a line break, and a mark stored before txsink stored places has
// none.
const orderSep = "\norder "

// encodeMark returns the mark stored for a partition: the source's mark,
// then each of the partition's logs' latest places committed.
func encodeMark(src string, orders []changelog.Order) string {
	if len(orders) == 0 || strings.Contains(src, "\n") {
		return src
	}
	var b strings.Builder
	b.WriteString(src)
	for _, o := range orders {
		b.WriteString(orderSep)
		b.WriteString(strconv.Quote(o.Log))
		for _, n := range [...]uint64{o.At[0], o.At[1], uint64(o.N)} {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatUint(n, 10))
		}
	}
	return b.String()
}

// decodeMark splits a stored mark into the source's mark and the places
// stored after it (see encodeMark). A place it cannot read is left out:
// copies of its log are then applied again, as before places were stored.
func decodeMark(stored string) (string, []changelog.Order) {
	src, rest, ok := strings.Cut(stored, orderSep)
	if !ok {
		return stored, nil
	}
	var orders []changelog.Order
	for _, line := range strings.Split(rest, orderSep) {
		if o, ok := parseOrder(line); ok {
			orders = append(orders, o)
		}
	}
	return src, orders
}

// parseOrder reads one place as encodeMark writes it: the quoted log and
// three numbers.
func parseOrder(line string) (changelog.Order, bool) {
	q, err := strconv.QuotedPrefix(line)
	if err != nil {
		return changelog.Order{}, false
	}
	log, _ := strconv.Unquote(q)
	f := strings.Fields(line[len(q):])
	if log == "" || len(f) != 3 {
		return changelog.Order{}, false
	}
	var n [3]uint64
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || i == 2 && v > 1<<32-1 {
			return changelog.Order{}, false
		}
		n[i] = v
	}
	return changelog.Order{Log: log, At: [2]uint64{n[0], n[1]}, N: uint32(n[2])}, true
}

// mergeOrders returns the places of stored moved on by those of a unit
// of partition part, in the unit's order: per log, the later one; a new
// start of logs (Restart) drops their places, so that the places the unit
// has after it replace them. stored is not modified.
func mergeOrders(stored []changelog.Order, part string, unit []commit.Order) []changelog.Order {
	out := stored
	copied := false
	for _, u := range unit {
		if u.Partition != part {
			continue
		}
		if !copied {
			out, copied = append([]changelog.Order(nil), stored...), true
		}
		if u.Restart {
			out = slices.DeleteFunc(out, func(o changelog.Order) bool { return u.Restarts(o.Log) })
			continue
		}
		i := 0
		for i < len(out) && out[i].Log != u.Log {
			i++
		}
		switch {
		case i == len(out):
			out = append(out, u.Order)
		case u.Order.Compare(out[i]) > 0:
			out[i] = u.Order
		}
	}
	return out
}

// latest is the loop's memory of the latest place read of each
// partition's logs, which a copy is not after. It starts from the places
// committed (see resetLatest): what was read and not committed is read
// again after a start again, and is no copy then.
type latest struct {
	logs []latestLog
	last int
	// dropping is the log whose copies are being dropped, so the warning
	// is logged once per run of copies.
	dropping latestLog
}

type latestLog struct {
	part string
	changelog.Order
}

// copyOf reports whether c is a copy of a change consumed already, by
// its place (changelog.Order), and else moves its log's latest place to
// it. Changes without a place are never copies (nil: the decoder was not
// told to read places, see format.OrderReader, so none is judged).
func (m *latest) copyOf(c *changelog.Change) bool {
	o := c.Order
	if o == nil || o.Log == "" {
		return false
	}
	part := c.Pos.Partition
	if o.Restart {
		// A snapshot: what follows is the logs' anew.
		m.logs = slices.DeleteFunc(m.logs, func(l latestLog) bool { return l.part == part && o.Restarts(l.Log) })
		m.last = 0
		return false
	}
	i := m.last
	if i >= len(m.logs) || m.logs[i].part != part || m.logs[i].Log != o.Log {
		for i = 0; i < len(m.logs); i++ {
			if m.logs[i].part == part && m.logs[i].Log == o.Log {
				break
			}
		}
		if i == len(m.logs) {
			m.logs = append(m.logs, latestLog{part: part, Order: *o})
			m.last = i
			return false
		}
		m.last = i
	}
	if o.NotAfter(m.logs[i].Order) {
		return true
	}
	m.logs[i].Order = *o
	if m.dropping.part == part && m.dropping.Log == o.Log {
		m.dropping = latestLog{} // the run of copies is over
	}
	return false
}

// reset forgets the latest places of the partitions parts (all of them
// for nil), and starts them from committed, the places committed by
// partition.
func (m *latest) reset(parts []string, committed map[string][]changelog.Order) {
	keep := m.logs[:0]
	for _, l := range m.logs {
		if parts != nil && !contains(parts, l.part) {
			keep = append(keep, l)
		}
	}
	m.logs = keep
	for part, orders := range committed {
		if parts != nil && !contains(parts, part) {
			continue
		}
		for _, o := range orders {
			m.logs = append(m.logs, latestLog{part: part, Order: o})
		}
	}
	m.last, m.dropping = 0, latestLog{}
}

// dropCopy reports whether c is a copy (see latest.copyOf), and counts
// it, logging the first of each run of copies of a log.
func (e *Engine) dropCopy(c *changelog.Change) bool {
	if !e.latest.copyOf(c) {
		return false
	}
	e.copies++
	if d := (latestLog{part: c.Pos.Partition, Order: changelog.Order{Log: c.Order.Log}}); e.latest.dropping != d {
		e.latest.dropping = d
		e.log.Warn("dropping changes published again: their place in the source's log is not after one applied already (the producer, such as Debezium Server, restarted); "+
			"if the source's log was numbered anew without a snapshot (RESET MASTER, a restored database), they are not copies: stop txsink and see the README's \"From Debezium Server over NATS\"",
			"log", c.Order.Log, "position", c.Pos.String(), "table", c.Table.Printable())
	}
	return true
}

// readOrders tells dec to read each change's place in its source's log
// (format.OrderReader) when the engine's source publishes copies as new
// records (source.Republisher: NATS). Elsewhere the places stay unread,
// at no cost, and no change is judged a copy by its place: a file is
// written once, and over Kafka the copies are the transaction metadata's
// to drop within a run, and converge on keyed tables after a restart.
func (e *Engine) readOrders(dec format.Decoder) {
	r, ok := e.src.(source.Republisher)
	if !ok || !r.Republishes() {
		return
	}
	if or, ok := dec.(format.OrderReader); ok {
		or.ReadOrders()
	}
}

// committedOrders returns the places committed, by partition: read only.
func (e *Engine) committedOrders() map[string][]changelog.Order {
	e.progMu.Lock()
	defer e.progMu.Unlock()
	return e.orders
}

// resetLatest starts the loop's memory of places from the places
// committed, for the partitions parts (all of them for nil).
func (e *Engine) resetLatest(parts []string) {
	e.latest.reset(parts, e.committedOrders())
}

// forgetOrders forgets the places committed of a partition rewound to
// its start (its mark is gone from the target too).
func (e *Engine) forgetOrders(part string) {
	e.progMu.Lock()
	m := make(map[string][]changelog.Order, len(e.orders))
	for k, v := range e.orders {
		if k != part {
			m[k] = v
		}
	}
	e.orders = m
	e.progMu.Unlock()
	e.resetLatest([]string{part})
}

// storeOrders remembers the places a committed unit stored.
func (e *Engine) storeOrders(u *commit.Unit) {
	if len(u.Orders) == 0 {
		return
	}
	e.progMu.Lock()
	defer e.progMu.Unlock()
	m := make(map[string][]changelog.Order, len(e.orders)+1)
	for k, v := range e.orders {
		m[k] = v
	}
	for _, p := range u.Progress {
		m[p.Partition] = mergeOrders(m[p.Partition], p.Partition, u.Orders)
	}
	e.orders = m
}
