package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../docs/config.md from the key table")

// docsPath is the reference documentation, relative to this package.
var docsPath = filepath.Join("..", "docs", "config.md")

// TestDocsUpToDate fails when docs/config.md differs from what the key table
// prints. Run "go test ./config -update" to regenerate it, and review the
// diff before committing it.
func TestDocsUpToDate(t *testing.T) {
	want := referenceMarkdown()
	if *update {
		if err := os.MkdirAll(filepath.Dir(docsPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", docsPath)
		return
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("%v; run \"go test ./config -update\" to create it", err)
	}
	if string(got) != want {
		t.Errorf("%s is stale; run \"go test ./config -update\" and commit the result.\nfirst difference near:\n%s",
			docsPath, firstDiff(string(got), want))
	}
}

// firstDiff returns the first line where a and b differ, from both.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "file:      " + x + "\ngenerated: " + y
		}
	}
	return ""
}

// TestReferenceCoversEveryKey checks the documentation against the parser:
// every documented key is accepted by Parse, and every key has a type, a
// default and a description.
func TestReferenceCoversEveryKey(t *testing.T) {
	ref := Reference()
	if len(ref) == 0 {
		t.Fatal("Reference is empty")
	}
	seen := map[string]bool{}
	for _, k := range ref {
		if k.Type == "" || k.Default == "" || k.Description == "" {
			t.Errorf("%s: incomplete documentation %+v", k.Key, k)
		}
		if seen[k.Key] {
			t.Errorf("%s: documented twice", k.Key)
		}
		seen[k.Key] = true
	}
	for _, key := range []string{"name", "source.paths", "target.url", "tables[].primary-key",
		"sink.buffer-flush.max-rows", "sink.transaction.multi-table.mini-switch-interval-ms"} {
		if !seen[key] {
			t.Errorf("Reference lacks %s", key)
		}
	}
	// Every sink key the reference lists must be accepted by the parser,
	// with and without the seed connectors' "sink." prefix.
	for _, k := range ref {
		name, ok := strings.CutPrefix(k.Key, "sink.")
		if !ok {
			continue
		}
		value := map[string]string{"integer": "1", "size": "1MiB", "duration": "1s", "bool": "true"}[k.Type]
		for _, spelled := range []string{name, "sink." + name} {
			doc := minimal + "sink:\n  " + spelled + ": " + value + "\n"
			if _, err := Parse([]byte(doc), ""); err != nil {
				t.Errorf("documented key %s (%s: %s) is refused: %v", k.Key, spelled, value, err)
			}
		}
	}
}

// minimal is the smallest valid configuration.
const minimal = `name: m
source: {type: file, paths: [a.jsonl], format: debezium-json}
target: {url: "sqlite::memory:"}
tables: [{source: "*.*"}]
`

// TestReferenceDefaults spot-checks that documented defaults come from
// Default, in the units the documentation promises.
func TestReferenceDefaults(t *testing.T) {
	want := map[string]string{
		"name":                                                 "required",
		"skip-unknown-tables":                                  "false",
		"source.format-options":                                "none",
		"tables[].target":                                      "the source table's name",
		"sink.buffer-flush.max-rows":                           "5000",
		"sink.buffer-flush.max-bytes":                          "16MiB",
		"sink.buffer-flush.interval":                           "1s",
		"sink.buffer-flush.interval-ms":                        "1000",
		"sink.max-retries":                                     "10",
		"sink.transaction.multi-table.enabled":                 "false",
		"sink.transaction.multi-table.buffer-size":             "128MiB",
		"sink.transaction.multi-table.min-switch-bytes":        "1MiB",
		"sink.transaction.multi-table.max-txn-bytes":           "auto (`transaction.multi-table.buffer-size`)",
		"sink.transaction.multi-table.mini-switch-interval-ms": "-1 (automatic)",
	}
	for _, k := range Reference() {
		if w, ok := want[k.Key]; ok && k.Default != w {
			t.Errorf("%s: default %q, want %q", k.Key, k.Default, w)
		}
		delete(want, k.Key)
	}
	for k := range want {
		t.Errorf("%s: not in Reference", k)
	}
}

// TestExampleParses keeps the documentation's example working.
func TestExampleParses(t *testing.T) {
	t.Setenv("TXSINK_DB_PASSWORD", "s3cret")
	c, err := Parse([]byte(exampleYAML), "/srv/pipelines")
	if err != nil {
		t.Fatalf("the example of docs/config.md does not parse: %v", err)
	}
	if c.Target.URL != "mysql://txsink:s3cret@127.0.0.1:3306/shop" || len(c.Tables) != 3 {
		t.Errorf("example parsed to %+v", c)
	}
}
