package file

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/txsink/txsink/changelog"
)

// Partition describes one partition of a file source: an ordered sequence of
// files, read one after another as one lane. Records of one partition are
// applied in the order of its files and of their lines; records of
// different partitions are read concurrently, so their order is not kept.
type Partition struct {
	// Name is the partition's name, its key in the target's progress
	// table.
	Name string
	// Paths lists the partition's files in order. An entry is a path, or a
	// glob pattern (filepath.Match syntax) whose matches are read in name
	// order; "-" is standard input, which must be the only entry. Paths
	// are absolute, or relative to the working directory.
	Paths []string
	// BaseDir is the folder file names in positions and messages are
	// relative to, when a file lies below it (the config file's folder).
	BaseDir string
	// Follow waits for the last file to grow, and for a glob to match a
	// later file, instead of ending there.
	Follow bool
	// MaxRecordBytes is each file's Reader.MaxRecordBytes (0: default).
	MaxRecordBytes int
	// PollInterval is each file's Reader.PollInterval (0: default); a
	// following glob is looked at again as often.
	PollInterval time.Duration
	// ResetHint, when set, is the command that forgets the partition's
	// position; messages about a position that cannot be trusted end with
	// it.
	ResetHint string
}

// Name returns the name of the file at path as partitions and positions
// show it: the path relative to baseDir when the file lies below it, else
// the cleaned path. Progress is keyed by such names, so a pipeline folder can
// move without starting over.
func Name(path, baseDir string) string {
	if path == "-" {
		return path
	}
	path = filepath.Clean(path)
	if baseDir != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(baseDir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return path
}

// IsGlob reports whether a Paths entry is a glob pattern.
func IsGlob(entry string) bool { return strings.ContainsAny(entry, "*?[") }

// IsStream reports whether p is a stream (standard input, a pipe, a
// device): one entry that names no regular file. A stream cannot be re-read
// or verified, so it is read from its start on every run.
func IsStream(p Partition) bool {
	if len(p.Paths) != 1 || IsGlob(p.Paths[0]) {
		return false
	}
	if p.Paths[0] == "-" {
		return true
	}
	fi, err := os.Stat(p.Paths[0])
	return err == nil && !fi.Mode().IsRegular()
}

// multi reports whether records of p name their file (Pos.File): p may
// hold more than one file.
func (p *Partition) multi() bool {
	return len(p.Paths) > 1 || (len(p.Paths) == 1 && IsGlob(p.Paths[0]))
}

// member is one file of a sequence, with its place in the order: the
// Paths entry it came from, then its path.
type member struct {
	path  string
	entry int
}

func (m member) compare(o member) int {
	return cmp.Or(cmp.Compare(m.entry, o.entry), strings.Compare(m.path, o.path))
}

// expand lists p's files in order. A path that does not exist is an error;
// a glob that matches nothing is one too, unless allowEmpty.
func expand(p *Partition, allowEmpty bool) ([]member, error) {
	var out []member
	for i, e := range p.Paths {
		if e == "-" {
			if len(p.Paths) > 1 {
				return nil, fmt.Errorf("partition %s: standard input (-) must be a partition of its own", p.Name)
			}
			return []member{{path: "-"}}, nil
		}
		if !IsGlob(e) {
			if _, err := os.Stat(e); err != nil {
				return nil, fmt.Errorf("partition %s: %w", p.Name, err)
			}
			out = append(out, member{path: e, entry: i})
			continue
		}
		matches, err := filepath.Glob(e)
		if err != nil {
			return nil, fmt.Errorf("partition %s: glob %s: %w", p.Name, e, err)
		}
		n := 0
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				continue
			}
			out = append(out, member{path: m, entry: i})
			n++
		}
		if n == 0 && !allowEmpty {
			return nil, fmt.Errorf("partition %s: %s matches no file", p.Name, e)
		}
	}
	slices.SortFunc(out, member.compare)
	return out, nil
}

// Files returns the files the partitions hold now, in each partition's
// order; a path or glob that names none is an error.
func Files(p Partition) ([]string, error) {
	ms, err := expand(&p, p.Follow)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.path
	}
	return out, nil
}

// CheckDistinct refuses partitions that hold one file twice, under any
// spelling: a symbolic link, a hard link, a bind mount, "./a" and "a". Such
// a file would be applied twice (its appended rows twice, its deletes and
// inserts interleaved with themselves).
func CheckDistinct(parts []Partition) error {
	type seen struct {
		fi   os.FileInfo
		part string
		path string
	}
	var all []seen
	for i := range parts {
		ms, err := expand(&parts[i], true)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.path == "-" {
				continue
			}
			fi, err := os.Stat(m.path)
			if err != nil {
				return fmt.Errorf("partition %s: %w", parts[i].Name, err)
			}
			for _, s := range all {
				if os.SameFile(s.fi, fi) {
					return fmt.Errorf("%s (partition %s) and %s (partition %s) are the same file: it would be applied twice; list it once",
						s.path, s.part, m.path, parts[i].Name)
				}
			}
			all = append(all, seen{fi, parts[i].Name, m.path})
		}
	}
	return nil
}

