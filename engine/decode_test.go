package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
)

// gateDecoder decodes a record "n" into one change whose TxnID is "n",
// "bad" into an error, after waiting for the gate of the record, if the
// test set one: so a test decides in which order jobs finish.
type gateDecoder struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func (d *gateDecoder) gate(rec string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gates == nil {
		d.gates = map[string]chan struct{}{}
	}
	g := d.gates[rec]
	if g == nil {
		g = make(chan struct{})
		d.gates[rec] = g
	}
	return g
}

func (d *gateDecoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	d.mu.Lock()
	g := d.gates[string(data)]
	d.mu.Unlock()
	if g != nil {
		<-g
	}
	if string(data) == "bad" {
		return nil, &format.Error{Format: "test", Pos: pos, Reason: "bad record"}
	}
	return []changelog.Change{{Kind: changelog.Insert, TxnID: string(data), Pos: pos}}, nil
}

// received collects what a stream sends, in order.
func received(out chan []decoded) []string {
	var got []string
	for {
		select {
		case ds := <-out:
			for _, d := range ds {
				switch {
				case d.err != nil:
					got = append(got, "error")
				default:
					got = append(got, d.changes[0].TxnID)
				}
			}
		default:
			return got
		}
	}
}

// TestDecodeStreamKeepsOrder makes the second job of a partition finish
// before the first: the batches still reach the loop in the partition's
// order, and a record's bytes are its own, although the reader lent them
// from a buffer it writes again.
func TestDecodeStreamKeepsOrder(t *testing.T) {
	dec := &gateDecoder{}
	pool := newDecodePool(dec, 2, noArenas)
	defer pool.close()
	out := make(chan []decoded, 100)
	s := newDecodeStream(pool, out, false, false, true)
	first := dec.gate("0") // the first job waits on its first record
	buf := make([]byte, 8)
	var want []string
	for i := range 2 * jobRecords {
		// One buffer for every record, as a file reader lends its own.
		rec := strconv.AppendInt(buf[:0], int64(i), 10)
		want = append(want, string(rec))
		s.addBorrowed(rec, changelog.Position{Partition: "p", Offset: int64(i + 1)}, 0)
		if s.full() && !s.submit(context.Background()) {
			t.Fatal("submit refused")
		}
	}
	if len(s.inFlight) != 2 {
		t.Fatalf("%d jobs in flight, want 2: the first waits, so nothing may be sent", len(s.inFlight))
	}
	// The second job is decoded (the pool has two workers) but waits for
	// the first: nothing is sent yet.
	<-s.inFlight[1].done
	if got := received(out); len(got) != 0 {
		t.Fatalf("sent %d records before the first job was decoded", len(got))
	}
	close(first)
	if !s.drain(context.Background()) {
		t.Fatal("drain refused")
	}
	got := received(out)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records sent in the order\n%v\nwant\n%v", got, want)
	}
}

// TestDecodeStreamStopsAtTheFailedRecord: a record that fails ends its
// batch and the partition, even when later jobs were decoded already;
// under the dead-letter policy the stream goes on.
func TestDecodeStreamStopsAtTheFailedRecord(t *testing.T) {
	for _, keepGoing := range []bool{false, true} {
		t.Run(fmt.Sprint("keepGoing=", keepGoing), func(t *testing.T) {
			pool := newDecodePool(&gateDecoder{}, 2, noArenas)
			defer pool.close()
			out := make(chan []decoded, 100)
			s := newDecodeStream(pool, out, keepGoing, keepGoing, true)
			recs := []string{"a", "b", "bad", "c"}
			for i := 0; i < 3*jobRecords; i++ {
				recs = append(recs, "x"+strconv.Itoa(i))
			}
			ok := true
			for i, r := range recs {
				s.addOwned([]byte(r), nil, changelog.Position{Partition: "p", Offset: int64(i + 1)}, -1)
				if s.full() && !s.submit(context.Background()) {
					ok = false
					break
				}
			}
			if ok {
				ok = s.drain(context.Background())
			}
			got := received(out)
			if keepGoing {
				if !ok || len(got) != len(recs) || got[2] != "error" || got[3] != "c" {
					t.Errorf("dead-letter policy: ok %v, %d records sent (want all %d, the bad one as an error)", ok, len(got), len(recs))
				}
				return
			}
			if ok || !s.stopped || s.stop(context.Background()) != nil {
				t.Errorf("the stream went on past the failed record (ok %v, stopped %v)", ok, s.stopped)
			}
			if fmt.Sprint(got) != "[a b error]" {
				t.Errorf("sent %v, want the records up to the failed one", got)
			}
		})
	}
}

