package envelope

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// read reads data as a record with fields, each wanted field's value
// noted as "name=value"; it returns the notes, the fields seen and the
// error.
func read(t *testing.T, fields *Fields, data string) (notes []string, seen Seen, err error) {
	t.Helper()
	var e Reader
	s := e.Scanner(nil, []byte(data))
	seen, err = e.ReadRecord(&s, fields, "the hint", func(f int) error {
		tok, err := s.Value()
		if err != nil {
			return err
		}
		if s.Text(tok) == "refuse" {
			return &jsonrecord.Error{Reason: "refused " + fields.Names()[f], Hint: "h"}
		}
		notes = append(notes, fields.Names()[f]+"="+s.Text(tok))
		return nil
	})
	return notes, seen, err
}

func TestFieldsRead(t *testing.T) {
	const (
		fA = iota
		fB
		fID
	)
	loose := NewFields("a", "b", "id").Repeatable(fID)
	strict := NewFields("a", "b", "id").Strict()
	// The same with the order records write them in told: read the
	// same, whatever order a record has.
	seq := NewFields("a", "b", "id").Repeatable(fID).Sequence(fA, fB, fID).Sequence(fID, fA)
	strictSeq := NewFields("a", "b", "id").Strict().Sequence(fA, fB)
	long := NewFields("a", "a_field_name_too_long").Sequence(0, 1)
	for _, tc := range []struct {
		name   string
		fields *Fields
		in     string
		notes  string
		seen   Seen
		err    string
	}{
		{"fields", loose, `{"a":1,"b":"x"}`, "a=1 b=x", 1<<fA | 1<<fB, ""},
		{"others passed over", loose, `{"z":{"a":1},"a":1,"y":[2],"c":null}`, "a=1", 1 << fA, ""},
		{"escaped key", loose, `{"\u0061":1}`, "a=1", 1 << fA, ""},
		{"empty", loose, `{}`, "", 0, ""},
		{"twice", loose, `{"a":1,"b":2,"a":3}`, "a=1 b=2 a=3", 1<<fA | 1<<fB, `field "a" appears twice`},
		{"twice escaped", loose, `{"b":1,"\u0062":2}`, "b=1 b=2", 1 << fB, `field "b" appears twice`},
		{"repeatable", loose, `{"id":1,"id":2}`, "id=1 id=2", 1 << fID, ""},
		{"refusal before twice", loose, `{"a":1,"a":"refuse"}`, "a=1", 1 << fA, "refused a"},
		{"strict", strict, `{"a":1,"id":2}`, "a=1 id=2", 1<<fA | 1<<fID, ""},
		{"strict unknown", strict, `{"a":1,"zz":2}`, "a=1", 1 << fA, `unknown field "zz"`},
		{"strict twice", strict, `{"id":1,"id":2}`, "id=1 id=2", 1 << fID, `field "id" appears twice`},
		{"in order", seq, `{"a":1,"b":"x","id":"a longer value"}`, "a=1 b=x id=a longer value", 1<<fA | 1<<fB | 1<<fID, ""},
		{"in another order", seq, `{"b":"x","id":7,"a":"a longer value"}`, "b=x id=7 a=a longer value", 1<<fA | 1<<fB | 1<<fID, ""},
		{"another first", seq, `{"id":7,"a":"a longer value","b":1}`, "id=7 a=a longer value b=1", 1<<fA | 1<<fB | 1<<fID, ""},
		{"others between", seq, `{"a":1,"z":"a longer value","b":"x","c":[1,2,3,4,5,6,7,8]}`, "a=1 b=x", 1<<fA | 1<<fB, ""},
		{"spaced", seq, `{ "a" : 1 , "b" : "x" , "id" : "a longer value" }`, "a=1 b=x id=a longer value", 1<<fA | 1<<fB | 1<<fID, ""},
		{"escaped in order", seq, `{"a":1,"\u0062":"a longer value"}`, "a=1 b=a longer value", 1<<fA | 1<<fB, ""},
		{"twice in order", seq, `{"a":1,"b":"a longer value","a":"a longer value"}`, "a=1 b=a longer value a=a longer value", 1<<fA | 1<<fB, `field "a" appears twice`},
		{"twice expected", seq, `{"id":1,"a":"a longer value","b":2,"b":3,"id":"a longer value"}`, "id=1 a=a longer value b=2 b=3", 1<<fA | 1<<fB | 1<<fID, `field "b" appears twice`},
		{"prefix of a key", seq, `{"a":1,"bb":"a longer value","b":2}`, "a=1 b=2", 1<<fA | 1<<fB, ""},
		{"strict in order", strictSeq, `{"a":1,"b":"a longer value"}`, "a=1 b=a longer value", 1<<fA | 1<<fB, ""},
		{"strict unknown in order", strictSeq, `{"a":1,"zz":"a longer value"}`, "a=1", 1 << fA, `unknown field "zz"`},
		{"key too long to expect", long, `{"a":1,"a_field_name_too_long":"a longer value"}`, "a=1 a_field_name_too_long=a longer value", 3, ""},
		{"not an object", loose, `[1]`, "", 0, "record is a JSON array, not an object"},
		{"trailing", loose, `{"a":1} x`, "a=1", 1 << fA, "after the top-level value"},
		{"syntax", loose, `{"a":1,}`, "a=1", 1 << fA, "unexpected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes, seen, err := read(t, tc.fields, tc.in)
			if got := strings.Join(notes, " "); got != tc.notes {
				t.Errorf("read %q, want %q", got, tc.notes)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if err == nil && seen != tc.seen {
				t.Errorf("seen %b, want %b", seen, tc.seen)
			}
			var re *jsonrecord.Error
			if strings.Contains(tc.err, "field") && (!errors.As(err, &re) || re.Hint != "the hint") {
				t.Errorf("error %#v, want a *jsonrecord.Error with the table's hint", err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	pos := changelog.Position{Partition: "p", Offset: 7, Seq: 3}
	two := func() ([]changelog.Change, error) { return make([]changelog.Change, 2), nil }
	none := func() ([]changelog.Change, error) { return nil, nil }
	bad := func() ([]changelog.Change, error) {
		return nil, &jsonrecord.Error{Reason: "bad", Hint: "fix it"}
	}
	table := func(error) string { return "db.t" }
	for _, tc := range []struct {
		name    string
		r       *Reader
		data    string
		read    func() ([]changelog.Change, error)
		changes int
		skipped int64
		err     string
	}{
		{"changes", &Reader{}, `{"x":1234567}`, two, 2, 0, ""},
		{"tombstone", &Reader{CountSkips: true}, " null ", bad, 0, 0, ""},
		{"blank", &Reader{CountSkips: true}, " \n", bad, 0, 0, ""},
		{"no tombstones", &Reader{Format: "f", NoTombstones: true}, "null", bad, 0, 0, "f: p:3: table db.t: bad: fix it"},
		{"skipped", &Reader{CountSkips: true}, `{}`, none, 0, 1, ""},
		{"not counted", &Reader{}, `{}`, none, 0, 0, ""},
		{"refused", &Reader{Format: "f"}, `{}`, bad, 0, 0, "f: p:3: table db.t: bad: fix it"},
		{"invalid JSON", &Reader{Format: "f", HintJSON: "send JSON"}, `{`, func() ([]changelog.Change, error) {
			return nil, &jsonscan.SyntaxError{Offset: 1, Msg: "unexpected end"}
		}, 0, 0, "f: p:3: table db.t: invalid JSON at byte "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := tc.r.Decode([]byte(tc.data), pos, tc.read, table)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if err != nil {
				var fe *format.Error
				if !errors.As(err, &fe) || fe.Pos != pos || fe.Table != "db.t" {
					t.Errorf("error %#v, want a *format.Error with the position and table", err)
				}
			}
			if len(cs) != tc.changes {
				t.Fatalf("%d changes, want %d", len(cs), tc.changes)
			}
			for _, c := range cs {
				if c.Pos != pos || int(c.Size) != len(tc.data)/len(cs) {
					t.Errorf("Pos, Size = %v, %d; want %v, %d", c.Pos, c.Size, pos, len(tc.data)/len(cs))
				}
			}
			if got := tc.r.Skipped(); got != tc.skipped {
				t.Errorf("Skipped() = %d, want %d", got, tc.skipped)
			}
		})
	}
}

// TestReadAllocs checks that reading a record's fields allocates nothing:
// the closures and the record stay on the stack.
func TestReadAllocs(t *testing.T) {
	fields := NewFields("a", "b")
	data := []byte(`{"a":1,"x":"y","b":{"c":2}}`)
	var e Reader
	if n := testing.AllocsPerRun(100, func() {
		var got [2]int
		s := e.Scanner(nil, data)
		if _, err := e.ReadRecord(&s, fields, "", func(f int) error {
			got[f]++
			_, err := s.Value()
			return err
		}); err != nil {
			panic(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func ExampleFields_Read() {
	const (
		fOp = iota
		fTable
	)
	fields := NewFields("op", "table")
	var e Reader
	s := e.Scanner(nil, []byte(`{"op":"c","ts":1,"table":"t","op":"d"}`))
	_, err := e.ReadRecord(&s, fields, "check the producer", func(f int) error {
		tok, err := s.Value()
		fmt.Println(fields.Names()[f], s.Text(tok))
		return err
	})
	fmt.Println(err)
	// Output:
	// op c
	// table t
	// op d
	// field "op" appears twice
}

// TestLitKey: a key is matched as written, compactly, and a name that
// cannot be (too long, not plain) matches nothing.
func TestLitKey(t *testing.T) {
	const pad = "                "
	for _, tc := range []struct {
		prefix, name, text string
		match              bool
	}{
		{",", "op", `,"op":"c"`, true},
		{"", "op", `"op":"c"`, true},
		{",", "op", `,"op" :"c"`, false},
		{",", "op", `,"opx":"c"`, false},
		{",", "op", `,"o\u0070":"c"`, false},
		{",", "transaction", `,"transaction":null`, true},
		{",", "databaseName", `,"databaseName":"x"`, true},
		{",", "data_collection", `,"data_collection":null`, false},
		{",", `a"b`, `,"a"b":1`, false},
		{",", "caf\u00e9", `,"café":1`, false},
	} {
		k := newLitKey(0, tc.prefix, tc.name)
		if got := k.at([]byte(tc.text+pad), 0); got != tc.match {
			t.Errorf("%q%q at %q: %v, want %v", tc.prefix, tc.name, tc.text, got, tc.match)
		}
	}
	// A record that ends within 16 bytes of the key is read the general way.
	if k := newLitKey(0, ",", "op"); k.at([]byte(`,"op":"c"}`), 0) {
		t.Error("matched with fewer than 16 bytes left")
	}
}
