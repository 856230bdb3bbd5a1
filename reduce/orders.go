package reduce

import (
	"time"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/commit"
)

// noteOrder records that the buffer consumed a change of partition at o
// (see changelog.Order): the unit Take makes carries, per partition and
// log, the latest place, which the engine stores with the position. A
// zero o tells nothing; a change without one (nil: its decoder was not
// asked, see format.OrderReader) is not noted at all, at no cost. The changes of a partition and log come in runs,
// so most find their entry without a search.
//
// A new start of logs (o.Restart) drops their entries and is noted after
// the others: the places noted after it are the logs' anew, not to be
// compared with those before (see the engine's mergeOrders).
func (b *Buffer) noteOrder(part string, o changelog.Order) {
	if o.Log == "" {
		return
	}
	if o.Restart {
		kept := b.orders[:0]
		for _, e := range b.orders {
			if e.Partition != part || !o.Restarts(e.Log) {
				kept = append(kept, e)
			}
		}
		b.orders = append(kept, commit.Order{Partition: part, Order: o})
		b.lastOrder = 0
		return
	}
	i := b.lastOrder
	if i >= len(b.orders) || b.orders[i].Partition != part || b.orders[i].Log != o.Log || b.orders[i].Restart {
		i = -1
		for j := range b.orders {
			if b.orders[j].Partition == part && b.orders[j].Log == o.Log && !b.orders[j].Restart {
				i = j
				break
			}
		}
		if i < 0 {
			b.orders = append(b.orders, commit.Order{Partition: part, Order: o})
			b.lastOrder = len(b.orders) - 1
			return
		}
		b.lastOrder = i
	}
	if o.Compare(b.orders[i].Order) > 0 {
		b.orders[i].Order = o
	}
}

// SkipChange is Skip for a change c that is consumed without a row to
// apply (a table the pipeline skips): progress moves past it, and its
// place in its source's log (c.Order) is the unit's, as an applied
// change's is.
func (b *Buffer) SkipChange(c *changelog.Change, now time.Time) {
	if c.Order != nil {
		b.noteOrder(c.Pos.Partition, *c.Order)
	}
	b.Skip(c.Pos, now)
}
