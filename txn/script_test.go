package txn

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// TestRewriteShouldBeFalse keeps -rewrite from being left on: a rewriting
// run accepts any output, so it must never be the one that passes.
func TestRewriteShouldBeFalse(t *testing.T) {
	if *rewrite {
		t.Fatal("-rewrite is on: review the diff of testdata/, then run again without it")
	}
}

// t0 is midnight, so Describe's time-of-day output reads as elapsed time.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestScripts runs the scenarios in testdata/*.txt. A file is a series of
// blocks: command lines, a "----" line, the expected output, a blank line.
// Lines starting with # and blank lines between blocks are comments.
//
// Commands:
//
//	config commit=1s mini=100ms min-bytes=300 buffer=1000 max-txn=0
//	                (a new Machine; the clock restarts at t0)
//	step p0 t1 orders +I id=1 size=100 [end]   (txn id "-" for none)
//	tick 250ms      advance the clock, then Tick
//	ready           Ready(now, false); prints the plan or "no plan"
//	flush           Ready(now, true)
//	advance         Advance the last plan
//	state           Describe the Machine
//
// step prints only what Step returned (an error, back-pressure); a block
// that prints nothing prints "ok".
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	s := &script{now: t0, seq: map[string]int64{}}
	var out strings.Builder
	for i := 0; i < len(lines); {
		if l := lines[i]; l == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			i++
			continue
		}
		start := i
		var cmds []string
		for ; i < len(lines) && lines[i] != "----"; i++ {
			cmds = append(cmds, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: block without ----", file, start+1)
		}
		i++
		var want []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			want = append(want, lines[i])
		}
		var got strings.Builder
		for j, c := range cmds {
			r, err := s.run(c)
			if err != nil {
				t.Fatalf("%s:%d: %s: %v", file, start+j+1, c, err)
			}
			got.WriteString(r)
		}
		g := strings.TrimRight(got.String(), "\n")
		if g == "" {
			g = "ok"
		}
		if w := strings.Join(want, "\n"); g != w && !*rewrite {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, start+1, strings.Join(cmds, "; "), g, w)
		}
		out.WriteString(strings.Join(cmds, "\n") + "\n----\n" + g + "\n")
		if i < len(lines) {
			out.WriteString("\n")
			i++
		}
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type script struct {
	m    *Machine[changes]
	now  time.Time
	seq  map[string]int64
	plan *Plan[changes]
}

func (s *script) run(line string) (string, error) {
	f := strings.Fields(line)
	if s.m == nil && f[0] != "config" {
		return "", errors.New("the first command must be config")
	}
	switch f[0] {
	case "config":
		cfg := Config{}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "commit":
				cfg.CommitInterval, err = time.ParseDuration(v)
			case "mini":
				cfg.MiniSwitchInterval, err = time.ParseDuration(v)
			case "min-bytes":
				cfg.MinSwitchBytes, err = strconv.ParseInt(v, 10, 64)
			case "buffer":
				cfg.BufferSize, err = strconv.ParseInt(v, 10, 64)
			case "max-txn":
				cfg.MaxTxnBytes, err = strconv.ParseInt(v, 10, 64)
			default:
				err = fmt.Errorf("unknown key %q", k)
			}
			if err != nil {
				return "", err
			}
		}
		m, err := newKeeping(cfg)
		if err != nil {
			return "error: " + err.Error() + "\n", nil
		}
		s.m, s.now, s.seq, s.plan = m, t0, map[string]int64{}, nil
		return "", nil
	case "step":
		c, err := s.change(f[1:])
		if err != nil {
			return "", err
		}
		switch err := stepKeeping(s.m, c, s.now); {
		case errors.Is(err, ErrBackPressure):
			return fmt.Sprintf("back-pressure at %s (%d bytes)\n", c.Pos, s.m.Bytes()), nil
		case err != nil:
			s.seq[c.Pos.Partition]-- // not taken: the next change reuses its position
			return "error: " + err.Error() + "\n", nil
		}
		return "", nil
	case "tick":
		if len(f) != 2 {
			return "", errors.New("usage: tick DURATION")
		}
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return "", err
		}
		s.now = s.now.Add(d)
		s.m.Tick(s.now)
		return "", nil
	case "ready", "flush":
		p := s.m.Ready(s.now, f[0] == "flush")
		if p != nil {
			s.plan = p
		}
		return describeKept(p), nil
	case "advance":
		if s.plan == nil || s.m.InFlight() != s.plan {
			return "error: no plan in flight\n", nil
		}
		s.m.Advance(s.plan)
		s.plan = nil
		return "", nil
	case "state":
		return s.m.Describe(), nil
	}
	return "", fmt.Errorf("unknown command %q", f[0])
}

// change parses "p0 t1 orders +I id=1 size=100 [end]".
func (s *script) change(f []string) (changelog.Change, error) {
	if len(f) < 4 {
		return changelog.Change{}, errors.New("usage: step PARTITION TXN TABLE KIND [col=value...] [size=N] [end]")
	}
	kind, err := changelog.ParseKind(f[3])
	if err != nil {
		return changelog.Change{}, err
	}
	c := changelog.Change{Kind: kind, Table: changelog.Table{Name: f[2]}, TxnID: f[1]}
	if c.TxnID == "-" {
		c.TxnID = ""
	}
	var img changelog.Row
	for _, a := range f[4:] {
		k, v, ok := strings.Cut(a, "=")
		switch {
		case a == "end":
			c.TxnEnd = true
		case !ok:
			return c, fmt.Errorf("bad argument %q", a)
		case k == "size":
			n, err := strconv.Atoi(v)
			if err != nil {
				return c, err
			}
			c.Size = int32(n)
		default:
			img.Set(k, changelog.Number(v))
		}
	}
	if kind.Upserts() {
		c.After = img
	} else {
		c.Before = img
	}
	s.seq[f[0]]++
	c.Pos = changelog.Position{Partition: f[0], Offset: s.seq[f[0]], Seq: s.seq[f[0]]}
	return c, nil
}
