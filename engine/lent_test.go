package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/file"
)

// TestReadPartitionLendsFileRecords reads a file of several blocks through
// readPartition and the pool: lent to the jobs (the default) or copied
// into them (the dead-letter policy, which keeps records past their
// decoding), every record reaches the loop intact and in order, while the
// reader reads on into new blocks and recycled ones (with -race, a block
// reused before its jobs were decoded is a reported race). A line over the
// record limit ends the partition behind the records before it.
func TestReadPartitionLendsFileRecords(t *testing.T) {
	const n = 6000
	var want []string
	var sb strings.Builder
	for i := range n {
		rec := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("p", 100+i%150))
		want = append(want, rec)
		sb.WriteString(rec + "\n")
		if i%1000 == 7 {
			sb.WriteString("\n  \r\n") // blank lines, skipped
		}
	}
	content := sb.String()
	tooLong := 4321 // the record cut by the limit
	limited := strings.Join(want[:tooLong], "\n") + "\n" + strings.Repeat("x", 1000) + "\n" + strings.Join(want[tooLong:], "\n") + "\n"
	tests := []struct {
		name      string
		content   string
		limit     int64
		want      int
		wantErr   error
		keepGoing bool
	}{
		{"lent", content, 0, n, nil, false},
		{"copied for the dead-letter policy", content, 0, n, nil, true},
		{"lent, a line too long", limited, 999, tooLong, file.ErrRecordTooLong, false},
		{"copied, a line too long", limited, 999, tooLong, file.ErrRecordTooLong, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			src := file.New(file.Config{Paths: []string{path}, MaxRecordBytes: tt.limit}, source.Env{})
			ctx := context.Background()
			readers, err := src.Open(ctx, source.Start{Stored: func(string) (source.Stored, bool) { return source.Stored{}, false }})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if _, ok := readers[0].(lender); !ok {
				t.Fatalf("the file source's reader, a %T, lends nothing", readers[0])
			}
			pool := newDecodePool(&gateDecoder{}, 2, noArenas)
			defer pool.close()
			out := make(chan []decoded, 1)
			done := make(chan error, 1)
			go func() { done <- readPartition(ctx, readers[0], pool, out, tt.keepGoing) }()
			var got []string
			var gotErr error
			batches := 0
			for ended := false; !ended || len(out) > 0; {
				select {
				case ds := <-out:
					if batches++; batches%5 == 0 {
						// A slow loop: the reader runs ahead as far as
						// its jobs in flight let it.
						time.Sleep(time.Millisecond)
					}
					for _, d := range ds {
						switch {
						case d.err != nil:
							gotErr = d.err
						case tt.keepGoing && string(d.raw) != d.changes[0].TxnID:
							t.Fatalf("record %d kept raw as %q, decoded as %q", len(got), d.raw, d.changes[0].TxnID)
						default:
							got = append(got, d.changes[0].TxnID)
						}
					}
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					ended = true
				}
			}
			if len(got) != tt.want {
				t.Fatalf("%d records, want %d", len(got), tt.want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("record %d is %q, want %q", i, got[i], want[i])
				}
			}
			if !errors.Is(gotErr, tt.wantErr) {
				t.Fatalf("the partition ended with %v, want %v", gotErr, tt.wantErr)
			}
		})
	}
}
