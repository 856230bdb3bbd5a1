package benchrun

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/txsink/txsink/config"
)

// TestResolve fills in each workload's defaults and names the first wrong
// option as a usage error, with the command line's flag names.
func TestResolve(t *testing.T) {
	valid := func() Options {
		return Options{Workload: "insert-only", Orders: 10, FlushRows: 1, FlushMiB: 1, Rounds: 1}
	}
	tests := []struct {
		name           string
		edit           func(*Options)
		wantErr        string
		wantPartitions int
		wantMode       string
	}{
		{"insert-only defaults", func(o *Options) {}, "", 1, "plain"},
		{"update-heavy defaults", func(o *Options) { o.Workload = "update-heavy" }, "", 1, "plain"},
		{"txn defaults", func(o *Options) { o.Workload = "txn" }, "", 8, "transaction"},
		{"given partitions and mode stay", func(o *Options) { o.Workload = "txn"; o.Partitions = 3; o.Mode = "both" }, "", 3, "both"},
		{"key partitions a number", func(o *Options) { o.KeyPartitions = "0" }, "", 1, "plain"},
		{"key partitions both", func(o *Options) { o.KeyPartitions = "both" }, "", 1, "plain"},
		{"version column both", func(o *Options) { o.VersionColumn = "both" }, "", 1, "plain"},
		{"foreign keys both", func(o *Options) { o.Workload = "txn"; o.ForeignKeys = "both" }, "", 8, "transaction"},
		{"foreign keys on, insert-only", func(o *Options) { o.ForeignKeys = "on" }, "", 1, "plain"},
		{"unknown foreign keys", func(o *Options) { o.ForeignKeys = "yes" }, `--foreign-keys "yes": want off, on or both`, 0, ""},
		{"foreign keys of update-heavy", func(o *Options) { o.Workload = "update-heavy"; o.ForeignKeys = "both" }, "--foreign-keys: the update-heavy workload writes the orders table alone, which references nothing; use txn or insert-only", 0, ""},
		{"unknown version column", func(o *Options) { o.VersionColumn = "yes" }, `--version-column "yes": want off, on or both`, 0, ""},
		{"unknown workload", func(o *Options) { o.Workload = "mixed" }, `--workload "mixed": want insert-only, update-heavy or txn`, 0, ""},
		{"unknown mode", func(o *Options) { o.Mode = "joined" }, `--mode "joined": want plain, transaction or both`, 0, ""},
		{"negative key partitions", func(o *Options) { o.KeyPartitions = "-1" }, `--key-partitions "-1": want a whole number of keys, 0 or more, or both`, 0, ""},
		{"key partitions not a number", func(o *Options) { o.KeyPartitions = "many" }, `--key-partitions "many": want a whole number of keys, 0 or more, or both`, 0, ""},
		{"no orders", func(o *Options) { o.Orders = 0 }, "--orders, --partitions, --flush-rows, --flush-mib and --rounds must be at least 1", 0, ""},
		{"negative partitions", func(o *Options) { o.Partitions = -2 }, "--orders, --partitions, --flush-rows, --flush-mib and --rounds must be at least 1", 0, ""},
		{"no rounds", func(o *Options) { o.Rounds = 0 }, "--orders, --partitions, --flush-rows, --flush-mib and --rounds must be at least 1", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.edit(&o)
			err := o.Resolve()
			if tc.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || ue.Msg != tc.wantErr {
					t.Fatalf("Resolve() = %v, want the usage error %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() = %v", err)
			}
			if o.Partitions != tc.wantPartitions || o.Mode != tc.wantMode {
				t.Errorf("Resolve() gave %d partitions, mode %q; want %d, %q", o.Partitions, o.Mode, tc.wantPartitions, tc.wantMode)
			}
		})
	}
}

