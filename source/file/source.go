package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Type is the source type of this package (the config's source.type).
const Type = "file"

func init() { source.Register(Type, Driver{}) }

// Config is the file source's part of the config's source section. Its
// keys are declared, and documented once, in Driver.Keys (printed in
// docs/config.md); each field is the key its tag names.
type Config struct {
	// Paths is `source.paths`; see docs/config.md.
	Paths []string `source:"paths"`
	// Partitions is `source.partitions`; see docs/config.md.
	Partitions [][]string `source:"partitions"`
	// Follow is `source.follow`; see docs/config.md.
	Follow bool `source:"follow"`
	// MaxRecordBytes is `source.max-record-bytes`; see docs/config.md. 0
	// means the Reader's default.
	MaxRecordBytes int64 `source:"max-record-bytes"`
}

// PartitionPaths returns the configured partitions, each an ordered list
// of paths or globs: Paths as one partition, or Partitions.
func (c *Config) PartitionPaths() [][]string {
	if len(c.Partitions) > 0 {
		return c.Partitions
	}
	if len(c.Paths) > 0 {
		return [][]string{c.Paths}
	}
	return nil
}

// Driver opens file sources.
type Driver struct{}

// Open implements source.Driver.
func (Driver) Open(settings source.Settings, env source.Env) (source.Source, error) {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return nil, err
	}
	return New(c, env), nil
}

// New returns the file source of c. Nothing is opened before Open.
func New(c Config, env source.Env) *Source {
	s := &Source{env: env}
	for _, paths := range c.PartitionPaths() {
		name := Name(paths[0], env.BaseDir)
		p := Partition{Name: name, Paths: paths, BaseDir: env.BaseDir, Follow: c.Follow}
		if env.ResetHint != nil {
			p.ResetHint = env.ResetHint(name)
		}
		if n := c.MaxRecordBytes; n > 0 {
			p.MaxRecordBytes = int(min(n, int64(math.MaxInt32)))
		}
		s.parts = append(s.parts, p)
	}
	return s
}

// Source is a file source: its partitions, each a Sequence once open. It
// implements source.Source, Lister, ProgressChecker, Checker, Marker and
// Sampler.
type Source struct {
	env   source.Env
	parts []Partition
	// byPart holds the Sequences of the last Open, by partition. It is
	// written by Open only, while nothing commits.
	byPart map[string]*Sequence
}

// Partitions implements source.Lister.
func (s *Source) Partitions() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.Name
	}
	return out
}

// lane is a Sequence as a source.Lane.
type lane struct {
	*Sequence
	start changelog.Position
}

func (l lane) Partition() string         { return l.p.Name }
func (l lane) Start() changelog.Position { return l.start }

// Open implements source.Source: one Reader per partition, from the
// stored progress on, once each stored position is verified. A stream
// (standard input, a pipe) is read from its start: its stored position
// is rewound.
func (s *Source) Open(ctx context.Context, at source.Start) ([]source.Reader, error) {
	if err := CheckDistinct(s.parts); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	s.byPart = make(map[string]*Sequence, len(s.parts))
	out := make([]source.Reader, 0, len(s.parts))
	fail := func(err error) ([]source.Reader, error) {
		s.Close()
		return nil, err
	}
	for _, spec := range s.parts {
		part := spec.Name
		stored, _ := at.Stored(part)
		start := stored.Position
		start.Partition = part
		if IsStream(spec) {
			if err := at.Rewind(ctx, part); err != nil {
				return fail(err)
			}
			start = changelog.Position{Partition: part}
		}
		r, warn, err := OpenSequence(spec, start, stored.Mark)
		if err != nil {
			return fail(fmt.Errorf("source: %w", err))
		}
		if warn != nil {
			s.env.Log.Warn("resuming at a position that cannot be fully verified", "partition", part, "reason", warn.Error())
		}
		s.byPart[part] = r
		out = append(out, lane{r, start})
	}
	return out, nil
}

