package jsonrecord

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

func TestIsTombstone(t *testing.T) {
	for in, want := range map[string]bool{"": true, " \n": true, "null": true, " null\r\n": true, "{}": false, "nul": false, `"null"`: false} {
		if got := IsTombstone([]byte(in)); got != want {
			t.Errorf("IsTombstone(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestOverlay(t *testing.T) {
	after := changelog.RowOf("id", changelog.Number("1"), "qty", changelog.Number("9"), "note", "x")
	old := changelog.RowOf("qty", changelog.Number("2"), "note", nil, "gone", "y")
	got := Overlay(after, old)
	want := changelog.RowOf("id", changelog.Number("1"), "qty", changelog.Number("2"), "note", nil, "gone", "y")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Overlay = %v, want %v", got, want)
	}
	if v, _ := after.Get("qty"); v != changelog.Number("9") {
		t.Errorf("Overlay changed its input: qty = %v", v)
	}
}

func TestTables(t *testing.T) {
	var cache Tables
	a := cache.Intern([]byte("shop"), []byte("orders"))
	b := cache.Intern([]byte("shop"), []byte("orders"))
	c := cache.Intern([]byte("shop"), []byte("items"))
	d := cache.Intern(nil, []byte("items"))
	if a != b || a.String() != "shop.orders" || c.String() != "shop.items" || d.String() != "items" {
		t.Errorf("got %v %v %v %v", a, b, c, d)
	}
	// Transactions interleave tables: every table seen stays cached.
	if n := testing.AllocsPerRun(100, func() {
		cache.Intern([]byte("shop"), []byte("orders"))
		cache.Intern([]byte("shop"), []byte("items"))
		cache.Intern(nil, []byte("items"))
	}); n != 0 {
		t.Errorf("cached tables allocate %v times", n)
	}
	for i := range 2 * maxTables {
		name := fmt.Sprint("t", i)
		if got := cache.Intern([]byte("db"), []byte(name)); got != (changelog.Table{Namespace: "db", Name: name}) {
			t.Fatalf("table %d: got %v", i, got)
		}
	}
}

func TestLastString(t *testing.T) {
	for _, tc := range []struct {
		name  string
		arena *changelog.Arena
	}{{"shared", nil}, {"in an arena", new(changelog.Arena)}} {
		t.Run(tc.name, func(t *testing.T) {
			var c LastString
			if a, b, d := c.Get(tc.arena, []byte("t1")), c.Get(tc.arena, []byte("t1")), c.Get(tc.arena, []byte("t2")); a != "t1" || b != "t1" || d != "t2" {
				t.Errorf("got %q %q %q", a, b, d)
			}
			if n := testing.AllocsPerRun(100, func() { c.Get(tc.arena, []byte("t2")) }); n != 0 {
				t.Errorf("a repeated string allocates %v times", n)
			}
			// In an arena, new strings are carved from heap blocks of
			// hundreds of bytes (changelog.Arena.Recent).
			if n := testing.AllocsPerRun(1, func() {
				for range 500 {
					c.Get(tc.arena, []byte("t3"))
					c.Get(tc.arena, []byte("t4"))
				}
			}); tc.arena != nil && n > 10 {
				t.Errorf("1000 new strings allocate %v times, want a few blocks", n)
			}
		})
	}
}

func TestFail(t *testing.T) {
	pos := changelog.Position{Partition: "p.jsonl", Seq: 3}
	fe := Fail("x-json", pos, "db.t", &Error{Reason: "bad op", Hint: "fix it"}, "json hint")
	if fe.Reason != "bad op" || fe.Hint != "fix it" || fe.Table != "db.t" || fe.Pos != pos || fe.Format != "x-json" {
		t.Errorf("refusal: %+v", fe)
	}
	syntax := errors.New("unexpected end")
	fe = Fail("x-json", pos, "", syntax, "json hint")
	if fe.Reason != "invalid JSON" || fe.Hint != "json hint" || !errors.Is(fe, syntax) {
		t.Errorf("syntax error: %+v", fe)
	}
}

func TestFindTable(t *testing.T) {
	for in, want := range map[string]string{
		`{"database":"shop","table":"orders","data":[`: "shop.orders",
		`{"table":"orders","database":"shop"}`:         "shop.orders",
		`{"data":1,"table":"t"}`:                       "t",
		`{"database":"shop"}`:                          "",
		`[1,2]`:                                        "",
		`{"database":"shop","x":tru,"table":"orders"}`: "",
	} {
		if got := FindTable([]byte(in)); got != want {
			t.Errorf("FindTable(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestReadName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		null     bool
		err      string
	}{
		{`"shop"`, "shop", false, ""},
		{`"sh\u006fp"`, "shop", false, ""},
		{`"caf\u00e9s"`, "cafés", false, ""},
		{"\"caf\xc3\xa9\"", "café", false, ""},
		{`""`, "", false, ""},
		{` "shop"`, "shop", false, ""},
		{`null`, "", true, ""},
		{`7`, "", false, `"source.db" must be a string, not a number`},
		{"\"sh\xffp\"", "", false, "invalid UTF-8"},
		{"\"sh\x01p\"", "", false, "control character"},
		{`"shop`, "", false, "unterminated string"},
	} {
		s := jsonscan.New([]byte(tc.in))
		got, err := ReadName(&s, "source.db", "hint")
		if string(got) != tc.want || (got == nil) != (tc.null || tc.err != "") || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadName(%s) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReadEnum(t *testing.T) {
	known := []string{"c", "u"}
	for _, tc := range []struct {
		in   string
		null bool
		want string
		err  string
	}{
		{`"u"`, false, "u", ""},
		{`"x\u0079"`, false, "xy", ""},
		{`null`, true, "", ""},
		{`null`, false, "", `"op" must be a string, not a null`},
		{`5`, true, "", `"op" must be a string, not a number`},
		{`"u`, true, "", "unterminated string"},
		{`"\u0063"`, false, "c", ""},
		{`"xyz"`, false, "xyz", ""},
		{` "u"`, false, "u", ""},
		{"\"\xff\"", false, "", "invalid UTF-8"},
	} {
		s := jsonscan.New([]byte(tc.in))
		got, err := ReadEnum(&s, "op", "hint", tc.null, known)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadEnum(%s, null %v) = %q, %v; want %q, %q", tc.in, tc.null, got, err, tc.want, tc.err)
		}
	}
	data := []byte(`"u"`)
	if n := testing.AllocsPerRun(100, func() {
		s := jsonscan.New(data)
		if v, _ := ReadEnum(&s, "op", "", false, known); v != "u" {
			t.Fatal(v)
		}
	}); n != 0 {
		t.Errorf("reading a known value: %v allocations, want 0", n)
	}
}
