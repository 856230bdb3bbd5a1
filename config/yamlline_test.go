package config

import (
	"strings"
	"testing"
)

// TestYAMLErrorLine checks that a YAML syntax error names the line the
// mistake is on: where an unclosed bracket or an unfinished block starts,
// or where the scanner stopped.
func TestYAMLErrorLine(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unclosed {", "name: x\nsource: {type: file,\n  paths: [a]\ntarget:\n  url: sqlite://x.db\n", "line 2: not valid YAML: did not find expected ',' or '}'"},
		{"unclosed [", "name: x\nsource:\n  paths: [a, b\n  format: y\n", "line 3: not valid YAML: did not find expected ',' or ']'"},
		{"unfinished sequence", "name: x\nsource:\n  - a\n  b: c\n", "line 3: not valid YAML: did not find expected '-' indicator"},
		{"unclosed quote", "name: x\nsource:\n  type: \"file\n", "line 3: not valid YAML: found unexpected end of stream"},
		{"tab", "name: x\n\tsource: y\n", "line 2: not valid YAML: found a tab character that violates indentation"},
		{"mapping in a scalar", "name: x\nsource: y\n  bad: z\n", "line 3: not valid YAML: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "/srv")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to hold %q", err, tt.want)
			}
		})
	}
}
