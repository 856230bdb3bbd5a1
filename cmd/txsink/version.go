package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildVersion and buildCommit are stamped at build time by the documented
// build command and deploy/Dockerfile:
//
//	go build -ldflags "-X main.buildVersion=$(git describe --tags --always --dirty) -X main.buildCommit=$(git rev-parse HEAD)" ./cmd/txsink
//
// Without them, build reads what the go command embedded (a module version
// from go install …@v1.2.3, the VCS revision from a go build in a clone).
var buildVersion, buildCommit string

// buildStamp is what txsink version prints and txsink_build_info exports.
type buildStamp struct {
	Version, Commit, GoVersion string
}

// build returns the binary's version and commit: the -ldflags stamp first,
// then the go command's build info, else "devel" and "unknown", so the
// output always has both fields.
func build() buildStamp {
	b := buildStamp{Version: buildVersion, Commit: buildCommit, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; b.Version == "" && v != "" && v != "(devel)" {
			b.Version = v
		}
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if b.Commit == "" && rev != "" {
			b.Commit = rev
			if modified == "true" {
				b.Commit += "-dirty"
			}
		}
	}
	b.Version = cmp.Or(b.Version, "devel")
	b.Commit = cmp.Or(b.Commit, "unknown")
	return b
}

func (b buildStamp) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}

func cmdVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", `txsink version

Prints txsink's version, the commit it was built from and the Go version,
as txsink_build_info exports them. "devel" and "unknown" mean the build
carried no stamp: go run, or a go build that did not set the stamps the
build command in docs/operations.md sets.`, stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "txsink", build())
	return nil
}
