package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/source"
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
	src := fullSourceSection()
	v.keys(c, &topSection, "")
	v.keys(&c.Source, src, "source")
	v.raw(&c.Source, src)
	v.keys(&c.Target, &targetSection, "target")
	v.keys(&c.Sink, &sinkSection, "sink")
	v.keys(&c.Schema, &schemaSection, "schema")
	v.source(c)
	for k := range c.Source.FormatOptions {
		if k == "" {
			v.add("source.format-options", "has an empty option name; remove it")
		}
	}
	v.tables(c.Tables)
	for i := range c.Tables {
		if msg := c.HistoryRefused(&c.Tables[i]); msg != "" {
			v.add(fmt.Sprintf("tables[%d].mode", i), msg)
		}
	}
	return v.errs
}

// HistoryRefused returns why entry t, a history entry (Table.IsHistory),
// cannot be written to c's target, "" when it can or t is none. A
// StarRocks target refuses it: its history would be a Duplicate Key
// table load, which txsink does not make.
func (c *Config) HistoryRefused(t *Table) string {
	if !t.IsHistory() || c.Target.Kind() != "starrocks" {
		return ""
	}
	return "history tables (mode: history) are not written to StarRocks: a history table would be a Duplicate Key table load, which txsink does not make; " +
		"write the history to a MySQL/MariaDB, PostgreSQL or SQLite target, or remove mode: history"
}

// checkedType is the source type whose keys apply: source.type, or, when
// it is missing (reported already), the first type by name, so that its
// keys still say what else is missing.
func (v *validator) checkedType() string {
	if v.sourceType == "" {
		if names := known(SourceTypes); len(names) > 0 {
			return names[0]
		}
	}
	return v.sourceType
}

// source runs the checks of the source type's keys that depend on each
// other and on the pipeline (source.Validator).
func (v *validator) source(c *Config) {
	d, _ := keyed(v.checkedType())
	sv, ok := d.(source.Validator)
	if !ok {
		return
	}
	p := source.Pipeline{Format: c.Source.Format, Transactions: c.Sink.TxnEnabled, DeadLetter: c.BadInput == BadInputDeadLetter}
	for _, pr := range sv.Validate(c.Source.Settings(), p) {
		key := keyPath("source", pr.Key)
		msg := pr.Msg
		if pr.Absent {
			state := "missing"
			if _, ok := v.lines[key]; ok {
				state = "empty"
			}
			msg = state + "; " + msg
		}
		v.add(key, msg)
	}
}

// raw refuses what Source.Raw holds that no key of the source type
// declares, and values of another Go type than their key's: mistakes only
// a Config built in Go can make.
func (v *validator) raw(s *Source, def *sectionDef) {
	d, keys := keyed(v.sourceType)
	if d == nil || keys == nil {
		return // unknown type (reported), or one that declares no keys
	}
	for _, name := range slices.Sorted(maps.Keys(s.Raw)) {
		key := keyPath("source", name)
		k := def.key(name)
		switch {
		case k == nil || k.only == nil:
			msg := "unknown key"
			if m := suggest(name, def.names()); m != "" {
				msg += fmt.Sprintf("; did you mean %q?", m)
			}
			v.add(key, msg)
		case s.Raw[name] != nil && reflect.TypeOf(s.Raw[name]) != k.value:
			v.add(key, fmt.Sprintf("holds a Go %T, not a %v; set it to %s", s.Raw[name], k.value, k.wantText()))
		}
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
		if k.only != nil && !slices.Contains(k.only, v.checkedType()) {
			if (SourceTypes == nil || slices.Contains(SourceTypes(), v.sourceType)) && !isZero(p) {
				v.add(key, fmt.Sprintf("applies to source.type %s only, and this source is %s; remove it", strings.Join(k.only, " or "), v.sourceType))
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
	case *[]Column:
		return len(*p) == 0
	}
	panic(fmt.Sprintf("config: isZero on %T", p))
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
		v.columns(path, t)
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
		if t.AppendOnly && (t.VersionColumn != "" || (t.Delete != "" && t.Delete != DeleteHard)) {
			v.add(path+".append-only", "append-only tables take inserts only, so version-column and delete have nothing to guard; remove them, or remove append-only")
		}
		if t.AppendOnly && len(t.PrimaryKey) > 0 {
			v.add(path+".append-only", "append-only tables are written with plain INSERTs and take no key; remove primary-key, or remove append-only to apply updates and deletes by that key")
		}
		v.historyEntry(path, t)
		v.historyUnnamed(path, t, tables)
		if t.Source == "" {
			continue
		}
		for j := range i {
			if !t.IsHistory() && t.Target != "" && tables[j].Target != "" && strings.EqualFold(tables[j].Target, t.Target) && tables[j].IsHistory() {
				v.add(path+".target", fmt.Sprintf("%q is the target of history entry tables[%d] too; a table is either applied by key or a history of changes, so name another table", t.Target, j))
				break
			}
			if t.IsHistory() && t.Target != "" && strings.EqualFold(tables[j].Target, t.Target) && (!tables[j].IsHistory() || covers(tables[j].Source, t.Source) || covers(t.Source, tables[j].Source)) {
				v.add(path+".target", fmt.Sprintf("%q is the target of tables[%d] too, which takes the same tables' changes; a history table takes one entry's rows, so name another table", t.Target, j))
				break
			}
			if t.IsHistory() || tables[j].IsHistory() {
				// A history entry never hides another entry, nor is
				// hidden: every history entry matching a table gets
				// its rows.
				continue
			}
			if tables[j].Source != "" && covers(tables[j].Source, t.Source) {
				v.add(path+".source", fmt.Sprintf("is never used: tables[%d] (%q) comes first and matches every table this entry would; move this entry above it, or remove it",
					j, tables[j].Source))
				break
			}
		}
	}
}

// historyEntry refuses, on a mode: history entry, the keys that have no
// meaning for a table every change is appended to.
func (v *validator) historyEntry(path string, t *Table) {
	if !t.IsHistory() {
		return
	}
	const why = "a history table (mode: history) gets a row of every change and has no key, so "
	if len(t.PrimaryKey) > 0 {
		v.add(path+".primary-key", why+"there is no key to reduce by; remove primary-key (the upsert entry of the same source takes it), or remove mode: history")
	}
	if t.AppendOnly {
		v.add(path+".append-only", why+"it is appended to already; remove append-only")
	}
	if t.VersionColumn != "" {
		v.add(path+".version-column", why+"no stored row is overwritten for a version to guard; remove version-column, or remove mode: history")
	}
	if t.Delete != "" {
		v.add(path+".delete", why+"a delete is a row of its own (__op D); remove delete, or remove mode: history")
	}
}

// historyUnnamed refuses a history entry without target whose tables
// an upsert entry without target matches too: both would write the
// table of the source table's name.
func (v *validator) historyUnnamed(path string, t *Table, tables []Table) {
	if !t.IsHistory() || t.Target != "" || t.Source == "" {
		return
	}
	for j := range tables {
		o := &tables[j]
		if !o.IsHistory() && o.Target == "" && o.Source != "" && (covers(o.Source, t.Source) || covers(t.Source, o.Source)) {
			v.add(path+".target", fmt.Sprintf("missing, and tables[%d] (%q) applies the same tables by key to the tables of their own names; name the history table with target:", j, o.Source))
			return
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
