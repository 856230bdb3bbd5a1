package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/reduce"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/source"
)

// abs returns the absolute path of a file in testdata/good, where the good
// configurations' relative paths point.
func abs(t *testing.T, rel string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, rel)
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// withSink returns the default Sink changed by f.
func withSink(f func(*Sink)) Sink {
	s := Default().Sink
	f(&s)
	return s
}

func TestLoadGood(t *testing.T) {
	tests := []struct {
		file string
		want func(t *testing.T) *Config
	}{{
		// The example must parse to exactly this.
		file: "example.yaml",
		want: func(t *testing.T) *Config {
			return &Config{
				Name:           "orders-sync",
				BadInput:       BadInputFail,
				StartupTimeout: time.Minute,
				Source: Source{
					Type:           "file",
					Format:         "debezium-json",
					MaxRecordBytes: 64 << 20,
					Raw:            source.Settings{"paths": []string{abs(t, "p0.jsonl"), abs(t, "p1.jsonl")}},
				},
				Target: Target{URL: "mysql://user:pass@127.0.0.1:3306/test"},
				Tables: []Table{
					{Source: "inventory.orders", Target: "orders", PrimaryKey: []string{"id"}},
					{Source: "inventory.order_events", AppendOnly: true},
				},
				Sink: withSink(func(s *Sink) {
					s.FlushMaxRows = 1000
					s.FlushMaxBytes = 16 << 20
					s.FlushInterval = time.Second
				}),
			}
		},
	}, {
		file: "every_key.yaml",
		want: func(t *testing.T) *Config {
			return &Config{
				Name:              "every.key_1",
				SkipUnknownTables: true,
				StartupTimeout:    5 * time.Minute,
				BadInput:          BadInputDeadLetter,
				Source: Source{
					Type:           "file",
					Format:         "txsink-json",
					FormatOptions:  map[string]string{"timestamp-unit": "ms", "strict": "true"},
					MaxRecordBytes: 1 << 20,
					Raw: source.Settings{
						"partitions": [][]string{{"/var/lib/cdc/p0.jsonl", abs(t, "sub/p1.jsonl")}, {"-"}},
						"follow":     true,
					},
				},
				Target: Target{URL: "postgresql://app@db.internal:5432/shop?sslmode=require"},
				Tables: []Table{
					{Source: "Inventory.Orders", Target: "public.orders", PrimaryKey: []string{"tenant_id", "id"}},
					{Source: "log_?.events_*", AppendOnly: true},
					{Source: "standalone", PrimaryKey: []string{"id"}, VersionColumn: "updated_at", Delete: "soft:deleted", Columns: []Column{
						{Name: "id", Type: "bigint"},
						{Name: "email", Type: "varchar(255)", Null: ptr(false)},
						{Name: "price", Type: "decimal(10,2)", Default: ptr("0")},
						{Name: "updated_at", Type: "datetime(6)", Null: ptr(true)},
						{Name: "deleted", Type: "bool", Default: ptr("0")},
						{Name: "note", Type: "text"},
					}},
				},
				Sink: Sink{
					FlushMaxRows:          1,
					FlushMaxBytes:         512 << 10,
					FlushInterval:         250 * time.Millisecond,
					FlushCoalesce:         false,
					MaxRetries:            0,
					KeyPartitionsRemember: 20000,
					TxnEnabled:            true,
					TxnBufferSize:         1e9,
					TxnMiniSwitchInterval: 750 * time.Millisecond,
					TxnMinSwitchBytes:     0,
					TxnMaxTxnBytes:        2 << 30,
				},
				Schema: Schema{Create: SchemaCreateMissing, Evolve: []string{SchemaEvolveAddColumns, SchemaEvolveWiden}},
			}
		},
	}, {
		file: "seed_spellings.yaml",
		want: func(t *testing.T) *Config {
			return &Config{
				Name:           "seeds",
				BadInput:       BadInputFail,
				StartupTimeout: time.Minute,
				Source:         Source{Type: "file", Format: "debezium-json", MaxRecordBytes: 64 << 20, Raw: source.Settings{"paths": []string{abs(t, "in.jsonl")}}},
				Target:         Target{URL: "sqlite://" + filepath.ToSlash(abs(t, "state/target.db"))},
				Tables:         []Table{{Source: "*.*"}},
				Sink: withSink(func(s *Sink) {
					s.FlushInterval = 0
					s.TxnEnabled = true
					s.TxnMiniSwitchInterval = MiniSwitchAuto
					s.TxnBufferSize = 128 << 20
				}),
			}
		},
	}, {
		file: "nested.yaml",
		want: func(t *testing.T) *Config {
			return &Config{
				Name:           "nested",
				BadInput:       BadInputFail,
				StartupTimeout: time.Minute,
				Source:         Source{Type: "file", Format: "debezium-json", MaxRecordBytes: 64 << 20, Raw: source.Settings{"paths": []string{abs(t, "a.jsonl")}}},
				Target:         Target{URL: "sqlite::memory:"},
				Tables: []Table{
					{Source: "shop.customers", PrimaryKey: []string{"id"}},
					{Source: "shop.addresses", PrimaryKey: []string{"id"}},
					{Source: "shop.orders", PrimaryKey: []string{"customer_id", "seq"}},
				},
				Sink: withSink(func(s *Sink) {
					s.FlushMaxRows = 200
					s.FlushInterval = 1500 * time.Millisecond
					s.TxnMiniSwitchInterval = 100 * time.Millisecond
				}),
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", "good", tt.file))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if want := tt.want(t); !reflect.DeepEqual(got, want) {
				t.Errorf("Load:\n got %#v\nwant %#v", *got, *want)
			}
		})
	}
}

