package starrocksfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

func (r *loadResult) tooManyFiltered() bool {
	return len(r.errors) > 0 && float64(len(r.errors)) > r.maxRatio*float64(r.total)
}

// loadResult is a parsed load body.
type loadResult struct {
	ops      []rowOp
	errors   []string // one line per filtered row, for the error log
	total    int64
	maxRatio float64
}

// parseLoad reads a load body for table t under the load's headers.
func parseLoad(t *Table, h http.Header, body []byte) (loadResult, error) {
	var res loadResult
	if s := h.Get("max_filter_ratio"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r < 0 || r > 1 {
			return res, fmt.Errorf("max_filter_ratio %q is not a number from 0 to 1", s)
		}
		res.maxRatio = r
	}
	strict := strings.EqualFold(h.Get("strict_mode"), "true")
	var names []string
	if s := h.Get("columns"); s != "" {
		for _, n := range strings.Split(s, ",") {
			n = strings.Trim(strings.TrimSpace(n), "`")
			if strings.ContainsAny(n, "=()") {
				return res, fmt.Errorf("columns %q: the fake takes only column names, not expressions", s)
			}
			if _, ok := t.column(n); !ok && n != "__op" {
				return res, fmt.Errorf("columns: unknown column %s in table %s", n, t.Name)
			}
			names = append(names, n)
		}
	}
	hasOp := false
	for _, n := range names {
		hasOp = hasOp || n == "__op"
	}
	if hasOp && t.Model != PrimaryKeys {
		return res, fmt.Errorf("table %s is a %s table: only a Primary Key table takes __op (deletes)", t.Name, t.Model)
	}
	mode, err := parseMode(t, h, names)
	if err != nil {
		return res, err
	}
	var records []map[string][]byte
	var texts []string
	switch format := strings.ToLower(h.Get("format")); format {
	case "json":
		var raws []json.RawMessage
		if strings.EqualFold(h.Get("strip_outer_array"), "true") {
			if err := json.Unmarshal(body, &raws); err != nil {
				return res, fmt.Errorf("the body is not a JSON array (strip_outer_array: true): %v", err)
			}
		} else {
			dec := json.NewDecoder(bytes.NewReader(body))
			for dec.More() {
				var m json.RawMessage
				if err := dec.Decode(&m); err != nil {
					return res, fmt.Errorf("the body is not JSON: %v", err)
				}
				raws = append(raws, m)
			}
		}
		for _, raw := range raws {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return res, fmt.Errorf("a JSON record is not an object: %s", raw)
			}
			rec := map[string][]byte{}
			for k, v := range obj {
				if names != nil && !contains(names, k) || names == nil && k == "__op" {
					continue // __op counts only when columns names it
				}
				rec[k] = v
			}
			records = append(records, rec)
			texts = append(texts, string(raw))
		}
	case "", "csv":
		sep := h.Get("column_separator")
		if sep == "" {
			sep = "\t"
		}
		cols := names
		if cols == nil {
			for _, c := range t.Columns {
				cols = append(cols, c.Name)
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
			if line == "" && len(body) == 0 {
				break
			}
			fields := strings.Split(line, sep)
			res.total++
			if len(fields) != len(cols) {
				res.errors = append(res.errors, fmt.Sprintf("Error: Value count does not match column count. Expect %d, but got %d. Row: %s", len(cols), len(fields), line))
				continue
			}
			rec := map[string][]byte{}
			for i, c := range cols {
				if fields[i] != `\N` {
					rec[c] = []byte(fields[i])
				}
			}
			op, reason := buildRow(t, rec, true, strict, nil, mode)
			if reason != "" {
				res.errors = append(res.errors, "Error: "+reason+". Row: "+line)
				continue
			}
			res.ops = append(res.ops, op)
		}
		return res, nil
	default:
		return res, fmt.Errorf("format %q: the fake reads json and csv", format)
	}
	for i, rec := range records {
		res.total++
		op, reason := buildRow(t, rec, false, strict, names, mode)
		if reason != "" {
			res.errors = append(res.errors, "Error: "+reason+". Row: "+texts[i])
			continue
		}
		res.ops = append(res.ops, op)
	}
	return res, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// parseMode reads a load's merge_condition and partial_update headers
// ("Change data through loading": conditional updates and partial updates
// in row mode, both of Primary Key tables only; the condition names a
// column that is not a key column). names is the columns header, which a
// partial update needs, holding every key column. nil: a plain load.
func parseMode(t *Table, h http.Header, names []string) (*loadMode, error) {
	cond := strings.Trim(strings.TrimSpace(h.Get("merge_condition")), "`")
	partial := false
	switch p := strings.ToLower(h.Get("partial_update")); p {
	case "", "false":
	case "true":
		partial = true
	default:
		return nil, fmt.Errorf("partial_update %q is not true or false", p)
	}
	if m := h.Get("partial_update_mode"); m != "" && !strings.EqualFold(m, "row") {
		return nil, fmt.Errorf("partial_update_mode %q: the fake has row mode only", m)
	}
	if cond == "" && !partial {
		return nil, nil
	}
	if t.Model != PrimaryKeys {
		return nil, fmt.Errorf("table %s is a %s table: merge_condition and partial_update apply to Primary Key tables only", t.Name, t.Model)
	}
	mode := &loadMode{}
	if cond != "" {
		i, ok := t.column(cond)
		if !ok {
			return nil, fmt.Errorf("merge_condition: table %s has no column %s", t.Name, cond)
		}
		if t.Columns[i].Key {
			return nil, fmt.Errorf("merge_condition: %s is a key column of %s; the condition is a column that is not in the primary key", cond, t.Name)
		}
		mode.cond = t.Columns[i].Name
	}
	if partial {
		if names == nil {
			return nil, fmt.Errorf("partial_update: true needs a columns header naming the columns to update")
		}
		mode.set = make([]bool, len(t.Columns))
		for _, n := range names {
			if i, ok := t.column(n); ok {
				mode.set[i] = true
			}
		}
		for i, c := range t.Columns {
			if c.Key && !mode.set[i] {
				return nil, fmt.Errorf("partial_update: the columns header lacks key column %s of %s", c.Name, t.Name)
			}
		}
		if i, ok := t.column(cond); cond != "" && ok && !mode.set[i] {
			return nil, fmt.Errorf("partial_update: the columns header lacks the merge_condition column %s", cond)
		}
	}
	return mode, nil
}

// fill is the value a partial update gives a column it does not carry in
// a row not stored: its DEFAULT, else NULL, else — a NOT NULL column
// without a DEFAULT — the type's zero, as the documentation's example
// shows for an INT (0); strings take "" and BOOLEAN false. Other types
// have no documented zero: the row is filtered.
func fill(c *Column) (any, string) {
	if c.Default != nil {
		return convert(c, []byte(*c.Default), true)
	}
	if c.Nullable {
		return nil, ""
	}
	switch c.Type {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT", "DOUBLE", "DECIMAL":
		return 0, ""
	case "CHAR", "VARCHAR":
		return "", ""
	}
	return nil, fmt.Sprintf("column %s (%s NOT NULL, no DEFAULT) is not in the partial update, and the fake knows no zero %s", c.Name, c.Type, c.Type)
}

// buildRow converts one record, or says why its row is filtered. A column
// the columns header (listed) leaves out takes its DEFAULT; in a partial
// update (mode.set) it is not the load's, and takes fill's value should
// the row not be stored.
func buildRow(t *Table, rec map[string][]byte, text, strict bool, listed []string, mode *loadMode) (rowOp, string) {
	op := rowOp{mode: mode}
	if raw, ok := rec["__op"]; ok {
		switch strings.Trim(string(raw), `"`) {
		case "0":
		case "1":
			op.del = true
		default:
			return op, fmt.Sprintf("__op is %s, not 0 (upsert) or 1 (delete)", raw)
		}
	}
	op.vals = make([]any, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		if op.del && !c.Key {
			continue // a delete needs only the key
		}
		if mode != nil && mode.set != nil && !mode.set[i] {
			v, reason := fill(c)
			if reason != "" {
				return op, reason
			}
			op.vals[i] = v
			continue
		}
		raw, present := rec[c.Name]
		if !present {
			raw = nil
		}
		asText := text
		if listed != nil && !contains(listed, c.Name) && c.Default != nil {
			raw, asText = []byte(*c.Default), true
		}
		v, reason := convert(c, raw, asText)
		if reason != "" {
			if strict {
				return op, fmt.Sprintf("column %s: %s", c.Name, reason)
			}
			v = nil // without strict mode an unqualified value becomes NULL
		}
		if v == nil && !c.Nullable {
			return op, fmt.Sprintf("column %s is NOT NULL and the value is NULL", c.Name)
		}
		op.vals[i] = v
	}
	return op, ""
}
