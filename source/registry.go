package source

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a source type available by name (the config's
// source.type). Source packages call it from init; it panics when name
// is registered twice or d is nil, as database/sql.Register does.
func Register(name string, d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d == nil {
		panic("source: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("source: Register called twice for " + name)
	}
	drivers[name] = d
}

// Lookup returns the driver registered as name. An unknown name is an
// error listing the known ones.
func Lookup(name string) (Driver, error) {
	mu.RLock()
	d, ok := drivers[name]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("source type %q is not supported by this build (known: %s)", name, strings.Join(Names(), ", "))
	}
	return d, nil
}

// Names returns the registered source types, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
