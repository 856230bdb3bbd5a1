package main

import (
	"fmt"
	"testing"

	"github.com/txsink/txsink/config"
)

// TestStartAttrs checks that run's start line says what each source reads:
// a PostgreSQL source logged "partitions=0" before, as if it were files.
func TestStartAttrs(t *testing.T) {
	const head = "name: shop\ntarget:\n  url: postgres://app@h:5432/t\ntables:\n  - source: public.orders\nsink:\n  transaction.multi-table.enabled: true\nsource:\n"
	cases := []struct {
		name, source, want string
	}{
		{"postgres tables", "  type: postgres\n  format: txsink-json\n  url: postgres://repl@db:5432/shop\n  tables: [public.orders, public.items]\n",
			"[pipeline shop target postgres://app@h:5432/t format txsink-json slot txsink_shop tables public.orders,public.items snapshot initial]"},
		{"postgres publication", "  type: postgres\n  format: txsink-json\n  url: postgres://repl@db:5432/shop\n  publication: pub\n  slot: s1\n  snapshot: never\n",
			"[pipeline shop target postgres://app@h:5432/t format txsink-json slot s1 publication pub snapshot never]"},
		{"files", "  type: file\n  format: debezium-json\n  partitions: [[a.jsonl], [b.jsonl, c.jsonl]]\n",
			"[pipeline shop target postgres://app@h:5432/t format debezium-json partitions 2]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(head+c.source), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			attrs, err := startAttrs(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(attrs); got != c.want {
				t.Errorf("start line attributes:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
