package file

import (
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

// seqRec is a record of a sequence in a form tests compare easily.
type seqRec struct {
	data string
	file string
	off  int64
	seq  int64
}

func writeIn(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func openSeq(t *testing.T, p Partition, start changelog.Position, mark string) *Sequence {
	t.Helper()
	s, warn, err := OpenSequence(p, start, mark)
	if err != nil {
		t.Fatalf("OpenSequence(%+v, %s): %v", start, mark, err)
	}
	if warn != nil && mark != "" {
		t.Fatalf("OpenSequence warned: %v", warn)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// readSeq reads s to its end, keeping every record's position and mark.
func readSeq(t *testing.T, s *Sequence) ([]seqRec, []changelog.Position, []string) {
	t.Helper()
	var got []seqRec
	var pos []changelog.Position
	var marks []string
	for {
		r, err := s.Next(context.Background())
		if err == io.EOF {
			return got, pos, marks
		}
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		if r.Pos.Partition != s.p.Name {
			t.Fatalf("record %q in partition %q, want %q", r.Data, r.Pos.Partition, s.p.Name)
		}
		m, err := s.Mark(r.Pos)
		if err != nil {
			t.Fatalf("Mark(%v): %v", r.Pos, err)
		}
		got = append(got, seqRec{string(r.Data), r.Pos.File, r.Pos.Offset, r.Pos.Seq})
		pos = append(pos, r.Pos)
		marks = append(marks, m)
	}
}

func TestSequenceReadsFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	day1 := writeIn(t, dir, "day1.jsonl", "a\nbb\n")
	day2 := writeIn(t, dir, "day2.jsonl", "c\n\nddd")
	writeIn(t, dir, "logs/2026-12-01.jsonl", "x\n")
	writeIn(t, dir, "logs/2026-12-02.jsonl", "y\nz\n")
	tests := []struct {
		name  string
		paths []string
		want  []seqRec
	}{
		{"one file names no file in positions", []string{day1},
			[]seqRec{{"a", "", 2, 1}, {"bb", "", 5, 2}}},
		{"a list is read one file after another", []string{day1, day2}, []seqRec{
			{"a", "day1.jsonl", 2, 1}, {"bb", "day1.jsonl", 5, 2},
			{"c", "day2.jsonl", 7, 1}, {"ddd", "day2.jsonl", 11, 3}}},
		{"the order is the list's, not the names'", []string{day2, day1}, []seqRec{
			{"c", "day2.jsonl", 2, 1}, {"ddd", "day2.jsonl", 6, 3},
			{"a", "day1.jsonl", 8, 1}, {"bb", "day1.jsonl", 11, 2}}},
		{"a glob is read in name order", []string{filepath.Join(dir, "logs", "*.jsonl")}, []seqRec{
			{"x", "logs/2026-12-01.jsonl", 2, 1},
			{"y", "logs/2026-12-02.jsonl", 4, 1}, {"z", "logs/2026-12-02.jsonl", 6, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openSeq(t, Partition{Name: "p", Paths: tt.paths, BaseDir: dir}, changelog.Position{}, "")
			got, _, _ := readSeq(t, s)
			if !slices.Equal(got, tt.want) {
				t.Errorf("records\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestSequenceResume opens the partition again at every position a record
// reported, with its mark, and checks that exactly the remaining records
// follow, with the same positions.
func TestSequenceResume(t *testing.T) {
	dir := t.TempDir()
	paths := []string{
		writeIn(t, dir, "a.jsonl", "{\"id\":1}\n\n{\"id\":2}\r\n"),
		writeIn(t, dir, "b.jsonl", strings.Repeat("{\"id\":3}\n", 600)), // longer than a mark's windows
		writeIn(t, dir, "c.jsonl", "{\"id\":4}"),
	}
	p := Partition{Name: "p", Paths: paths, BaseDir: dir}
	all, pos, marks := readSeq(t, openSeq(t, p, changelog.Position{}, ""))
	if len(all) != 603 {
		t.Fatalf("read %d records, want 603", len(all))
	}
	for i := range pos {
		start := pos[i]
		start.File = ""
		got, _, _ := readSeq(t, openSeq(t, p, start, marks[i]))
		if !slices.Equal(got, all[i+1:]) {
			t.Fatalf("resumed after record %d (%v, mark %s):\n got %.200v\nwant %.200v", i, pos[i], marks[i], got, all[i+1:])
		}
	}
}

func TestSequenceRefusesUntrustedPositions(t *testing.T) {
	// 500 lines of 11 bytes: the position, after line 450 (byte 4950), lies
	// past the head window, so head and tail are checked apart.
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "{\"id\":%03d}\n", i)
	}
	content := b.String()
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"replaced under the same name, longer", func(t *testing.T, dir string) {
			writeIn(t, dir, "b.jsonl", strings.ReplaceAll(content, "id", "ID")+content)
		}, "b.jsonl changed since it was recorded: its first 4096 bytes are not the ones read before"},
		{"rewritten just before the position", func(t *testing.T, dir string) {
			writeIn(t, dir, "b.jsonl", strings.Replace(content, `{"id":449}`, `{"id":999}`, 1))
		}, "the 4096 bytes before byte 4950 are not the ones applied"},
		{"truncated", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "b.jsonl"), 10); err != nil {
				t.Fatal(err)
			}
		}, "it is 10 bytes long, shorter than the position (byte 4950)"},
		{"removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "b.jsonl")); err != nil {
				t.Fatal(err)
			}
			writeIn(t, dir, "c.jsonl", "")
		}, "the position is in file b.jsonl, which the partition no longer holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeIn(t, dir, "a.jsonl", "{\"id\":0}\n")
			writeIn(t, dir, "b.jsonl", content)
			p := Partition{Name: "orders", Paths: []string{filepath.Join(dir, "*.jsonl")}, BaseDir: dir,
				ResetHint: "txsink reset --config p.yaml --partition orders"}
			_, pos, marks := readSeq(t, openSeq(t, p, changelog.Position{}, ""))
			// The position after b.jsonl's line 450.
			start, mark := pos[450], marks[450]
			start.File = ""
			tt.change(t, dir)
			_, _, err := OpenSequence(p, start, mark)
			if !errors.Is(err, ErrFileChanged) {
				t.Fatalf("OpenSequence = %v, want ErrFileChanged", err)
			}
			for _, want := range []string{"partition orders: the stored position (byte 4959, line 450) cannot be trusted", tt.want,
				"txsink reset --config p.yaml --partition orders"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\nlacks %q", err, want)
				}
			}
		})
	}
}