// TestVariants lists each round's runs: every mode with every memory of
// keys' partitions asked for, the odd rounds in that order, the even ones
// the other way round.
func TestVariants(t *testing.T) {
	tests := []struct {
		mode, keys, guard, fks string
		want                   []variant
	}{
		{"plain", "", "", "", []variant{{"plain", 100, false, false}}},
		{"transaction", "7", "", "", []variant{{"transaction", 7, false, false}}},
		{"both", "", "", "", []variant{{"plain", 100, false, false}, {"transaction", 100, false, false}}},
		{"plain", "both", "", "", []variant{{"plain", 100, false, false}, {"plain", 0, false, false}}},
		{"both", "both", "", "", []variant{{"plain", 100, false, false}, {"plain", 0, false, false}, {"transaction", 100, false, false}, {"transaction", 0, false, false}}},
		{"plain", "", "on", "", []variant{{"plain", 100, true, false}}},
		{"plain", "", "", "on", []variant{{"plain", 100, false, true}}},
		{"transaction", "", "both", "both", []variant{{"transaction", 100, false, false}, {"transaction", 100, false, true}, {"transaction", 100, true, false}, {"transaction", 100, true, true}}},
		{"both", "", "both", "", []variant{{"plain", 100, false, false}, {"plain", 100, true, false}, {"transaction", 100, false, false}, {"transaction", 100, true, false}}},
	}
	for _, tc := range tests {
		got := variants(&Options{Mode: tc.mode, KeyPartitions: tc.keys, VersionColumn: tc.guard, ForeignKeys: tc.fks}, 100)
		if !slices.Equal(got, tc.want) {
			t.Errorf("variants(mode %q, key-partitions %q, version-column %q, foreign-keys %q) = %v, want %v", tc.mode, tc.keys, tc.guard, tc.fks, got, tc.want)
		}
		if odd := roundOrder(got, 3); !slices.Equal(odd, tc.want) {
			t.Errorf("round 3 runs %v, want %v", odd, tc.want)
		}
		even := slices.Clone(tc.want)
		slices.Reverse(even)
		if got := roundOrder(got, 2); !slices.Equal(got, even) {
			t.Errorf("round 2 runs %v, want %v", got, even)
		}
	}
	modes := []variant{{"plain", 1, false, false}, {"transaction", 1, false, false}}
	roundOrder(modes, 2)
	if modes[0].mode != "plain" {
		t.Error("roundOrder reversed the caller's list")
	}
}

// TestPipelineConfig: the run's pipeline reads each workload file as a
// partition of its own, into the run's tables, flushed as the options
// say, and is a config txsink accepts.
func TestPipelineConfig(t *testing.T) {
	o := &Options{Target: "sqlite:///tmp/x.db", FlushRows: 7, FlushMiB: 3, Coalesce: false}
	cfg := pipelineConfig(o, "r1", "txsink_bench_r1_", []string{"/d/p0.json", "/d/p1.json"})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "txsink-bench-r1" || !reflect.DeepEqual(cfg.Source.Raw["partitions"], [][]string{{"/d/p0.json"}, {"/d/p1.json"}}) || cfg.Source.Format != "debezium-json" {
		t.Errorf("source %+v of pipeline %q", cfg.Source, cfg.Name)
	}
	want := []config.Table{{Source: "shop.orders", Target: "txsink_bench_r1_orders"}, {Source: "shop.order_items", Target: "txsink_bench_r1_order_items"}}
	if len(cfg.Tables) != len(want) {
		t.Fatalf("tables %+v, want %+v", cfg.Tables, want)
	}
	for i, tb := range cfg.Tables {
		if tb.Source != want[i].Source || tb.Target != want[i].Target {
			t.Errorf("table %d is %s -> %s, want %s -> %s", i, tb.Source, tb.Target, want[i].Source, want[i].Target)
		}
	}
	if cfg.Sink.FlushMaxRows != 7 || cfg.Sink.FlushMaxBytes != 3<<20 || cfg.Sink.FlushCoalesce {
		t.Errorf("sink %+v", cfg.Sink)
	}
}

// TestErr names the first round whose target differed, and is nil when
// every round verified.
func TestErr(t *testing.T) {
	r := &Result{rounds: []round{{round: 1, mode: "plain", verified: true}, {round: 2, mode: "transaction", verifyErr: "orders has 1 rows"}, {round: 3, mode: "plain", verifyErr: "x"}}}
	want := "round 2, transaction mode: the target differs from the workload's final state: orders has 1 rows"
	if err := r.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %v, want %q", err, want)
	}
	r.rounds = r.rounds[:1]
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v with every round verified", err)
	}
}
