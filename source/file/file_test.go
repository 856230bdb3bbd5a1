package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// rec is a record in a form tests compare easily.
type rec struct {
	data     string
	off, seq int64
}

func toRec(r Record) rec { return rec{string(r.Data), r.Pos.Offset, r.Pos.Seq} }

// writeFile creates a file holding content in a fresh temporary directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p0.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	if err := appendTo(path, content); err != nil {
		t.Fatal(err)
	}
}

// appendTo appends content to the file at path; safe on any goroutine.
func appendTo(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func open(t *testing.T, path string, start changelog.Position, follow bool) *Reader {
	t.Helper()
	r, err := Open(path, start, follow)
	if err != nil {
		t.Fatalf("Open(%s, %+v): %v", path, start, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readAll reads records until io.EOF, checking every Position names path.
func readAll(t *testing.T, r *Reader, partition string) []rec {
	t.Helper()
	return readAllWith(t, r.Next, partition)
}

// readAllWith is readAll with next for Reader.Next: toRec copies each
// record before the next call, as a borrower must.
func readAllWith(t *testing.T, next func(context.Context) (Record, error), partition string) []rec {
	t.Helper()
	var got []rec
	for {
		rc, err := next(context.Background())
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		if rc.Pos.Partition != partition {
			t.Fatalf("record %q has partition %q, want %q", rc.Data, rc.Pos.Partition, partition)
		}
		got = append(got, toRec(rc))
	}
}

func TestNext(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []rec
	}{
		{"empty file", "", nil},
		{"lines", "a\nbb\nccc\n", []rec{{"a", 2, 1}, {"bb", 5, 2}, {"ccc", 9, 3}}},
		{"no trailing newline", "a\nbb", []rec{{"a", 2, 1}, {"bb", 4, 2}}},
		{"crlf", "a\r\nbb\r\n", []rec{{"a", 3, 1}, {"bb", 7, 2}}},
		{"crlf without the last newline", "a\r\nbb\r", []rec{{"a", 3, 1}, {"bb", 6, 2}}},
		{"blank lines count but are skipped", "\n \t\n{}\n\r\n\n{\"a\":1}\n \n",
			[]rec{{"{}", 7, 3}, {`{"a":1}`, 18, 6}}},
		{"only blank lines", "\n\n  \n", nil},
		{"inner whitespace kept", " {} \n", []rec{{" {} ", 5, 1}}},
		{"bare carriage return inside a line", "a\rb\n", []rec{{"a\rb", 4, 1}}},
		{"unicode", "é\n日本\n", []rec{{"é", 3, 1}, {"日本", 10, 2}}},
		{"a line longer than the read buffer", "a\n" + strings.Repeat("x", bufferSize+10) + "\nb\n",
			[]rec{{"a", 2, 1}, {strings.Repeat("x", bufferSize+10), int64(bufferSize + 13), 2}, {"b", int64(bufferSize + 15), 3}}},
	}
	for _, tt := range tests {
		for _, borrow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/borrow=%v", tt.name, borrow), func(t *testing.T) {
				path := writeFile(t, tt.content)
				r := open(t, path, changelog.Position{}, false)
				next := r.Next
				if borrow {
					next = r.NextBorrowed
				}
				if got := readAllWith(t, next, path); !slices.Equal(got, tt.want) {
					t.Errorf("records\n got %.200v\nwant %.200v", got, tt.want)
				}
				if r.Size() != int64(len(tt.content)) {
					t.Errorf("Size = %d, want %d", r.Size(), len(tt.content))
				}
				// The end is sticky.
				if _, err := next(context.Background()); err != io.EOF {
					t.Errorf("Next after the end = %v, want io.EOF", err)
				}
			})
		}
	}
}

// TestResume opens the file again at every position a record reported and
// checks that exactly the remaining records follow, with the same positions.
func TestResume(t *testing.T) {
	const content = "{\"id\":1}\n\n{\"id\":2}\r\n  \n{\"id\":3}\n{\"id\":4}"
	path := writeFile(t, content)
	all := readAll(t, open(t, path, changelog.Position{}, false), path)
	if len(all) != 4 {
		t.Fatalf("read %d records, want 4: %v", len(all), all)
	}
	for i, from := range all {
		t.Run(fmt.Sprintf("after %d", from.seq), func(t *testing.T) {
			r := open(t, path, changelog.Position{Partition: path, Offset: from.off, Seq: from.seq}, false)
			if got := readAll(t, r, path); !slices.Equal(got, all[i+1:]) {
				t.Errorf("resumed at %+v:\n got %v\nwant %v", from, got, all[i+1:])
			}
		})
	}
}

