package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks the YAML node tree, sets Config fields through the key
// table, and remembers the line of every key path it saw so that validation
// errors can point at the file.
type decoder struct {
	file    string
	baseDir string
	// lines maps key paths ("sink.buffer-flush.max-rows", "tables[1]",
	// "source.paths[0]") to the line of their value.
	lines map[string]int
	errs  ErrorList
	// meant holds keys a misspelt key was taken to mean; they are not also
	// reported missing.
	meant map[string]bool
	// expanding holds the mapping nodes being read, so that a mapping
	// merging itself through an alias is refused instead of recursing
	// until the stack overflows.
	expanding map[*yaml.Node]bool
	// merged caches what each merged mapping contributes: aliases can
	// merge one mapping many times over, and reading it again each time
	// would take time exponential in the nesting.
	merged map[*yaml.Node][]entry
}

// maxSinkNodes bounds the mappings the sink section may expand to through
// aliases; nested aliases could otherwise make it exponentially large.
const maxSinkNodes = 1000

// entry is one key of a mapping, after merge keys are resolved.
type entry struct {
	key  string
	line int // the key's line
	val  *yaml.Node
}

func (d *decoder) errorf(line int, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// config decodes the document into c, which holds the defaults.
func (d *decoder) config(c *Config, doc *yaml.Node) {
	root := doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		d.errorf(root.Line, "", "the configuration is a %s; it must be a mapping of keys (name:, source:, target:, tables:, sink:, schema:)", kindName(root))
		return
	}
	entries, _ := d.mapping(root, "")
	d.fields(c, &topSection, "", entries, func(e entry) {
		switch e.key {
		case "source":
			d.section(&c.Source, fullSourceSection(), "source", e)
		case "target":
			d.section(&c.Target, &targetSection, "target", e)
		case "tables":
			d.tables(c, e)
		case "sink":
			d.sink(&c.Sink, e)
		case "schema":
			d.section(&c.Schema, &schemaSection, "schema", e)
		}
	})
	d.resolve(c)
}

// section decodes a plain section (source, target).
func (d *decoder) section(sec any, def *sectionDef, path string, e entry) {
	d.lines[path] = e.line
	entries, _ := d.mapping(e.val, path)
	d.fields(sec, def, path, entries, nil)
}

// tables decodes the list of table entries.
func (d *decoder) tables(c *Config, e entry) {
	d.lines["tables"] = e.line
	n := deref(e.val)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, "tables", "is a %s; write a list of entries, each starting with \"- source: database.table\"", kindName(n))
		return
	}
	for i, item := range n.Content {
		path := "tables[" + strconv.Itoa(i) + "]"
		item = deref(item)
		d.lines[path] = item.Line
		var t Table
		switch {
		case isNull(item):
			d.errorf(item.Line, path, "empty; write a mapping such as {source: inventory.orders}")
		case item.Kind != yaml.MappingNode:
			d.errorf(item.Line, path, "is a %s; write a mapping such as {source: inventory.orders}", kindName(item))
		default:
			entries, _ := d.mapping(item, path)
			d.fields(&t, &tableSection, path, entries, nil)
		}
		c.Tables = append(c.Tables, t)
	}
}

// sink decodes the sink section, whose keys are dotted names. It accepts the
// seed connectors' "sink." prefix and nested mappings, flattening both to the
// canonical dotted key.
func (d *decoder) sink(s *Sink, e entry) {
	d.lines["sink"] = e.line
	var flat []entry
	seen := map[string]int{}
	walking := map[*yaml.Node]bool{}
	nodes := 0
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		n = deref(n)
		where := strings.TrimSuffix(keyPath("sink", prefix), ".")
		if walking[n] {
			d.errorf(n.Line, where, "contains itself through an alias; remove the cycle")
			return
		}
		if nodes++; nodes > maxSinkNodes {
			if nodes == maxSinkNodes+1 {
				d.errorf(n.Line, where, "expands to more than %d mappings through aliases; write the sink settings out", maxSinkNodes)
			}
			return
		}
		walking[n] = true
		defer delete(walking, n)
		entries, _ := d.mapping(n, where)
		for _, e := range entries {
			key := prefix + e.key
			if prefix == "" {
				key = strings.TrimPrefix(key, "sink.")
			}
			if v := deref(e.val); v.Kind == yaml.MappingNode {
				walk(v, key+".")
				continue
			}
			if first, dup := seen[key]; dup {
				d.errorf(e.line, keyPath("sink", key), "set twice (also on line %d); keep one", first)
				continue
			}
			seen[key] = e.line
			e.key = key
			flat = append(flat, e)
		}
	}
	walk(e.val, "")
	d.fields(s, &sinkSection, "sink", flat, nil)
}