// Sequence reads the files of one Partition one after another, as one
// ordered lane. Positions count bytes over the whole sequence: a record's
// Pos.Offset is the bytes of the files before its own plus its offset in
// its file, so positions of a partition only grow; Pos.File names the file
// and Pos.Seq is the line within it when the partition may hold several
// files.
//
// A file ends the way a Reader ends; the next file is then read from its
// start. While following, a file is finished once a later file of the
// partition exists (a glob is matched again at every poll), and the last
// file is followed as a Reader follows. A file that appears with a name
// sorting before the one being read is an error: its place in the order has
// been passed.
//
// A Sequence is not safe for concurrent use, except Size and Mark.
type Sequence struct {
	p     Partition
	multi bool

	// files lists the partition's files known so far, in order; idx is
	// the one being read. known holds every path listed so far.
	files []member
	idx   int
	known map[string]bool

	mu   sync.Mutex // guards cur, base and open against Size and Mark
	cur  *Reader
	base int64 // the sequence offset at which cur's file starts
	// open holds the files opened and not yet closed, oldest first; Mark
	// reads them. A file is closed once a mark lies in a later one, or on
	// Close.
	open []openFile

	err     error // sticky: returned by every later Next
	timer   *time.Timer
	stream  bool
	started bool // a record was returned or a file opened
}

type openFile struct {
	name string
	base int64
	r    *Reader
	f    *os.File
}

// Unverified is wrapped by OpenSequence's warning return when the stored
// position carries no mark (an older txsink stored it), so only its offset
// could be checked.
var Unverified = errors.New("the stored position has no fingerprint to verify")

