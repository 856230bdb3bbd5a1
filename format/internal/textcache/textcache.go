// Package textcache remembers what a decoder parsed from a JSON value that
// records repeat byte for byte (Debezium's Connect schema envelope,
// txsink-json's "types"), by its exact text, so each distinct text is
// parsed once, and the text the last record carried is passed over by a
// byte comparison instead of being scanned again.
package textcache

import (
	"sync"
	"sync/atomic"
)

// DefaultMax bounds a Cache. A table has one declaration per version of
// its definition, so the bound is only reached by a stream of
// ever-changing tables; the cache then starts over.
const DefaultMax = 1024

// Cache maps texts to what was parsed from them. The zero Cache is ready
// to use and holds up to DefaultMax texts; it is safe for concurrent use.
type Cache[T any] struct {
	// last is the text used most recently. Data that starts with the same
	// bytes starts with that value: a complete JSON object ends at its own
	// closing brace, so an equal prefix is an equal value.
	last atomic.Pointer[entry[T]]

	mu sync.RWMutex
	m  map[string]T
}

type entry[T any] struct {
	raw string
	v   T
}

// Match reports whether data begins with the text used most recently,
// and returns its length and parsed form; 0 and false when it does not.
func (c *Cache[T]) Match(data []byte) (int, T, bool) {
	last := c.last.Load()
	if last == nil || len(data) < len(last.raw) || string(data[:len(last.raw)]) != last.raw {
		var zero T
		return 0, zero, false
	}
	return len(last.raw), last.v, true
}

// Lookup returns what parse made of raw, parsing it on first sight and
// remembering it unless parse fails, and makes it the text Match looks
// for.
func (c *Cache[T]) Lookup(raw []byte, parse func([]byte) (T, error)) (T, error) {
	c.mu.RLock()
	v, ok := c.m[string(raw)]
	c.mu.RUnlock()
	key := string(raw)
	if !ok {
		var err error
		if v, err = parse(raw); err != nil {
			return v, err
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= DefaultMax {
			c.m = make(map[string]T)
		}
		c.m[key] = v
		c.mu.Unlock()
	}
	c.last.Store(&entry[T]{raw: key, v: v})
	return v, nil
}
