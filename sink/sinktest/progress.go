package sinktest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/internal/fault"
	"github.com/txsink/txsink/sink"
)

// items is the table the progress tests write.
const items = `CREATE TABLE items (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)`

// starrocksItems is items in StarRocks' DDL.
const starrocksItems = `CREATE TABLE items (id INT NOT NULL, v INT NOT NULL) PRIMARY KEY (id) DISTRIBUTED BY HASH(id)`

func item(id int64) changelog.Row {
	return row("id", changelog.Number(strconv.FormatInt(id, 10)), "v", changelog.Number(strconv.FormatInt(id*10, 10)))
}

// insertUnit buffers an insert of item id and returns the buffer as one
// unit, unapplied.
func (f *feeder) insertUnit(id int64) *commit.Unit {
	f.t.Helper()
	f.must(changelog.Insert, "items", changelog.Row{}, item(id))
	return f.take()
}

// testProgress: the positions a unit reaches are stored with it, read
// back by Progress and by another instance's Claim, with the marks the
// unit carries; a partition never committed is claimed at position 0.
func testProgress(t *testing.T, s *Server) {
	ctx := context.Background()
	s.exec(t, s.pick(items, starrocksItems))
	f := newFeeder(t, s)
	if p, err := f.s.Progress(ctx, pipeline); err != nil || len(p) != 0 {
		t.Fatalf("Progress before any commit = %v, %v; want none", p, err)
	}
	u := f.insertUnit(1)
	u.Marks = map[string]string{"p0": "mark-1"}
	if err := f.apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	f.must(changelog.Insert, "items", changelog.Row{}, item(2))
	f.flush()
	want := changelog.Position{Partition: "p0", Offset: 200, Seq: 2}
	if p, err := f.s.Progress(ctx, pipeline); err != nil || p["p0"] != want || len(p) != 1 {
		t.Errorf("Progress = %v, %v; want p0 at %v", p, err, want)
	}
	if pk, ok := f.s.(sink.ProgressKeeper); ok {
		// The second unit carried no mark: p0 is stored without one.
		if m, err := pk.Marks(ctx, pipeline); err != nil || len(m) != 0 {
			t.Errorf("Marks after a unit without marks = %v, %v; want none", m, err)
		}
	}
	g := newFeeder(t, s)
	claimed, err := g.s.Claim(ctx, pipeline, []string{"p0", "p9"})
	if err != nil {
		t.Fatal(err)
	}
	if claimed["p0"] != want || claimed["p9"].Offset != 0 || claimed["p9"].Seq != 0 {
		t.Errorf("Claim = %v; want p0 at %v and p9 at its start", claimed, want)
	}
	if got := s.query(t, "SELECT id, v FROM items ORDER BY id"); got != "1|10\n2|20" {
		t.Errorf("items = %q, want 1|10 and 2|20", got)
	}
}

// testZombieIsFenced: once a second instance claims a partition, the
// first one's Apply of it is refused with ErrFenced and writes nothing,
// its Committed says so too, and the second one commits.
func testZombieIsFenced(t *testing.T, s *Server) {
	ctx := context.Background()
	s.exec(t, s.pick(items, starrocksItems))
	first := newFeeder(t, s)
	first.must(changelog.Insert, "items", changelog.Row{}, item(1))
	first.flush()
	second := newFeeder(t, s)
	if _, err := second.s.Claim(ctx, pipeline, []string{"p0"}); err != nil {
		t.Fatal(err)
	}
	u := first.insertUnit(2)
	err := first.apply(ctx, u)
	if !errors.Is(err, sink.ErrFenced) {
		t.Fatalf("the zombie's Apply: err = %v, want ErrFenced", err)
	}
	if !strings.Contains(err.Error(), "another instance") {
		t.Errorf("fenced error %q lacks %q", err, "another instance")
	}
	if k := errkind.Of(err); k != errkind.Permanent {
		t.Errorf("errkind.Of(fenced) = %v, want permanent", k)
	}
	if _, err := first.s.Committed(ctx, u); !errors.Is(err, sink.ErrFenced) {
		t.Errorf("the zombie's Committed: err = %v, want ErrFenced", err)
	}
	if got := s.query(t, "SELECT id FROM items ORDER BY id"); got != "1" {
		t.Errorf("items after the zombie's Apply = %q, want only 1", got)
	}
	second.seq = first.seq
	second.must(changelog.Insert, "items", changelog.Row{}, item(3))
	second.flush()
	if got := s.query(t, "SELECT id FROM items ORDER BY id"); got != "1\n3" {
		t.Errorf("items after the new owner's commit = %q, want 1 and 3", got)
	}
	if p, err := second.s.Progress(ctx, pipeline); err != nil || p["p0"].Offset != 300 {
		t.Errorf("Progress = %v, %v; want p0 at 300", p, err)
	}
}

