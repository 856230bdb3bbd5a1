package coltype

import "strings"

// ParsePostgres reads a PostgreSQL column type as format_type(atttypid,
// atttypmod) writes it ("integer", "numeric(10,2)", "character
// varying(255)", "timestamp(3) without time zone", "jsonb"), the form the
// postgres source declares its tables' columns in. A type it does not know
// (an array, a domain, an enum or another type of the user's, a geometry,
// an interval) is Unsupported, with Why saying so; it never guesses.
//
// numeric without a precision holds values of any scale (VariableScale);
// text and character varying without a length are unbounded; a time or
// timestamp without a precision has PostgreSQL's 6 digits; "time with
// time zone" has no column type elsewhere and is refused.
func ParsePostgres(s string) Type {
	t := Type{Source: s}
	base := strings.ToLower(strings.TrimSpace(s))
	var args string
	if i := strings.IndexByte(base, '('); i >= 0 {
		end := closing(base[i+1:])
		if end < 0 {
			return unsupported(t, "its parentheses are not closed")
		}
		args = base[i+1 : i+1+end]
		base = strings.TrimSpace(base[:i] + base[i+1+end+1:])
	}
	if strings.HasSuffix(base, "[]") {
		return unsupported(t, "txsink does not create array columns")
	}
	nums, numsOK := ints(args)
	if args != "" && !numsOK {
		return unsupported(t, "its parameters are not numbers")
	}
	num := func(i, def int) int {
		if i < len(nums) {
			return nums[i]
		}
		return def
	}
	frac := func(k Kind) Type {
		t.Kind, t.Frac = k, num(0, MaxFrac)
		if t.Frac < 0 || t.Frac > MaxFrac {
			return unsupported(t, "its fractional-second precision is not 0 to 6")
		}
		return t
	}
	if k, ok := pgPlain[base]; ok {
		t.Kind, t.Bits = k.kind, k.bits
		return t
	}
	switch base {
	case "numeric":
		t.Kind = Decimal
		if len(nums) == 0 {
			t.Scale = VariableScale
			return t
		}
		t.Precision, t.Scale = num(0, 0), num(1, 0)
		if t.Scale < 0 || t.Scale > t.Precision {
			// PostgreSQL 15 allows a negative scale or one above the
			// precision; no other target does.
			return unsupported(t, "its scale is not 0 to its precision")
		}
		return t
	case "text", "character varying":
		t.Kind, t.Length = String, num(0, 0)
		return t
	case "character":
		t.Kind, t.Length, t.Fixed = String, num(0, 1), true
		return t
	case "time without time zone":
		return frac(Time)
	case "timestamp without time zone":
		return frac(DateTime)
	case "timestamp with time zone":
		return frac(Timestamp)
	case "time with time zone":
		return unsupported(t, "no other target has a time of day with a time zone")
	case "point", "line", "lseg", "box", "path", "polygon", "circle", "geometry", "geography":
		return unsupported(t, "txsink does not create spatial columns")
	}
	return unsupported(t, "txsink does not know this PostgreSQL type")
}

// pgPlain are the PostgreSQL types that take no parameters, by kind and
// width.
var pgPlain = map[string]struct {
	kind Kind
	bits int
}{
	"boolean": {Bool, 0}, "smallint": {Int, 16}, "integer": {Int, 32}, "bigint": {Int, 64},
	"real": {Float, 32}, "double precision": {Float, 64},
	"bytea": {Bytes, 0}, "date": {Date, 0}, "json": {JSON, 0}, "jsonb": {JSON, 0}, "uuid": {UUID, 0},
}
