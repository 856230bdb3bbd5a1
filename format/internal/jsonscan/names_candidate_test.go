package jsonscan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestScanRowCandidate holds ScanRow with Names (whose scanMembers compares
// a row's keys with a candidate list's names as it reads them, and takes
// the list without find when they are all of them) to ScanRow without:
// the same row or the same error for rows that are a kept list's names,
// that begin as one and differ or go on or stop short, that are written
// with white space, escapes or values the general way reads, that repeat
// a column, and that end the input; and the kept list shared exactly when
// the row's keys, written plain, are its names.
func TestScanRowCandidate(t *testing.T) {
	long := strings.Repeat("q", 17)
	seeds := []string{
		`{"id":1,"name":"a","created_at":"x"}`,
		`{"id":2}`, // begins as the one before: the longer is the candidate
		`{"order_id":1,"line_no":2}`,
		`{"ключ":1,"b":2}`, // a first name of 8 bytes, not ASCII
		`{"a_long_first_name":1,"x":2}`,
		`{"k":1,"` + long + `":2,"abcdefghijklmnop":3}`,
		`{"":1,"e":2}`,
		`{"k2":1,"abcdefghij":2}`,
		`{"k3":1,"aaaaaaaaaa":2}`,
	}
	for _, c := range []struct {
		in     string
		shared int // the seed whose list the row shares, -1 for none
	}{
		{`{"id":7,"name":"b","created_at":"y"}`, 0},
		{`{"id":7}`, 1},
		{`{"id":7,"name":"b"}`, -1},
		{`{"id":7,"name":"b","created_at":"y","more":1}`, -1},
		{`{"id":7,"name":"b","updated_at":"y"}`, -1},
		{`{"id":7,"name":"b","created_ax":"y"}`, -1},
		{`{"id":7,"nam":"b","created_at":"y"}`, -1},
		{`{"id":7,"names":"b","created_at":"y"}`, -1},
		{`{ "id":7,"name":"b","created_at":"y"}`, 0},
		{`{"id" :7,"name":"b","created_at":"y"}`, 0},
		{`{"id":7, "name":"b","created_at":"y"}`, 0},
		{`{"id":{"a":[1]},"name":"b","created_at":"y"}`, 0},
		{`{"id":7,"name":"b\n","created_at":"y"}`, 0},
		{`{"i\u0064":7,"name":"b","created_at":"y"}`, -1},
		{`{"id":7,"n\u0061me":"b","created_at":"y"}`, -1},
		{`{"id":7,"name":"b","created_a\u0074":"y"}`, -1},
		{`{"id":7,"id":8,"created_at":"y"}`, -1},
		{`{"id":7,"name":"b","name":"y"}`, -1},
		{`{"id":7,"name":tru,"created_at":"y"}`, -1},
		{`{"id":7,"name":"b","created_at":"y"`, -1},
		{`{"id":7,"name":"b","created_at":}`, -1},
		{`{"id":7,"name":"b\xff","created_at":"y"}`, -1},
		{`{"order_id":1,"line_no":2}`, 2},
		{`{"order_id":1,"line_no":2,"qty":3}`, -1},
		{`{"ключ":1,"b":2}`, 3},
		{`{"ключ":1,"c":2}`, -1},
		{`{"ключ":1,"b":2,"\xff":1}`, -1},
		{`{"a_long_first_name":3,"x":4}`, 4},
		{`{"k":1,"` + long + `":2,"abcdefghijklmnop":3}`, 5},
		{`{"k":1,"` + long[1:] + `x":2,"abcdefghijklmnop":3}`, -1},
		{`{"k":1,"` + long + `":2,"abcdefghijklmnoX":3}`, -1},
		{`{"k":1,"` + long + `":2,"Xbcdefghijklmnop":3}`, -1},
		{`{"":5,"e":6}`, 6},
		{`{"":5,"f":6}`, -1},
		{`{}`, -1},
		{`{"k2":1,"abcdefghij":2}`, 7},
		{`{"k2":1,"abcdefghcdefghij":2}`, -1}, // its head and tail words are the name's
		{`{"k2":1,"abcdefghi":2}`, -1},
		{`{"k3":1,"aaaaaaaaaa":2}`, 8},
		{`{"k3":1,"aaaaaaaaaaa":2}`, -1}, // the same head and tail words, one byte longer
		{`{"k3":1,"aaaaaaaaa":2}`, -1},
	} {
		for _, after := range []string{"", `,"source":{"db":"shop","table":"orders","ts_ms":1767225600000}}`} {
			var names Names
			kept := make([][]string, len(seeds))
			for i, in := range seeds {
				s := New([]byte(in + after))
				s.UseNames(&names)
				r, err := s.Row()
				if err != nil {
					t.Fatal(err)
				}
				kept[i] = r.Names
			}
			data := []byte(c.in + after)
			row, ok := checkScanRowNames(t, &names, data)
			if !ok {
				continue
			}
			shared := -1
			for i, k := range kept {
				if len(row.Names) > 0 && &row.Names[0] == &k[0] {
					shared = i
				}
			}
			if shared != c.shared {
				t.Errorf("%s: shares seed %d's names, want %d", data, shared, c.shared)
			}
		}
	}
}

// TestNamesCandidate checks the candidates a Names keeps: for each first
// name of up to 8 bytes the longest list it begins, none for a longer
// first name, and the first key told by its quote (a name that is the
// beginning of another is not its candidate).
func TestNamesCandidate(t *testing.T) {
	var names Names
	for _, l := range [][]string{{"id"}, {"id", "a", "b"}, {"id", "a"}, {"ida", "x"}, {"abcdefghi", "x"}, {"abcdefgh", "y"}} {
		names.keep(l)
	}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`{"id":1,"a":2,"b":3}`, []string{"id", "a", "b"}},
		{`{"id":1}                  `, []string{"id", "a", "b"}},
		{`{"ida":1,"x":2}           `, []string{"ida", "x"}},
		{`{"idb":1,"x":2}           `, nil},
		{`{"i":1,"x":2}             `, nil},
		{`{"abcdefghi":1,"x":2}     `, nil},
		{`{"abcdefgh":1,"y":2}      `, []string{"abcdefgh", "y"}},
		{`{"id" :1}                 `, nil},
		{`{"id":1}`, nil}, // fewer than 19 bytes from the key's quote
	} {
		l := names.candidate([]byte(c.in), 1)
		var got []string
		if l != nil {
			got = l.names
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: candidate %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzScanRowCandidate holds ScanRow with Names to ScanRow without on rows
// that follow others whose names Names keeps: seeds a row each of the
// input's first line, then checks every line (the seeds again included)
// for the same error, position, members and row.
func FuzzScanRowCandidate(f *testing.F) {
	f.Add([]byte(`{"id":1,"name":"a","created_at":"x"}` + "\n" + `{"id":2,"name":"b","created_at":"y"}` + "\n" + `{"id":3,"name":"b"}`))
	f.Add([]byte(`{"k3":1,"aaaaaaaaaa":2}` + "\n" + `{"k3":1,"aaaaaaaaaaa":2}`))
	f.Add([]byte(`{"ключ":1,"b":2}` + "\n" + `{"ключ":1,"b":2,"\xff":1}`))
	f.Add([]byte(`{"id":7}` + "\n" + `{"id":7,"id":8}` + "\n" + `{"id" :7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Split(string(data), "\n")
		var names Names
		for _, seed := range strings.Split(lines[0], "|") {
			s := New([]byte(seed + `,"x":{"y":1}}`))
			s.UseNames(&names)
			_, _ = s.Row()
		}
		for _, line := range lines {
			for _, in := range []string{line, line + `,"source":{"db":"shop","table":"orders"}}`} {
				checkScanRowNames(t, &names, []byte(in))
			}
		}
	})
}

// checkScanRowNames fails unless ScanRow reads data with names as it does
// without: the same error at the same position, or the same members and
// row, which it returns (ok false for an error or a failure).
func checkScanRowNames(t *testing.T, names *Names, data []byte) (row changelog.Row, ok bool) {
	t.Helper()
	var rs, wrs Rows
	var p, wp Pending
	s, w := New(data), New(data)
	s.UseNames(names)
	err, werr := s.ScanRow(&rs, &p), w.ScanRow(&wrs, &wp)
	if fmt.Sprint(err) != fmt.Sprint(werr) || s.pos != w.pos {
		t.Errorf("%q: %v at %d, without names %v at %d", data, err, s.pos, werr, w.pos)
		return row, false
	}
	if err != nil {
		return row, false
	}
	row, want := rs.Row(data, &p), wrs.Row(data, &wp)
	if !reflect.DeepEqual(row, want) || !reflect.DeepEqual(rs.members(&p), wrs.members(&wp)) {
		t.Errorf("%q: %v, without names %v", data, row, want)
		return row, false
	}
	return row, true
}