// fields sets the fields of one section from its entries. Keys of child
// sections go to child; any other key not in def is reported as unknown.
func (d *decoder) fields(sec any, def *sectionDef, path string, entries []entry, child func(entry)) {
	// setBy remembers which key set a field, to refuse two spellings of one
	// setting (buffer-flush.interval and buffer-flush.interval-ms).
	setBy := map[any]entry{}
	for _, e := range entries {
		k := def.key(e.key)
		if k == nil {
			if child != nil && slices.Contains(def.children, e.key) {
				child(e)
				continue
			}
			d.unknown(def, path, e)
			continue
		}
		p := k.field(sec)
		if first, dup := setBy[p]; dup {
			d.errorf(e.line, keyPath(path, e.key), "sets the same setting as %s (line %d) in another unit; keep one of them",
				keyPath(path, first.key), first.line)
			continue
		}
		setBy[p] = e
		d.set(k, p, keyPath(path, e.key), e)
		if k.store != nil && !isNull(deref(e.val)) {
			// A source key's value lives in Source.Raw: what set wrote
			// (or, when it refused the value, the default) goes there.
			k.store(sec, p)
		}
	}
}

// unknown reports a key that section def does not have, with the key that
// was most likely meant.
func (d *decoder) unknown(def *sectionDef, path string, e entry) {
	key := keyPath(path, e.key)
	if why, ok := foreignKeys[strings.TrimPrefix(e.key, "sink.")]; ok && def == &sinkSection {
		d.errorf(e.line, key, "is a Flink/StarRocks option txsink does not have: %s", why)
		return
	}
	if s := suggest(e.key, def.names()); s != "" {
		d.errorf(e.line, key, "unknown key; did you mean %q?", s)
		d.meant[keyPath(path, s)] = true
		return
	}
	// A key that belongs to another section: name the section.
	for _, other := range sections() {
		if other.path == def.path {
			continue
		}
		name := e.key
		if other == &sinkSection {
			name = strings.TrimPrefix(name, "sink.")
		}
		if other.key(name) != nil {
			where := other.path + ":"
			if other.path == "" {
				where = "the top level"
			} else if other == &tableSection {
				where = "an entry of tables:"
			}
			d.errorf(e.line, key, "unknown key here; %q belongs in %s", name, where)
			return
		}
	}
	section := path
	if section == "" {
		section = "the top level"
	}
	d.errorf(e.line, key, "unknown key; the keys of %s are %s", section, strings.Join(def.names(), ", "))
}

