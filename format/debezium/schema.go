package debezium

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/textcache"
	"github.com/txsink/txsink/schema/coltype"
)

// connectSchema is a Kafka Connect schema as JsonConverter writes it
// (schemas.enable=true). Only what txsink needs is read.
type connectSchema struct {
	Type       string                     `json:"type"`
	Name       string                     `json:"name"`
	Field      string                     `json:"field"`
	Optional   bool                       `json:"optional"`
	Default    json.RawMessage            `json:"default"`
	Fields     []connectSchema            `json:"fields"`
	Parameters map[string]json.RawMessage `json:"parameters"`
}

// image is the schema of one row image: its columns in schema order.
type image struct {
	cols []column
	// conv is set when some column needs a conversion; when it is not, rows
	// are used as decoded and the per-column lookup is skipped.
	conv bool
}

// rowSchema is what txsink keeps of an envelope's Connect schema: the
// column schemas of the before and after images, and the table they
// declare (nil when the schema has no image struct), which every change
// decoded with this schema points at.
type rowSchema struct {
	before, after image
	types         *coltype.Table
}

// parseSchema reads the Connect schema of a Debezium envelope. A schema
// without before/after structs (a transaction boundary's, say) gives a
// rowSchema with no columns: values then stay as JSON gave them.
func parseSchema(raw []byte) (*rowSchema, error) {
	var cs connectSchema
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, err
	}
	rs := &rowSchema{}
	for _, f := range cs.Fields {
		var img *image
		switch f.Field {
		case "before":
			img = &rs.before
		case "after":
			img = &rs.after
		default:
			continue
		}
		if f.Type != "struct" {
			continue
		}
		if rs.types == nil || f.Field == "after" {
			rs.types = tableTypes(f.Fields)
			declareDefaults(rs.types, f.Fields)
		}
		for _, c := range f.Fields {
			col := column{name: c.Field, conv: convFor(c.Type, c.Name), logical: c.Name}
			if col.logical == "" {
				col.logical = c.Type
			}
			if col.conv == convDecimal {
				scale, err := decimalScale(c.Parameters)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", c.Field, err)
				}
				col.scale = scale
			}
			if col.conv != convNone {
				img.conv = true
			}
			img.cols = append(img.cols, col)
		}
	}
	return rs, nil
}

// DeclaredColumns returns the columns the record's Kafka Connect schema
// declares for the after image (the before image's when it declares no
// after), and whether the record carries such a schema. Debezium writes
// every captured column of the table in its images' schema, so a column
// missing there is never sent.
func (d *Decoder) DeclaredColumns(data []byte) ([]string, bool) {
	var wrapper struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(data, &wrapper) != nil || len(wrapper.Schema) == 0 || string(wrapper.Schema) == "null" {
		return nil, false
	}
	rs, err := d.schemas.lookup(wrapper.Schema)
	if err != nil {
		return nil, false
	}
	img := &rs.after
	if len(img.cols) == 0 {
		img = &rs.before
	}
	if len(img.cols) == 0 {
		return nil, false
	}
	cols := make([]string, len(img.cols))
	for i, c := range img.cols {
		cols[i] = c.name
	}
	return cols, true
}

// decimalScale reads parameters.scale of a Decimal field. Connect writes
// parameters as strings ("2"); a number is accepted too.
func decimalScale(params map[string]json.RawMessage) (int, error) {
	raw, ok := params["scale"]
	if !ok {
		return 0, fmt.Errorf("%s has no parameters.scale", logicalDecimal)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		text = string(raw)
	}
	n, err := strconv.Atoi(text)
	if err != nil || n > maxScale || n < -maxScale {
		return 0, fmt.Errorf("%s parameters.scale %s is not an integer within ±%d", logicalDecimal, raw, maxScale)
	}
	return n, nil
}

// find returns the column called name, nil if the schema lacks it.
// Debezium writes the columns in schema order, so index i is tried first.
func (img *image) find(i int, name string) *column {
	if i < len(img.cols) && img.cols[i].name == name {
		return &img.cols[i]
	}
	for j := range img.cols {
		if img.cols[j].name == name {
			return &img.cols[j]
		}
	}
	return nil
}

// apply converts the values of row in place per the image schema.
func (img *image) apply(row *changelog.Row) error {
	if !img.conv {
		return nil
	}
	for i, name := range row.Names {
		c := img.find(i, name)
		if c == nil || c.conv == convNone || row.Values[i] == nil {
			continue
		}
		v, err := c.convert(row.Values[i])
		if err != nil {
			return fmt.Errorf("column %q (%s): %w", name, c.logical, err)
		}
		row.Values[i] = v
	}
	return nil
}

// maxCachedSchemas bounds the key caches (key.go), as textcache.DefaultMax
// bounds the schema cache.
const maxCachedSchemas = textcache.DefaultMax

// schemaCache remembers parsed schemas by their exact text. With the
// schema envelope every record repeats its schema (kilobytes, several times
// the row), so parsing it once per distinct text matters, and the schema
// the last record carried is passed over by a byte comparison. It is safe
// for concurrent use.
type schemaCache struct{ textcache.Cache[*rowSchema] }

// match reports whether data begins with the most recently used schema,
// and returns its length and parsed form (nil: it does not).
func (c *schemaCache) match(data []byte) (int, *rowSchema) {
	n, rs, _ := c.Match(data)
	return n, rs
}

// lookup returns the parsed form of the schema object raw, parsing it on
// first sight.
func (c *schemaCache) lookup(raw []byte) (*rowSchema, error) {
	return c.Lookup(raw, parseSchema)
}

// declareDefaults sets the Default of each of t's columns whose field
// declares one (Connect's "default"), converted as the field's values
// are: a Decimal's base64 bytes to its text, a Timestamp's milliseconds
// to a date-time. A default that does not read as the field's values do
// makes the declaration Invalid: no table is created with a default
// txsink cannot give exactly.
func declareDefaults(t *coltype.Table, fields []connectSchema) {
	for i, f := range fields {
		if len(f.Default) == 0 || string(f.Default) == "null" {
			continue
		}
		v, err := defaultValue(f)
		if err != nil {
			t.Invalid = fmt.Sprintf("field %q: its default %s: %v", f.Field, f.Default, err)
			return
		}
		t.Columns[i].Default = v
	}
}

// defaultValue decodes field f's default as a value of f.
func defaultValue(f connectSchema) (changelog.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(f.Default))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	var v changelog.Value
	switch x := raw.(type) {
	case json.Number, string, bool:
		v = x
	default:
		v = changelog.JSON(f.Default)
	}
	col := column{name: f.Field, conv: convFor(f.Type, f.Name), logical: f.Name}
	if col.conv == convDecimal {
		scale, err := decimalScale(f.Parameters)
		if err != nil {
			return nil, err
		}
		col.scale = scale
	}
	if col.conv == convNone {
		return v, nil
	}
	return col.convert(v)
}
