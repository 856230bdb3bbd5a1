package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/schema"
)

// validator collects the problems of a Config.
type validator struct {
	file string
	// sourceType is source.type, which decides the source keys that apply.
	sourceType string
	lines      map[string]int  // key path → line, from the decoder; nil for a Config built in Go
	skip       map[string]bool // keys the decoder already reported; not reported twice
	errs       ErrorList
}

// validate checks c. lines and skip come from the decoder (nil for a Config
// built in Go).
func (c *Config) validate(file string, lines map[string]int, skip map[string]bool) ErrorList {
	v := &validator{file: file, lines: lines, skip: skip, sourceType: c.Source.Type}
	v.keys(c, &topSection, "")
	v.keys(&c.Source, &sourceSection, "source")
	v.kafka(c)
	v.postgres(c)
	v.keys(&c.Target, &targetSection, "target")
	v.keys(&c.Sink, &sinkSection, "sink")
	v.files(&c.Source)
	for k := range c.Source.FormatOptions {
		if k == "" {
			v.add("source.format-options", "has an empty option name; remove it")
		}
	}
	v.tables(c.Tables)
	return v.errs
}

// kafka checks the kafka keys that depend on each other.
func (v *validator) kafka(c *Config) {
	s := &c.Source
	if s.Type != SourceKafka {
		return
	}
	if s.TransactionTopic != "" {
		if !c.Sink.TxnEnabled {
			v.add("source.transaction-topic", "joins transactions across topics, which needs sink.transaction.multi-table.enabled: true; set it")
		}
		if s.Format != "" && s.Format != "debezium-json" {
			v.add("source.transaction-topic", fmt.Sprintf("is Debezium's; format %s has no transaction topic; remove it", s.Format))
		}
		if c.BadInput == BadInputDeadLetter {
			v.add("source.transaction-topic", "cannot be combined with bad-input: dead-letter yet: a transaction joined across topics is applied whole or stops the pipeline; set bad-input: fail")
		}
		if slices.Contains(s.Topics, s.TransactionTopic) {
			v.add("source.transaction-topic", "is also in source.topics; list only the data topics there")
		}
	}
	switch {
	case len(s.Topics) == 0 && s.TopicRegex == "":
		v.add("source.topics", "missing; set it to the topics to read, or set source.topic-regex")
	case len(s.Topics) > 0 && s.TopicRegex != "":
		v.add("source.topic-regex", "is set together with source.topics; keep one of them")
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		v.add("source.tls-cert", "source.tls-cert and source.tls-key go together; set both or neither")
	}
	if s.SASLMechanism != "" && (s.SASLUser == "" || s.SASLPassword == "") {
		v.add("source.sasl.mechanism", "needs source.sasl.user and source.sasl.password; set them")
	}
	if s.SASLMechanism == "" && (s.SASLUser != "" || s.SASLPassword != "") {
		v.add("source.sasl.user", "is set without source.sasl.mechanism; set it to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
}

// postgres checks what the postgres source needs of the other sections.
func (v *validator) postgres(c *Config) {
	if c.Source.Type != SourcePostgres {
		return
	}
	if !c.Sink.TxnEnabled {
		v.add("source.type", "postgres resumes only at source transaction boundaries (commit LSNs), which needs "+
			"sink.transaction.multi-table.enabled: true, so that only whole transactions are committed; set it")
	}
	if f := c.Source.Format; f != "" && f != "txsink-json" {
		v.add("source.format", fmt.Sprintf("is %s, but the postgres source writes txsink-json; set format: txsink-json", f))
	}
}

func (v *validator) add(key, msg string) {
	// A key whose value, or whose section, the decoder could not read holds
	// a default; its problem is already reported.
	for k := key; ; k = parentKey(k) {
		if v.skip[k] {
			return
		}
		if k == "" {
			break
		}
	}
	v.errs = append(v.errs, &Error{File: v.file, Line: v.line(key), Key: key, Msg: msg})
}

// line returns the line of key, or of its closest parent the file has: a
// missing key is reported at its section.
func (v *validator) line(key string) int {
	for k := key; k != ""; k = parentKey(k) {
		if l, ok := v.lines[k]; ok {
			return l
		}
	}
	return 0
}

// parentKey strips the last ".name" or "[i]" from a key path.
func parentKey(k string) string {
	if strings.HasSuffix(k, "]") {
		return k[:strings.LastIndexByte(k, '[')]
	}
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[:i]
	}
	return ""
}

// keys runs the required and range checks of the key table over one
// section.
func (v *validator) keys(sec any, def *sectionDef, path string) {
	for i := range def.keys {
		k := &def.keys[i]
		if k.aliasOf != "" {
			continue // checked through the key it is another spelling of
		}
		key := v.spelling(def, path, k)
		p := k.field(sec)
		// A missing source.type is reported already; the keys of the
		// common kind (file) still say what else is missing.
		applies := k.only == "" || k.only == v.sourceType || (v.sourceType == "" && k.only == SourceFile)
		if !applies {
			if (SourceTypes == nil || slices.Contains(SourceTypes(), v.sourceType)) && !isZero(p) {
				v.add(key, fmt.Sprintf("applies to source.type %s only, and this source is %s; remove it", k.only, v.sourceType))
			}
			continue
		}
		if k.required && isZero(p) {
			state := "missing"
			if _, ok := v.lines[key]; ok {
				state = "empty"
			}
			v.add(key, state+"; set it to "+k.wantText())
			continue
		}
		if k.check != nil {
			if msg := k.check(p); msg != "" {
				v.add(key, msg+"; set it to "+k.wantText())
			}
		}
	}
}

// spelling returns the key path the file used for k's field: k's own, or
// the alias the file wrote instead (buffer-flush.interval-ms).
func (v *validator) spelling(def *sectionDef, path string, k *keyDef) string {
	key := keyPath(path, k.name)
	if _, ok := v.lines[key]; ok {
		return key
	}
	for _, a := range def.keys {
		if a.aliasOf == k.name {
			if _, ok := v.lines[keyPath(path, a.name)]; ok {
				return keyPath(path, a.name)
			}
		}
	}
	return key
}

func isZero(p any) bool {
	switch p := p.(type) {
	case *string:
		return *p == ""
	case *[]string:
		return len(*p) == 0
	case *bool:
		return !*p
	case *int:
		return *p == 0
	case *int64:
		return *p == 0
	case *time.Duration:
		return *p == 0
	case *map[string]string:
		return len(*p) == 0
	case *[][]string:
		return len(*p) == 0
	}
	panic(fmt.Sprintf("config: isZero on %T", p))
}

// files checks source.paths and source.partitions: one of them, entries
// that are not empty, standard input alone in its partition and once, no
// path twice. Files that are the same under other spellings (links) are
// found when the pipeline opens them.
func (v *validator) files(s *Source) {
	if s.Type != SourceFile && s.Type != "" {
		return
	}
	switch {
	case len(s.Paths) > 0 && len(s.Partitions) > 0:
		v.add("source.partitions", "is set with source.paths; set one: paths for one partition (files read one after another), partitions for several read concurrently")
		return
	case len(s.Paths) == 0 && len(s.Partitions) == 0:
		state := "missing"
		if _, ok := v.lines["source.paths"]; ok {
			state = "empty"
		}
		v.add("source.paths", state+"; set it to a list of files read one after another, such as [day1.jsonl, day2.jsonl] (or set source.partitions)")
		return
	}
	stdin := ""
	seen := map[string]string{}
	for i, part := range s.FilePartitions() {
		pkey := "source.paths"
		if len(s.Partitions) > 0 {
			pkey = fmt.Sprintf("source.partitions[%d]", i)
			if len(part) == 0 {
				v.add(pkey, "empty; list the partition's files, or remove the entry")
			}
		}
		for j, p := range part {
			key := fmt.Sprintf("%s[%d]", pkey, j)
			switch {
			case strings.TrimSpace(p) == "":
				v.add(key, "empty; write a file path, or - for standard input")
			case p == "-":
				switch {
				case stdin != "":
					v.add(key, fmt.Sprintf("standard input (-) is listed again (first as %s); it can be read only once", stdin))
				case len(part) > 1:
					v.add(key, "standard input (-) is in a list of files; a stream cannot be one of a sequence: make it a partition of its own")
				default:
					stdin = key
				}
			default:
				c := filepath.Clean(p)
				if first, dup := seen[c]; dup {
					v.add(key, fmt.Sprintf("names the same file as %s; list each file once", first))
				} else {
					seen[c] = key
				}
			}
		}
	}
}

func (v *validator) tables(tables []Table) {
	if len(tables) == 0 {
		if _, ok := v.lines["tables"]; ok {
			v.add("tables", "empty; add at least one entry, such as \"- source: inventory.orders\"")
		} else {
			v.add("tables", "missing; add a list of at least one entry, such as \"tables: [{source: inventory.orders}]\"")
		}
		return
	}
	for i := range tables {
		t := &tables[i]
		path := fmt.Sprintf("tables[%d]", i)
		v.keys(t, &tableSection, path)
		v.tableSource(path+".source", t.Source)
		v.tableTarget(path+".target", t.Target)
		v.fixedRoute(path+".source", t)
		seen := map[string]int{}
		for j, col := range t.PrimaryKey {
			key := fmt.Sprintf("%s.primary-key[%d]", path, j)
			lc := strings.ToLower(col)
			if strings.TrimSpace(col) == "" {
				v.add(key, "empty; write a column name")
			} else if first, dup := seen[lc]; dup {
				v.add(key, fmt.Sprintf("column %q is listed again (first as primary-key[%d]); list each key column once", col, first))
			} else {
				seen[lc] = j
			}
		}
		if t.AppendOnly && len(t.PrimaryKey) > 0 {
			v.add(path+".append-only", "append-only tables are written with plain INSERTs and take no key; remove primary-key, or remove append-only to apply updates and deletes by that key")
		}
		if t.Source == "" {
			continue
		}
		for j := range i {
			if tables[j].Source != "" && covers(tables[j].Source, t.Source) {
				v.add(path+".source", fmt.Sprintf("is never used: tables[%d] (%q) comes first and matches every table this entry would; move this entry above it, or remove it",
					j, tables[j].Source))
				break
			}
		}
	}
}

func (v *validator) tableSource(key, pattern string) {
	if pattern == "" {
		return // reported as missing
	}
	ns, name, dotted := splitTableName(pattern)
	switch {
	case dotted && ns == "":
		v.add(key, fmt.Sprintf("%q has an empty database part; write database.table (or * for any database)", pattern))
	case name == "":
		v.add(key, fmt.Sprintf("%q has an empty table part; write database.table (or database.* for every table)", pattern))
	}
}

func (v *validator) tableTarget(key, target string) {
	if target == "" {
		return // the default: the source table's name
	}
	ns, name, dotted := splitTableName(target)
	switch {
	case hasWildcard(target):
		v.add(key, fmt.Sprintf("%q has a wildcard, but a target names one table; leave target out to keep each source table's name", target))
	case strings.Contains(name, "."):
		v.add(key, fmt.Sprintf("%q has more than one dot; write name or schema.name", target))
	case dotted && (ns == "" || name == ""):
		v.add(key, fmt.Sprintf("%q has an empty part; write name or schema.name", target))
	case schema.Reserved(name):
		v.add(key, fmt.Sprintf("%q is one of %s, which changes never write; name a table of your own", target, reservedTables))
	case dotted && schema.IdentProblem(ns) != "":
		v.add(key, fmt.Sprintf("%q: its schema part %s; %s", target, schema.IdentProblem(ns), plainName))
	case schema.IdentProblem(name) != "":
		v.add(key, fmt.Sprintf("%q: its table name %s; %s", target, schema.IdentProblem(name), plainName))
	}
}

// fixedRoute refuses an entry for one table, without target, whose
// table name a run would refuse as a target (see Table.Resolve): the run
// would stop at start-up, so the configuration is wrong already.
func (v *validator) fixedRoute(key string, t *Table) {
	if t.Target != "" || t.Source == "" || hasWildcard(t.Source) {
		return
	}
	ns, name, dotted := splitTableName(t.Source)
	if dotted && (ns == "" || name == "") {
		return // reported by tableSource
	}
	switch {
	case schema.Reserved(name):
		v.add(key, fmt.Sprintf("%q routes to %q, one of %s, which changes never write; set target: to a table of your own", t.Source, name, reservedTables))
	case schema.IdentProblem(name) != "":
		v.add(key, fmt.Sprintf("%q routes to a table named %q, which %s, and a target taken from the source's name must be one plain table name; set target: to name the target table",
			t.Source, name, schema.IdentProblem(name)))
	}
}

// plainName is what to do about a target name that is not plain.
const plainName = "write the name as the target's catalog spells it, without quotes (txsink quotes every identifier itself)"

// covers reports whether every table pattern b matches is matched by
// pattern a too, as far as simple reasoning tells: b without wildcards, or
// a whose part is all stars, or the same pattern. It is used to find table
// entries that can never be chosen because an earlier one always wins.
func covers(a, b string) bool {
	ans, aname, adotted := splitTableName(a)
	bns, bname, bdotted := splitTableName(b)
	if !adotted && bdotted {
		return false // a only matches tables without a namespace
	}
	return coversPart(ans, bns) && coversPart(aname, bname)
}

func coversPart(a, b string) bool {
	if a != "" && strings.Trim(a, "*") == "" {
		return true
	}
	if strings.EqualFold(a, b) {
		return true
	}
	return !hasWildcard(b) && globMatch(a, b)
}
