package debezium

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// conv says how a column's JSON value is turned into a changelog.Value when
// the record carries a Kafka Connect schema. Without a conversion the value
// is kept as JSON gave it.
type conv uint8

const (
	convNone       conv = iota
	convDecimal         // org.apache.kafka.connect.data.Decimal: base64 unscaled bytes, fixed scale
	convVarDecimal      // io.debezium.data.VariableScaleDecimal: {"scale": n, "value": base64}
	convBytes           // "bytes" with no decimal logical type: base64
	convDate            // days since 1970-01-01
	convTimestampMilli
	convTimestampMicro
	convTimestampNano
	convTimeMilli // since midnight
	convTimeMicro
	convTimeNano
)

// The Kafka Connect and Debezium logical type names txsink converts.
const (
	logicalDecimal         = "org.apache.kafka.connect.data.Decimal"
	logicalVarDecimal      = "io.debezium.data.VariableScaleDecimal"
	logicalDate            = "io.debezium.time.Date"
	logicalConnectDate     = "org.apache.kafka.connect.data.Date"
	logicalTimestamp       = "io.debezium.time.Timestamp"
	logicalMicroTimestamp  = "io.debezium.time.MicroTimestamp"
	logicalNanoTimestamp   = "io.debezium.time.NanoTimestamp"
	logicalConnectTimestmp = "org.apache.kafka.connect.data.Timestamp"
	logicalTime            = "io.debezium.time.Time"
	logicalMicroTime       = "io.debezium.time.MicroTime"
	logicalNanoTime        = "io.debezium.time.NanoTime"
	logicalConnectTime     = "org.apache.kafka.connect.data.Time"
)

// convFor returns the conversion for a field of Connect type typ with
// logical name name. Types that JSON already carries faithfully (integers,
// floats, strings, ZonedTimestamp, Json, Enum, ...) need none.
func convFor(typ, name string) conv {
	switch name {
	case logicalDecimal:
		return convDecimal
	case logicalVarDecimal:
		return convVarDecimal
	case logicalDate, logicalConnectDate:
		return convDate
	case logicalTimestamp, logicalConnectTimestmp:
		return convTimestampMilli
	case logicalMicroTimestamp:
		return convTimestampMicro
	case logicalNanoTimestamp:
		return convTimestampNano
	case logicalTime, logicalConnectTime:
		return convTimeMilli
	case logicalMicroTime:
		return convTimeMicro
	case logicalNanoTime:
		return convTimeNano
	}
	if typ == "bytes" {
		return convBytes
	}
	return convNone
}

// maxScale bounds decimal scales: PostgreSQL NUMERIC allows up to 16383
// fraction digits, and a bound keeps a hostile scale from asking for
// gigabytes of zeros.
const maxScale = 16383

// column is one field of an image's Connect schema.
type column struct {
	name    string
	conv    conv
	scale   int    // for convDecimal
	logical string // the logical name, or the Connect type, for messages
}

// convert applies c's conversion to v, a non-nil value as the JSON scanner
// decoded it.
func (c *column) convert(v changelog.Value) (changelog.Value, error) {
	switch c.conv {
	case convDecimal:
		switch x := v.(type) {
		case changelog.Number:
			// JsonConverter with decimal.format=NUMERIC writes the number itself.
			return x, nil
		case string:
			b, err := decodeBase64(x)
			if err != nil {
				return nil, err
			}
			return decimalText(b, c.scale)
		}
		return nil, wrongType("a base64 string", v)
	case convVarDecimal:
		x, ok := v.(changelog.JSON)
		if !ok {
			return nil, wrongType(`an object {"scale":..,"value":..}`, v)
		}
		return varDecimal(x)
	case convBytes:
		x, ok := v.(string)
		if !ok {
			return nil, wrongType("a base64 string", v)
		}
		return decodeBase64(x)
	case convDate:
		n, err := integer(v)
		if err != nil {
			return nil, err
		}
		return formatDate(n)
	case convTimestampMilli, convTimestampMicro, convTimestampNano:
		n, err := integer(v)
		if err != nil {
			return nil, err
		}
		return formatTimestamp(n, unitDigits(c.conv-convTimestampMilli))
	case convTimeMilli, convTimeMicro, convTimeNano:
		n, err := integer(v)
		if err != nil {
			return nil, err
		}
		return formatTime(n, unitDigits(c.conv-convTimeMilli)), nil
	}
	return v, nil
}

