package route_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/errkind"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
)

func TestRoute(t *testing.T) {
	tables := []config.Table{
		{Source: "shop.orders", Target: "sales.orders_copy"},
		{Source: "shop.own", Target: "TXSINK_PROGRESS"},
		{Source: "shop.*"},
	}
	tests := []struct {
		name    string
		src     changelog.Table
		skip    bool // skip-unknown-tables
		entry   int  // index of the entry routed by; -1 for none
		target  schema.Name
		unknown bool   // refused: no entry matches
		refused string // refused: the reason says this
	}{
		{"fixed target", changelog.Table{Namespace: "shop", Name: "orders"}, false, 0, schema.Name{Namespace: "sales", Name: "orders_copy"}, false, ""},
		{"case ignored", changelog.Table{Namespace: "SHOP", Name: "Orders"}, false, 0, schema.Name{Namespace: "sales", Name: "orders_copy"}, false, ""},
		{"wildcard by own name", changelog.Table{Namespace: "shop", Name: "items"}, false, 2, schema.Name{Name: "items"}, false, ""},
		{"reserved target", changelog.Table{Namespace: "shop", Name: "own"}, false, -1, schema.Name{}, false, "txsink's own tables"},
		{"reserved name", changelog.Table{Namespace: "shop", Name: "Txsink_Dead_Letters"}, false, -1, schema.Name{}, false, "txsink's own tables"},
		{"dotted name", changelog.Table{Namespace: "shop", Name: "victim.t"}, false, -1, schema.Name{}, false, "holds a dot"},
		{"quote in name", changelog.Table{Namespace: "shop", Name: "t`; DROP TABLE t; --"}, false, -1, schema.Name{}, false, "quote character"},
		{"unknown", changelog.Table{Namespace: "crm", Name: "users"}, false, -1, schema.Name{}, true, "unknown table"},
		{"unknown skipped", changelog.Table{Namespace: "crm", Name: "users"}, true, -1, schema.Name{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Tables: tables, SkipUnknownTables: tt.skip}
			rt, err := route.New(cfg).Route(tt.src)
			if tt.refused != "" {
				var re *route.Error
				if !errors.As(err, &re) {
					t.Fatalf("Route(%v) = %+v, %v; want a *route.Error", tt.src, rt, err)
				}
				if re.Unknown != tt.unknown || !strings.Contains(re.Reason, tt.refused) || re.Hint == "" {
					t.Errorf("refusal %+v, want Unknown %v and a reason saying %q, with a hint", re, tt.unknown, tt.refused)
				}
				if !errkind.IsBadInput(fmt.Errorf("wrapped: %w", err)) {
					t.Errorf("refusal %v is not bad input", err)
				}
				if w, _ := errkind.WhereOf(err); w.Table != re.Table || re.Table == "" {
					t.Errorf("WhereOf names %q, want %q", w.Table, re.Table)
				}
				if err.Error() != re.Reason+"; "+re.Hint {
					t.Errorf("message %q, want the reason and the hint", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Route(%v): %v", tt.src, err)
			}
			if tt.entry < 0 {
				if !rt.Skipped() {
					t.Errorf("Route(%v) = %+v, want it skipped", tt.src, rt)
				}
				return
			}
			if rt.Entry != &cfg.Tables[tt.entry] || rt.Target != tt.target {
				t.Errorf("Route(%v) = %+v, want entry %d to %v", tt.src, rt, tt.entry, tt.target)
			}
		})
	}
}

// TestRouteRefusalMessages: a refused route says what config.Table.Resolve
// says, word for word, whether at a change or for an entry at start.
func TestRouteRefusalMessages(t *testing.T) {
	tc := config.Table{Source: "shop.txsink_progress"}
	cfg := &config.Config{Tables: []config.Table{tc}}
	src := changelog.Table{Namespace: "shop", Name: "txsink_progress"}
	_, want := cfg.Tables[0].Resolve(src)
	if want == nil {
		t.Fatal("Resolve accepted a reserved name")
	}
	_, got := route.New(cfg).Route(src)
	gotSrc, _, gotEntry := route.Entry(&cfg.Tables[0])
	if got == nil || got.Error() != want.Error() || gotEntry == nil || gotEntry.Error() != want.Error() {
		t.Errorf("Route: %v, Entry: %v; want %v", got, gotEntry, want)
	}
	if gotSrc != src {
		t.Errorf("Entry read the source as %+v, want %+v", gotSrc, src)
	}
	var re *config.RouteError
	if !errors.As(got, &re) {
		t.Errorf("%v does not wrap the *config.RouteError", got)
	}
}

func TestKnown(t *testing.T) {
	for _, tt := range []struct {
		tc   config.Table
		want bool
	}{
		{config.Table{Source: "shop.orders"}, true},
		{config.Table{Source: "shop.*"}, false},
		{config.Table{Source: "shop.order?"}, false},
		{config.Table{Source: "shop.*", Target: "all"}, true},
	} {
		if got := route.Known(&tt.tc); got != tt.want {
			t.Errorf("Known(%+v) = %v, want %v", tt.tc, got, tt.want)
		}
	}
}

func TestSourceTable(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want changelog.Table
	}{
		{"orders", changelog.Table{Name: "orders"}},
		{"shop.orders", changelog.Table{Namespace: "shop", Name: "orders"}},
		{"shop.victim.t", changelog.Table{Namespace: "shop", Name: "victim.t"}},
	} {
		if got := route.SourceTable(tt.in); got != tt.want {
			t.Errorf("SourceTable(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestRouteHistory routes tables matched by history entries: the first
// upsert entry that matches, every history entry that matches in the
// list's order wherever it stands, only history entries, and a table
// routed to one target twice refused.
func TestRouteHistory(t *testing.T) {
	h := func(src, target string) config.Table {
		return config.Table{Source: src, Target: target, Mode: config.ModeHistory}
	}
	tables := []config.Table{
		h("shop.*", "all_hist"),
		{Source: "shop.orders"},
		h("shop.orders", "orders_hist"),
		{Source: "shop.*"},
		h("audit.*", "audit_hist"),
		h("twice.t", "dup"), h("twice.*", "dup"),
		{Source: "clash.t", Target: "c"}, h("clash.*", "c"),
	}
	tests := []struct {
		src     changelog.Table
		entry   int      // -1: none
		history []string // targets, in order
		refused string
	}{
		{changelog.Table{Namespace: "shop", Name: "orders"}, 1, []string{"all_hist", "orders_hist"}, ""},
		{changelog.Table{Namespace: "shop", Name: "items"}, 3, []string{"all_hist"}, ""},
		{changelog.Table{Namespace: "audit", Name: "log"}, -1, []string{"audit_hist"}, ""},
		{changelog.Table{Namespace: "twice", Name: "t"}, -1, nil, "two history entries"},
		{changelog.Table{Namespace: "clash", Name: "t"}, -1, nil, "applies it to by key"},
	}
	cfg := &config.Config{Tables: tables}
	r := route.New(cfg)
	for _, tt := range tests {
		t.Run(tt.src.String(), func(t *testing.T) {
			rt, err := r.Route(tt.src)
			if tt.refused != "" {
				var re *route.Error
				if !errors.As(err, &re) || !strings.Contains(re.Reason, tt.refused) {
					t.Fatalf("Route = %v, want a refusal saying %q", err, tt.refused)
				}
				if errkind.IsBadInput(err) {
					t.Error("a table routed to one target twice is bad input; want a permanent error (the configuration is wrong)")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.entry < 0 && rt.Entry != nil || tt.entry >= 0 && rt.Entry != &cfg.Tables[tt.entry] {
				t.Errorf("entry = %v, want tables[%d]", rt.Entry, tt.entry)
			}
			var got []string
			for _, hop := range rt.History {
				got = append(got, hop.Target.Name)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.history) {
				t.Errorf("history = %v, want %v", got, tt.history)
			}
		})
	}
}
