package config

// tables[].columns: the target table's columns declared in the file, for
// formats whose records carry no types. Decoded here from its list of
// mappings and checked against the entry's other keys; the engine
// creates the table from it (engine.Declaration).

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/schema/coltype"
	"go.yaml.in/yaml/v3"
)

// columnsDoc is tables[].columns's description.
const columnsDoc = "The target table's columns, in order, from which `schema.create: missing` creates it and " +
	"`txsink schema` prints its statement: each a mapping of `name`, `type`, `null` and `default`. `type` is " +
	"MySQL's spelling (`bigint`, `int unsigned`, `varchar(255)`, `decimal(10,2)`, `datetime(6)`, `json`, " +
	"`enum('a','b')`), which each target maps as it maps Canal's `mysqlType` ([schema](schema.md) has the table); " +
	"inside a `{...}` mapping quote a type holding a comma (`type: \"decimal(10,2)\"`). `null: false` makes the " +
	"column NOT NULL; the others take NULL, but for the key columns, which are NOT NULL. `default` is the " +
	"column's DEFAULT, converted for its type as a value is (a value it cannot hold refuses the table, " +
	"which `txsink check` and `txsink schema` show). The declaration is the whole table: the entry sets " +
	"`primary-key` (or `append-only: true`), and its key columns, its `version-column` and its soft-delete " +
	"column are among the declared ones. A missing table is created from it whatever the format: it wins " +
	"over the types the records declare (Debezium's schema envelope, Canal's `mysqlType`), and it is how " +
	"formats that carry no types (maxwell-json, ogg-json, flink-changelog-json, txsink-json without `types`, Debezium " +
	"without the envelope) get a table created. With a pattern (`inventory.*`) every table the entry " +
	"routes is created with the same columns. A type txsink does not know, a column declared twice and a " +
	"key column not declared are refused when the file is loaded. An existing table is not compared with " +
	"it, and a column a change carries that it lacks follows `schema.evolve` as on any table (`add-columns` " +
	"takes the type from the record, so formats without types refuse it, naming the column)."

// columnFields are the keys of one tables[].columns entry.
var columnFields = []string{"name", "type", "null", "default"}

// columns decodes the list of column mappings n at key.
func (d *decoder) columns(n *yaml.Node, key string) []Column {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, key, "is a %s; write a list of columns, each a mapping such as {name: id, type: bigint}", kindName(n))
		return nil
	}
	cols := make([]Column, 0, len(n.Content))
	d.items(n, key, func(ik string, item *yaml.Node) {
		if item.Kind != yaml.MappingNode {
			d.errorf(item.Line, ik, "is a %s; write a mapping such as {name: id, type: bigint}", kindName(item))
			return
		}
		entries, _ := d.mapping(item, ik)
		var c Column
		var unknown []entry
		for _, e := range entries {
			fk := keyPath(ik, e.key)
			v := deref(e.val)
			d.lines[fk] = v.Line
			if v.Kind != yaml.ScalarNode {
				d.errorf(v.Line, fk, "is a %s, not a single value", kindName(v))
				continue
			}
			switch e.key {
			case "name":
				c.Name = scalarText(v)
			case "type":
				c.Type = scalarText(v)
			case "null":
				switch strings.ToLower(v.Value) {
				case "true", "false":
					b := strings.EqualFold(v.Value, "true")
					c.Null = &b
				default:
					d.errorf(v.Line, fk, "%q is not a boolean; set it to true or false", v.Value)
				}
			case "default":
				if !isNull(v) {
					s := v.Value
					c.Default = &s
				}
			default:
				unknown = append(unknown, e)
			}
		}
		for _, e := range unknown {
			if strings.Contains(e.key, ")") && unclosed(c.Type) {
				// The rest of a type YAML cut at its comma: the type's
				// own refusal says to quote it.
				continue
			}
			msg := "unknown key; the keys of a column are " + strings.Join(columnFields, ", ")
			if s := suggest(e.key, columnFields); s != "" {
				msg = fmt.Sprintf("unknown key; did you mean %q?", s)
			}
			d.errorf(e.line, keyPath(ik, e.key), "%s", msg)
		}
		cols = append(cols, c)
	})
	return cols
}