// TestLoadBad loads every file in testdata/bad. Each ends with comment lines
// "# want: <line>: <key>: <message>" giving, in order, exactly the errors
// the file must produce: no more, no fewer.
func TestLoadBad(t *testing.T) {
	t.Setenv("TXSINK_CONFIG_TEST_NEVER_SET", "")
	os.Unsetenv("TXSINK_CONFIG_TEST_NEVER_SET") // t.Setenv restores it afterwards
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configurations found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want := wantErrors(t, file)
			c, err := Load(file)
			if err == nil {
				t.Fatalf("Load succeeded (%+v); want errors:\n%s", c, strings.Join(want, "\n"))
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Load error is %T, not an ErrorList: %v", err, err)
			}
			var got []string
			for _, e := range list {
				if e.File != file {
					t.Errorf("error %q has File %q, want %q", e, e.File, file)
				}
				got = append(got, strings.TrimPrefix(strings.TrimPrefix(e.Error(), file+":"), " "))
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func wantErrors(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(data), "\n") {
		if w, ok := strings.CutPrefix(line, "# want: "); ok {
			want = append(want, w)
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s has no \"# want: \" lines", file)
	}
	return want
}

func TestParseBaseDir(t *testing.T) {
	const doc = `
name: p
source: {type: file, paths: [a.jsonl, /abs/b.jsonl, "logs/*.jsonl"], format: debezium-json}
target: {url: "sqlite://rel/t.db"}
tables: [{source: "*.*"}]
`
	tests := []struct {
		baseDir   string
		wantPaths []string
		wantURL   string
	}{
		{"", []string{"a.jsonl", "/abs/b.jsonl", "logs/*.jsonl"}, "sqlite://rel/t.db"},
		{"/etc/txsink", []string{"/etc/txsink/a.jsonl", "/abs/b.jsonl", "/etc/txsink/logs/*.jsonl"}, "sqlite:///etc/txsink/rel/t.db"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("baseDir=%q", tt.baseDir), func(t *testing.T) {
			c, err := Parse([]byte(doc), tt.baseDir)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Source.Raw["paths"]; !slices.Equal(got.([]string), tt.wantPaths) {
				t.Errorf("paths = %q, want %q", got, tt.wantPaths)
			}
			if c.Target.URL != tt.wantURL {
				t.Errorf("URL = %q, want %q", c.Target.URL, tt.wantURL)
			}
		})
	}
}

// TestErrorEntries checks that the entries of the returned ErrorList can be
// inspected with errors.As, carrying the key and the line.
func TestErrorEntries(t *testing.T) {
	_, err := Parse([]byte(minimal+"sink:\n  buffer-flush.max-rows: 0\n"), "")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%v, *Error) found nothing", err)
	}
	if e.Key != "sink.buffer-flush.max-rows" || e.Line != 6 || e.File != "" {
		t.Errorf("entry = %+v; want key sink.buffer-flush.max-rows on line 6", *e)
	}
}

