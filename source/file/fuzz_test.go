package file

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// FuzzFraming reads an input with Next and with NextLentBatch: both
// return the lines frame works out, and end alike, whether the input
// starts a block or straddles the end of the first one.
//
//	go test -run '^$' -fuzz '^FuzzFraming$' -fuzztime 60s ./source/file
func FuzzFraming(f *testing.F) {
	for _, s := range []string{"a\nb\n", "a\r\n\r\n \nb", "\n\n", "x", "a\rb\n\r", "{}\n\t\n{\"a\":1}\r\n"} {
		f.Add([]byte(s), uint8(3), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8, limit uint16) {
		for _, pad := range []int{0, bufferSize - len(in)/2 - 1} {
			content := string(in)
			if pad > 0 {
				content = strings.Repeat("p", pad) + "\n" + content
			}
			open := func() *Reader {
				r := newReader("in", bytes.NewReader([]byte(content)), changelog.Position{})
				if limit > 0 {
					r.MaxRecordBytes = int(limit)
				}
				return r
			}
			ctx := context.Background()
			r := open()
			want, wantErr := readToError(ctx, r.Next)
			r.Close()
			if limit == 0 || wantErr == io.EOF {
				if f := frame(content); wantErr != io.EOF || !slices.Equal(want, f) {
					t.Fatalf("Next read %d records ending with %v, want %d ending with EOF", len(want), wantErr, len(f))
				}
			}
			r = open()
			got, _, err := readLent(ctx, r.NextLentBatch, int(max)+1)
			r.Close()
			if err == nil || err.Error() != wantErr.Error() || !slices.Equal(got, want) {
				t.Fatalf("NextLentBatch read %d records ending with %v; Next %d ending with %v", len(got), err, len(want), wantErr)
			}
		}
	})
}