// Close implements source.Source.
func (s *Source) Close() error {
	var errs []error
	for _, r := range s.byPart {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// Mark implements source.Marker.
func (s *Source) Mark(pos changelog.Position) (string, error) {
	if r := s.byPart[pos.Partition]; r != nil {
		return r.Mark(pos)
	}
	return "", nil
}

// CheckProgress implements source.ProgressChecker: it refuses stored
// progress for a partition the configuration does not read. The
// partitions were laid out otherwise when it was stored (a file removed
// from the list, files of several partitions made one sequence, or the
// other way round), and reading on would apply records twice or skip
// them.
func (s *Source) CheckProgress(stored map[string]changelog.Position) error {
	want := map[string]bool{}
	for _, p := range s.parts {
		want[p.Name] = true
	}
	var extra []string
	for part, pos := range stored {
		if !want[part] && (pos.Offset > 0 || pos.Seq > 0) {
			extra = append(extra, part)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	names := strings.Join(s.Partitions(), ", ")
	reset := ""
	if s.env.ResetHint != nil {
		reset = s.env.ResetHint(extra[0])
	}
	return fmt.Errorf("the target holds progress of pipeline %s for partition %s, which this configuration does not read (it reads %s): "+
		"the files were laid out in other partitions when that progress was stored, and reading on could apply records twice or skip them. "+
		"Several files in source.paths are one partition, read one after another; to read files as partitions of their own, "+
		"list them in source.partitions (such as partitions: [[a.jsonl], [b.jsonl]]). If the change is meant, forget the old progress with: %s",
		s.env.Pipeline, strings.Join(extra, ", "), names, reset)
}

// Check implements source.Checker: it opens every partition as Open does,
// at its stored position verified against its mark, and closes it again.
// Streams (standard input, a FIFO) are left alone: opening them would
// consume them.
func (s *Source) Check(ctx context.Context, stored map[string]source.Stored) error {
	var errs []error
	for _, spec := range s.parts {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if IsStream(spec) {
			continue
		}
		st := stored[spec.Name]
		start := st.Position
		start.Partition = spec.Name
		r, _, err := OpenSequence(spec, start, st.Mark)
		if err != nil {
			errs = append(errs, &source.PartitionError{Partition: spec.Name, Err: fmt.Errorf("source: %w", err)})
			continue
		}
		r.Close()
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Open checks this first; here it comes last, so that a missing file
	// is reported with its partition.
	if err := CheckDistinct(s.parts); err != nil {
		return &source.PartitionError{Err: fmt.Errorf("source: %w", err)}
	}
	// A run refuses stored progress of a partition it does not read before
	// it opens a file; so does check, once the files themselves are known
	// good.
	positions := make(map[string]changelog.Position, len(stored))
	for part, st := range stored {
		positions[part] = st.Position
	}
	if err := s.CheckProgress(positions); err != nil {
		return &source.PartitionError{Err: err}
	}
	return nil
}

// SampleUnit implements source.Sampler: a sample counts files.
func (s *Source) SampleUnit() string { return "file" }

// Sample implements source.Sampler: it reads the first req.N records of
// every file of every partition. Standard input and pipes are not
// sampled: reading them would consume them.
func (s *Source) Sample(ctx context.Context, req source.SampleRequest, fn func(source.Record) error) (*source.SampleReport, error) {
	rep := &source.SampleReport{}
	if req.N <= 0 {
		return rep, nil
	}
	for _, p := range s.parts {
		if req.Skip[p.Name] {
			continue // refused already
		}
		// Every file of a partition is sampled; a path or glob that names
		// no file is reported by sampleFile.
		files, err := Files(Partition{Name: p.Paths[0], Paths: p.Paths})
		if err != nil {
			files = p.Paths
		}
		for _, path := range files {
			if err := s.sampleFile(ctx, rep, req.N, path, fn); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

func (s *Source) sampleFile(ctx context.Context, rep *source.SampleReport, n int, path string, fn func(source.Record) error) error {
	part := Name(path, s.env.BaseDir)
	note := func(sev source.Severity, msg, fix string) {
		rep.Notes = append(rep.Notes, source.Note{Severity: sev, Subject: part, Message: msg, Fix: fix})
	}
	if path == "-" {
		note(source.Info, "standard input is not sampled: reading it would consume it.",
			"to sample, check against a file holding the same records")
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		note(source.Error, fmt.Sprintf("the source file cannot be read (%v); txsink run refuses to start without it.", err),
			"create the file before running, or correct source.paths")
		return nil
	}
	if !fi.Mode().IsRegular() {
		note(source.Info, "the source is not a regular file (a pipe or FIFO) and is not sampled: reading it would consume it.",
			"to sample, check against a file holding the same records")
		return nil
	}
	r, err := Open(path, changelog.Position{Partition: part}, false)
	if err != nil {
		note(source.Error, fmt.Sprintf("the source file cannot be opened: %v.", err), "check the path and its permissions")
		return nil
	}
	defer r.Close()
	rep.Files++
	rep.Count++
	for range n {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			note(source.Error, fmt.Sprintf("reading the source stops: %v.", err), "fix the file (txsink run stops at the same place)")
			return nil
		}
		rec.Pos.Partition = part
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}
