package starrocks

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkTransaction measures one multi-table transaction of two loads
// of 100 rows each through the fake (or a real cluster): begin, load,
// load, commit. The fake is not StarRocks: the number says what the
// client and the fake cost, nothing of a cluster.
func BenchmarkTransaction(b *testing.B) {
	cl := newCluster(b)
	cl.ddl(b, ordersDDL, itemsDDL)
	c, err := New(Config{LoadURLs: []string{cl.loadURL}, User: cl.user, Password: cl.password, Database: cl.db, HTTPClient: cl.http})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var orders, items strings.Builder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		orders.Reset()
		items.Reset()
		orders.WriteByte('[')
		items.WriteByte('[')
		for r := range 100 {
			if r > 0 {
				orders.WriteByte(',')
				items.WriteByte(',')
			}
			id := strconv.Itoa(i*100 + r)
			fmt.Fprintf(&orders, `{"id":%s,"note":"n","total":"1.00","__op":0}`, id)
			fmt.Fprintf(&items, `{"order_id":%s,"line":1,"sku":"s","__op":0}`, id)
		}
		orders.WriteByte(']')
		items.WriteByte(']')
		x, err := c.Begin(ctx, "bench-"+strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.Load(ctx, "orders", orderCols, []byte(orders.String())); err != nil {
			b.Fatal(err)
		}
		if _, err := x.Load(ctx, "items", itemCols, []byte(items.String())); err != nil {
			b.Fatal(err)
		}
		if err := x.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(200*b.N)/b.Elapsed().Seconds(), "rows/s")
}
