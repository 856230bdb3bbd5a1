package mysql

import (
	"database/sql/driver"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"

	"github.com/txsink/txsink/internal/bulktext"
)

// rowReader streams rows in the text format LOAD DATA reads with
//
//	FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C' LINES TERMINATED BY X'0A'
//
// (tab between fields, newline after each row, backslash escapes, \N for
// NULL). It encodes rows only as the driver asks for bytes, so a load of
// any size holds about one network packet of text beside the rows
// themselves, and needs no goroutine: the driver pulls from it on the
// goroutine that runs the statement.
type rowReader struct {
	rows [][]any
	next int    // the next row to encode
	buf  []byte // encoded text not yet handed out, from off
	off  int
	// err is why row next could not be encoded. The reader then ends the
	// text before that row (EOF, not the error): the driver stops reading
	// a statement's results at a reader's error, which would leave the
	// statements after the load unread in a query of several. The caller
	// checks err and rolls the short load back.
	err error
	// dates keeps the last date-time's date: a group's rows mostly share
	// their day.
	dates bulktext.DateTimes
}

func newRowReader(rows [][]any) *rowReader {
	return &rowReader{rows: rows, buf: make([]byte, 0, 32<<10)}
}

// Read fills p with the next encoded rows. It tops its buffer up to at
// least len(p) bytes first, so the driver sends full packets.
func (r *rowReader) Read(p []byte) (int, error) {
	if r.off > 0 {
		n := copy(r.buf, r.buf[r.off:])
		r.buf, r.off = r.buf[:n], 0
	}
	for len(r.buf) < len(p) && r.next < len(r.rows) && r.err == nil {
		b, err := appendRow(r.buf, r.rows[r.next], &r.dates)
		if err != nil {
			// Only whole rows are sent.
			r.err = fmt.Errorf("row %d: %w", r.next+1, err)
			break
		}
		r.buf = b
		r.next++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.off = n
	return n, nil
}

// appendRow appends one row and its line terminator; dates writes its
// date-times. The types reduce hands the loader most (text, integers,
// NULL, date-times) are written here, the rest by appendField; each field
// is followed by a tab, the last one's then overwritten by the newline.
func appendRow(b []byte, row []any, dates *bulktext.DateTimes) ([]byte, error) {
	if len(row) == 0 {
		return append(b, '\n'), nil
	}
	for i, v := range row {
		switch x := v.(type) {
		case string:
			b = bulktext.AppendEscaped(b, x, true)
		case int64:
			if uint64(x) < 10 {
				b = append(b, byte('0'+x)) // counts, flags: no call
			} else {
				b = bulktext.AppendInt(b, x)
			}
		case nil:
			b = append(b, '\\', 'N')
		case time.Time:
			var ok bool
			if b, ok = dates.Append(b, x, bulktext.ClockUnlessMidnight); !ok {
				return b, fmt.Errorf("field %d: %w", i+1, dateTimeRange(x))
			}
		default:
			var err error
			if b, err = appendField(b, v, dates); err != nil {
				return b, fmt.Errorf("field %d: %w", i+1, err)
			}
		}
		b = append(b, '\t')
	}
	b[len(b)-1] = '\n'
	return b, nil
}

// appendField appends v as the statement path would send it (the
// driver's client-side interpolation, see Bind), in LOAD DATA's text form:
// integers and floats in the same digits, booleans as 1 and 0, date-times
// in UTC (the session's zone) with their fractional digits and no
// trailing zeros, strings and bytes unchanged but for the escapes, and
// NULL as \N. Other Go types go through database/sql's own conversion
// first, as they would on the way to the driver.
func appendField(b []byte, v any, dates *bulktext.DateTimes) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, '\\', 'N'), nil
	case int64:
		return bulktext.AppendInt(b, x), nil
	case uint64:
		return bulktext.AppendUint(b, x), nil
	case string:
		return bulktext.AppendEscaped(b, x, true), nil
	case []byte:
		return bulktext.AppendEscaped(b, x, true), nil
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case bool:
		if x {
			return append(b, '1'), nil
		}
		return append(b, '0'), nil
	case time.Time:
		return appendDateTime(b, x, dates)
	}
	cv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return b, fmt.Errorf("value of type %T: %w", v, err)
	}
	if cv != nil && reflect.TypeOf(cv) == reflect.TypeOf(v) {
		return b, fmt.Errorf("value of type %T has no LOAD DATA text form", v)
	}
	return appendField(b, cv, dates)
}

// appendDateTime writes t as the driver does: the date alone at midnight,
// else the time of day, with as many fractional digits as are not zero.
func appendDateTime(b []byte, t time.Time, dates *bulktext.DateTimes) ([]byte, error) {
	b, ok := dates.Append(b, t, bulktext.ClockUnlessMidnight)
	if !ok {
		return b, dateTimeRange(t)
	}
	return b, nil
}

// dateTimeRange is the error for a date-time LOAD DATA's text cannot hold.
func dateTimeRange(t time.Time) error {
	return fmt.Errorf("date-time %s: year is not in the range 1 to 9999", t.UTC().Format(time.RFC3339Nano))
}
