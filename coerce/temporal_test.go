package coerce

import (
	"testing"
	"time"

	"github.com/txsink/txsink/schema"
)

func TestDate(t *testing.T) {
	col := schema.Column{Name: "d", Class: schema.Date, SQLType: "DATE"}
	in7 := time.FixedZone("+07", 7*3600)
	run(t, []tc{
		{col: col, in: "2024-02-29", want: "2024-02-29"},
		{col: col, in: "0001-01-01", want: "0001-01-01"},
		{col: col, in: "9999-12-31", want: "9999-12-31"},
		{col: col, in: "2000-02-29", want: "2000-02-29"},
		{col: col, in: "1900-02-29", err: "is not a valid calendar date"},
		{col: col, in: "2023-02-29", err: "is not a valid calendar date"},
		{col: col, in: "2024-04-31", err: "is not a valid calendar date"},
		{col: col, in: "2024-13-01", err: "is not a valid calendar date"},
		{col: col, in: "2024-00-10", err: "is not a valid calendar date"},
		{col: col, in: "0000-00-00", err: "has year 0000: the column holds years 0001 to 9999"},
		{col: col, in: "2024-1-5", err: "is not a date (want YYYY-MM-DD)"},
		{col: col, in: "20240105", err: "is not a date"},
		{col: col, in: "2024/01/05", err: "is not a date"},
		{col: col, in: "", err: "is not a date"},
		{col: col, in: "2024-01-05x", err: "is not a date"},
		{col: col, in: "2024-01-02T00:00:00", want: "2024-01-02"},
		{col: col, in: "2024-01-02 00:00:00.000000", want: "2024-01-02"},
		{col: col, in: "2024-01-02T00:00:00Z", want: "2024-01-02"},
		{col: col, in: "2024-01-02T00:00:00+00:00", want: "2024-01-02"},
		{col: col, in: "2024-01-02T00:00:00+02:00", err: "zone offset other than UTC"},
		{col: col, in: "2024-01-02 10:00:00", err: "has a time of day other than midnight"},
		{col: col, in: "2024-01-02 00:00:00.001", err: "has a time of day other than midnight"},
		{name: "-1 days is 1969-12-31", col: col, in: num("-1"), want: "1969-12-31"},
		{col: col, in: num("0"), want: "1970-01-01"},
		{col: col, in: num("18262"), want: "2020-01-01"},
		{col: col, in: int64(18262), want: "2020-01-01"},
		{col: col, in: 19782, want: "2024-02-29"},
		{col: col, in: num("1.8262e4"), want: "2020-01-01"},
		{col: col, in: int64(-719162), want: "0001-01-01"},
		{col: col, in: int64(2932896), want: "9999-12-31"},
		{col: col, in: int64(-719163), err: "is out of range as days since 1970-01-01: the column holds years 0001 to 9999"},
		{col: col, in: int64(2932897), err: "out of range"},
		{col: col, in: num("99999999999999999999999"), err: "out of range"},
		{col: col, in: num("1.5"), err: "is not an integer"},
		{col: col, in: time.Date(2024, 3, 1, 0, 0, 0, 0, in7), want: "2024-03-01"},
		{col: col, in: time.Date(2024, 3, 1, 0, 0, 1, 0, time.UTC), err: "other than midnight"},
		{col: col, in: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), err: "out of range"},
		{col: col, in: true, err: "is a boolean, which cannot go into a date column"},
		{col: col, in: 1.0, err: "Go type float64"},
		{col: col, in: []byte("2024-01-01"), err: "is binary data"},
	})
}

