package diagnose

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/route"
)

// A run reads an update's before image for its key columns only once it
// knows the table's key (format.BeforeNarrower; README, "Values"), and
// then does not refuse a column named twice outside the key: the sample's
// decoder is told the same keys at the same points, so that check
// refuses what run refuses. Run tells the tables its tables entries name
// at its start, and a table a wildcard matches when its first change is
// routed.

// narrowKnown makes dec the sample's decoder and tells it, when it can be
// told, the key of every table a tables entry whose route is known names
// (resolved already, see checker.run).
func (c *checker) narrowKnown(dec format.Decoder) {
	c.narrower, _ = dec.(format.BeforeNarrower)
	if c.narrower == nil {
		return
	}
	for i := range c.cfg.Tables {
		tc := &c.cfg.Tables[i]
		if !route.Known(tc) {
			continue
		}
		if src, name, err := route.Entry(tc); err == nil {
			if ti := c.tables[name]; ti != nil {
				c.narrowBefore(src, ti)
			}
		}
	}
}

// narrowBefore tells the sample's decoder the key of ti, whose changes
// come from source table src, once, as run tells its decoder (an
// append-only table takes no updates).
func (c *checker) narrowBefore(src changelog.Table, ti *tableInfo) {
	if c.narrower == nil || c.narrowed[src] || !ti.ok || ti.entry.AppendOnly || len(ti.key) == 0 {
		return
	}
	if c.narrowed == nil {
		c.narrowed = map[changelog.Table]bool{}
	}
	c.narrowed[src] = true
	c.narrower.NarrowBefore(src, ti.key)
}
