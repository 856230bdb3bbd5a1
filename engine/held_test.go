package engine

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
)

// TestHeldArenas: in transaction mode an arena is recycled only once the
// machine holds none of its changes (their transactions have ended), in
// every partition it holds changes of (should a job span several), and a
// partition given up no longer keeps an arena waiting.
func TestHeldArenas(t *testing.T) {
	pos := func(part string, off int64) changelog.Position {
		return changelog.Position{Partition: part, Offset: off}
	}
	l := &txnLoop{ended: map[string]int64{}}
	a, b, c := new(changelog.Arena), new(changelog.Arena), new(changelog.Arena)
	hold := func(mem *changelog.Arena, stepped ...changelog.Position) {
		for _, p := range stepped {
			l.unheld = notePos(l.unheld, p)
		}
		l.hold(mem)
	}
	heldNow := func() string {
		var s []string
		for _, h := range l.held {
			switch h.mem {
			case a:
				s = append(s, "a")
			case b:
				s = append(s, "b")
			case c:
				s = append(s, "c")
			}
		}
		return fmt.Sprint(s)
	}
	end := func(p changelog.Position) {
		l.ended[p.Partition] = p.Offset
		l.release()
	}
	hold(a, pos("k/0", 3), pos("k/1", 5), pos("k/0", 10)) // a job of two partitions
	hold(b, pos("k/0", 20))
	hold(c) // every change of it was applied already: nothing to wait for
	for _, step := range []struct {
		do   func()
		want string
	}{
		{func() { end(pos("k/0", 15)) }, "[a b]"}, // c goes; a waits for k/1
		{func() { end(pos("k/1", 4)) }, "[a b]"},  // k/1 not past a's 5 yet
		{func() { end(pos("k/1", 5)) }, "[b]"},
		{func() { l.forget("k/0") }, "[]"}, // the machine dropped k/0's changes
	} {
		step.do()
		if got := heldNow(); got != step.want {
			t.Fatalf("held %s, want %s", got, step.want)
		}
	}
	// A partition assigned again starts afresh: an old end does not let
	// its new changes' arena go.
	hold(a, pos("k/0", 12))
	end(pos("k/1", 50))
	if got := heldNow(); got != "[a]" {
		t.Fatalf("held %s after k/0 was given up and read again, want [a]", got)
	}
}