func TestSequenceWithoutMark(t *testing.T) {
	dir := t.TempDir()
	path := writeIn(t, dir, "a.jsonl", "a\nb\nc\n")
	p := Partition{Name: "a.jsonl", Paths: []string{path}, BaseDir: dir}
	s, warn, err := OpenSequence(p, changelog.Position{Offset: 2, Seq: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !errors.Is(warn, Unverified) {
		t.Errorf("warning = %v, want Unverified", warn)
	}
	if got, _, _ := readSeq(t, s); !slices.Equal(got, []seqRec{{"b", "", 4, 2}, {"c", "", 6, 3}}) {
		t.Errorf("records = %v", got)
	}
	if _, _, err := OpenSequence(p, changelog.Position{Offset: 9, Seq: 4}, ""); !errors.Is(err, ErrFileChanged) {
		t.Errorf("past the end without a mark: %v, want ErrFileChanged", err)
	}
	if _, _, err := OpenSequence(p, changelog.Position{Offset: 2, Seq: 1}, "v9 {}"); err == nil || !strings.Contains(err.Error(), "is not one this txsink writes") {
		t.Errorf("a mark of another version: %v", err)
	}
}

func TestSequenceFollowsAGlob(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "2026-12-01.jsonl", "a\nb") // the last line lacks its terminator
	p := Partition{Name: "logs", Paths: []string{filepath.Join(dir, "*.jsonl")}, BaseDir: dir, Follow: true, PollInterval: 1}
	s := openSeq(t, p, changelog.Position{}, "")
	ctx := context.Background()
	next := func() seqRec {
		t.Helper()
		r, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return seqRec{string(r.Data), r.Pos.File, r.Pos.Offset, r.Pos.Seq}
	}
	if got := next(); got != (seqRec{"a", "2026-12-01.jsonl", 2, 1}) {
		t.Fatalf("first record %v", got)
	}
	// The unterminated line waits, until a later file finishes the file.
	res := make(chan seqRec, 1)
	go func() { res <- next() }()
	writeIn(t, dir, "2026-12-02.jsonl", "c\n")
	if got := <-res; got != (seqRec{"b", "2026-12-01.jsonl", 3, 2}) {
		t.Fatalf("the finished file's last line: %v", got)
	}
	if got := next(); got != (seqRec{"c", "2026-12-02.jsonl", 5, 1}) {
		t.Fatalf("the next file's first line: %v", got)
	}
	// A file whose name sorts before the one being read has lost its
	// place: an error, not a skip.
	writeIn(t, dir, "2026-11-30.jsonl", "late\n")
	_, err := s.Next(ctx)
	if !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), "2026-11-30.jsonl appeared after txsink had read past its place in name order") {
		t.Fatalf("Next = %v, want the out-of-order error", err)
	}
}

