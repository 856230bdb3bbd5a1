package source

import (
	"fmt"
	"slices"
	"time"
)

// A source declares the keys of its part of the config's source section
// next to its config struct, by implementing Keyed on its Driver. Package
// config takes them from the registry: it parses them (types, units,
// relative paths, ${NAME}), refuses unknown ones with the key probably
// meant, refuses them under another source.type, requires the Required
// ones of the chosen type only, runs Check and Validator, and prints them
// in docs/config.md. A source's keys are documented there and only there:
// its config struct's field comments point to them.

// KeyType is how a key's YAML value is written, and so the Go type of its
// value in Settings.
type KeyType uint8

// The key types, with the Go type of their values.
const (
	KeyString      KeyType = iota + 1 // string
	KeyBool                           // bool: true or false
	KeyInt                            // int: a whole number
	KeySize                           // int64: bytes, with an optional unit (16MiB)
	KeyDuration                       // time.Duration: Go's form (1s, 100ms)
	KeyStrings                        // []string: a list, or one string
	KeyStringLists                    // [][]string: a list whose entries are a string or a list
)

// Zero returns the zero value of t's Go type, the value of a key absent
// from the file and without a Default.
func (t KeyType) Zero() any {
	switch t {
	case KeyString:
		return ""
	case KeyBool:
		return false
	case KeyInt:
		return 0
	case KeySize:
		return int64(0)
	case KeyDuration:
		return time.Duration(0)
	case KeyStrings:
		return []string(nil)
	case KeyStringLists:
		return [][]string(nil)
	}
	panic(fmt.Sprintf("source: KeyType(%d) has no zero value", t))
}

// Key declares one key of a source type.
type Key struct {
	// Name is the key inside the source section ("paths",
	// "sasl.mechanism"): the name in the config struct's `source` tag.
	Name string
	Type KeyType
	// Unit is the unit of a number ("bytes"), for the docs.
	Unit string
	// Required keys of the chosen source.type must be set (not zero).
	Required bool
	// Default is the value when the key is absent; nil is Type's zero.
	Default any
	// DefaultDoc is the documented default when printing Default would
	// not say it well ("none", "45s" for a zero that means it); "" prints
	// Default.
	DefaultDoc string
	// Want completes "set it to ..." in messages: what a valid value is.
	Want string
	// Doc is the key's description in docs/config.md, its one
	// documentation.
	Doc string
	// Check returns what is wrong with a value of the key (of Type's Go
	// type), or "" when it is fine; config adds "; set it to " Want. nil:
	// any value of the type is fine.
	Check func(v any) string
	// Path keys name files: config makes a relative name absolute against
	// the config file's folder ("-", standard input, stays in a list).
	Path bool
	// Env keys have ${NAME} replaced by the environment variable NAME.
	Env bool
}

// Keyed is a Driver that declares its keys. A Driver that is not Keyed
// has only the source section's common keys (type, format,
// format-options, max-record-bytes).
type Keyed interface {
	// Summary says in a few words what the source reads ("topics of a
	// Kafka cluster, read by a consumer group"), for source.type's
	// documentation.
	Summary() string
	// Keys returns the keys, in the order docs/config.md lists them.
	Keys() []Key
}

// Validator is a Keyed Driver whose keys depend on each other, or on the
// rest of the pipeline, in ways one key's Check cannot see.
type Validator interface {
	// Validate returns the problems of settings (every key of the type,
	// defaults filled in) in p.
	Validate(settings Settings, p Pipeline) []Problem
}

// Pipeline is what of the rest of the configuration a Validator may
// depend on.
type Pipeline struct {
	// Format is source.format.
	Format string
	// Transactions is sink.transaction.multi-table.enabled.
	Transactions bool
	// DeadLetter is bad-input: dead-letter.
	DeadLetter bool
}

// Problem is one thing a Validator found wrong.
type Problem struct {
	// Key is the key path inside the source section ("partitions[1]"),
	// where the file is pointed at.
	Key string
	// Msg says what is wrong and what to do. With Absent set it follows
	// "missing; " or "empty; ", as the file left the key out or empty.
	Msg    string
	Absent bool
}

// BoundaryPartition returns the partition s's transaction boundaries come
// in (see Boundaries), or "" when they come with the data: s is not a
// Boundaries, or is configured without one.
func BoundaryPartition(s Source) string {
	if b, ok := s.(Boundaries); ok {
		return b.BoundaryPartition()
	}
	return ""
}

// OneOf returns a Check for a KeyString key that accepts "" (the key
// absent) and the values in list, and names the value otherwise
// ("unknown start \"first\""); config adds "; set it to " and the Want.
func OneOf(what string, list []string) func(v any) string {
	return func(v any) string {
		if s := v.(string); s != "" && !slices.Contains(list, s) {
			return fmt.Sprintf("unknown %s %q", what, s)
		}
		return ""
	}
}

// URLKey is the key source.url of the source types that read one server
// (postgres, nats). A key several types declare is one entry of the
// config's table, with one description, so it is declared once, here.
var URLKey = Key{
	Name: "url", Type: KeyString, Required: true, Env: true,
	Want: "the source server's URL, such as postgres://repl:${PGPASSWORD}@db:5432/shop or nats://127.0.0.1:4222",
	Doc: "The source server. For `postgres`, the source PostgreSQL database, as a role with the REPLICATION attribute, " +
		"on a server with `wal_level = logical`. For `nats`, the NATS server with JetStream (`nats://host:4222`; " +
		"several, comma-separated, for a cluster; `nats://user:password@host:4222` or `nats://token@host:4222` " +
		"to authenticate). `${NAME}` is replaced by the environment variable NAME.",
}
