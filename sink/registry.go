package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Driver opens the sinks of one or more URL schemes (the config's
// target.url).
type Driver interface {
	// Open connects to the target at url. env.ReadOnly asks for a handle
	// that changes nothing in the target, not even by creating a file
	// (txsink check).
	Open(ctx context.Context, url string, env Env) (Sink, error)
}

// Env is what a Driver gets besides the URL.
type Env struct {
	// BaseDir is the config file's folder: a relative path in the URL
	// (sqlite://) is relative to it.
	BaseDir string
	// ReadOnly asks for a handle that writes nothing.
	ReadOnly bool
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a sink available by URL scheme (compared without regard
// to case). Sink packages call it from init; it panics when scheme is
// registered twice or d is nil, as database/sql.Register does.
func Register(scheme string, d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d == nil {
		panic("sink: Register driver is nil")
	}
	scheme = strings.ToLower(scheme)
	if _, dup := drivers[scheme]; dup {
		panic("sink: Register called twice for " + scheme)
	}
	drivers[scheme] = d
}

// Schemes returns the registered URL schemes, sorted.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open connects to the target at url through the driver of its scheme. A
// relative path in the URL is taken relative to baseDir (the config file's
// folder). An unknown scheme is an error listing the registered ones.
func Open(ctx context.Context, url, baseDir string) (Sink, error) {
	return open(ctx, url, Env{BaseDir: baseDir})
}

// OpenReadOnly is Open for callers that must not change the target, not
// even by creating a SQLite file.
func OpenReadOnly(ctx context.Context, url, baseDir string) (Sink, error) {
	return open(ctx, url, Env{BaseDir: baseDir, ReadOnly: true})
}

func open(ctx context.Context, url string, env Env) (Sink, error) {
	scheme, _, _ := strings.Cut(url, ":")
	mu.RLock()
	d, ok := drivers[strings.ToLower(scheme)]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("target url: unknown scheme %q: use %s", scheme, schemeList())
	}
	return d.Open(ctx, url, env)
}

// schemeList renders the registered schemes as "mysql://, postgres:// or
// sqlite://".
func schemeList() string {
	s := Schemes()
	if len(s) == 0 {
		return "a scheme of a sink linked into this build (none is)"
	}
	for i := range s {
		s[i] += "://"
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