// scalarText is a scalar's text, "" for null.
func scalarText(v *yaml.Node) string {
	if isNull(v) {
		return ""
	}
	return v.Value
}

// columns checks tables entry t's declared columns (at path "tables[i]")
// against each other and against its key, version column and delete rule.
func (v *validator) columns(path string, t *Table) {
	if len(t.Columns) == 0 {
		return
	}
	key := path + ".columns"
	declared := map[string]int{}
	var names []string
	for j, c := range t.Columns {
		ck := fmt.Sprintf("%s[%d]", key, j)
		name := strings.TrimSpace(c.Name)
		switch {
		case name == "":
			v.add(ck+".name", "missing; set it to the column's name")
		case name != c.Name:
			v.add(ck+".name", fmt.Sprintf("%q has white space at an end; write the name as the target spells it", c.Name))
		default:
			if first, dup := declared[strings.ToLower(name)]; dup {
				v.add(ck+".name", fmt.Sprintf("column %q is declared again (first as columns[%d]); declare each column once", name, first))
			} else {
				declared[strings.ToLower(name)] = j
				names = append(names, name)
			}
		}
		if msg := columnTypeProblem(c.Type); msg != "" {
			v.add(ck+".type", msg)
		}
		if c.Null != nil && *c.Null && isKeyColumn(t.PrimaryKey, name) {
			v.add(ck+".null", fmt.Sprintf("column %q is a primary-key column, which takes no NULL; remove null: true", name))
		}
	}
	has := func(col string) bool { _, ok := declared[strings.ToLower(strings.TrimSpace(col))]; return ok }
	list := strings.Join(names, ", ")
	if len(t.PrimaryKey) == 0 && !t.AppendOnly {
		v.add(key, "declares the whole table, its key too: set primary-key to its key columns (or append-only: true for a table that only receives inserts)")
	}
	for j, k := range t.PrimaryKey {
		if strings.TrimSpace(k) != "" && !has(k) {
			v.add(fmt.Sprintf("%s.primary-key[%d]", path, j), fmt.Sprintf("column %q is not among the declared columns (%s); declare it in columns, or correct primary-key", k, list))
		}
	}
	if vc := t.VersionColumn; vc != "" && !has(vc) {
		v.add(path+".version-column", fmt.Sprintf("column %q is not among the declared columns (%s); declare it in columns", vc, list))
	}
	if soft, _ := t.DeleteRule(); soft != "" && !has(soft) {
		v.add(path+".delete", fmt.Sprintf("the soft-delete column %q is not among the declared columns (%s); declare it in columns", soft, list))
	}
}

// columnTypeProblem says what is wrong with a declared column type, ""
// when ParseMySQL reads it.
func columnTypeProblem(typ string) string {
	const want = "write a MySQL column type such as bigint, varchar(255), decimal(10,2) or datetime(6)"
	if strings.TrimSpace(typ) == "" {
		return "missing; " + want
	}
	t := coltype.ParseMySQL(typ)
	if t.Kind != coltype.Unsupported {
		return ""
	}
	msg := fmt.Sprintf("%q: %s; %s", typ, t.Why, want)
	if unclosed(typ) {
		// In a flow mapping, {name: p, type: decimal(10,2)}, YAML ends
		// the value at the comma.
		msg += " (inside {...} quote a type that holds a comma: type: \"decimal(10,2)\")"
	}
	return msg
}

// unclosed reports a type with more opening parentheses than closing ones.
func unclosed(typ string) bool { return strings.Count(typ, "(") > strings.Count(typ, ")") }

func isKeyColumn(key []string, name string) bool {
	for _, k := range key {
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return true
		}
	}
	return false
}