// TestResumeAfterUnterminatedLine resumes after a last line that had no
// newline when it was read: the newline written later completes that line
// and must not count as a line of its own.
func TestResumeAfterUnterminatedLine(t *testing.T) {
	tests := []struct {
		name, first, later string
		want               []rec
	}{
		{"newline", "a\nb", "\nc\n", []rec{{"c", 6, 3}}},
		{"crlf", "a\r\nb\r", "\nc\r\n", []rec{{"c", 9, 3}}},
		{"more text", "a\nb", "c\n", []rec{{"c", 5, 3}}}, // "bc" was extended: "c" is a line of its own now
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.first)
			got := readAll(t, open(t, path, changelog.Position{}, false), path)
			last := got[len(got)-1]
			appendFile(t, path, tt.later)
			r := open(t, path, changelog.Position{Partition: path, Offset: last.off, Seq: last.seq}, false)
			if got := readAll(t, r, path); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	path := writeFile(t, "a\nb\n")
	tests := []struct {
		name    string
		path    string
		start   changelog.Position
		wantIs  error
		wantMsg string
	}{
		{"offset past the end", path, changelog.Position{Offset: 5, Seq: 2}, ErrFileChanged,
			path + ": the resume offset 5 is past the end of the file (4 bytes): the file was truncated or replaced"},
		{"missing file", filepath.Join(t.TempDir(), "absent.jsonl"), changelog.Position{}, os.ErrNotExist, "absent.jsonl"},
		{"negative offset", path, changelog.Position{Offset: -1}, nil, "invalid resume position"},
		{"negative seq", path, changelog.Position{Seq: -1}, nil, "invalid resume position"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(tt.path, tt.start, false)
			if err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestRecordTooLong(t *testing.T) {
	long := strings.Repeat("x", bufferSize+bufferSize/2) // longer than the read buffer
	tests := []struct {
		name    string
		content string
		limit   int
		want    []rec // records before the error
		wantErr string
	}{
		{"in the buffer", "ok\n12345678901\nnext\n", 10, []rec{{"ok", 3, 1}}, ":2: the line is longer than the 10-byte record limit"},
		{"at the limit", "1234567890\r\n", 10, []rec{{"1234567890", 12, 1}}, ""},
		{"unterminated at the end", "ok\n12345678901", 10, []rec{{"ok", 3, 1}}, ":2: the line is longer"},
		{"across buffers", "ok\n" + long + "\n", bufferSize, []rec{{"ok", 3, 1}}, ":2: the line is longer"},
		{"across buffers, within the limit", long + "\r\nz\n", len(long),
			[]rec{{long, int64(len(long) + 2), 1}, {"z", int64(len(long) + 4), 2}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			r := open(t, path, changelog.Position{}, false)
			r.MaxRecordBytes = tt.limit
			var got []rec
			var err error
			for {
				var rc Record
				if rc, err = r.Next(context.Background()); err != nil {
					break
				}
				got = append(got, toRec(rc))
			}
			if !slices.EqualFunc(got, tt.want, func(a, b rec) bool { return a == b }) {
				t.Errorf("records before the error: got %d %.40v, want %d %.40v", len(got), got, len(tt.want), tt.want)
			}
			if tt.wantErr == "" {
				if err != io.EOF {
					t.Fatalf("Next = %v, want io.EOF", err)
				}
				return
			}
			if !errors.Is(err, ErrRecordTooLong) || !strings.Contains(err.Error(), path+tt.wantErr) {
				t.Fatalf("Next = %v; want ErrRecordTooLong containing %q", err, path+tt.wantErr)
			}
			if _, again := r.Next(context.Background()); again != err {
				t.Errorf("Next after the error = %v, want the same error", again)
			}
		})
	}
}

// TestDataStaysValid checks the documented ownership of Record.Data: it is
// not overwritten by later reads.
func TestDataStaysValid(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := range 5000 {
		line := fmt.Sprintf(`{"id":%d,"pad":"%s"}`, i, strings.Repeat("p", i%300))
		want = append(want, line)
		b.WriteString(line + "\n")
	}
	path := writeFile(t, b.String())
	r := open(t, path, changelog.Position{}, false)
	var kept [][]byte
	for {
		rc, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, rc.Data)
	}
	if len(kept) != len(want) {
		t.Fatalf("read %d records, want %d", len(kept), len(want))
	}
	for i := range kept {
		if string(kept[i]) != want[i] {
			t.Fatalf("record %d changed after later reads: %.60q, want %.60q", i+1, kept[i], want[i])
		}
	}
}

// TestFollow reads a file while another goroutine appends to it. The writer
// appends line i+1 only after the reader has returned line i, so the reader
// must have reached the end of the file and polled for growth every time.
func TestFollow(t *testing.T) {
	path := writeFile(t, "l1\n")
	r := open(t, path, changelog.Position{}, true)
	r.PollInterval = 1 // poll as fast as possible; the test never sleeps
	got := make(chan int64, 1)
	done := make(chan struct{})
	const lines = 20
	go func() {
		defer close(done)
		for seq := range got {
			if seq == lines {
				return
			}
			if err := appendTo(path, fmt.Sprintf("l%d\n", seq+1)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	ctx := context.Background()
	for i := int64(1); i <= lines; i++ {
		rc, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if want := fmt.Sprintf("l%d", i); string(rc.Data) != want || rc.Pos.Seq != i {
			t.Fatalf("record %v, want %q at line %d", toRec(rc), want, i)
		}
		got <- i
	}
	close(got)
	<-done
	if want := int64(len("l1\n")*9 + len("l10\n")*11); r.Size() != want {
		t.Errorf("Size = %d, want %d", r.Size(), want)
	}
}

// followed opens path in follow mode with a hook that reports each wait for
// growth on the returned channel and blocks until the test lets it go on.
func followed(t *testing.T, path string) (r *Reader, waiting <-chan struct{}, resume chan<- struct{}) {
	t.Helper()
	r = open(t, path, changelog.Position{}, true)
	r.PollInterval = 1
	w, g := make(chan struct{}), make(chan struct{})
	r.onWait = func() {
		w <- struct{}{}
		<-g
	}
	return r, w, g
}

// nextAsync runs Next on another goroutine.
func nextAsync(r *Reader, ctx context.Context) <-chan result {
	c := make(chan result, 1)
	go func() {
		rc, err := r.Next(ctx)
		c <- result{rc, err}
	}()
	return c
}

type result struct {
	rec Record
	err error
}

// TestFollowPartialLine checks that a following reader does not return a
// line before its newline arrives, even across several polls.
func TestFollowPartialLine(t *testing.T) {
	path := writeFile(t, `{"id":1`)
	r, waiting, resume := followed(t, path)
	res := nextAsync(r, context.Background())
	<-waiting // read the partial line and reached the end
	appendFile(t, path, `,"more":`)
	resume <- struct{}{}
	<-waiting // read more, still no newline
	appendFile(t, path, "true}\r\n{\"id\":2}\n")
	resume <- struct{}{}
	got := <-res
	if got.err != nil {
		t.Fatal(got.err)
	}
	if want := (rec{`{"id":1,"more":true}`, 22, 1}); toRec(got.rec) != want {
		t.Errorf("got %v, want %v", toRec(got.rec), want)
	}
	rc, err := r.Next(context.Background()) // already in the buffer: no wait
	if err != nil || toRec(rc) != (rec{`{"id":2}`, 31, 2}) {
		t.Errorf("second record %v, %v", toRec(rc), err)
	}
}

// TestFollowCancel checks that a following reader returns ctx.Err() when its
// context is done while it waits, and carries on where it was afterwards.
func TestFollowCancel(t *testing.T) {
	path := writeFile(t, "a\npart")
	r, waiting, resume := followed(t, path)
	if rc, err := r.Next(context.Background()); err != nil || string(rc.Data) != "a" {
		t.Fatalf("first Next = %v, %v", toRec(rc), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := nextAsync(r, ctx)
	<-waiting
	cancel()
	resume <- struct{}{}
	if got := <-res; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Next with a cancelled context = %v, %v; want context.Canceled", toRec(got.rec), got.err)
	}
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a done context = %v, want context.Canceled at once", err)
	}
	appendFile(t, path, "ial\n")
	r.onWait = nil
	rc, err := r.Next(context.Background())
	if err != nil || toRec(rc) != (rec{"partial", 10, 2}) {
		t.Errorf("Next after the cancel = %v, %v; want the completed line", toRec(rc), err)
	}
}

// TestFollowFileChanged checks that a following reader stops when its file
// shrinks or its path stops naming it.
func TestFollowFileChanged(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, path string)
		wantMsg string
	}{
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 2); err != nil {
				t.Fatal(err)
			}
		}, "the file shrank to 2 bytes while being read at byte 5"},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "the path no longer names the file being read"},
		{"rotated", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "the path no longer names the file being read"},
		{"truncated and refilled past the offset at once", func(t *testing.T, path string) {
			// copytruncate, then a burst larger than the old size
			// before the next poll: the size never shows the shrink.
			if err := os.WriteFile(path, []byte("xyzzy-new-content\nmore\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "the bytes before byte 5 changed while the file was read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "a\nbc\n")
			r, waiting, resume := followed(t, path)
			for range 2 {
				if _, err := r.Next(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			res := nextAsync(r, context.Background())
			<-waiting
			tt.change(t, path)
			resume <- struct{}{}
			got := <-res
			if !errors.Is(got.err, ErrFileChanged) || !strings.Contains(got.err.Error(), tt.wantMsg) {
				t.Fatalf("Next = %v, %v; want ErrFileChanged containing %q", toRec(got.rec), got.err, tt.wantMsg)
			}
		})
	}
}

// useStdin makes Open("-") read the returned pipe's read end.
func useStdin(t *testing.T) *os.File {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := stdin
	stdin = pr
	t.Cleanup(func() {
		stdin = old
		pr.Close()
		pw.Close()
	})
	return pw
}

func TestStdin(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		start  changelog.Position
		follow bool
		want   []rec
	}{
		{"from the start", "a\r\n\nbb\ncc", changelog.Position{}, false,
			[]rec{{"a", 3, 1}, {"bb", 7, 3}, {"cc", 9, 4}}},
		{"resumed", "a\r\n\nbb\ncc", changelog.Position{Offset: 3, Seq: 1}, false,
			[]rec{{"bb", 7, 3}, {"cc", 9, 4}}},
		{"resumed after an unterminated line", "a\nb\nc\n", changelog.Position{Offset: 3, Seq: 2}, false,
			[]rec{{"c", 6, 3}}},
		{"follow ends with the input", "a\nb", changelog.Position{}, true,
			[]rec{{"a", 2, 1}, {"b", 3, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pw := useStdin(t)
			written := make(chan error, 1)
			go func() {
				_, err := pw.WriteString(tt.input)
				pw.Close()
				written <- err
			}()
			r := open(t, "-", tt.start, tt.follow)
			if got := readAll(t, r, "-"); !slices.Equal(got, tt.want) {
				t.Errorf("records\n got %v\nwant %v", got, tt.want)
			}
			if r.Size() != -1 {
				t.Errorf("Size = %d, want -1", r.Size())
			}
			if err := <-written; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestStreamShorterThanOffset(t *testing.T) {
	_, err := OpenReader("in", strings.NewReader("a\nb\n"), changelog.Position{Offset: 10, Seq: 3})
	if !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), "in: the input ended after 4 bytes, before the resume offset 10") {
		t.Errorf("OpenReader = %v; want ErrFileChanged naming both sizes", err)
	}
}

// TestStreamCancel checks that Next on a stream returns when its context is
// done although the stream's Read blocks, and that bytes read before the
// cancel are not lost.
func TestStreamCancel(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	// The reader signals each Read that returned data, so the test cancels
	// only after "ab" is in the stream's goroutine.
	delivered := make(chan struct{}, 10)
	r, err := OpenReader("pipe", notify{pr, delivered}, changelog.Position{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	res := nextAsync(r, ctx)
	if _, err := pw.WriteString("ab"); err != nil {
		t.Fatal(err)
	}
	<-delivered
	cancel()
	if got := <-res; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Next = %v, %v; want context.Canceled", toRec(got.rec), got.err)
	}
	if _, err := pw.WriteString("c\nd\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	got := readAll(t, r, "pipe")
	if want := []rec{{"abc", 4, 1}, {"d", 6, 2}}; !slices.Equal(got, want) {
		t.Errorf("after the cancel: got %v, want %v", got, want)
	}
}

// notify is an io.Reader that signals each Read that returned data.
type notify struct {
	r io.Reader
	c chan<- struct{}
}

func (n notify) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if k > 0 {
		n.c <- struct{}{}
	}
	return k, err
}

// TestStreamReadError checks that a failing stream stops the Reader for
// good, naming the input.
func TestStreamReadError(t *testing.T) {
	boom := errors.New("boom")
	r, err := OpenReader("in", io.MultiReader(strings.NewReader("a\nb"), errReader{boom}), changelog.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rc, err := r.Next(context.Background()); err != nil || string(rc.Data) != "a" {
		t.Fatalf("Next = %v, %v", toRec(rc), err)
	}
	for range 2 {
		if _, err := r.Next(context.Background()); !errors.Is(err, boom) || !strings.Contains(err.Error(), "in: read after line 1") {
			t.Errorf("Next = %v; want the read error, naming the input", err)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestClose(t *testing.T) {
	path := writeFile(t, "a\n")
	r, err := Open(path, changelog.Position{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := r.Next(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Next after Close = %v, want os.ErrClosed", err)
	}
}

// BenchmarkNext reads a 100,000-line file of Debezium-sized records (about
// 22 MB); one operation reads the whole file, from Open to io.EOF. It also
// reports the time per record.
func BenchmarkNext(b *testing.B) { benchmarkNext(b, false) }

// BenchmarkNextBorrowed is BenchmarkNext with NextBorrowed, as the
// engine reads (it copies each record into its decode job itself).
func BenchmarkNextBorrowed(b *testing.B) { benchmarkNext(b, true) }

// benchmarkNext reads a file of 100,000 records of 150-220 bytes per op,
// with Next or NextBorrowed.
func benchmarkNext(b *testing.B, borrow bool) {
	var buf bytes.Buffer
	const lines = 100_000
	for i := range lines {
		fmt.Fprintf(&buf, `{"before":null,"after":{"id":%d,"customer_id":%d,"status":"NEW","amount":"%d.25","note":"%s"},`+
			`"source":{"db":"inventory","table":"orders","pos":%d},"op":"c","ts_ms":1589355606100}`+"\n",
			i, i%977, i%10000, strings.Repeat("n", i%64), i*311)
	}
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		r, err := Open(path, changelog.Position{}, false)
		if err != nil {
			b.Fatal(err)
		}
		next := r.Next
		if borrow {
			next = r.NextBorrowed
		}
		n := 0
		for {
			if _, err := next(ctx); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		r.Close()
		if n != lines {
			b.Fatalf("read %d records, want %d", n, lines)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/record")
}

// TestBuffered says whether the next line is in the read buffer already:
// true between the lines of a small file once it is read in, false before
// the first read, at a line without its terminator, and at the end.
func TestBuffered(t *testing.T) {
	path := writeFile(t, "a\nbb\nccc")
	r := open(t, path, changelog.Position{}, false)
	if r.Buffered() {
		t.Error("Buffered before anything was read")
	}
	var got []bool
	for {
		if _, err := r.Next(context.Background()); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		got = append(got, r.Buffered())
	}
	// After "a": "bb\n" is buffered; after "bb": only "ccc" without its
	// terminator; after "ccc": the end.
	if want := []bool{true, false, false}; !slices.Equal(got, want) {
		t.Errorf("Buffered after each record = %v, want %v", got, want)
	}
}

// TestMayWait says whether the next Next may wait for input: never for a
// regular file read without follow; for a followed file only once it is
// read to its size; for a stream whenever no whole line is buffered.
func TestMayWait(t *testing.T) {
	mayWait := func(r *Reader) []bool {
		t.Helper()
		got := []bool{r.MayWait()}
		for range 3 {
			if _, err := r.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			got = append(got, r.MayWait())
		}
		return got
	}
	path := writeFile(t, "a\nbb\nccc\n")
	if got, want := mayWait(open(t, path, changelog.Position{}, false)), []bool{false, false, false, false}; !slices.Equal(got, want) {
		t.Errorf("regular file: MayWait before and after each record = %v, want %v", got, want)
	}
	// Before the first read nothing is buffered, but the file has bytes
	// not read yet: no wait.
	if got, want := mayWait(open(t, path, changelog.Position{}, true)), []bool{false, false, false, true}; !slices.Equal(got, want) {
		t.Errorf("followed file: MayWait before and after each record = %v, want %v", got, want)
	}
	r, err := OpenReader("in", strings.NewReader("a\nbb\nccc\n"), changelog.Position{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if got, want := mayWait(r), []bool{true, false, false, true}; !slices.Equal(got, want) {
		t.Errorf("stream: MayWait before and after each record = %v, want %v", got, want)
	}
}
