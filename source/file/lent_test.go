package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// readToError reads every record with next, then the error that ended
// it.
func readToError(ctx context.Context, next func(context.Context) (Record, error)) ([]rec, error) {
	var got []rec
	for {
		r, err := next(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, toRec(r))
	}
}

// readLent reads every record with next, a NextLentBatch, keeping every
// lease until the end (so that every record read must still hold its
// bytes then), then the error that ended it.
func readLent(ctx context.Context, next func(context.Context, []Record, int) ([]Record, Lease, error), max int) ([]rec, []Record, error) {
	var got []rec
	var kept []Record
	var leases []Lease
	defer func() {
		for _, l := range leases {
			l.Release()
		}
	}()
	for {
		recs, l, err := next(ctx, nil, max)
		if err != nil {
			if l != nil || len(recs) != 0 {
				return nil, nil, fmt.Errorf("an error (%v) with %d records and lease %v", err, len(recs), l)
			}
			// The records lent earlier are intact: nothing was written
			// over the blocks held.
			for i, r := range kept {
				if string(r.Data) != got[i].data {
					return nil, nil, fmt.Errorf("record %d changed from %q to %q", i, got[i].data, r.Data)
				}
			}
			return got, kept, err
		}
		if len(recs) == 0 || len(recs) > max || l == nil {
			return nil, nil, fmt.Errorf("a batch of %d records (at most %d) and lease %v", len(recs), max, l)
		}
		leases = append(leases, l)
		for _, r := range recs {
			if cap(r.Data) != len(r.Data) {
				return nil, nil, fmt.Errorf("record %q has room after it (cap %d): an append would write into the block", r.Data, cap(r.Data))
			}
			got = append(got, toRec(r))
			kept = append(kept, r)
		}
	}
}

// TestNextLentBatchReadsWhatNextReads: batches of every size hold the
// records Next returns, with the same positions, and end with the same
// error; blank lines, "\r\n", a last line without its terminator, lines
// cut by a block's end or longer than a block, and a resume mid-line take
// the slow path inside the Reader and must not change that. Every record
// lent stays intact while its lease is held, even after the Reader moved
// on to other blocks.
func TestNextLentBatchReadsWhatNextReads(t *testing.T) {
	long := strings.Repeat("y", bufferSize+bufferSize/3)
	tests := []struct {
		name    string
		content string
		start   changelog.Position
		limit   int
	}{
		{"lines", "a\nbb\nccc\n", changelog.Position{}, 0},
		{"blank lines", "a\n\n \t\nb\n\n", changelog.Position{}, 0},
		{"crlf", "a\r\nb\r\n\r\nc\r\n", changelog.Position{}, 0},
		{"no last terminator", "a\nb\nlast", changelog.Position{}, 0},
		{"empty", "", changelog.Position{}, 0},
		{"only blank", "\n\n  \n", changelog.Position{}, 0},
		{"blocks", lines(5000, 150), changelog.Position{}, 0},
		{"a line longer than a block", "a\n" + long + "\nb\n" + lines(2000, 300), changelog.Position{}, 0},
		{"two long lines", long + "\n" + long + long + "\nend", changelog.Position{}, 0},
		{"resume", "first\nsecond\nthird\n", changelog.Position{Offset: 6, Seq: 1}, 0},
		{"resume after an unterminated line", "first\nsecond", changelog.Position{Offset: 12, Seq: 2}, 0},
		{"too long in a batch", "ok\nok2\n12345678901\nnext\n", changelog.Position{}, 10},
		{"too long at the end", "ok\n12345678901", changelog.Position{}, 10},
		{"too long across blocks", lines(3000, 100) + long + "\nnext\n", changelog.Position{}, bufferSize},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			openAt := func() *Reader {
				r := open(t, path, tt.start, false)
				if tt.limit > 0 {
					r.MaxRecordBytes = tt.limit
				}
				return r
			}
			r := openAt()
			want, wantErr := readToError(ctx, r.Next)
			r.Close()
			for _, max := range []int{1, 2, 3, 128, 1 << 20} {
				r := openAt()
				got, _, err := readLent(ctx, r.NextLentBatch, max)
				r.Close()
				if err == nil || err.Error() != wantErr.Error() || errors.Is(err, ErrRecordTooLong) != errors.Is(wantErr, ErrRecordTooLong) {
					t.Fatalf("batches of %d end with %v, want %v", max, err, wantErr)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("batches of %d: %d records, want %d (first difference at %d)", max, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}

// TestLentBlocksOutliveTheirReader: records lent and retained keep their
// bytes after their Reader is closed and other Readers read many blocks
// (which the pool would hand them, were the lent blocks released); once
// released, the blocks are free again.
func TestLentBlocksOutliveTheirReader(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(4000, 200))
	r := open(t, path, changelog.Position{}, false)
	var kept []Record
	var leases []Lease
	for {
		recs, l, err := r.NextLentBatch(ctx, nil, 64)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		l.Retain() // a second holder, released separately below
		leases = append(leases, l, l)
		kept = append(kept, recs...)
	}
	r.Close()
	want := strings.Split(strings.TrimSuffix(lines(4000, 200), "\n"), "\n")
	other := writeFile(t, strings.Repeat("z", 300)+"\n"+lines(8000, 90))
	for range 3 {
		r := open(t, other, changelog.Position{}, false)
		if _, err := readToError(ctx, r.NextBorrowed); err != io.EOF {
			t.Fatal(err)
		}
		r.Close()
		for i, rec := range kept {
			if string(rec.Data) != want[i] {
				t.Fatalf("record %d changed to %q", i, rec.Data)
			}
		}
	}
	blocksHeld := map[*block]bool{}
	for _, l := range leases {
		blocksHeld[l.(*block)] = true
		l.Release()
	}
	for b := range blocksHeld {
		if n := b.refs.Load(); n != 0 {
			t.Errorf("a block has %d references left once every holder released it", n)
		}
	}
	if len(blocksHeld) < 3 {
		t.Errorf("the records lay in %d blocks: the test wants them spread over several", len(blocksHeld))
	}
}

// TestSequenceNextLentBatch: a partition of several files lends what
// Next reads, in sequence positions, one file per batch.
func TestSequenceNextLentBatch(t *testing.T) {
	dir := t.TempDir()
	a := writeIn(t, dir, "a.jsonl", lines(3000, 120))
	writeIn(t, dir, "b.jsonl", "b1\n\nb2")
	writeIn(t, dir, "c.jsonl", lines(10, 20))
	p := Partition{Name: "p", Paths: []string{a, dir + "/[bc].jsonl"}}
	ctx := context.Background()
	want, _, _ := readSeq(t, openSeq(t, p, changelog.Position{}, ""))
	for _, max := range []int{1, 7, 128} {
		s := openSeq(t, p, changelog.Position{}, "")
		var got []seqRec
		for {
			recs, l, err := s.NextLentBatch(ctx, nil, max)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]bool{}
			for _, r := range recs {
				if r.Pos.Partition != "p" {
					t.Fatalf("record %q in partition %q", r.Data, r.Pos.Partition)
				}
				files[r.Pos.File] = true
				got = append(got, seqRec{string(r.Data), r.Pos.File, r.Pos.Offset, r.Pos.Seq})
			}
			if len(files) != 1 {
				t.Fatalf("a batch of %d files", len(files))
			}
			l.Release()
		}
		if !slices.Equal(got, want) {
			t.Fatalf("batches of %d:\n%v\nwant\n%v", max, got[:min(len(got), 5)], want[:min(len(want), 5)])
		}
	}
}
