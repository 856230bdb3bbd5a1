package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/engine"
	"github.com/txsink/txsink/sink/sqlsink/sqlite"
)

// Example feeds changes to an engine from Go code: the last change of each
// key wins, and Flush commits them with their progress in one transaction.
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.DB().Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL)`); err != nil {
		log.Fatal(err)
	}

	cfg := config.Default()
	cfg.Name = "example"
	cfg.Target.URL = "sqlite::memory:"
	cfg.Tables = []config.Table{{Source: "shop.orders"}}
	e, err := engine.New(ctx, &cfg, engine.WithTarget(db))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	orders := changelog.Table{Namespace: "shop", Name: "orders"}
	changes := []changelog.Change{
		{Kind: changelog.Insert, Table: orders, After: changelog.RowOf("id", int64(1), "status", "NEW")},
		{Kind: changelog.UpdateAfter, Table: orders, After: changelog.RowOf("id", int64(1), "status", "PAID")},
		{Kind: changelog.Insert, Table: orders, After: changelog.RowOf("id", int64(2), "status", "NEW")},
		{Kind: changelog.Delete, Table: orders, Before: changelog.RowOf("id", int64(2))},
	}
	for i := range changes {
		changes[i].Pos = changelog.Position{Partition: "orders-feed", Offset: int64(i + 1), Seq: int64(i + 1)}
		if err := e.Add(ctx, &changes[i]); err != nil {
			log.Fatal(err)
		}
	}
	if err := e.Flush(ctx); err != nil {
		log.Fatal(err)
	}

	rows, err := db.DB().Query(`SELECT id, status FROM orders`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var status string
		rows.Scan(&id, &status)
		fmt.Println(id, status)
	}
	st := e.Stats()
	fmt.Printf("%d changes -> %d upserted, %d deleted in %d commit\n", len(changes), st.Upserted, st.Deleted, st.Commits)
	// Output:
	// 1 PAID
	// 4 changes -> 1 upserted, 1 deleted in 1 commit
}