// OpenSequence opens partition p for reading after start, a position its
// records reported, with mark the Mark stored with it ("" when none was).
//
// The stored position is verified before anything is read: the file it
// names must still be in the partition and hold the bytes the mark
// recorded. A replaced, truncated, rewritten or missing file fails with an
// error wrapping ErrFileChanged, naming the partition, what was expected
// and what was found. A position without a mark is checked against the
// size of the partition's first file only; warn then wraps Unverified.
//
// Standard input and other streams cannot be verified or re-read: start
// must be the zero Position for them (IsStream says which).
func OpenSequence(p Partition, start changelog.Position, mark string) (s *Sequence, warn, err error) {
	s = &Sequence{p: p, multi: p.multi(), known: map[string]bool{}}
	files, err := expand(&p, p.Follow)
	if err != nil {
		return nil, nil, err
	}
	s.files = files
	for _, m := range files {
		s.known[m.path] = true
	}
	if len(files) == 1 && files[0].path == "-" {
		if start.Offset != 0 {
			return nil, nil, fmt.Errorf("partition %s: standard input cannot resume at byte %d: a stream is read from its start", p.Name, start.Offset)
		}
		r, err := Open("-", changelog.Position{}, false)
		if err != nil {
			return nil, nil, err
		}
		s.setReader(r, nil, 0)
		s.stream = true
		return s, nil, nil
	}
	m, hasMark, err := ParseMark(mark)
	if err != nil {
		return nil, nil, s.untrusted(start, err.Error())
	}
	if start.Offset == 0 && !hasMark {
		if len(files) == 0 {
			return s, nil, nil // a followed glob that matches nothing yet
		}
		if err := s.openAt(0, 0, changelog.Position{}, nil); err != nil {
			return nil, nil, err
		}
		return s, nil, nil
	}
	if !hasMark {
		// An older txsink's position: an offset into what was then a
		// partition of one file, the first file now.
		if len(files) == 0 {
			return nil, nil, s.untrusted(start, "no file of the partition exists")
		}
		if err := s.openAt(0, 0, start, nil); err != nil {
			return nil, nil, err
		}
		return s, fmt.Errorf("partition %s: %w (an older txsink stored it): resuming at byte %d of %s, checked against its size only",
			p.Name, Unverified, start.Offset, s.displayName(files[0].path)), nil
	}
	idx := -1
	for i, f := range files {
		if s.displayName(f.path) == m.File {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, nil, s.untrusted(start, fmt.Sprintf("the position is in file %s, which the partition no longer holds", m.File))
	}
	if start.Offset < m.At {
		return nil, nil, s.untrusted(start, "the stored position and its mark disagree")
	}
	local := start
	local.Offset = m.At
	if err := s.openAt(idx, start.Offset-m.At, local, &m); err != nil {
		return nil, nil, err
	}
	return s, nil, nil
}

// untrusted builds the error for a stored position that cannot be
// trusted: why, and what to do.
func (s *Sequence) untrusted(start changelog.Position, why string) error {
	return &posError{fmt.Sprintf("partition %s: the stored position (byte %d, line %d) cannot be trusted: %s; "+
		"restore the files as they were, or %s", s.p.Name, start.Offset, start.Seq, why, s.resetHint()), ErrFileChanged}
}

func (s *Sequence) resetHint() string {
	if s.p.ResetHint != "" {
		return "forget the position and read the partition from its start with: " + s.p.ResetHint
	}
	return "reset the partition's progress to read it from its start"
}

// displayName is the name of the file at path in messages and positions.
func (s *Sequence) displayName(path string) string { return Name(path, s.p.BaseDir) }

// fileField is what positions and marks say of the file at path: its name
// when the partition may hold several files, else "".
func (s *Sequence) fileField(path string) string {
	if !s.multi {
		return ""
	}
	return s.displayName(path)
}

// openAt opens files[i], whose first byte is at sequence offset base, and
// reads it from local (an offset within it), checking mark when set.
func (s *Sequence) openAt(i int, base int64, local changelog.Position, mark *Mark) error {
	path := s.files[i].path
	name := s.displayName(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("partition %s: %w", s.p.Name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("partition %s: %w", s.p.Name, err)
	}
	if !fi.Mode().IsRegular() {
		if s.multi || local.Offset != 0 {
			f.Close()
			return fmt.Errorf("partition %s: %s is not a regular file (a pipe or a device): a stream must be a partition of its own, and is read from its start", s.p.Name, name)
		}
		r, err := OpenReader(name, f, changelog.Position{})
		if err != nil {
			f.Close()
			return err
		}
		r.closer = f
		s.stream = true
		s.setReader(r, nil, 0)
		return nil
	}
	if mark != nil {
		if err := mark.check(f, fi.Size()); err != nil {
			f.Close()
			return s.untrusted(changelog.Position{Offset: base + local.Offset, Seq: local.Seq}, fmt.Sprintf("%s changed since it was recorded: %v", name, err))
		}
	} else if local.Offset > fi.Size() {
		f.Close()
		return s.untrusted(changelog.Position{Offset: base + local.Offset, Seq: local.Seq},
			fmt.Sprintf("%s is %d bytes long, shorter than the position: it was truncated or replaced", name, fi.Size()))
	}
	follow := s.p.Follow && i == len(s.files)-1
	r, err := regularReader(name, f, fi.Size(), local, follow)
	if err != nil {
		f.Close()
		return err
	}
	r.osPath, r.file, r.markName = path, s.fileField(path), name
	if s.p.MaxRecordBytes > 0 {
		r.MaxRecordBytes = s.p.MaxRecordBytes
	}
	if s.p.PollInterval > 0 {
		r.PollInterval = s.p.PollInterval
	}
	if s.p.Follow {
		r.moveOn = s.hasNext
	}
	s.idx = i
	s.setReader(r, f, base)
	return nil
}

func (s *Sequence) setReader(r *Reader, f *os.File, base int64) {
	s.mu.Lock()
	s.cur, s.base = r, base
	if f != nil {
		s.open = append(s.open, openFile{name: r.file, base: base, r: r, f: f})
	}
	s.mu.Unlock()
	s.started = true
}

// hasNext reports whether a file follows the one being read, matching the
// partition's globs again.
func (s *Sequence) hasNext() (bool, error) {
	if err := s.rescan(); err != nil {
		return false, err
	}
	return s.idx+1 < len(s.files), nil
}

// rescan matches the partition's globs again and adds the files that sort
// after the one being read. A new file sorting before it is an error.
func (s *Sequence) rescan() error {
	hasGlob := false
	for _, e := range s.p.Paths {
		hasGlob = hasGlob || IsGlob(e)
	}
	if !hasGlob {
		return nil
	}
	all, err := expand(&s.p, true)
	if err != nil {
		return err
	}
	var cur member
	if s.idx < len(s.files) {
		cur = s.files[s.idx]
	}
	for _, m := range all {
		if s.known[m.path] {
			continue
		}
		if s.started && m.compare(cur) <= 0 {
			return &posError{fmt.Sprintf("partition %s: %s appeared after txsink had read past its place in name order (it reads %s): "+
				"its records were not applied; name new files so that they sort after the ones before them, "+
				"then restore the order (move the file away and give it a later name)", s.p.Name, s.displayName(m.path), s.displayName(cur.path)), ErrFileChanged}
		}
		s.known[m.path] = true
		s.files = append(s.files, m)
	}
	slices.SortFunc(s.files[min(s.idx+1, len(s.files)):], member.compare)
	return nil
}

// IsStream reports whether the partition is a stream (standard input, a
// pipe): it cannot be re-read, so it has no positions to resume from.
func (s *Sequence) IsStream() bool { return s.stream }

// Next returns the partition's next record; see Reader.Next. At the end of
// a file it goes on with the next one; at the end of the last it returns
// io.EOF, or, following, waits.
func (s *Sequence) Next(ctx context.Context) (Record, error) { return s.next(ctx, false) }

// NextBorrowed is Next with Reader.NextBorrowed's terms.
func (s *Sequence) NextBorrowed(ctx context.Context) (Record, error) { return s.next(ctx, true) }

// NextLentBatch is Reader.NextLentBatch for the partition: the records
// of one file and one block of it, moving on to the next file as Next
// does.
func (s *Sequence) NextLentBatch(ctx context.Context, recs []Record, max int) ([]Record, Lease, error) {
	rec, err := s.next(ctx, true)
	if err != nil {
		return recs, nil, err
	}
	first := len(recs) + 1 // rec has its sequence position already
	recs, b := s.cur.lend(recs, rec, max)
	for i := first; i < len(recs); i++ {
		recs[i].Pos.Partition = s.p.Name
		recs[i].Pos.Offset += s.base
	}
	return recs, b, nil
}

func (s *Sequence) next(ctx context.Context, borrow bool) (Record, error) {
	if s.err != nil {
		return Record{}, s.err
	}
	for {
		if s.cur == nil {
			// A followed glob that matched nothing yet.
			if err := s.waitForFirst(ctx); err != nil {
				return Record{}, err
			}
			continue
		}
		rec, err := s.cur.next(ctx, borrow)
		if err == io.EOF {
			more, err := s.advance()
			if err != nil {
				s.err = err
				return Record{}, err
			}
			if more {
				continue
			}
			s.err = io.EOF
			return Record{}, io.EOF
		}
		if err != nil {
			if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
				s.err = err
			}
			return Record{}, err
		}
		rec.Pos.Partition = s.p.Name
		rec.Pos.Offset += s.base
		return rec, nil
	}
}

// advance moves on to the next file, if there is one.
func (s *Sequence) advance() (bool, error) {
	if s.stream {
		return false, nil
	}
	if err := s.rescan(); err != nil {
		return false, err
	}
	if s.idx+1 >= len(s.files) {
		return false, nil
	}
	end := s.base + s.cur.offset
	return true, s.openAt(s.idx+1, end, changelog.Position{}, nil)
}

// waitForFirst waits one poll interval for a followed glob to match a
// file, and opens it.
func (s *Sequence) waitForFirst(ctx context.Context) error {
	files, err := expand(&s.p, true)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		s.files = files
		for _, m := range files {
			s.known[m.path] = true
		}
		return s.openAt(0, 0, changelog.Position{}, nil)
	}
	return sleep(ctx, &s.timer, s.p.PollInterval)
}

