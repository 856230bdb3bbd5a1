package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runHere runs the command line in this process, for the forms that
// start no pipeline.
func runHere(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// flagLineRE finds the flags a help lists ("  --config string").
var flagLineRE = regexp.MustCompile(`(?m)^  --([a-z][a-z-]*)`)

// TestHelpForms checks every way to ask for a command's help: each prints
// the command's synopsis and flags on stdout, exit 0, nothing on stderr,
// every flag in the double-dash form the usage and docs use.
func TestHelpForms(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		for _, form := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			t.Run(strings.Join(form, " "), func(t *testing.T) {
				code, stdout, stderr := runHere(t, form...)
				if code != 0 || stderr != "" {
					t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, stderr)
				}
				if !strings.HasPrefix(stdout, "txsink "+name) {
					t.Errorf("help does not begin with the synopsis txsink %s:\n%s", name, stdout)
				}
				// Go's flag package writes "-config"; other tools'
				// flags (go tool pprof -sample_index) may stay.
				listed := flagLineRE.FindAllStringSubmatch(stdout, -1)
				if len(listed) == 0 && name != "version" {
					t.Errorf("help lists no --flag:\n%s", stdout)
				}
				for _, m := range listed {
					if regexp.MustCompile(`(^|[\s\[(])-` + m[1] + `\b`).MatchString(stdout) {
						t.Errorf("help writes --%s as -%s:\n%s", m[1], m[1], stdout)
					}
				}
			})
		}
	}
	// Every flag of run is listed, double-dashed, with its default.
	_, stdout, _ := runHere(t, "help", "run")
	for _, want := range []string{"\n  --config string\n", "\n  --http string\n", `(default "127.0.0.1:9464")`, "\n  --fail-on-open-txn\n", "\n  --log-level string\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("txsink help run lacks %q:\n%s", want, stdout)
		}
	}
}

// TestBadCommandLine checks that a mistake in the command line is one
// line on stderr naming the mistake and where the help is, exit code 2.
func TestBadCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--no-such-flag"}, "txsink run: flag provided but not defined: --no-such-flag (see txsink run --help)\n"},
		{[]string{"check", "--sample", "many"}, `txsink check: invalid value "many" for flag --sample: parse error (see txsink check --help)` + "\n"},
		{[]string{"reset", "--config"}, "txsink reset: flag needs an argument: --config (see txsink reset --help)\n"},
		{[]string{"version", "--short"}, "txsink version: flag provided but not defined: --short (see txsink version --help)\n"},
		{[]string{"demo", "extra"}, "txsink demo: unexpected argument \"extra\" (flags only; see txsink demo --help)\n"},
		{[]string{"help", "frobnicate"}, "txsink: unknown command \"frobnicate\" (see txsink --help)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runHere(t, tt.args...)
			if code != 2 || stdout != "" || stderr != tt.want {
				t.Errorf("exit code %d, stdout %q, stderr %q; want 2, nothing, %q", code, stdout, stderr, tt.want)
			}
		})
	}
}

// TestVersion checks what txsink version prints: the -ldflags stamp when
// the build has one, else "devel" and "unknown", never an empty field.
func TestVersion(t *testing.T) {
	t.Run("unstamped", func(t *testing.T) {
		code, stdout, _ := runHere(t, "version")
		// The test binary carries no module version; its VCS stamp
		// depends on GOFLAGS, so the commit is either one.
		if code != 0 || !regexp.MustCompile(`^txsink devel \(commit ([0-9a-f]{40}(-dirty)?|unknown), go1\.\S+\)\n$`).MatchString(stdout) {
			t.Errorf("exit code %d, stdout %q", code, stdout)
		}
	})
	t.Run("ldflags", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the binary")
		}
		goCmd, err := exec.LookPath("go")
		if err != nil {
			t.Fatal(err)
		}
		// The documented build command names the variables this build sets.
		doc, err := os.ReadFile("../../docs/operations.md")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"-X main.buildVersion=", "-X main.buildCommit="} {
			if !strings.Contains(string(doc), v) {
				t.Errorf("docs/operations.md's build command lacks %s", v)
			}
		}
		bin := filepath.Join(t.TempDir(), "txsink")
		// The build command docs/operations.md and deploy/Dockerfile use.
		cmd := exec.Command(goCmd, "build", "-ldflags", "-X main.buildVersion=v1.2.3 -X main.buildCommit=0123abc", "-o", bin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := "txsink v1.2.3 (commit 0123abc, go"; !strings.HasPrefix(string(out), want) {
			t.Errorf("txsink version printed %q, want it to begin %q", out, want)
		}
	})
	t.Run("--version", func(t *testing.T) {
		_, a, _ := runHere(t, "version")
		_, b, _ := runHere(t, "--version")
		if a != b {
			t.Errorf("--version printed %q, version %q", b, a)
		}
	})
}
