package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/engine"
)

// TestDemo runs the demo in this process: it must verify the target, and
// every line it prints must fit 80 columns.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var stdout, stderr bytes.Buffer
	if err := cmdDemo(context.Background(), []string{"--dir", dir, "--orders", "300"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\nstderr:\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "\nverified 2") || !strings.Contains(out, " order items, ") {
		t.Errorf("the demo did not say it verified the target:\n%s", out)
	}
	checkColumns(t, strings.ReplaceAll(out, dir, "txsink-demo"))
}

// TestDemoReportFits checks the demo's report at counts far beyond its
// default, so that no line of it wraps on an 80-column terminal.
func TestDemoReportFits(t *testing.T) {
	const big = 1_234_567_890
	st := engine.Stats{
		Events:   map[changelog.Kind]int64{changelog.Insert: big, changelog.UpdateBefore: big, changelog.UpdateAfter: big, changelog.Delete: big},
		Upserted: big, Deleted: big, Inserted: big, Commits: big,
	}
	checkColumns(t, demoReport(st, 12345*time.Second, 64))
}

func checkColumns(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && !strings.HasPrefix(l, "  sqlite3 ") {
			t.Errorf("a line of %d columns, over 80: %q", n, l)
		}
	}
}

// TestDemoInterrupted cancels the demo's context (as SIGINT does) before
// it has applied everything: it must say how far it got and how to resume,
// not verify a half-applied target.
func TestDemoInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	// The signal arrives as the demo starts applying the changelog.
	out := cancelOn{w: &stdout, text: "applying it to", cancel: cancel}
	if err := cmdDemo(ctx, []string{"--dir", dir, "--orders", "300"}, out, &stderr); err != nil {
		t.Fatalf("demo: %v\nstderr:\n%s", err, stderr.String())
	}
	got := stdout.String()
	if !strings.Contains(got, "interrupted at 0%, a rerun resumes:\n  go run ./cmd/txsink run --config ") || strings.Contains(got, "verified") {
		t.Errorf("the interrupted demo says:\n%s", got)
	}
}

// cancelOn writes to w and calls cancel once a write holds text.
type cancelOn struct {
	w      io.Writer
	text   string
	cancel func()
}

func (c cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.text) {
		c.cancel()
	}
	return c.w.Write(b)
}

// TestDemoGeneratingStatus checks that generating a large changelog is not
// silent on a terminal: a status line says how many orders are written,
// redrawn in place, and is cleared before the demo goes on.
func TestDemoGeneratingStatus(t *testing.T) {
	var term bytes.Buffer
	status := &statusLine{w: &term, on: true} // as newStatusLine on a terminal
	if _, err := generateDemo(t.TempDir(), []string{"p0.jsonl", "p1.jsonl"}, 2000, status); err != nil {
		t.Fatal(err)
	}
	got := term.String()
	if !strings.HasPrefix(got, "\r\033[Kgenerated 1000 of 2000 orders, ") || !strings.Contains(got, " events") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("the terminal got %q, want a status of the orders generated, then cleared", got)
	}
}
