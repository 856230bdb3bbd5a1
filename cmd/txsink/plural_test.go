package main

import (
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/engine"
)

// TestCountOf checks the counts the command prints: singular for one,
// plural otherwise, "ies" after a consonant and y.
func TestCountOf(t *testing.T) {
	tests := []struct {
		n     int
		thing string
		want  string
	}{
		{0, "commit", "0 commits"},
		{1, "commit", "1 commit"},
		{2, "commit", "2 commits"},
		{1, "retry", "1 retry"},
		{3, "retry", "3 retries"},
		{2, "key", "2 keys"},
		{1, "dead letter", "1 dead letter"},
		{2, "source transaction", "2 source transactions"},
	}
	for _, tt := range tests {
		if got := countOf(tt.n, tt.thing); got != tt.want {
			t.Errorf("countOf(%d, %q) = %q, want %q", tt.n, tt.thing, got, tt.want)
		}
	}
}

// TestSummaryLineCounts checks the one-line summary with counts of one:
// "1 event", "1 row", "1 commit", "1 retry".
func TestSummaryLineCounts(t *testing.T) {
	tests := []struct {
		name string
		st   engine.Stats
		want []string
		bad  []string
	}{
		{
			name: "ones",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 1}, Upserted: 1, Commits: 1, Retries: 1},
			want: []string{"p: 1 event (+I 1) -> 1 row written (1 upserted, 0 deleted, 0 inserted) in 1 commit, 1 retry, "},
			bad:  []string{"1 events (", "1 rows", "1 commits", "1 retries"},
		},
		{
			name: "many",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 2}, Upserted: 2, Commits: 2, Retries: 2},
			want: []string{"p: 2 events (+I 2) -> 2 rows written (2 upserted, 0 deleted, 0 inserted) in 2 commits, 2 retries, "},
		},
		{
			name: "dead-lettered",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 3}, Upserted: 2, Commits: 1, DeadLetters: 1},
			want: []string{"in 1 commit, 1 dead-lettered (txsink dead-letters lists them), "},
		},
		{
			name: "schema changes and messages skipped",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 1}, Upserted: 1, Commits: 1, SchemaChanges: 2, Messages: 1},
			want: []string{"in 1 commit, 2 schema change records skipped, 1 logical decoding message skipped, "},
		},
		{
			name: "truncates",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 2, changelog.Truncate: 1}, Upserted: 1, Commits: 1},
			want: []string{"p: 3 events (+I 2, TRUNCATE 1) -> 1 row written "},
		},
		{
			name: "guarded",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.UpdateAfter: 5, changelog.Delete: 2}, Upserted: 5, Commits: 1, GuardRefused: 3, DeletesIgnored: 1},
			want: []string{"in 1 commit, 3 refused by the version guard (the stored row was newer), 1 delete ignored, "},
		},
		{
			name: "skipped records and guarded",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.UpdateAfter: 2}, Upserted: 1, Commits: 1, SchemaChanges: 1, GuardRefused: 1, DeletesIgnored: 2},
			want: []string{"in 1 commit, 1 schema change record skipped, 1 refused by the version guard (the stored row was newer), 2 deletes ignored, "},
		},
		{
			name: "copies dropped",
			st:   engine.Stats{Events: map[changelog.Kind]int64{changelog.Insert: 2}, Upserted: 2, Commits: 1, Copies: 1},
			want: []string{"in 1 commit, 1 copy dropped (published again, applied before), "},
		},
		{
			name: "copies dropped, plural",
			st:   engine.Stats{Commits: 1, Copies: 12},
			want: []string{"in 1 commit, 12 copies dropped (published again, applied before), "},
		},
		{
			name: "none",
			st:   engine.Stats{},
			want: []string{"p: 0 events -> 0 rows written (0 upserted, 0 deleted, 0 inserted) in 0 commits, "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := summaryLine("p", tt.st, time.Second, "")
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("summary %q lacks %q", line, w)
				}
			}
			for _, b := range tt.bad {
				if strings.Contains(line, b) {
					t.Errorf("summary %q says %q", line, b)
				}
			}
			if !summaryRE.MatchString(line + "\n") {
				t.Errorf("summary %q does not match summaryRE, which the process tests parse it with", line)
			}
		})
	}
}
