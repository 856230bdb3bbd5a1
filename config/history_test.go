package config

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestHistoryEntries parses mode: history entries from YAML: accepted
// beside an upsert entry of the same source and before it, and each key
// that means nothing for a history table refused on its own line.
func TestHistoryEntries(t *testing.T) {
	head := minimal[:strings.Index(minimal, "tables:")] + "tables:\n"
	tests := []struct {
		name, tables string
		want         []string // "" accepts
	}{
		{"history beside upsert", `  - {source: x.a, target: a_hist, mode: history}
  - {source: x.a}
  - {source: "x.*", target: all_hist, mode: history}
`, nil},
		{"keys a history table refuses", `  - {source: x.a, target: a_hist, mode: history, primary-key: [id], append-only: true, version-column: v, delete: ignore}
`, []string{"tables[0].primary-key", "tables[0].append-only", "tables[0].version-column", "tables[0].delete"}},
		{"unknown mode", `  - {source: x.a, mode: audit}
`, []string{"tables[0].mode"}},
		{"one target twice", `  - {source: "x.*", target: h, mode: history}
  - {source: x.a, target: h, mode: history}
`, []string{"tables[1].target"}},
		{"history and upsert both unnamed", `  - {source: x.a}
  - {source: x.a, mode: history}
`, []string{"tables[1].target"}},
		{"history and upsert one target", `  - {source: x.a, target: h, mode: history}
  - {source: x.b, target: h}
`, []string{"tables[1].target"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(head+tt.tables), "")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !c.Tables[0].IsHistory() || c.Tables[1].IsHistory() || len(c.History(changelog.Table{Namespace: "x", Name: "a"})) != 2 {
					t.Errorf("entries %+v", c.Tables)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Parse: %v, want %s refused", err, w)
				}
			}
		})
	}
}
