package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/engine"
)

// TestSummaryTable checks the rows of the end-of-run table a person reads
// on a terminal.
func TestSummaryTable(t *testing.T) {
	full := engine.Stats{
		Events:   map[changelog.Kind]int64{changelog.Insert: 600, changelog.UpdateBefore: 200, changelog.UpdateAfter: 200, changelog.Delete: 100},
		Upserted: 300, Deleted: 50, Inserted: 150, Commits: 7, Txns: 40, Retries: 2, Skipped: 3, DeadLetters: 4, SchemaChanges: 2, Messages: 1, GuardRefused: 5, DeletesIgnored: 6, Copies: 8,
		Tables: map[string]engine.TableStats{"orders": {Upserted: 200, Deleted: 30}, "order_items": {Upserted: 100, Deleted: 20}, "order_events": {Inserted: 150}},
	}
	tests := []struct {
		name string
		st   engine.Stats
		took time.Duration
		err  error
		// stopped is summaryTable's stopped ("": not interrupted).
		stopped string
		want    []string // regexps, each matching one line
		absent  []string
	}{
		{
			name: "everything",
			st:   full, took: 2 * time.Second,
			want: []string{
				`^p: done in 2s$`,
				`^  events read +1100$`,
				`^    \+I +600  inserts$`,
				`^    -U +200  update before-images \(ignored\)$`,
				`^    -D +100  deletes$`,
				`^  rows written +500  after per-key reduction$`,
				`^    upserted +300$`,
				`^    inserted +150  into append-only and history tables$`,
				`^  rows by table +upserted / deleted / inserted$`,
				`^    order_events +150  0 / 0 / 150$`,
				`^    order_items +120  100 / 20 / 0$`,
				`^    orders +230  200 / 30 / 0$`,
				`^  dead-lettered +4  quarantined; txsink dead-letters lists them$`,
				`^  guard refused +5  upserts and deletes kept out: the stored row's version was newer$`,
				`^  deletes ignored +6  tables with delete: ignore keep their rows$`,
				`^  copies dropped +8  published again by the source's producer, applied before$`,
				`^  reduction ratio +2\.20  events per row written$`,
				`^  commits +7  target transactions$`,
				`^  source txns +40  committed whole$`,
				`^  skipped +3 `,
				`^  schema changes +2  DDL records, skipped \(txsink applies rows only\)$`,
				`^  messages +1  logical decoding messages, skipped$`,
				`^  retries +2 `,
				`^  duration +2s$`,
				`^  rows/s +250  written$`,
				`^  events/s +550  read$`,
			},
		},
		{
			name: "nothing written, stopped by an error",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 1}},
			took: time.Second, err: errors.New("bad input"),
			want:   []string{`^p: stopped by an error \(below\) in 1s$`, `^  reduction ratio +-  `, `^  rows written +0 `},
			absent: []string{"source txns", "retries", "skipped", "rows by table", "dead-lettered", "left open", "schema changes", "messages", "copies", "TRUNCATE"},
		},
		{
			name: "truncates",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 4, changelog.Truncate: 2}, Upserted: 1, Commits: 1},
			took: time.Second,
			want: []string{`^  events read +6$`, `^    TRUNCATE +2  tables emptied \(source.truncate: delete-all\)$`},
		},
		{
			name: "interrupted by a signal",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 5}, Upserted: 5, Commits: 1},
			took: time.Second, stopped: "interrupted at 42%, a rerun resumes",
			want:   []string{`^p: interrupted at 42%, a rerun resumes \(after 1s\)$`, `^  commits +1 `},
			absent: []string{"done"},
		},
		{
			name: "transactions left open at the end of input",
			st: engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 3}, EndOfInput: true, Unfinished: []engine.OpenTxn{
				{Partition: "p0.jsonl", TxnID: "t2", StartOffset: 80, StartSeq: 2, Changes: 2},
				{Partition: "p1.jsonl", StartOffset: 10, StartSeq: 1, Changes: 1},
			}},
			took: time.Second,
			want: []string{
				`^  left open +2  source transactions at the end of input, not applied; the next run applies them once their ends are read$`,
				`^  +transaction t2 from p0\.jsonl:2 \(2 changes\)$`,
				`^  +a transaction without an id from p1\.jsonl:1 \(1 change\)$`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summaryTable("p", tt.st, tt.took, tt.err, tt.stopped)
			lines := strings.Split(got, "\n")
			for _, w := range tt.want {
				re := regexp.MustCompile(w)
				found := false
				for _, l := range lines {
					found = found || re.MatchString(l)
				}
				if !found {
					t.Errorf("no line matches %s in:\n%s", w, got)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("the table shows %q, which did not happen:\n%s", a, got)
				}
			}
		})
	}
}

// TestNotATerminal checks that what scripts read is never taken for a
// terminal: no bar, no table, no escape codes.
func TestNotATerminal(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devNull.Close() })
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	for name, out := range map[string]io.Writer{"/dev/null": devNull, "file": file, "pipe": w, "buffer": &bytes.Buffer{}} {
		t.Run(name, func(t *testing.T) {
			if isTerminal(out) {
				t.Errorf("%s taken for a terminal", name)
			}
		})
	}

	var buf bytes.Buffer
	bar := newIdleBar(&buf)
	logs := bar.Logs(&buf)
	bar.begin(1000, func() int64 { return 5 })
	bar.Read(500)
	logs.Write([]byte("a log line\n"))
	bar.done()
	if got := buf.String(); got != "a log line\n" {
		t.Errorf("off a terminal the bar wrote %q, want the log line alone", got)
	}
}

// TestOpenNote checks the summary line's note of the transactions a run
// left open: none, one, and more than it lists.
func TestOpenNote(t *testing.T) {
	open := func(n int) []engine.OpenTxn {
		var o []engine.OpenTxn
		for i := range n {
			o = append(o, engine.OpenTxn{Partition: "p.jsonl", TxnID: "t" + string(rune('a'+i)), StartOffset: int64(i + 1), StartSeq: int64(i + 1), Changes: 1})
		}
		return o
	}
	tests := []struct {
		st   engine.Stats
		want string
	}{
		{engine.Stats{EndOfInput: true}, ""},
		{engine.Stats{EndOfInput: true, Unfinished: open(1)},
			"; 1 source transaction left open at the end of input, not applied: transaction ta from p.jsonl:1 (1 change); the next run applies it once its end is read"},
		{engine.Stats{Unfinished: open(5)},
			"; 5 source transactions left open when stopped, not applied: transaction ta from p.jsonl:1 (1 change), transaction tb from p.jsonl:2 (1 change), " +
				"transaction tc from p.jsonl:3 (1 change), and 2 more (the log names each); the next run applies them once their ends are read"},
	}
	for _, tt := range tests {
		if got := openNote(tt.st); got != tt.want {
			t.Errorf("openNote(%d open, end %v) =\n%q\nwant\n%q", len(tt.st.Unfinished), tt.st.EndOfInput, got, tt.want)
		}
	}
}
