//go:build unix

package main

// These tests check the deploy/ files as far as this machine can run them:
// there is no Docker engine and no systemd as PID 1 here, so the image is
// not built and the unit is not started. What can go wrong in them without
// a container — the build command, the binary's linking, the command line
// the image runs, the unit's syntax and directives — is checked.

import (
	"bufio"
	"context"
	"database/sql"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txsink/txsink/internal/workload"
)

// dockerfile returns the Dockerfile's instructions, continuation lines
// joined, comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// TestDockerfile runs the Dockerfile's build command as its build stage
// would (from the repository root), checks that the binary is static, as
// the distroless static base requires, and runs the image's command line
// against a small SQLite pipeline.
func TestDockerfile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command (CI=true: this test must run)")
		}
		t.Skip("no go command")
	}
	var build, cmdLine, entry string
	for _, ins := range dockerfile(t) {
		switch {
		case strings.HasPrefix(ins, "RUN ") && strings.Contains(ins, "go build"):
			build = strings.TrimPrefix(ins, "RUN ")
		case strings.HasPrefix(ins, "CMD "):
			cmdLine = strings.TrimPrefix(ins, "CMD ")
		case strings.HasPrefix(ins, "ENTRYPOINT "):
			entry = strings.TrimPrefix(ins, "ENTRYPOINT ")
		}
	}
	if build == "" || cmdLine == "" || entry != `["/usr/local/bin/txsink"]` {
		t.Fatalf("Dockerfile: build %q, CMD %q, ENTRYPOINT %q", build, cmdLine, entry)
	}
	out := filepath.Join(t.TempDir(), "txsink")
	if !strings.Contains(build, "-o /out/txsink") {
		t.Fatalf("the build writes elsewhere than /out/txsink, which the final stage copies: %s", build)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", strings.Replace(build, "/out/txsink", out, 1))
	sh.Dir = "../.."
	// The build arguments, as docker build --build-arg hands them to RUN.
	sh.Env = append(os.Environ(), "VERSION=v9.8.7-test", "COMMIT=feedface")
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	if v, err := exec.CommandContext(ctx, out, "version").Output(); err != nil || !strings.HasPrefix(string(v), "txsink v9.8.7-test (commit feedface, go") {
		t.Errorf("the image's txsink version printed %q (%v), want the VERSION and COMMIT build arguments", v, err)
	}
	bin, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary asks for a dynamic loader: it will not start on distroless/static")
		}
	}
	if libs, _ := bin.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links %v: it will not start on distroless/static", libs)
	}

	// The image's command, with the config where the volume puts it and
	// the port on loopback: a file pipeline that ends by itself.
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "image.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range workload.Schema("sqlite") {
		if _, err := db.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	res := demoLines(t, dir)
	cfg := writeConfig(t, dir, "pipeline.yaml", pipelineSpec{name: "image", url: "sqlite://image.db", paths: res})
	var args []string
	for _, a := range strings.Split(strings.Trim(cmdLine, "[]"), ",") {
		a = strings.Trim(strings.TrimSpace(a), `"`)
		switch a {
		case "/etc/txsink/pipeline.yaml":
			a = cfg
		case "0.0.0.0:9464":
			a = "127.0.0.1:0"
		}
		args = append(args, a)
	}
	run := exec.CommandContext(ctx, out, args...)
	b, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("txsink %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	if !strings.Contains(string(b), `"msg":"starting"`) {
		t.Errorf("the image's command did not log JSON (--log-format json):\n%s", b)
	}
}

// demoLines writes a small txsink-json changelog into dir and returns its
// file name.
func demoLines(t *testing.T, dir string) []string {
	t.Helper()
	lines := `{"op":"+I","table":"shop.orders","row":{"id":1,"customer":"a","status":"NEW","amount":"1.00","created_at":"2026-01-01 00:00:00","note":null}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "p0.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"p0.jsonl"}
}

// TestSystemdUnit has systemd-analyze verify the unit, with ExecStart
// pointing at a real binary (verify refuses a missing one).
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is missing (Debian package systemd); CI=true: this test must run")
		}
		t.Skip("systemd-analyze is missing (Debian package systemd)")
	}
	unit, err := os.ReadFile("../../deploy/txsink.service")
	if err != nil {
		t.Fatal(err)
	}
	bin := txsinkBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "txsink.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/txsink", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
