package txn

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/txsink/txsink/changelog"
)

// changes is what the tests keep of finished transactions: their changes
// themselves, so that a plan can be checked change by change.
type changes = []*changelog.Change

// newKeeping returns a Machine whose finished transactions keep their
// changes (see stepKeeping).
func newKeeping(cfg Config) (*Machine[changes], error) { return New[changes](cfg) }

// stepKeeping steps c as an engine does: at a transaction end it first
// adds the transaction (Open, then c) to Finished, and takes it out again
// when the end is refused.
func stepKeeping(m *Machine[changes], c changelog.Change, now time.Time) error {
	if !c.TxnEnd {
		return m.Step(c, now)
	}
	fin := m.Finished(c.Pos.Partition)
	prev := *fin
	*fin = append(append(prev[:len(prev):len(prev)], m.Open(c.Pos.Partition)...), &c)
	err := m.Step(c, now)
	var te *Error
	if errors.As(err, &te) {
		*fin = prev
	}
	return err
}

// describeKept renders a plan with each change of its chunks on a line:
//
//	plan interval: 2 txns, 3 changes, 250 bytes
//	  p0:1 t1 orders +I id=1
//	  p0:2 t1 items +I id=10 end
//	  p1:1 t7 orders -D id=4 end
//	progress p0:2 p1:1
func describeKept(p *Plan[changes]) string {
	return p.describe(func(ck Chunk[changes]) string {
		var b strings.Builder
		for _, c := range ck.Value {
			b.WriteString("  ")
			b.WriteString(describeChange(c))
			b.WriteByte('\n')
		}
		return b.String()
	})
}

func describeChange(c *changelog.Change) string {
	var b strings.Builder
	b.WriteString(c.Pos.String())
	b.WriteByte(' ')
	if c.TxnID != "" {
		b.WriteString(c.TxnID)
		b.WriteByte(' ')
	}
	b.WriteString(c.Table.String())
	b.WriteByte(' ')
	b.WriteString(c.Kind.String())
	img := c.Image()
	for i, n := range img.Names {
		fmt.Fprintf(&b, " %s=%v", n, img.Values[i])
	}
	if c.TxnEnd {
		b.WriteString(" end")
	}
	return b.String()
}