func TestDateTime(t *testing.T) {
	dt0 := timeCol(schema.DateTime, 0)
	dt3 := timeCol(schema.DateTime, 3)
	dt6 := timeCol(schema.DateTime, 6)
	ts0 := timeCol(schema.Timestamp, 0)
	ts6 := timeCol(schema.Timestamp, 6)
	at := utc(2020, 5, 13, 7, 40, 6, 0)
	in7 := time.FixedZone("+07", 7*3600)
	run(t, []tc{
		{col: dt0, in: "2020-05-13 07:40:06", want: at},
		{col: dt0, in: "2020-05-13T07:40:06", want: at},
		{col: dt0, in: "2020-05-13t07:40:06", want: at},
		{col: dt0, in: "2020-05-13 07:40:06.000", want: at},
		{col: dt0, in: "2020-05-13", want: utc(2020, 5, 13, 0, 0, 0, 0)},
		{col: dt0, in: "2020-05-13 07:40:06.5", err: "has 1 fractional-second digit, the column keeps none (txsink never rounds)"},
		{col: dt0, in: "2020-05-13T09:40:06+02:00", want: at},
		{col: dt0, in: "2020-05-13T07:40:06Z", want: at},
		{col: dt0, in: "2020-05-13T07:40:06z", want: at},
		{col: dt0, in: "2020-05-13T00:40:06-0700", want: at},
		{col: dt0, in: "2020-05-13T14:40:06+07", want: at},
		{col: dt0, in: "2020-05-13T13:10:06+05:30", want: at},
		{col: dt0, in: "2020-05-13 01:40:06-06:00", want: at},
		{name: "date changes with the offset", col: dt0, in: "2020-05-14 01:00:00+02:00", want: utc(2020, 5, 13, 23, 0, 0, 0)},
		{col: dt0, in: "9999-12-31 23:59:59", want: utc(9999, 12, 31, 23, 59, 59, 0)},
		{col: dt0, in: "0001-01-01 00:00:00", want: utc(1, 1, 1, 0, 0, 0, 0)},
		{col: dt0, in: "0001-01-01 00:30:00+01:00", err: "out of range once converted to UTC"},
		{col: dt0, in: "9999-12-31 23:00:00-02:00", err: "out of range once converted to UTC"},
		{col: dt0, in: "0000-00-00 00:00:00", err: "has year 0000"},
		{col: dt0, in: "2020-02-30 00:00:00", err: "is not a valid calendar date"},
		{col: dt0, in: "2020-05-13 24:00:00", err: "is not a valid time of day"},
		{col: dt0, in: "2020-05-13 07:60:00", err: "is not a valid time of day"},
		{col: dt0, in: "2020-05-13 07:40:60", err: "is not a valid time of day"},
		{col: dt0, in: "2020-05-13 07:40", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13 07:40:06.", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13 07:40:06 +02:00", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13T07:40:06+2", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13T07:40:06+02:0", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13T07:40:06+02:00:00", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13T07:40:06Zx", err: "is not a date-time"},
		{col: dt0, in: "2020-05-13T07:40:06+25:00", err: "invalid zone offset"},
		{col: dt0, in: "2020-05-13_07:40:06", err: "is not a date-time"},
		{col: dt0, in: "now", err: "is not a date-time"},
		{col: dt0, in: "", err: "is not a date-time"},

		{name: "epoch millis", col: dt0, in: num("1589355606000"), want: at},
		{col: dt3, in: num("1589355606100"), want: utc(2020, 5, 13, 7, 40, 6, 100e6)},
		{col: dt0, in: num("1589355606100"), err: "is 2020-05-13T07:40:06.1Z as milliseconds since 1970-01-01, and has 1 fractional-second digit, the column keeps none"},
		{col: dt3, in: int64(-1), want: utc(1969, 12, 31, 23, 59, 59, 999e6)},
		{col: dt0, in: int64(-1000), want: utc(1969, 12, 31, 23, 59, 59, 0)},
		{col: dt0, in: int64(-1), err: "has 3 fractional-second digits"},
		{name: "micros read as millis is out of range", col: dt3, in: num("1589355606123456"), err: "out of range as milliseconds since 1970-01-01"},
		{col: dt3, in: int64(-62135596800000), want: utc(1, 1, 1, 0, 0, 0, 0)},
		{col: dt3, in: int64(-62135596800001), err: "out of range"},
		{col: dt3, in: int64(253402300799999), want: utc(9999, 12, 31, 23, 59, 59, 999e6)},
		{col: dt3, in: int64(253402300800000), err: "out of range"},
		{col: dt3, in: num("99999999999999999999999"), err: "out of range"},
		{col: dt3, in: num("1.5"), err: "is not an integer"},

		{name: "epoch micros DATETIME(6)", col: dt6, in: num("1589355606123456"), want: utc(2020, 5, 13, 7, 40, 6, 123456000)},
		{col: dt6, in: int64(-1), want: utc(1969, 12, 31, 23, 59, 59, 999999000)},
		{col: dt6, in: int64(253402300799999999), want: utc(9999, 12, 31, 23, 59, 59, 999999000)},
		{col: dt6, in: int64(253402300800000000), err: "out of range as microseconds since 1970-01-01"},
		{col: dt6, in: "2020-05-13 07:40:06.123456", want: utc(2020, 5, 13, 7, 40, 6, 123456000)},
		{col: dt6, in: "2020-05-13 07:40:06.1234560", want: utc(2020, 5, 13, 7, 40, 6, 123456000)},
		{col: dt6, in: "2020-05-13 07:40:06.1234567", err: "has 7 fractional-second digits, the column keeps 6"},
		{col: dt6, in: "2020-05-13 07:40:06.123456000000", want: utc(2020, 5, 13, 7, 40, 6, 123456000)},
		{col: timeCol(schema.DateTime, 4), in: int64(1589355606123400), want: utc(2020, 5, 13, 7, 40, 6, 123400000)},
		{col: timeCol(schema.DateTime, 4), in: int64(1589355606123450), err: "has 5 fractional-second digits, the column keeps 4"},

		{col: dt3, in: time.Date(2020, 5, 13, 14, 40, 6, 0, in7), want: at},
		{col: dt3, in: time.Date(2020, 5, 13, 7, 40, 6, 1234e5, time.UTC), err: "has 4 fractional-second digits, the column keeps 3"},
		{col: dt3, in: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), err: "out of range"},
		{col: dt3, in: 1.5e12, err: "Go type float64"},
		{col: dt3, in: true, err: "is a boolean"},

		{name: "timestamp without zone is UTC", col: ts0, in: "2020-05-13 07:40:06", want: at},
		{col: ts0, in: "2020-05-13T07:40:06+02:00", want: utc(2020, 5, 13, 5, 40, 6, 0)},
		{col: ts6, in: "2020-05-13T07:40:06.123456+05:30", want: utc(2020, 5, 13, 2, 10, 6, 123456000)},
		{col: ts6, in: "2020-05-13T07:40:06.1234567Z", err: "has 7 fractional-second digits"},
		{col: ts6, in: num("1589355606123456"), want: utc(2020, 5, 13, 7, 40, 6, 123456000)},
		{col: ts0, in: num("1589355606000"), want: at},
		{col: ts0, in: time.Date(2020, 5, 13, 14, 40, 6, 0, in7), want: at},
	})
}