// MayWait reports whether the next Next may wait for input; see
// Reader.MayWait.
func (s *Sequence) MayWait() bool {
	if s.cur == nil {
		return s.err == nil
	}
	return s.cur.MayWait()
}

// Size returns the sequence offset of the end of the file being read, as
// last seen (see Reader.Size), or -1 for a stream. Safe for concurrent use.
func (s *Sequence) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	if n := s.cur.Size(); n >= 0 {
		return s.base + n
	}
	return -1
}

// Mark returns the stored form of the Mark of pos, a position a record of
// the Sequence reported, or "" for a stream. Marks must be asked for in
// the order of positions: asking for one closes the files before its own.
// Safe for concurrent use with Next.
func (s *Sequence) Mark(pos changelog.Position) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.open) - 1; i >= 0; i-- {
		o := s.open[i]
		if (s.multi && o.name != pos.File) || pos.Offset < o.base {
			continue
		}
		m, ok, err := o.r.Mark(pos.Offset - o.base)
		if err != nil || !ok {
			return "", err
		}
		for _, old := range s.open[:i] {
			if old.r != s.cur {
				old.f.Close()
			}
		}
		s.open = slices.Delete(s.open, 0, i)
		return m.String(), nil
	}
	if s.stream {
		return "", nil
	}
	return "", fmt.Errorf("partition %s: no open file holds position %s (byte %d)", s.p.Name, pos, pos.Offset)
}

// Close releases the partition's files.
func (s *Sequence) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.cur != nil {
		errs = append(errs, s.cur.Close())
	}
	for _, o := range s.open {
		if err := o.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	s.open = nil
	if s.timer != nil {
		s.timer.Stop()
	}
	return errors.Join(errs...)
}
