package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KeyDoc documents one configuration key.
type KeyDoc struct {
	// Key is the key's full YAML path: "name", "source.paths",
	// "tables[].primary-key", "sink.buffer-flush.max-rows".
	Key string
	// Type is how the value is written: "string", "bool", "integer",
	// "size", "duration", "list of strings" or "map of strings".
	Type string
	// Unit is the unit of a number ("bytes", "ms", "rows"); "" when none.
	Unit string
	// Default is the value used when the key is absent, as YAML would write
	// it, or "required".
	Default string
	// Description says what the key does.
	Description string
}

// Reference returns the documentation of every key, in the order of the
// reference documentation (docs/config.md). It is printed from the same table
// the parser uses, with defaults taken from Default.
func Reference() []KeyDoc {
	return reference(sections())
}

// reference documents the keys of secs.
func reference(secs []*sectionDef) []KeyDoc {
	var docs []KeyDoc
	for _, s := range secs {
		inst := defaultsOf(s)
		for i := range s.keys {
			k := &s.keys[i]
			doc := k.docText()
			only := strings.Join(k.only, ", ")
			if only != "" {
				doc = "*" + only + " only.* " + doc
			}
			def := formatDefault(k, k.field(inst))
			if k.required && only != "" {
				def = "required for " + only
			}
			docs = append(docs, KeyDoc{
				Key:         keyPath(s.path, k.name),
				Type:        k.typ.String(),
				Unit:        k.unit,
				Default:     def,
				Description: doc,
			})
		}
	}
	return docs
}

// defaultsOf returns the section struct of Default() that s describes.
func defaultsOf(s *sectionDef) any {
	c := Default()
	switch s.path {
	case topSection.path:
		return &c
	case sourceSection.path:
		return &c.Source
	case targetSection.path:
		return &c.Target
	case tableSection.path:
		return &Table{}
	case sinkSection.path:
		return &c.Sink
	case schemaSection.path:
		return &c.Schema
	}
	panic("config: no defaults for section " + s.path)
}

func formatDefault(k *keyDef, p any) string {
	switch {
	case k.required:
		return "required"
	case k.defaultDoc != "":
		return k.defaultDoc
	}
	switch k.typ {
	case typeString:
		if v := *p.(*string); v != "" {
			return v
		}
		return "none"
	case typeBool:
		return strconv.FormatBool(*p.(*bool))
	case typeInt:
		return strconv.Itoa(*p.(*int))
	case typeSize:
		return formatSize(*p.(*int64))
	case typeDuration:
		if d := *p.(*time.Duration); k.auto && d == MiniSwitchAuto {
			return "auto"
		}
		return p.(*time.Duration).String()
	case typeMillis:
		if d := *p.(*time.Duration); k.auto && d == MiniSwitchAuto {
			return "-1 (automatic)"
		}
		return strconv.FormatInt(p.(*time.Duration).Milliseconds(), 10)
	case typeStrings, typeStringMap, typeStringLists:
		if isZero(p) {
			return "none"
		}
	}
	return fmt.Sprint(p)
}

// exampleYAML is the example of the reference documentation. A test parses
// it, so the documentation's example always works.
const exampleYAML = `name: orders-sync
source:
  type: file
  paths: [p0.jsonl, p1.jsonl]
  format: debezium-json
target:
  url: mysql://txsink:${TXSINK_DB_PASSWORD}@127.0.0.1:3306/shop
tables:
  - source: inventory.orders
    target: orders
    primary-key: [id]
  - source: inventory.order_events
    append-only: true
  - source: inventory.*
sink:
  buffer-flush.max-rows: 1000
  buffer-flush.max-bytes: 16MiB
  buffer-flush.interval: 1s
`

// referenceMarkdown renders docs/config.md.
func referenceMarkdown() string {
	var b strings.Builder
	b.WriteString(`# txsink configuration reference

<!-- Generated from config/keys.go and the sources' Keys (source/*/keys.go) by "go test ./config -update". Do not edit by hand. -->

A txsink pipeline is described by one YAML file. Every key is listed below with its type, its
default and what it does. Parsing is strict: an unknown key, a value of the wrong type or a value out
of range stops txsink with an error naming the key and its line, before anything is read or written.

## Example

` + "```yaml\n" + exampleYAML + "```" + `

## Values

- **size**: a whole number of bytes, or one with a unit: ` + "`B`, `KB` (1000), `KiB` (1024), `MB`, `MiB`, `GB`, `GiB`, `TB`, `TiB`" + `.
  Units ignore case. Examples: ` + "`1048576`, `512KiB`, `16MiB`, `1GB`" + `.
- **duration**: Go's form, a number with a unit: ` + "`ns`, `us`, `ms`, `s`, `m`, `h`" + `, for example ` + "`1s`, `250ms`, `1m30s`" + `.
  A bare number other than 0 is refused because its unit would be a guess; keys ending in ` + "`-ms`" + ` take milliseconds.
- **list of strings**: a YAML list; a single string is a list of one.
- Relative paths (` + strings.Join(append(sourceKeysWhere(func(k *keyDef) bool { return k.path }), "`sqlite://`"), ", ") + ` URLs) are relative to the directory of the configuration file.
- ` + "`${NAME}`" + ` in ` + joinList(append([]string{"`target.url`"}, sourceKeysWhere(func(k *keyDef) bool { return k.env })...), "and") + ` is replaced by the environment variable NAME.
- A key written with no value (` + "`key:`" + `) keeps its default.
`)
	secs := sections()
	ref := reference(secs)
	for _, s := range secs {
		title := s.path
		if title == "" {
			title = "Top level"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", strings.TrimSuffix(title, "[]"), s.intro)
		b.WriteString("| key | type | default | description |\n|---|---|---|---|\n")
		for _, k := range ref[:len(s.keys)] {
			typ := k.Type
			if k.Unit != "" {
				typ += " (" + k.Unit + ")"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Key, typ, cell(k.Default), cell(k.Description))
		}
		ref = ref[len(s.keys):]
	}
	return b.String()
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// sourceKeysWhere returns the source keys for which pred holds, as
// backquoted paths, for the prose of the Values section.
func sourceKeysWhere(pred func(*keyDef) bool) []string {
	var l []string
	for _, k := range fullSourceSection().keys {
		if pred(&k) {
			l = append(l, "`"+keyPath("source", k.name)+"`")
		}
	}
	return l
}