// errLost is the lost answer of a COMMIT the server carried out.
var errLost = errors.New("sinktest: the connection broke after COMMIT (injected)")

// testLostCommitAnswer: a COMMIT whose answer is lost is a transient
// error, and Committed tells that the unit landed, so a retry does not
// apply it twice; of a unit never applied it says it did not.
func testLostCommitAnswer(t *testing.T, s *Server) {
	ctx := context.Background()
	s.exec(t, s.pick(items, starrocksItems))
	f := newFeeder(t, s)
	u := f.insertUnit(1)
	lost := fault.With(ctx, &fault.Hooks{AfterCommit: func(*commit.Unit) error { return errLost }})
	err := f.apply(lost, u)
	if !errors.Is(err, errLost) || !errkind.IsTransient(err) {
		t.Fatalf("Apply with a lost answer: err = %v, want the lost answer, transient", err)
	}
	done, err := f.s.Committed(ctx, u)
	if err != nil || !done {
		t.Errorf("Committed after a lost answer = %v, %v; want true", done, err)
	}
	if got := s.query(t, "SELECT id, v FROM items"); got != "1|10" {
		t.Errorf("items = %q, want the one row 1|10", got)
	}
	next := f.insertUnit(2)
	if done, err := f.s.Committed(ctx, next); err != nil || done {
		t.Errorf("Committed of a unit never applied = %v, %v; want false", done, err)
	}
}

// testFailedCommit: a unit that fails just before its COMMIT leaves
// nothing, Committed says it did not land, and it applies whole when
// given again.
func testFailedCommit(t *testing.T, s *Server) {
	ctx := context.Background()
	s.exec(t, s.pick(items, starrocksItems))
	f := newFeeder(t, s)
	f.must(changelog.Insert, "items", changelog.Row{}, item(1))
	f.must(changelog.Insert, "items", changelog.Row{}, item(2))
	u := f.take()
	refuse := errors.New("sinktest: refused before COMMIT (injected)")
	failing := fault.With(ctx, &fault.Hooks{BeforeCommit: func(*commit.Unit) error { return refuse }})
	if err := f.apply(failing, u); !errors.Is(err, refuse) {
		t.Fatalf("Apply failing before COMMIT: err = %v, want the injected one", err)
	}
	if done, err := f.s.Committed(ctx, u); err != nil || done {
		t.Errorf("Committed after a failed COMMIT = %v, %v; want false", done, err)
	}
	if got := s.query(t, "SELECT COUNT(*) FROM items"); got != "0" {
		t.Errorf("items after a failed COMMIT has %s rows", got)
	}
	if err := f.apply(ctx, u); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if got := s.query(t, "SELECT id FROM items ORDER BY id"); got != "1\n2" {
		t.Errorf("items = %q, want 1 and 2", got)
	}
	if done, err := f.s.Committed(ctx, u); err != nil || !done {
		t.Errorf("Committed after the unit landed = %v, %v; want true", done, err)
	}
}