func TestTime(t *testing.T) {
	t0 := timeCol(schema.Time, 0)
	t1 := timeCol(schema.Time, 1)
	t3 := timeCol(schema.Time, 3)
	t6 := timeCol(schema.Time, 6)
	run(t, []tc{
		{col: t0, in: "12:34:56", want: "12:34:56"},
		{col: t0, in: "00:00:00", want: "00:00:00"},
		{col: t0, in: "-00:00:00", want: "00:00:00"},
		{col: t0, in: "+01:02:03", want: "01:02:03"},
		{col: t0, in: "1:02:03", want: "01:02:03"},
		{col: t0, in: "24:00:00", want: "24:00:00"},
		{col: t0, in: "838:59:59", want: "838:59:59"},
		{col: t0, in: "-838:59:59", want: "-838:59:59"},
		{col: t0, in: "839:00:00", err: "out of range: the column holds -838:59:59 to 838:59:59"},
		{col: t0, in: "-839:00:00", err: "out of range"},
		{col: t1, in: "838:59:59.5", err: "out of range"},
		{col: t0, in: "12:60:00", err: "minutes and seconds go up to 59"},
		{col: t0, in: "12:00:60", err: "minutes and seconds go up to 59"},
		{col: t0, in: "12:34:56.5", err: "has 1 fractional-second digit, the column keeps none (txsink never rounds)"},
		{col: t0, in: "12:34:56.000", want: "12:34:56"},
		{col: t6, in: "12:34:56.123456", want: "12:34:56.123456"},
		{col: t6, in: "12:34:56.500000", want: "12:34:56.5"},
		{col: t6, in: "-12:34:56.000001", want: "-12:34:56.000001"},
		{col: t6, in: "12:34:56.1234567", err: "has 7 fractional-second digits, the column keeps 6"},
		{col: t0, in: "12:34", err: "is not a time"},
		{col: t0, in: "1234:00:00", err: "is not a time"},
		{col: t0, in: ":00:00", err: "is not a time"},
		{col: t0, in: "12:3:45", err: "is not a time"},
		{col: t0, in: "12:34:56.", err: "is not a time"},
		{col: t0, in: "12:34:56Z", err: "is not a time"},
		{col: t0, in: "", err: "is not a time"},

		{name: "millis since midnight", col: t0, in: num("45296000"), want: "12:34:56"},
		{col: t3, in: num("45296123"), want: "12:34:56.123"},
		{col: t0, in: num("45296123"), err: "is 12:34:56.123 as milliseconds since midnight, and has 3 fractional-second digits, the column keeps none"},
		{name: "micros since midnight", col: t6, in: num("45296123456"), want: "12:34:56.123456"},
		{col: t6, in: int64(45296000000), want: "12:34:56"},
		{col: t0, in: int64(-1000), want: "-00:00:01"},
		{col: t3, in: int64(-1), want: "-00:00:00.001"},
		{col: t0, in: int64(3020399000), want: "838:59:59"},
		{col: t0, in: int64(3020399001), err: "out of range as milliseconds since midnight"},
		{col: t6, in: int64(-3020399000001), err: "out of range as microseconds since midnight"},
		{col: t6, in: num("1e30"), err: "out of range"},
		{col: t3, in: num("0.5"), err: "is not an integer"},
		{col: t6, in: time.Date(2020, 1, 1, 12, 34, 56, 5e8, time.FixedZone("x", 3600)), want: "12:34:56.5"},
		{col: t0, in: time.Date(2020, 1, 1, 12, 34, 56, 5e8, time.UTC), err: "has 1 fractional-second digit"},
		{col: t0, in: 1.0, err: "Go type float64"},
		{col: t0, in: false, err: "is a boolean"},
	})
}