// set decodes one value into the field p points to.
func (d *decoder) set(k *keyDef, p any, key string, e entry) {
	n := deref(e.val)
	d.lines[key] = n.Line
	if isNull(n) {
		// "key:" with no value leaves the default; a required key is then
		// reported missing by validation, at this line.
		return
	}
	bad := func(format string, args ...any) {
		d.errorf(n.Line, key, "%s; set it to %s", fmt.Sprintf(format, args...), k.wantText())
	}
	if k.typ != typeStrings && k.typ != typeStringMap && k.typ != typeStringLists && k.typ != typeColumns && n.Kind != yaml.ScalarNode {
		bad("is a %s, not a single value", kindName(n))
		return
	}
	switch k.typ {
	case typeString:
		*p.(*string) = n.Value
	case typeBool:
		switch strings.ToLower(n.Value) {
		case "true":
			*p.(*bool) = true
		case "false":
			*p.(*bool) = false
		default:
			bad("%q is not a boolean", n.Value)
		}
	case typeInt:
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			bad("%q is not a whole number", n.Value)
			return
		}
		*p.(*int) = v
	case typeSize:
		switch {
		case k.auto && strings.EqualFold(n.Value, "auto"):
			*p.(*int64) = MaxTxnBytesAuto
			return
		case k.unlimited && strings.EqualFold(n.Value, "unlimited"):
			*p.(*int64) = 0
			return
		}
		v, err := parseSize(n.Value)
		if err != nil {
			bad("%v", err)
			return
		}
		if k.auto && v < 0 {
			// -1 stands for auto inside; the file says "auto".
			bad("%q is negative", n.Value)
			return
		}
		*p.(*int64) = v
	case typeDuration:
		if k.auto && strings.EqualFold(n.Value, "auto") {
			*p.(*time.Duration) = MiniSwitchAuto
			return
		}
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			if _, nerr := strconv.ParseFloat(n.Value, 64); nerr == nil && n.Value != "0" {
				bad("%q has no unit", n.Value)
				return
			}
			bad("%q is not a duration", n.Value)
			return
		}
		if v < 0 {
			bad("%q is negative", n.Value)
			return
		}
		*p.(*time.Duration) = v
	case typeMillis:
		v, err := strconv.ParseInt(n.Value, 10, 64)
		switch {
		case err != nil:
			bad("%q is not a whole number of milliseconds", n.Value)
		case k.auto && v == -1:
			*p.(*time.Duration) = MiniSwitchAuto
		case v < 0:
			bad("%d is negative", v)
		case v > int64(1<<63-1)/int64(time.Millisecond):
			bad("%d is too large", v)
		default:
			*p.(*time.Duration) = time.Duration(v) * time.Millisecond
		}
	case typeStrings:
		*p.(*[]string) = d.strings(n, key, k)
	case typeStringLists:
		if n.Kind != yaml.SequenceNode {
			bad("is a %s", kindName(n))
			return
		}
		l := make([][]string, 0, len(n.Content))
		for i, item := range n.Content {
			ik := key + "[" + strconv.Itoa(i) + "]"
			d.lines[ik] = deref(item).Line
			l = append(l, d.strings(deref(item), ik, k))
		}
		*p.(*[][]string) = l
	case typeColumns:
		*p.(*[]Column) = d.columns(n, key)
	case typeStringMap:
		entries, ok := d.mapping(n, key)
		if !ok {
			return
		}
		m := make(map[string]string, len(entries))
		for _, e := range entries {
			v := deref(e.val)
			if v.Kind != yaml.ScalarNode {
				d.errorf(v.Line, keyPath(key, e.key), "is a %s; option values are single values", kindName(v))
				continue
			}
			m[e.key] = v.Value
			if isNull(v) {
				m[e.key] = ""
			}
		}
		*p.(*map[string]string) = m
	}
}

// strings decodes a list of strings; a single string is a list of one.
func (d *decoder) strings(n *yaml.Node, key string, k *keyDef) []string {
	if n.Kind == yaml.ScalarNode {
		d.lines[key+"[0]"] = n.Line
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, key, "is a %s; set it to %s", kindName(n), k.wantText())
		return nil
	}
	l := make([]string, 0, len(n.Content))
	d.items(n, key, func(ik string, item *yaml.Node) {
		switch {
		case item.Kind != yaml.ScalarNode:
			d.errorf(item.Line, ik, "is a %s; each entry is a single string", kindName(item))
		case isNull(item):
			l = append(l, "")
		default:
			l = append(l, item.Value)
		}
	})
	return l
}

// items calls f with each entry of sequence n, its alias followed, and
// its key path "key[i]", whose line it records.
func (d *decoder) items(n *yaml.Node, key string, f func(ik string, item *yaml.Node)) {
	for i, item := range n.Content {
		item = deref(item)
		ik := key + "[" + strconv.Itoa(i) + "]"
		d.lines[ik] = item.Line
		f(ik, item)
	}
}

