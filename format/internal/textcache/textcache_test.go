package textcache

import (
	"errors"
	"testing"
)

// TestCache: a text is parsed once; Match finds the last text at the start
// of data, and only there; a failed parse is not remembered.
func TestCache(t *testing.T) {
	var c Cache[*string]
	parses := 0
	parse := func(b []byte) (*string, error) {
		parses++
		if string(b) == `{"bad":1}` {
			return nil, errors.New("bad")
		}
		s := string(b)
		return &s, nil
	}
	if _, _, ok := c.Match([]byte(`{"a":1}`)); ok {
		t.Fatal("Match on an empty cache")
	}
	a, err := c.Lookup([]byte(`{"a":1}`), parse)
	if err != nil || *a != `{"a":1}` {
		t.Fatalf("Lookup = %v, %v", a, err)
	}
	if n, v, ok := c.Match([]byte(`{"a":1},"row":{}`)); !ok || n != 7 || v != a {
		t.Errorf("Match = %d, %v, %v; want 7 and the parsed value", n, v, ok)
	}
	if _, _, ok := c.Match([]byte(`{"a":2}`)); ok {
		t.Error("Match of another text")
	}
	if b, _ := c.Lookup([]byte(`{"a":1}`), parse); b != a || parses != 1 {
		t.Errorf("a second Lookup parsed again (%d parses) or gave another value", parses)
	}
	for range 2 {
		if _, err := c.Lookup([]byte(`{"bad":1}`), parse); err == nil {
			t.Error("a failed parse gave no error")
		}
	}
	if parses != 3 {
		t.Errorf("%d parses, want 3: a failed parse is not remembered", parses)
	}
}
