package config_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txsink/txsink/config"
)

// FuzzParse feeds Parse arbitrary bytes, seeded with every configuration
// in testdata. Parse must never panic, and must return either a Config that
// passes Validate, or nil and an ErrorList of *Error, each with a message.
// A password in a parsed target URL never shows when the Config is
// printed.
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=3m ./config
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	if len(seeds) == 0 {
		f.Fatal("no seed configurations in testdata/*/*.yaml")
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Shapes the files do not have: anchors and merge keys, deep nesting,
	// flow style, a password that needs encoding.
	f.Add([]byte("name: a\nsource: &s {type: file, paths: [x], format: txsink-json}\ntarget: {url: 'sqlite::memory:'}\ntables: [{<<: {source: a.b}}]\nsink: {<<: *s}\n"))
	f.Add([]byte("name: a\nsource: {type: file, paths: [x], format: txsink-json}\ntarget: {url: 'mysql://u:p%40ss-w0rd@h:3306/db?password=zzz'}\ntables: [{source: a.b}]\n"))
	f.Add([]byte(strings.Repeat("[", 200) + strings.Repeat("]", 200)))
	f.Add([]byte("sink: {buffer-flush: {max-rows: 9999999999999999999999, interval: -1h}}\n"))
	f.Setenv("TXSINK_FUZZ_PASSWORD", "fuzz-secret-1234")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data, "/base")
		if err != nil {
			if cfg != nil {
				t.Fatalf("Parse returned both a Config and an error: %v", err)
			}
			checkErrorList(t, err)
			return
		}
		if cfg == nil {
			t.Fatal("Parse returned neither a Config nor an error")
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a Config that Validate refuses: %v\n%s", err, data)
		}
		checkRedacted(t, cfg)
	})
}

func checkErrorList(t *testing.T, err error) {
	t.Helper()
	var list config.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error is %T, want a config.ErrorList: %v", err, err)
	}
	if len(list) == 0 {
		t.Fatal("empty ErrorList")
	}
	for i, e := range list {
		if e == nil {
			t.Fatalf("ErrorList[%d] is nil", i)
		}
		if e.Msg == "" {
			t.Errorf("ErrorList[%d] has no message: %+v", i, *e)
		}
		if e.Line < 0 {
			t.Errorf("ErrorList[%d] has line %d", i, e.Line)
		}
	}
	var one *config.Error
	if !errors.As(err, &one) {
		t.Errorf("errors.As finds no *config.Error in %v", err)
	}
	if err.Error() == "" {
		t.Error("error text is empty")
	}
}

// checkRedacted checks that a password of the target URL, when it is long
// enough to be told apart from the rest of the URL, does not show in the
// printed Config.
func checkRedacted(t *testing.T, cfg *config.Config) {
	t.Helper()
	u, err := url.Parse(cfg.Target.URL)
	if err != nil || u.User == nil {
		return
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 6 {
		return
	}
	rest := strings.Replace(cfg.Target.URL, u.User.String(), "", 1)
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		if strings.Contains(rest, s) || strings.Contains(cfg.Name, s) || strings.Contains(fmt.Sprint(cfg.Source, cfg.Tables, cfg.Sink), s) {
			return // the text occurs elsewhere: a match would prove nothing
		}
	}
	for _, form := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(form, cfg)
		for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), u.User.String()} {
			if strings.Contains(out, s) {
				t.Fatalf("the Config printed with %s shows the password %q:\n%s", form, pw, out)
			}
		}
	}
}

// aliasBomb returns a sink section of depth levels, each mapping holding
// the one below twice through aliases: 2^depth mappings once expanded.
func aliasBomb(depth int, merge bool) string {
	var b strings.Builder
	b.WriteString("x0: &x0 {buffer-flush.max-rows: 1}\n")
	for i := 1; i <= depth; i++ {
		if merge {
			fmt.Fprintf(&b, "x%d: &x%d {<<: [*x%d, *x%d, *x%d]}\n", i, i, i-1, i-1, i-1)
		} else {
			fmt.Fprintf(&b, "x%d: &x%d {a: *x%d, b: *x%d}\n", i, i, i-1, i-1)
		}
	}
	return b.String()
}

// TestParseAliasCycles: YAML aliases can make a mapping contain or merge
// itself, or expand exponentially; Parse refuses such files (or reads
// them once) instead of overflowing the stack or running for ever. The
// first case is what FuzzParse found (testdata/fuzz/FuzzParse).
func TestParseAliasCycles(t *testing.T) {
	const head = "name: p\nsource: {type: file, paths: [x], format: txsink-json}\ntarget: {url: 'sqlite::memory:'}\n"
	tests := []struct {
		name string
		yaml string
		want string // "" when the file is valid
	}{
		{"table merges itself", head + "tables:\n  - &t\n    <<: *t\n    source: a.b\n", "merges itself"},
		{"sink merges itself", head + "tables: [{source: a.b}]\nsink: &s\n  <<: *s\n", "merges itself"},
		{"sink contains itself", head + "tables: [{source: a.b}]\nsink: &s\n  buffer-flush: *s\n", "contains itself"},
		{"section merges itself", head[:len(head)-len("target: {url: 'sqlite::memory:'}\n")] + "target: &g {url: 'sqlite::memory:', <<: *g}\ntables: [{source: a.b}]\n", "merges itself"},
		{"two mappings merge each other", head + "tables: [{source: a.b}]\nsink: {buffer-flush: &a {<<: &b {<<: *a}}}\n", "merges itself"},
		{"exponential merges", head + "tables: [{source: a.b}]\nanchors:\n" + indent(aliasBomb(40, true)) + "sink: {<<: *x40}\n", "anchors"},
		{"exponential sink", head + "tables: [{source: a.b}]\nanchors:\n" + indent(aliasBomb(40, false)) + "sink: {n: *x40}\n", "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml), "")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			checkErrorList(t, err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