// mapping returns the entries of a mapping node, with YAML merge keys (<<)
// resolved: keys written in the mapping override merged ones. A null node is
// an empty mapping. ok is false if n is not a mapping.
func (d *decoder) mapping(n *yaml.Node, path string) (entries []entry, ok bool) {
	n = deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		where := path
		d.errorf(n.Line, where, "is a %s; it must be a mapping of keys", kindName(n))
		return nil, false
	}
	if d.expanding[n] {
		d.errorf(n.Line, path, "merges itself through an alias (<<: *anchor inside the anchored mapping); remove the cycle")
		return nil, false
	}
	if d.expanding == nil {
		d.expanding = map[*yaml.Node]bool{}
	}
	d.expanding[n] = true
	defer delete(d.expanding, n)
	seen := map[string]int{}
	var merged []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k.Line, path, "has a key that is a %s; keys are plain strings", kindName(k))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.merge(v, path)...)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k.Line, keyPath(path, k.Value), "set twice (also on line %d); keep one", first)
			continue
		}
		seen[k.Value] = k.Line
		entries = append(entries, entry{key: k.Value, line: k.Line, val: v})
	}
	for _, m := range merged {
		if _, dup := seen[m.key]; !dup {
			seen[m.key] = m.line
			entries = append(entries, m)
		}
	}
	return entries, true
}

// merge returns the entries a merge key's value contributes: one mapping, or
// a list of mappings of which earlier ones win.
func (d *decoder) merge(v *yaml.Node, path string) []entry {
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		return d.mergeOne(v, path)
	}
	var out []entry
	have := map[string]bool{}
	for _, m := range v.Content {
		es := d.mergeOne(m, path)
		for _, e := range es {
			if !have[e.key] {
				have[e.key] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// mergeOne returns the entries of one merged mapping, reading each mapping
// once however many times it is merged (its problems are reported once).
func (d *decoder) mergeOne(m *yaml.Node, path string) []entry {
	m = deref(m)
	if es, ok := d.merged[m]; ok {
		return es
	}
	es, _ := d.mapping(m, path)
	if d.merged == nil {
		d.merged = map[*yaml.Node][]entry{}
	}
	d.merged[m] = es
	return es
}

// resolve turns what the file says into what the pipeline uses: relative
// paths become absolute against the config directory, and ${NAME} in the
// target URL is expanded from the environment.
func (d *decoder) resolve(c *Config) {
	d.resolveSource(&c.Source)
	if c.Target.URL == "" {
		return
	}
	u, err := expandEnv(c.Target.URL, os.LookupEnv)
	if err != nil {
		d.errorf(d.lines["target.url"], "target.url", "%v", err)
		return
	}
	// A relative SQLite path is relative to the config file, like source
	// paths; "sqlite://" + "/abs/path" is the absolute form.
	if rest, ok := strings.CutPrefix(u, "sqlite://"); ok && d.baseDir != "" && rest != "" && !strings.HasPrefix(rest, "/") {
		u = "sqlite://" + filepath.ToSlash(filepath.Join(d.baseDir, rest))
	}
	c.Target.URL = u
}

// resolveSource makes the relative file names of the source type's path
// keys absolute against the config directory, and expands ${NAME} in its
// env keys.
func (d *decoder) resolveSource(s *Source) {
	for _, k := range fullSourceSection().keys {
		v, ok := s.Raw[k.name]
		if !ok || k.only == nil {
			continue
		}
		key := keyPath("source", k.name)
		if k.path && d.baseDir != "" {
			switch v := v.(type) {
			case string:
				s.Set(k.name, d.absPath(v, false))
			case []string:
				s.Set(k.name, d.absPaths(v))
			case [][]string:
				l := make([][]string, len(v))
				for i, part := range v {
					l[i] = d.absPaths(part)
				}
				s.Set(k.name, l)
			}
		}
		if v, isString := v.(string); k.env && isString && v != "" {
			x, err := expandEnv(v, os.LookupEnv)
			if err != nil {
				d.errorf(d.lines[key], key, "%v", err)
				continue
			}
			s.Set(k.name, x)
		}
	}
}

// absPaths returns the entries of a list of files absolute, but for "-"
// (standard input).
func (d *decoder) absPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = d.absPath(p, true)
	}
	return out
}

// absPath returns p joined to the config directory when it is relative;
// "" stays, and so does "-" in a list (standard input).
func (d *decoder) absPath(p string, inList bool) string {
	if p == "" || (inList && p == "-") || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.baseDir, p)
}

// deref follows YAML aliases (*name) to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "mapping"
	case n.Kind == yaml.SequenceNode:
		return "list"
	case n.Kind == yaml.ScalarNode:
		return "single value"
	}
	return "document"
}