// unitDigits maps 0, 1, 2 (milli, micro, nano) to the fraction digits of
// the unit: 3, 6, 9.
func unitDigits(i conv) int { return 3 * (int(i) + 1) }

func typeName(v changelog.Value) string {
	switch v.(type) {
	case changelog.Number:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case changelog.JSON:
		return "object or array"
	}
	return fmt.Sprintf("%T", v)
}

func wrongType(want string, v changelog.Value) error {
	return fmt.Errorf("want %s, got a %s", want, typeName(v))
}

// integer reads an integral value: a JSON number, or a string holding one
// (the Debezium documentation's examples quote their int64s).
func integer(v changelog.Value) (int64, error) {
	var s string
	switch x := v.(type) {
	case changelog.Number:
		s = string(x)
	case string:
		s = x
	default:
		return 0, wrongType("an integer", v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q", s)
	}
	return n, nil
}

// decodeBase64 decodes Kafka Connect's base64 (standard alphabet, padded;
// unpadded text is accepted too).
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil && len(s)%4 != 0 {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid base64 %q", truncate(s))
	}
	return b, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// decimalText turns big-endian two's-complement unscaled bytes and a scale
// into the exact decimal text: unscaled × 10^-scale.
func decimalText(b []byte, scale int) (changelog.Number, error) {
	if len(b) == 0 {
		return "", errors.New("decimal has no bytes")
	}
	if scale > maxScale || scale < -maxScale {
		return "", fmt.Errorf("decimal scale %d out of range ±%d", scale, maxScale)
	}
	neg := b[0]&0x80 != 0
	var digits []byte
	if len(b) <= 8 {
		// Fast path: sign-extend into an int64, no big.Int.
		x := int64(int8(b[0]))
		for _, c := range b[1:] {
			x = x<<8 | int64(c)
		}
		u := uint64(x)
		if neg {
			u = ^u + 1 // magnitude; right for math.MinInt64 too
		}
		var buf [20]byte
		digits = strconv.AppendUint(buf[:0], u, 10)
	} else {
		var n big.Int
		n.SetBytes(b)
		if neg {
			n.Sub(&n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
			n.Neg(&n)
		}
		digits = n.Append(nil, 10)
	}
	return changelog.Number(placePoint(neg, digits, scale)), nil
}

// placePoint writes the magnitude digits with the decimal point scale
// places from the right (zeros appended for a negative scale).
func placePoint(neg bool, digits []byte, scale int) string {
	zero := len(digits) == 1 && digits[0] == '0'
	out := make([]byte, 0, len(digits)+max(scale, -scale)+3)
	if neg && !zero {
		out = append(out, '-')
	}
	switch {
	case scale <= 0:
		out = append(out, digits...)
		if !zero {
			for range -scale {
				out = append(out, '0')
			}
		}
	case len(digits) > scale:
		out = append(out, digits[:len(digits)-scale]...)
		out = append(out, '.')
		out = append(out, digits[len(digits)-scale:]...)
	default:
		out = append(out, '0', '.')
		for range scale - len(digits) {
			out = append(out, '0')
		}
		out = append(out, digits...)
	}
	return string(out)
}

// varDecimal reads io.debezium.data.VariableScaleDecimal, a struct
// {"scale": int32, "value": base64 bytes}.
func varDecimal(raw []byte) (changelog.Number, error) {
	s := jsonscan.New(raw)
	if err := s.BeginObject(); err != nil {
		return "", wrongType(`an object {"scale":..,"value":..}`, changelog.JSON(raw))
	}
	var (
		scale           int64
		value           []byte
		hasScale, hasVa bool
	)
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		tok, err := s.Value()
		if err != nil {
			return "", err
		}
		switch {
		case s.Equal(key, "scale"):
			if tok.Kind != jsonscan.Number {
				return "", fmt.Errorf("VariableScaleDecimal scale: want an integer, got a %s", tok.Kind)
			}
			scale, err = strconv.ParseInt(s.Text(tok), 10, 32)
			if err != nil {
				return "", fmt.Errorf("VariableScaleDecimal scale: want an int32, got %s", s.Text(tok))
			}
			hasScale = true
		case s.Equal(key, "value"):
			if tok.Kind != jsonscan.String {
				return "", fmt.Errorf("VariableScaleDecimal value: want a base64 string, got a %s", tok.Kind)
			}
			value, err = decodeBase64(s.Text(tok))
			if err != nil {
				return "", fmt.Errorf("VariableScaleDecimal value: %w", err)
			}
			hasVa = true
		}
	}
	if !hasScale || !hasVa {
		return "", errors.New(`VariableScaleDecimal needs both "scale" and "value"`)
	}
	return decimalText(value, int(scale))
}

// The day numbers (since 1970-01-01) of 0001-01-01 and 9999-12-31: the
// years every target database and the text format can hold.
const (
	minDay = -719162
	maxDay = 2932896
)

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days_from_civil inverse). It avoids package time, whose
// conversions cost more and whose Format would need a layout per precision.
func civil(days int64) (y int64, m, d int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func appendDate(b []byte, days int64) ([]byte, error) {
	if days < minDay || days > maxDay {
		return nil, fmt.Errorf("date %d days from 1970-01-01 is outside years 1-9999", days)
	}
	y, m, d := civil(days)
	b = appendInt(b, int(y), 4)
	b = append(b, '-')
	b = appendInt(b, m, 2)
	b = append(b, '-')
	return appendInt(b, d, 2), nil
}

// appendInt appends n (non-negative) zero-padded to width digits.
func appendInt(b []byte, n, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendFraction appends ".f" for frac units of 10^-digits seconds, without
// trailing zeros (the value stays exact), and nothing for zero.
func appendFraction(b []byte, frac int64, digits int) []byte {
	if frac == 0 {
		return b
	}
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	return appendInt(b, int(frac), digits)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// formatDate formats days since 1970-01-01 as "YYYY-MM-DD".
func formatDate(days int64) (string, error) {
	var buf [10]byte
	b, err := appendDate(buf[:0], days)
	return string(b), err
}

// formatTimestamp formats n units of 10^-digits seconds since the epoch as
// the naive wall time "YYYY-MM-DD HH:MM:SS[.f]". Debezium encodes DATETIME
// and timestamp-without-time-zone this way, as if the wall time were UTC.
func formatTimestamp(n int64, digits int) (string, error) {
	per := pow10(digits)
	secs, frac := n/per, n%per
	if frac < 0 {
		secs--
		frac += per
	}
	days, sod := secs/86400, secs%86400
	if sod < 0 {
		days--
		sod += 86400
	}
	var buf [32]byte
	b, err := appendDate(buf[:0], days)
	if err != nil {
		return "", err
	}
	b = append(b, ' ')
	b = appendClock(b, sod)
	return string(appendFraction(b, frac, digits)), nil
}

func appendClock(b []byte, secs int64) []byte {
	b = appendInt(b, int(secs/3600), 2)
	b = append(b, ':')
	b = appendInt(b, int(secs/60%60), 2)
	b = append(b, ':')
	return appendInt(b, int(secs%60), 2)
}

// formatTime formats n units of 10^-digits seconds since midnight as
// "HH:MM:SS[.f]". The hours are not wrapped at 24 and a negative n gets a
// '-': MySQL TIME is a duration (-838:59:59 to 838:59:59) and Debezium
// encodes it as one.
func formatTime(n int64, digits int) string {
	per := uint64(pow10(digits))
	u := uint64(n)
	var buf [40]byte
	b := buf[:0]
	if n < 0 {
		u = ^u + 1
		b = append(b, '-')
	}
	b = appendClock(b, int64(u/per))
	return string(appendFraction(b, int64(u%per), digits))
}