// TestDecodeStreamStopsOnCancel: a stream waiting for the loop gives up
// when its context ends, and says so.
func TestDecodeStreamStopsOnCancel(t *testing.T) {
	pool := newDecodePool(&gateDecoder{}, 1, noArenas)
	defer pool.close()
	out := make(chan []decoded) // nobody reads
	s := newDecodeStream(pool, out, false, false, true)
	ctx, cancel := context.WithCancel(context.Background())
	s.addOwned([]byte("a"), nil, changelog.Position{Partition: "p", Offset: 1}, -1)
	done := make(chan bool)
	go func() { done <- s.drain(ctx) }()
	cancel()
	if <-done {
		t.Fatal("drain reported success with nobody reading")
	}
	if err := s.stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("stop = %v, want the context's error", err)
	}
}

// arenaGateDecoder is a gateDecoder that decodes into the arena it is
// given (format.ArenaDecoder), recording whether it got one.
type arenaGateDecoder struct {
	gateDecoder
	mu     sync.Mutex
	arenas int // records decoded into an arena
}

func (d *arenaGateDecoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	cs, err := d.Decode(data, pos)
	if err != nil || a == nil {
		return cs, err
	}
	d.mu.Lock()
	d.arenas++
	d.mu.Unlock()
	in := a.Changes(len(cs))
	copy(in, cs)
	return in, nil
}

// TestDecodeArenas: a pool that recycles decodes each job into an arena
// that the job's batch carries, on its last record, to the loop; one that
// does not (the joiner keeps changes as decoded) gives the decoder none,
// nor does one whose loop holds arenas until commit for a stream of
// several partitions; and a decoder without DecodeIn is never given one.
func TestDecodeArenas(t *testing.T) {
	for _, tc := range []struct {
		name         string
		dec          format.Decoder
		arenas       int
		onePartition bool
		want         bool
	}{
		{"plain", &arenaGateDecoder{}, batchArenas, true, true},
		{"plain, several partitions", &arenaGateDecoder{}, batchArenas, false, true},
		{"transaction, one partition", &arenaGateDecoder{}, heldArenas, true, true},
		{"transaction, several partitions", &arenaGateDecoder{}, heldArenas, false, false},
		{"not recycling", &arenaGateDecoder{}, noArenas, true, false},
		{"no DecodeIn", &gateDecoder{}, batchArenas, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := newDecodePool(tc.dec, 2, tc.arenas)
			defer pool.close()
			out := make(chan []decoded, 100)
			s := newDecodeStream(pool, out, false, false, tc.onePartition)
			n := 3*jobRecords + 5
			for i := range n {
				s.addOwned([]byte(strconv.Itoa(i)), nil, changelog.Position{Partition: "p", Offset: int64(i + 1)}, 0)
				if s.full() && !s.submit(context.Background()) {
					t.Fatal("submit refused")
				}
			}
			if !s.drain(context.Background()) {
				t.Fatal("drain refused")
			}
			close(out)
			var records, carried int
			for ds := range out {
				for i, d := range ds {
					if d.changes[0].TxnID != strconv.Itoa(records) {
						t.Fatalf("record %d holds %q", records, d.changes[0].TxnID)
					}
					records++
					if d.mem != nil {
						carried++
						if i != len(ds)-1 {
							t.Errorf("record %d of a batch of %d carries the arena, want the last", i, len(ds))
						}
					}
				}
				if tc.want && ds[len(ds)-1].mem == nil {
					t.Errorf("a batch of %d records carries no arena", len(ds))
				}
				releaseBatch(ds, pool.recycle)
			}
			if records != n {
				t.Fatalf("%d records sent, want %d", records, n)
			}
			if !tc.want && carried > 0 {
				t.Errorf("%d batches carry an arena, want none", carried)
			}
			if ad, ok := tc.dec.(*arenaGateDecoder); ok && (ad.arenas > 0) != tc.want {
				t.Errorf("%d records decoded into an arena, want them to be %v", ad.arenas, tc.want)
			}
		})
	}
}