// TestMergeKeys checks YAML merge keys: keys written in a mapping win over
// merged ones, and of several merged mappings the earlier wins.
func TestMergeKeys(t *testing.T) {
	doc := minimal[:strings.Index(minimal, "tables:")] + `tables:
  - &a {source: x.a, primary-key: [a_id]}
  - &b {source: x.b, primary-key: [b_id], target: tb}
  - <<: [*a, *b]
    source: x.c
`
	c, err := Parse([]byte(doc), "")
	if err != nil {
		t.Fatal(err)
	}
	want := Table{Source: "x.c", PrimaryKey: []string{"a_id"}, Target: "tb"}
	if got := c.Tables[2]; !reflect.DeepEqual(got, want) {
		t.Errorf("merged entry = %+v, want %+v", got, want)
	}
}

// TestDocumentMarkers checks that YAML document markers around the one
// document are accepted.
func TestDocumentMarkers(t *testing.T) {
	for _, doc := range []string{"---\n" + minimal, minimal + "...\n", minimal + "---\n", minimal + "---\n# end\n"} {
		if _, err := Parse([]byte(doc), ""); err != nil {
			t.Errorf("Parse(%q): %v", doc, err)
		}
	}
}

func TestTargetURLEnv(t *testing.T) {
	t.Setenv("TXSINK_TEST_USER", "app")
	t.Setenv("TXSINK_TEST_PASSWORD", "p@ss:w/rd?#%")
	t.Setenv("TXSINK_TEST_HOST", "db.internal")
	t.Setenv("TXSINK_TEST_EMPTY", "")
	tests := []struct {
		url, want string
	}{
		// Inside user:password@ the value is percent-encoded, so the URL
		// still parses; elsewhere it is inserted as it is.
		{"mysql://${TXSINK_TEST_USER}:${TXSINK_TEST_PASSWORD}@${TXSINK_TEST_HOST}:3306/db",
			"mysql://app:p%40ss%3Aw%2Frd%3F%23%25@db.internal:3306/db"},
		{"postgres://${TXSINK_TEST_USER}:${TXSINK_TEST_EMPTY}@h/db?application_name=${TXSINK_TEST_USER}",
			"postgres://app:@h/db?application_name=app"},
		{"mysql://u:$literal@h/db", "mysql://u:$literal@h/db"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			doc := "name: p\nsource: {type: file, paths: [a], format: debezium-json}\ntables: [{source: a.b}]\n" +
				"target: {url: \"" + tt.url + "\"}\n"
			c, err := Parse([]byte(doc), "")
			if err != nil {
				t.Fatal(err)
			}
			if c.Target.URL != tt.want {
				t.Errorf("URL = %q, want %q", c.Target.URL, tt.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	c := &Config{Tables: []Table{
		{Source: "inventory.orders", Target: "orders"},
		{Source: "inventory.order_?"},
		{Source: "shard_*.events"},
		{Source: "standalone"},
		{Source: "Ünïcode.*"},
		{Source: "*.*"},
	}}
	tests := []struct {
		table changelog.Table
		want  int // index into c.Tables, -1 for no match
	}{
		{changelog.Table{Namespace: "inventory", Name: "orders"}, 0},
		{changelog.Table{Namespace: "INVENTORY", Name: "Orders"}, 0},
		{changelog.Table{Namespace: "inventory", Name: "order_1"}, 1},
		{changelog.Table{Namespace: "inventory", Name: "order_12"}, 5},
		{changelog.Table{Namespace: "shard_", Name: "events"}, 2},
		{changelog.Table{Namespace: "shard_17", Name: "events"}, 2},
		{changelog.Table{Namespace: "shard_17", Name: "events2"}, 5},
		{changelog.Table{Name: "standalone"}, 3},
		{changelog.Table{Namespace: "x", Name: "standalone"}, 5},
		{changelog.Table{Namespace: "üNÏCODE", Name: "t"}, 4},
		{changelog.Table{Name: "other"}, 5}, // "*" matches the empty namespace
	}
	for _, tt := range tests {
		t.Run(tt.table.String(), func(t *testing.T) {
			got, ok := c.Match(tt.table)
			if tt.want < 0 {
				if ok {
					t.Errorf("Match = %+v, want no match", *got)
				}
				return
			}
			if !ok || got != &c.Tables[tt.want] {
				t.Errorf("Match = %v, %v; want tables[%d] %+v", got, ok, tt.want, c.Tables[tt.want])
			}
		})
	}
	if got, ok := (&Config{Tables: c.Tables[:1]}).Match(changelog.Table{Namespace: "x", Name: "y"}); ok {
		t.Errorf("Match of an unlisted table = %+v, want none", *got)
	}
}

func TestResolve(t *testing.T) {
	src := changelog.Table{Namespace: "inventory", Name: "orders"}
	for _, tt := range []struct{ target, want string }{
		{"", "orders"},
		{"orders_copy", "orders_copy"},
		{"public.orders", "public.orders"},
	} {
		tb := Table{Source: "inventory.*", Target: tt.target}
		if got, err := tb.Resolve(src); err != nil || got.String() != tt.want {
			t.Errorf("Resolve with target %q = %q, %v; want %q", tt.target, got, err, tt.want)
		}
	}
}

// TestResolveConfined: a target defaulted from the source's name is that
// name, whole, in the target's own namespace — never split at a dot —
// and a name that is not one plain identifier, or that spells one of
// txsink's own tables, is refused with a *RouteError saying what to do;
// an explicit target may name another namespace, but never txsink's
// tables.
func TestResolveConfined(t *testing.T) {
	for _, tt := range []struct {
		target string
		src    changelog.Table
		want   schema.Name
		err    string // "" when the route is taken
	}{
		{"", changelog.Table{Namespace: "inventory", Name: "orders"}, schema.Name{Name: "orders"}, ""},
		{"", changelog.Table{Namespace: "inventory", Name: "order items"}, schema.Name{Name: "order items"}, ""},
		{"", changelog.Table{Namespace: "inventory", Name: "victim_db.t"}, schema.Name{}, `"victim_db.t" holds a dot`},
		{"", changelog.Table{Namespace: "shop", Name: "victim_db.t"}, schema.Name{}, `source: "shop.victim_db.t", target: <a table of your own>`},
		{"", changelog.Table{Namespace: "inventory", Name: "t`x"}, schema.Name{}, "quote character `"},
		{"", changelog.Table{Namespace: "inventory", Name: `t"x`}, schema.Name{}, `quote character "`},
		{"", changelog.Table{Namespace: "inventory", Name: "t\x00"}, schema.Name{}, `"t\x00" holds the control character U+0000`},
		{"", changelog.Table{Namespace: "inventory", Name: ""}, schema.Name{}, "is empty"},
		{"", changelog.Table{Namespace: "inventory", Name: "TXSINK_PROGRESS"}, schema.Name{}, "txsink's own tables"},
		{"", changelog.Table{Namespace: "inventory", Name: "Txsink_Dead_Letters"}, schema.Name{}, "txsink's own tables"},
		{"", changelog.Table{Namespace: "inventory", Name: "txsink_progress "}, schema.Name{}, "txsink's own tables"},
		{"orders_copy", changelog.Table{Namespace: "inventory", Name: "victim_db.t"}, schema.Name{Name: "orders_copy"}, ""},
		{"victim.t", changelog.Table{Namespace: "inventory", Name: "t"}, schema.Name{Namespace: "victim", Name: "t"}, ""},
		{"public.txsink_progress", changelog.Table{Namespace: "inventory", Name: "t"}, schema.Name{}, "txsink's own tables"},
		{"TXSINK_DEAD_LETTERS", changelog.Table{Namespace: "inventory", Name: "t"}, schema.Name{}, "txsink's own tables"},
	} {
		tb := Table{Source: "inventory.*", Target: tt.target}
		got, err := tb.Resolve(tt.src)
		var re *RouteError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Resolve(%q) with target %q: %v", tt.src, tt.target, err)
		case tt.err == "" && got != tt.want:
			t.Errorf("Resolve(%q) with target %q = %#v, want %#v", tt.src, tt.target, got, tt.want)
		case tt.err == "":
		case !errors.As(err, &re) || re.Source != tt.src:
			t.Errorf("Resolve(%q) with target %q = %#v, %v; want a *RouteError of it", tt.src, tt.target, got, err)
		case !strings.Contains(err.Error(), tt.err) || !strings.Contains(re.Hint, "target:"):
			t.Errorf("Resolve(%q) with target %q: %v; want it to say %q and what to do", tt.src, tt.target, err, tt.err)
		}
	}
	// An entry for the one table is told to set its own target.
	fixed := Table{Source: "inventory.a.b"}
	if _, err := fixed.Resolve(changelog.Table{Namespace: "inventory", Name: "a.b"}); err == nil || !strings.Contains(err.Error(), "set target: on this entry") {
		t.Errorf("Resolve under %q: %v; want it to say to set this entry's target", fixed.Source, err)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a*", "a", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbcd", false},
		{"a*b*c", "axbxxbxc", true},
		{"a*b*c", "acb", false},
		{"?", "", false},
		{"?", "é", true}, // one character, two bytes
		{"??", "é", false},
		{"a?c", "abc", true},
		{"*x*", "yyy", false},
		{"**", "ab", true},
		{"ABC", "abc", true},
		{"straße", "STRASSE", false}, // simple folding only, like MySQL's default collation
		{"ǅ", "ǆ", true},             // title case folds to lower case
		{"[a]", "a", false},          // brackets are plain characters
		{"[a]", "[A]", true},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"1048576", 1 << 20, ""},
		{"10KB", 10_000, ""},
		{"512KiB", 512 << 10, ""},
		{"1MB", 1_000_000, ""},
		{"16MiB", 16 << 20, ""},
		{"16mib", 16 << 20, ""},
		{"16 MiB", 16 << 20, ""},
		{"2GB", 2e9, ""},
		{"1GiB", 1 << 30, ""},
		{"3TiB", 3 << 40, ""},
		{"100B", 100, ""},
		{"-1", -1, ""}, // validation refuses it with the key's own message
		{"8388607TiB", 8388607 << 40, ""},
		{"8388608TiB", 0, "too large"},
		{"1.5GiB", 0, "whole number"},
		{"16M", 0, "not a size"},
		{"MiB", 0, "not a size"},
		{"", 0, "not a size"},
		{"sixteen", 0, "not a size"},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseSize(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql://user:secret@host:3306/db", "mysql://user:xxxxx@host:3306/db"},
		{"mysql://user@host:3306/db", "mysql://user@host:3306/db"},
		{"postgres://u:s%40cret@h/db?sslmode=require&password=secret", "postgres://u:xxxxx@h/db?sslmode=require&password=xxxxx"},
		{"postgres://h/db?PWD=secret", "postgres://h/db?PWD=xxxxx"},
		{"sqlite:///var/lib/t.db", "sqlite:///var/lib/t.db"},
		{"sqlite::memory:", "sqlite::memory:"},
		// Not parseable: the password would have broken the URL. Still hidden.
		{"mysql://user:p@ss/w:rd@host/db", "mysql://user:xxxxx@host/db"},
		{"mysql://user:sec ret@host:port/db?password=x y", "mysql://user:xxxxx@host:port/db?password=xxxxx"},
		{"mysql://user:pa?ss@host/db", "mysql://user:xxxxx@host/db"},
		{"postgres://host/db?application_name=a@b", "postgres://host/db?application_name=a@b"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestConfigPrintsNoPassword checks that printing a Config, in any of fmt's
// forms, does not show the target's password.
func TestConfigPrintsNoPassword(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "good", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{c, *c, c.Target} {
			if s := fmt.Sprintf(verb, v); strings.Contains(s, "pass@") || !strings.Contains(s, "xxxxx") {
				t.Errorf("Sprintf(%q, %T) = %s; want the password hidden", verb, v, s)
			}
		}
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"mysql://u:p@h:3306/db", ""},
		{"mysql://u:p@h/db?parseTime=true&tls=skip-verify", ""},
		{"mysql://h/db", ""},
		{"postgres://u:p@h:5432/db?sslmode=require", ""},
		{"postgresql://h/db", ""},
		{"postgres:///db?host=/var/run/postgresql", ""}, // a local socket: no host in the authority
		{"postgres://", ""},
		{"sqlite:///var/lib/t.db", ""},
		{"sqlite://t.db?_pragma=busy_timeout(5000)", ""},
		{"sqlite::memory:", ""},
		{"sqlite://", "names no database file"},
		{"sqlite://?mode=ro", "names no database file"},
		{"mysql://u:p@/db", "has no host"},
		{"mysql://u:p@h:3306", "names no database"},
		{"mysql://u:p@h:3306/", "names no database"},
		{"mysql://u:p:w@h:port/db", "is not a valid URL (invalid port \":port\" after host)"},
		{"starrocks://u:p@fe1:8030,fe2:8030/db?query-port=9030", ""},
		{"starrocks://u:p@fe1:8030", "names no database"},
		{"redis://h", `scheme "redis" is not supported`},
		{"MySQL://h/db", `scheme "MySQL" is not supported`},
		{"h:3306/db", "is not a URL (no scheme://)"},
		{"user:pa://ss@h/db", "is not a URL"},
	}
	for _, tt := range tests {
		got := checkURL(tt.url)
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("checkURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, "p@") || strings.Contains(got, ":w@") {
			t.Errorf("checkURL(%q) = %q repeats the password", tt.url, got)
		}
	}
}

func TestTargetKind(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"mysql://u@h/db", "mysql"},
		{"postgres://h/db", "postgres"},
		{"postgresql://h/db", "postgres"},
		{"sqlite:///a.db", "sqlite"},
		{"sqlite::memory:", "sqlite"},
		{"starrocks://u:p@fe1:8030,fe2:8030/db?query-port=9030", "starrocks"},
		{"redis://h", ""},
	} {
		if got := (Target{URL: tt.url}).Kind(); got != tt.want {
			t.Errorf("Kind(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := sinkSection.names()
	for _, tt := range []struct{ key, want string }{
		{"buffer-flush.max-row", "buffer-flush.max-rows"},
		{"Buffer-Flush.Max-Rows", "buffer-flush.max-rows"},
		{"max-rows", "buffer-flush.max-rows"},
		{"enabled", "transaction.multi-table.enabled"},
		{"interval", ""}, // buffer-flush.interval or ...mini-switch-interval: no guess
		{"flush.interval", "buffer-flush.interval"},
		{"queue-size", ""},
	} {
		if got := suggest(tt.key, known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	// Two keys with the same last part: no guess.
	if got := suggest("rows", []string{"xx.rows", "yy.rows"}); got != "" {
		t.Errorf("suggest of an ambiguous suffix = %q, want none", got)
	}
}

// TestValidateGo checks a Config built in Go, where errors have no lines.
func TestValidateGo(t *testing.T) {
	c := Default()
	c.Name = "go-built"
	c.Source = Source{Type: "file", Format: "txsink-json"}
	c.Source.Set("paths", []string{"a.jsonl"})
	c.Target = Target{URL: "sqlite::memory:"}
	c.Tables = []Table{{Source: "a.b"}}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate of a good Config: %v", err)
	}

	c.Sink.FlushMaxRows = 0
	c.Sink.TxnMiniSwitchInterval = -2 * time.Second
	c.Tables = append(c.Tables, Table{Source: "A.B"})
	err := c.Validate()
	want := []string{
		"sink.buffer-flush.max-rows: 0 is too small; set it to a whole number of rows, at least 1",
		"sink.transaction.multi-table.mini-switch-interval-ms: -2s is negative; set it to a whole number of milliseconds, 0 or more, or -1 for automatic",
		`tables[1].source: is never used: tables[0] ("a.b") comes first and matches every table this entry would; move this entry above it, or remove it`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Validate:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}

	var zero Config
	if err := zero.Validate(); err == nil || !strings.Contains(err.Error(), "name: missing;") {
		t.Errorf("Validate of a zero Config = %v; want name missing and more", err)
	}
}

func TestMiniSwitchInterval(t *testing.T) {
	for _, tt := range []struct {
		set, flush, want time.Duration
	}{
		{MiniSwitchAuto, time.Second, 100 * time.Millisecond},
		{MiniSwitchAuto, 0, 100 * time.Millisecond},
		{MiniSwitchAuto, 3 * time.Second, 300 * time.Millisecond},
		{MiniSwitchAuto, 10 * time.Second, time.Second},
		{MiniSwitchAuto, 30 * time.Second, time.Second},
		{0, time.Second, 0},
		{200 * time.Millisecond, time.Second, 200 * time.Millisecond},
	} {
		s := Sink{TxnMiniSwitchInterval: tt.set, FlushInterval: tt.flush}
		if got := s.MiniSwitchInterval(); got != tt.want {
			t.Errorf("MiniSwitchInterval(set %v, flush %v) = %v, want %v", tt.set, tt.flush, got, tt.want)
		}
	}
}

// TestMaxTxnBytes: max-txn-bytes follows buffer-size unless set, and
// takes sizes, "auto" and "unlimited".
func TestMaxTxnBytes(t *testing.T) {
	for _, tt := range []struct {
		yaml    string // the sink keys after transaction.multi-table.enabled
		field   int64  // Sink.TxnMaxTxnBytes as parsed
		resolve int64  // Sink.MaxTxnBytes()
	}{
		{"", MaxTxnBytesAuto, 128 << 20},
		{"transaction.multi-table.buffer-size: 1GiB", MaxTxnBytesAuto, 1 << 30},
		{"transaction.multi-table.max-txn-bytes: auto\n  transaction.multi-table.buffer-size: 64MiB", MaxTxnBytesAuto, 64 << 20},
		{"transaction.multi-table.max-txn-bytes: AUTO", MaxTxnBytesAuto, 128 << 20},
		{"transaction.multi-table.max-txn-bytes: unlimited", 0, 0},
		{"transaction.multi-table.max-txn-bytes: 0", 0, 0},
		{"transaction.multi-table.max-txn-bytes: 2GiB", 2 << 30, 2 << 30},
	} {
		t.Run(tt.yaml, func(t *testing.T) {
			c, err := Parse([]byte(minimal+"sink:\n  transaction.multi-table.enabled: true\n  "+tt.yaml+"\n"), "")
			if err != nil {
				t.Fatal(err)
			}
			if c.Sink.TxnMaxTxnBytes != tt.field || c.Sink.MaxTxnBytes() != tt.resolve {
				t.Errorf("TxnMaxTxnBytes %d, MaxTxnBytes() %d; want %d, %d", c.Sink.TxnMaxTxnBytes, c.Sink.MaxTxnBytes(), tt.field, tt.resolve)
			}
		})
	}
	for _, bad := range []string{"-2", "lots", "-1"} {
		_, err := Parse([]byte(minimal+"sink:\n  transaction.multi-table.max-txn-bytes: "+bad+"\n"), "")
		if err == nil || !strings.Contains(err.Error(), "sink.transaction.multi-table.max-txn-bytes") {
			t.Errorf("max-txn-bytes: %s parsed (err %v); want an error naming the key", bad, err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v; want os.ErrNotExist", err)
	}
}

// TestMaxKeyPartitions: sink.key-partitions.remember's bound is the
// memory's own.
func TestMaxKeyPartitions(t *testing.T) {
	if maxKeyPartitions != reduce.MaxKeyPartitions {
		t.Errorf("config allows key-partitions.remember up to %d, reduce.NewKeyPartitions up to %d", maxKeyPartitions, reduce.MaxKeyPartitions)
	}
}
