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

// lines returns n lines of about width bytes, numbered.
func lines(n, width int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "%d:%s\n", i, strings.Repeat("x", width-8+i%16))
	}
	return sb.String()
}

// chunky returns data in pieces of the sizes listed, in turn, and io.EOF
// with the last piece, as some readers do.
type chunky struct {
	data  string
	sizes []int
	i     int
}

func (c *chunky) Read(p []byte) (int, error) {
	n := min(len(p), len(c.data), c.sizes[c.i%len(c.sizes)])
	c.i++
	copy(p, c.data[:n])
	c.data = c.data[n:]
	if len(c.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// frame is what a Reader returns for content, worked out line by line.
func frame(content string) []rec {
	var want []rec
	off := int64(0)
	ls := strings.SplitAfter(content, "\n")
	for i, l := range ls {
		if l == "" {
			continue
		}
		off += int64(len(l))
		data := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		if strings.Trim(data, " \t\r\v\f") != "" {
			want = append(want, rec{data, off, int64(i + 1)})
		}
	}
	return want
}

// TestBlocksFrameLines: lines cut by a block's end, as long as a block or
// longer, read in pieces of every size (a last one that comes with
// io.EOF included), are the lines of the input, at their offsets.
func TestBlocksFrameLines(t *testing.T) {
	around := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name    string
		content string
	}{
		{"short lines", lines(6000, 100)},
		{"a block less one", around(bufferSize-1) + "\nnext\n"},
		{"a block", around(bufferSize) + "\nnext\n"},
		{"a block and a byte", around(bufferSize+1) + "\nnext\n"},
		{"two blocks and more", "x\n" + around(2*bufferSize+5) + "\r\ny\n"},
		{"cut at a block's end", around(bufferSize-3) + "\nab\ncd\n" + lines(100, 50)},
		{"the terminator at a block's end", around(bufferSize-1) + "\n" + around(10) + "\n"},
		{"the carriage return at a block's end", around(bufferSize-1) + "\r\n" + around(10)},
		{"no last terminator", lines(3000, 90) + "last"},
		{"blank", "\n \n\t\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := frame(tt.content)
			for _, sizes := range [][]int{{1 << 30}, {1}, {7, 4096, 3}, {bufferSize - 1}, {bufferSize + 1}} {
				if sizes[0] == 1 && len(tt.content) > 64<<10 {
					continue // a read per byte: slow for nothing more
				}
				r, err := OpenReader("in", &chunky{data: tt.content, sizes: sizes}, changelog.Position{})
				if err != nil {
					t.Fatal(err)
				}
				var got []rec
				for {
					rc, err := r.NextBorrowed(context.Background())
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("reads of %v: %v", sizes, err)
					}
					got = append(got, toRec(rc))
				}
				r.Close()
				if !slices.Equal(got, want) {
					t.Fatalf("reads of %v: %d records, want %d (first difference at %d)", sizes, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}

func firstDiff(a, b []rec) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// empty returns nothing, forever.
type empty struct{}

func (empty) Read([]byte) (int, error) { return 0, nil }

// TestReadsOfNothing: an input whose reads return neither bytes nor an
// error stops the Reader, as bufio's readers do, with io.ErrNoProgress.
func TestReadsOfNothing(t *testing.T) {
	// Straight from the input: a stream's goroutine waits for bytes.
	r := newReader("in", io.MultiReader(strings.NewReader("a\n"), empty{}), changelog.Position{})
	defer r.Close()
	var err error
	if rc, err := r.Next(context.Background()); err != nil || string(rc.Data) != "a" {
		t.Fatalf("Next = %q, %v; want a", rc.Data, err)
	}
	_, err = r.Next(context.Background())
	if !errors.Is(err, io.ErrNoProgress) || !strings.Contains(err.Error(), "in: read after line 1") {
		t.Fatalf("Next = %v, want io.ErrNoProgress after line 1", err)
	}
}
