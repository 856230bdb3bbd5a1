package diagnose_test

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/diagnose"
)

// TestSummaryCounts checks that the summary line says one of a thing in
// the singular: "1 record", "1 change", "1 file", "1 error".
func TestSummaryCounts(t *testing.T) {
	cfg := config.Default()
	cfg.Name = "p"
	cfg.Source = config.Source{Type: "file", Format: "debezium-json"}
	cfg.Source.Set("paths", []string{"a.jsonl"})
	cfg.Target.URL = "sqlite://t.db"
	tests := []struct {
		name   string
		report diagnose.Report
		want   string
	}{
		{"ones", diagnose.Report{Records: 1, Changes: 1, Files: 1, Findings: []diagnose.Finding{{Severity: diagnose.Error}, {Severity: diagnose.Warning}}},
			"1 error, 1 warning, 0 info; target sqlite://t.db; tables ; sampled 1 record (1 change) of 1 file"},
		{"many", diagnose.Report{Records: 2, Changes: 3, Files: 2},
			"configuration OK; 0 errors, 0 warnings, 0 info; target sqlite://t.db; tables ; sampled 2 records (3 changes) of 2 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.report.Summary(&cfg); !strings.HasSuffix(got, tt.want) {
				t.Errorf("summary %q, want it to end %q", got, tt.want)
			}
		})
	}
}
