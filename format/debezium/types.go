package debezium

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/txsink/txsink/schema/coltype"
)

// The logical type names txsink reads types from but does not convert
// values of (their JSON already says what they are).
const (
	logicalZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	logicalJSON           = "io.debezium.data.Json"
	logicalUUID           = "io.debezium.data.Uuid"
	logicalEnum           = "io.debezium.data.Enum"
	logicalBits           = "io.debezium.data.Bits"
	logicalYear           = "io.debezium.time.Year"
	geometryPrefix        = "io.debezium.data.geometry."
)

// The parameters a connector with column.propagate.source.type writes.
const (
	paramSourceType   = "__debezium.source.column.type"
	paramSourceLength = "__debezium.source.column.length"
	paramSourceScale  = "__debezium.source.column.scale"
)

// DeclaresTypes reports true (format.TypeDeclarer): a record with the
// schema envelope declares its table's types; one without declares none.
func (d *Decoder) DeclaresTypes() bool { return true }

// tableTypes returns the table an image's Connect struct declares: each
// field's type (see columnType) and optionality. The key is not in a
// value's schema; the tables entry's primary-key gives it.
func tableTypes(fields []connectSchema) *coltype.Table {
	t := &coltype.Table{From: "the Kafka Connect schema", Columns: make([]coltype.Column, len(fields))}
	for i, f := range fields {
		t.Columns[i] = coltype.Column{Name: f.Field, Type: columnType(f), Nullable: f.Optional}
	}
	return t
}

// columnType maps a Connect field's type and logical name to a column
// type, refined by the source's own type when the connector propagates it
// (VARCHAR(n), DECIMAL(p,s), unsigned integers).
func columnType(f connectSchema) coltype.Type {
	t := coltype.Type{Source: f.Type}
	if f.Name != "" {
		t.Source = f.Name
	}
	switch f.Name {
	case logicalDecimal:
		t.Kind = coltype.Decimal
		t.Scale, _ = strconv.Atoi(param(f, "scale"))
		t.Precision, _ = strconv.Atoi(param(f, "connect.decimal.precision"))
	case logicalVarDecimal:
		t.Kind, t.Scale = coltype.Decimal, coltype.VariableScale
	case logicalDate, logicalConnectDate:
		t.Kind = coltype.Date
	case logicalTimestamp, logicalConnectTimestmp:
		t.Kind, t.Frac = coltype.DateTime, 3
	case logicalMicroTimestamp, logicalNanoTimestamp:
		t.Kind, t.Frac = coltype.DateTime, coltype.MaxFrac
	case logicalZonedTimestamp:
		t.Kind, t.Frac = coltype.Timestamp, coltype.MaxFrac
	case logicalTime, logicalConnectTime:
		t.Kind, t.Frac = coltype.Time, 3
	case logicalMicroTime, logicalNanoTime:
		t.Kind, t.Frac = coltype.Time, coltype.MaxFrac
	case logicalJSON:
		t.Kind = coltype.JSON
	case logicalUUID:
		t.Kind = coltype.UUID
	case logicalEnum:
		t.Kind = coltype.Enum
		if allowed := param(f, "allowed"); allowed != "" {
			t.Values = strings.Split(allowed, ",")
		}
	case logicalBits:
		n, _ := strconv.Atoi(param(f, "length"))
		t.Kind, t.Length = coltype.Bytes, (n+7)/8
	case logicalYear:
		t.Kind, t.Bits = coltype.Int, 16
	default:
		if strings.HasPrefix(f.Name, geometryPrefix) {
			t.Kind, t.Why = coltype.Unsupported, "txsink does not create spatial columns"
			return t
		}
		t = connectBase(f, t)
	}
	refine(&t, f)
	return t
}

// connectBase maps a Connect type without a logical name txsink knows.
func connectBase(f connectSchema, t coltype.Type) coltype.Type {
	switch f.Type {
	case "boolean":
		t.Kind = coltype.Bool
	case "int8", "int16", "int32", "int64":
		t.Kind = coltype.Int
		t.Bits, _ = strconv.Atoi(f.Type[3:])
	case "float", "float32": // JsonConverter writes "float" and "double"
		t.Kind, t.Bits = coltype.Float, 32
	case "double", "float64":
		t.Kind, t.Bits = coltype.Float, 64
	case "string":
		t.Kind = coltype.String
	case "bytes":
		t.Kind = coltype.Bytes
	default:
		t.Kind, t.Why = coltype.Unsupported, "Connect type "+strconv.Quote(f.Type)+" has no column type"
	}
	return t
}

// refine narrows t by the source type the connector propagates
// (column.propagate.source.type): a string's length, a decimal's precision
// and scale, an integer's signedness. A source type that contradicts the
// Connect type is ignored: the values are what the Connect type says.
func refine(t *coltype.Type, f connectSchema) {
	src := strings.ToUpper(param(f, paramSourceType))
	if src == "" {
		return
	}
	length, lerr := strconv.Atoi(param(f, paramSourceLength))
	scale, serr := strconv.Atoi(param(f, paramSourceScale))
	base := strings.TrimSpace(strings.TrimSuffix(src, "UNSIGNED"))
	t.Source = strings.ToLower(base)
	if lerr == nil {
		t.Source += "(" + strconv.Itoa(length)
		if serr == nil {
			t.Source += "," + strconv.Itoa(scale)
		}
		t.Source += ")"
	}
	if base != src {
		t.Source += " unsigned"
	}
	switch {
	case t.Kind == coltype.String && lerr == nil && length > 0 && length < 1<<24 &&
		(base == "VARCHAR" || base == "CHAR" || base == "CHARACTER VARYING" || base == "CHARACTER" || base == "BPCHAR" || base == "NVARCHAR" || base == "NCHAR"):
		t.Length, t.Fixed = length, base == "CHAR" || base == "CHARACTER" || base == "BPCHAR" || base == "NCHAR"
	case t.Kind == coltype.Decimal && t.Scale != coltype.VariableScale && lerr == nil && length > 0 && (base == "DECIMAL" || base == "NUMERIC"):
		t.Precision = length
	case t.Kind == coltype.Int && strings.HasSuffix(src, "UNSIGNED"):
		// Debezium widens an unsigned integer to the next Connect type
		// (INT UNSIGNED arrives as int64): the source's width is exact.
		t.Unsigned = true
		switch base {
		case "TINYINT":
			t.Bits = 8
		case "SMALLINT":
			t.Bits = 16
		case "MEDIUMINT":
			t.Bits = 24
		case "INT", "INTEGER":
			t.Bits = 32
		case "BIGINT":
			t.Bits = 64
		}
	}
}

// param returns a Connect parameter's text ("" when absent). Connect
// writes parameters as strings; a number is taken too.
func param(f connectSchema, name string) string {
	raw, ok := f.Parameters[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}