func TestSequenceFollowWaitsForTheFirstFile(t *testing.T) {
	dir := t.TempDir()
	p := Partition{Name: "logs", Paths: []string{filepath.Join(dir, "*.jsonl")}, BaseDir: dir, Follow: true, PollInterval: 1}
	s := openSeq(t, p, changelog.Position{}, "")
	res := make(chan error, 1)
	go func() {
		r, err := s.Next(context.Background())
		if err == nil && string(r.Data) != "first" {
			err = errors.New("read " + string(r.Data))
		}
		res <- err
	}()
	writeIn(t, dir, "a.jsonl", "first\n")
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenSequence(Partition{Name: "logs", Paths: p.Paths}, changelog.Position{}, ""); err != nil {
		t.Fatalf("without follow, a glob that matches: %v", err)
	}
	empty := Partition{Name: "none", Paths: []string{filepath.Join(dir, "*.none")}}
	if _, _, err := OpenSequence(empty, changelog.Position{}, ""); err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Errorf("without follow, a glob that matches nothing: %v", err)
	}
}

func TestCheckDistinct(t *testing.T) {
	dir := t.TempDir()
	a := writeIn(t, dir, "a.jsonl", "a\n")
	b := writeIn(t, dir, "b.jsonl", "b\n")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sub", "link.jsonl")
	if err := os.Symlink(a, sym); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.jsonl")
	if err := os.Link(b, hard); err != nil {
		t.Fatal(err)
	}
	part := func(name string, paths ...string) Partition { return Partition{Name: name, Paths: paths} }
	tests := []struct {
		name  string
		parts []Partition
		want  string // "" for no error
	}{
		{"distinct files", []Partition{part("a", a), part("b", b)}, ""},
		{"a symbolic link to a file of another partition", []Partition{part("a", a), part("link", sym)}, "are the same file"},
		{"a hard link in one sequence", []Partition{part("s", b, hard)}, "are the same file"},
		{"a glob that matches a listed file", []Partition{part("a", a), part("all", filepath.Join(dir, "*.jsonl"))}, "are the same file"},
		{"a missing file", []Partition{part("x", filepath.Join(dir, "missing.jsonl"))}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDistinct(tt.parts)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckDistinct = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSequenceStreamStartsAtItsStart(t *testing.T) {
	pw := useStdin(t)
	go func() {
		pw.WriteString("a\nb\n")
		pw.Close()
	}()
	p := Partition{Name: "-", Paths: []string{"-"}}
	if _, _, err := OpenSequence(p, changelog.Position{Offset: 2, Seq: 1}, ""); err == nil || !strings.Contains(err.Error(), "standard input cannot resume") {
		t.Fatalf("a stream at an offset: %v", err)
	}
	s := openSeq(t, p, changelog.Position{}, "")
	if !s.IsStream() {
		t.Error("IsStream = false for standard input")
	}
	got, _, marks := readSeq(t, s)
	if !slices.Equal(got, []seqRec{{"a", "", 2, 1}, {"b", "", 4, 2}}) || marks[0] != "" {
		t.Errorf("records %v, marks %q", got, marks)
	}
}
