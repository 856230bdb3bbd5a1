package debezium

// The primary key from a Kafka record's key (format.KeyTyper): Debezium
// writes the key as a Connect struct of the table's key columns, with
// the schema envelope when the key converter has schemas.enable=true:
//
//	{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"}],...},"payload":{"id":1001}}
//
// The key schema is parsed once per distinct text, and the keyed table
// made once per value table and key.

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/schema/coltype"
)

var _ format.KeyTyper = (*Decoder)(nil)

// keyPrefix is how JsonConverter starts a key with its schema.
const keyPrefix = `{"schema":`

// keyCache remembers key schemas by their text and the keyed tables by
// value table and key. It is safe for concurrent use.
type keyCache struct {
	// last is the key schema used most recently: a key that starts with
	// keyPrefix and its text has it, and is not parsed.
	last atomic.Pointer[cachedKey]
	// lastTable is the keyed table made most recently: a record of the
	// same table and key takes it without the lock.
	lastTable atomic.Pointer[lastKeyed]

	mu     sync.Mutex
	tables map[keyedTable]*coltype.Table
}

type cachedKey struct {
	raw  string
	cols string // the key's columns, joined by "\x00"
}

type keyedTable struct {
	t    *coltype.Table
	cols string
}

type lastKeyed struct {
	k  keyedTable
	kt *coltype.Table
}

// KeyedTypes returns t keyed by the columns the record's key schema
// declares (format.KeyTyper).
func (d *Decoder) KeyedTypes(t *coltype.Table, key []byte) *coltype.Table {
	cols, ok := d.keys.columns(key)
	if !ok || cols == "" {
		return t
	}
	c := &d.keys
	k := keyedTable{t, cols}
	if last := c.lastTable.Load(); last != nil && last.k == k {
		return last.kt
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kt, ok := c.tables[k]; ok {
		c.lastTable.Store(&lastKeyed{k, kt})
		return kt
	}
	kt, err := t.WithKey(strings.Split(cols, "\x00"))
	if err != nil {
		kt = t
	}
	if c.tables == nil || len(c.tables) >= maxCachedSchemas {
		c.tables = map[keyedTable]*coltype.Table{}
	}
	c.tables[k] = kt
	c.lastTable.Store(&lastKeyed{k, kt})
	return kt
}

// columns returns the key columns key's schema declares, joined by
// "\x00", and false for a key without a schema.
func (c *keyCache) columns(key []byte) (string, bool) {
	key = bytes.TrimLeft(key, " \t\r\n")
	if !bytes.HasPrefix(key, []byte(keyPrefix)) {
		return "", false
	}
	if last := c.last.Load(); last != nil && len(key) >= len(keyPrefix)+len(last.raw) &&
		string(key[len(keyPrefix):len(keyPrefix)+len(last.raw)]) == last.raw {
		return last.cols, true
	}
	var wrapper struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(key, &wrapper) != nil || len(wrapper.Schema) == 0 {
		return "", false
	}
	var cs connectSchema
	if json.Unmarshal(wrapper.Schema, &cs) != nil || cs.Type != "struct" {
		return "", false
	}
	names := make([]string, len(cs.Fields))
	for i, f := range cs.Fields {
		names[i] = f.Field
	}
	cols := strings.Join(names, "\x00")
	c.last.Store(&cachedKey{raw: string(wrapper.Schema), cols: cols})
	return cols, true
}
