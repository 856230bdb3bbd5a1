package diagnose

import (
	"context"
	"errors"
	"log/slog"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/sink"
	"github.com/txsink/txsink/source"
)

// TableDDL is the statement that creates one routed target table from
// the changelog's declaration of it (txsink schema).
type TableDDL struct {
	// Source is the source table of the first sampled change that
	// reaches the target table, or the entry's pattern when none does.
	Source string
	// Target is the target table.
	Target schema.Name
	// At is that change's position, zero when the tables entry declares
	// the columns; From says what declared the table ("the Kafka Connect
	// schema", "mysqlType", "the columns of tables entry inventory.*").
	At   changelog.Position
	From string
	// Exists says the target has the table already.
	Exists bool
	// Statements create the table; nil when Err says why they cannot.
	Statements []string
	Err        error
}

// ErrNotSampled is the Err of a tables entry no sampled change reaches:
// what declares its table is not known.
var ErrNotSampled = errors.New("no sampled change reaches it")

// Schema samples the source as check does (opts.Sample records of each
// file or partition) and returns, for every target table the sampled
// changes are routed to, in the order first seen, the statements
// schema.create: missing would create it with, from its first change's
// declaration; then the tables entries without wildcards that no
// sampled change reaches. It writes nothing, to the target or the source.
func Schema(ctx context.Context, cfg *config.Config, opts Options) ([]TableDDL, error) {
	target, err := sink.OpenReadOnly(ctx, cfg.Target.URL, opts.BaseDir)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	d, err := source.Lookup(cfg.Source.Type)
	if err != nil {
		return nil, err
	}
	src, err := d.Open(source.Settings(cfg.Source.Settings()), source.Env{Pipeline: cfg.Name, BaseDir: opts.BaseDir, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	sm, ok := src.(source.Sampler)
	if !ok {
		return nil, errors.New("source type " + cfg.Source.Type + " cannot be sampled")
	}
	dec, err := formats.New(cfg.Source.Format, format.Options(cfg.Source.FormatOptions))
	if err != nil {
		return nil, err
	}
	router := route.New(cfg)
	var out []TableDDL
	seen := map[schema.Name]bool{}
	_, err = sm.Sample(ctx, source.SampleRequest{N: opts.Sample}, func(r source.Record) error {
		changes, err := dec.Decode(r.Data, r.Pos)
		if err != nil {
			return nil // check reports it; a run stops at it
		}
		format.KeyTypes(dec, changes, r.Key)
		for i := range changes {
			ch := &changes[i]
			if !ch.Kind.Writes() {
				continue
			}
			rt, err := router.Route(ch.Table)
			if err != nil || rt.Skipped() {
				continue
			}
			hops := rt.History
			if rt.Entry != nil {
				hops = append([]route.Hop{{Entry: rt.Entry, Target: rt.Target}}, hops...)
			}
			for _, h := range hops {
				if seen[h.Target] {
					continue
				}
				seen[h.Target] = true
				td := TableDDL{Source: ch.Table.String(), Target: h.Target, At: ch.Pos}
				if ch.Types != nil {
					td.From = ch.Types.From
				}
				out = append(out, tableDDL(ctx, target, h.Entry, td, ch))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range cfg.Tables {
		tc := &cfg.Tables[i]
		if !route.Known(tc) {
			continue
		}
		if _, name, err := route.Entry(tc); err == nil && !seen[name] {
			seen[name] = true
			out = append(out, tableDDL(ctx, target, tc, TableDDL{Source: tc.Source, Target: name, Err: ErrNotSampled}, nil))
		}
	}
	return out, nil
}

// tableDDL completes td, the table of entry tc reached by sampled change
// ch (nil when none does): whether it exists, and its statements, from
// the entry's declared columns when it has them, else from ch's.
func tableDDL(ctx context.Context, target sink.Sink, tc *config.Table, td TableDDL, ch *changelog.Change) TableDDL {
	_, derr := target.Describe(ctx, td.Target)
	td.Exists = derr == nil
	if len(tc.Columns) > 0 {
		td.At = changelog.Position{}
		td.From = "the columns of tables entry " + tc.Source
	} else if ch == nil {
		return td // td.Err says no sampled change reaches it
	}
	td.Statements, td.Err = CreateStatements(target, tc, td.Target, ch)
	return td
}
