// Package postgres is the source of type "postgres": it reads a PostgreSQL
// database's changes directly, by logical replication with the pgoutput
// plugin (protocol version 1), with no Debezium and no Kafka.
//
// It guarantees:
//
//   - source transactions stay whole: each committed transaction's row
//     changes become txsink-json records (format/native) carrying the
//     transaction's id, the last one marked txn_end, in commit order, so
//     that transaction mode commits whole source transactions;
//   - exactly once across stops: every record of a transaction has the
//     same position, the transaction's commit LSN plus one, which the engine
//     stores in the target with the transaction; START_REPLICATION there
//     decodes every transaction that committed after it and none before
//     (PostgreSQL skips a transaction whose commit record starts before the
//     start point), so a resumed run replays none and loses none;
//   - the slot never releases what the target lacks: standby status
//     feedback confirms only positions the target committed (Committer).
//     So while the published tables see no change the slot keeps the WAL
//     of other tables' changes since the last one;
//   - row images as PostgreSQL sends them: inserts and updates carry the
//     new row, updates and deletes the old key (REPLICA IDENTITY DEFAULT or
//     USING INDEX) or the whole old row (FULL); an unchanged TOASTed value,
//     which pgoutput does not send, is left out of the image, so the
//     target keeps its value and never gets a NULL for it;
//   - TRUNCATE of a published table is refused with an error naming the
//     table (source.truncate: refuse, the default): the target is never
//     emptied by it; or, under source.truncate: delete-all, it becomes one
//     changelog.Truncate change per table it names, at its place in its
//     transaction (a txsink-json "TRUNCATE" record), which the target
//     applies as a delete of every row inside the unit's transaction.
//
// Plain mode (sink.transaction.multi-table.enabled off) may commit part of
// a source transaction, and a position inside a transaction cannot be
// resumed from (PostgreSQL resumes at transaction boundaries), so the
// configuration refuses this source without transaction mode.
//
// The initial snapshot (snapshot: initial, the default) is consistent with
// the stream: the slot is created with an exported snapshot, the tables
// are read in transactions that imported it (SET TRANSACTION SNAPSHOT),
// so they show exactly the transactions committed before the slot's
// consistent point, and streaming starts at that point, which PostgreSQL
// decodes every later transaction from. The tables are read in primary
// key chunks, several at once, each chunk a source transaction committed
// with the copy's progress (the position's mark, see Marker); a copy
// stopped half way resumes from each table's last committed chunk in a
// new snapshot, and the stream skips the changes that snapshot already
// holds (snapshot.go, docs/postgres-snapshot.md).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Type is the source type of this package (the config's source.type).
const Type = "postgres"

// Format is the only source.format this source writes.
const Format = "txsink-json"

func init() { source.Register(Type, Driver{}) }

// Values of Config.Snapshot.
const (
	// SnapshotInitial copies the tables, consistently with the stream,
	// when the slot is created (the default).
	SnapshotInitial = "initial"
	// SnapshotNever streams from where the slot is, copying nothing.
	SnapshotNever = "never"
)

// Values of Config.Truncate.
const (
	// TruncateRefuse stops the pipeline at a TRUNCATE (the default).
	TruncateRefuse = "refuse"
	// TruncateDeleteAll applies a TRUNCATE as a delete of every row of
	// its tables, in its transaction.
	TruncateDeleteAll = "delete-all"
)

// Config is the PostgreSQL source's part of the config's source section.
// Its keys are declared, and documented once, in Driver.Keys (printed in
// docs/config.md); each field is the key its tag names.
type Config struct {
	// URL is `source.url`; see docs/config.md.
	URL string `source:"url"`
	// Tables is `source.tables`; see docs/config.md.
	Tables []string `source:"tables"`
	// Publication is `source.publication`; see docs/config.md.
	Publication string `source:"publication"`
	// Slot is `source.slot`; see docs/config.md. "" means DefaultSlot of
	// the pipeline.
	Slot string `source:"slot"`
	// Snapshot is `source.snapshot`; see docs/config.md. "" is
	// SnapshotInitial.
	Snapshot string `source:"snapshot"`
	// Parallel is `source.snapshot.parallel`; see docs/config.md.
	Parallel int `source:"snapshot.parallel"`
	// ChunkRows is `source.snapshot.chunk-rows`; see docs/config.md.
	ChunkRows int `source:"snapshot.chunk-rows"`
	// Truncate is `source.truncate`; see docs/config.md. "" is
	// TruncateRefuse.
	Truncate string `source:"truncate"`
	// Format is `source.format`; see docs/config.md. It must be Format.
	Format string `source:"format"`
}

// slotName matches what PostgreSQL accepts as a replication slot's name.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// DefaultSlot returns the slot of a pipeline that names none:
// txsink_<pipeline>, with what a slot name cannot hold replaced by '_'.
func DefaultSlot(pipeline string) string {
	var b strings.Builder
	b.WriteString("txsink_")
	for _, r := range strings.ToLower(pipeline) {
		if b.Len() == 63 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Driver opens PostgreSQL sources.
type Driver struct{}

// Open implements source.Driver: it checks the settings, connecting
// nowhere.
func (Driver) Open(settings source.Settings, env source.Env) (source.Source, error) {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return nil, err
	}
	if c.Slot == "" {
		c.Slot = DefaultSlot(env.Pipeline)
	}
	var errs []error
	switch {
	case c.URL == "":
		errs = append(errs, errors.New("source.url is required for the postgres source: the source database, postgres://USER:PASSWORD@HOST:5432/DB, as a role with REPLICATION"))
	default:
		if _, err := pgconn.ParseConfig(c.URL); err != nil {
			errs = append(errs, fmt.Errorf("source.url: %w", err))
		}
	}
	if (len(c.Tables) == 0) == (c.Publication == "") {
		errs = append(errs, errors.New("the postgres source needs source.tables (txsink keeps a publication of them) or source.publication (an existing one), exactly one of them"))
	}
	for _, t := range c.Tables {
		if _, _, err := splitTable(t); err != nil {
			errs = append(errs, err)
		}
	}
	if !slotName.MatchString(c.Slot) {
		errs = append(errs, fmt.Errorf("source.slot %q is not a replication slot name: 1 to 63 lower-case letters, digits and underscores", c.Slot))
	}
	if err := oneOf("snapshot", &c.Snapshot, snapshots); err != nil {
		errs = append(errs, err)
	}
	if err := oneOf("truncate", &c.Truncate, truncates); err != nil {
		errs = append(errs, err)
	}
	if c.Parallel == 0 {
		c.Parallel = defaultParallel
	}
	if c.ChunkRows == 0 {
		c.ChunkRows = defaultChunkRows
	}
	if c.Parallel < 1 || c.Parallel > maxParallel {
		errs = append(errs, fmt.Errorf("source.snapshot.parallel %d: want 1 to %d tables copied at once", c.Parallel, maxParallel))
	}
	if c.ChunkRows < 1 {
		errs = append(errs, fmt.Errorf("source.snapshot.chunk-rows %d: want 1 or more rows per chunk", c.ChunkRows))
	}
	if c.Format != "" && c.Format != Format {
		errs = append(errs, fmt.Errorf("source.format %q: the postgres source writes its changes as %s; set format: %s", c.Format, Format, Format))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Source{cfg: c, env: env, part: Partition(c.Slot)}, nil
}

// oneOf sets *v, the value of key source.<key>, to valid[0] (its
// default) when it is "", and refuses a value valid lacks.
func oneOf(key string, v *string, valid []string) error {
	if *v == "" {
		*v = valid[0]
	}
	if !slices.Contains(valid, *v) {
		return fmt.Errorf("source.%s %q: want %s", key, *v, strings.Join(valid, " or "))
	}
	return nil
}

// Partition returns the name of the one partition of a slot, under which
// the target stores its position.
func Partition(slot string) string { return "postgres:" + slot }

// splitTable splits "schema.table" (or "table", in public).
func splitTable(t string) (schema, name string, err error) {
	schema, name, ok := strings.Cut(t, ".")
	if !ok {
		schema, name = "public", t
	}
	if schema == "" || name == "" || strings.Contains(name, ".") {
		return "", "", fmt.Errorf("source.tables entry %q: want schema.table (or table, in public)", t)
	}
	return schema, name, nil
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes a PostgreSQL string literal.
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// Source is a PostgreSQL source: one partition, the slot's stream. It
// implements source.Source, Lister, Committer, Marker and Truncater.
type Source struct {
	cfg  Config
	env  source.Env
	part string

	mu     sync.Mutex
	stream *stream
}

// Truncates implements source.Truncater: under source.truncate:
// delete-all the stream carries TRUNCATEs.
func (s *Source) Truncates() string {
	if s.cfg.Truncate == TruncateDeleteAll {
		return "source.truncate: " + TruncateDeleteAll
	}
	return ""
}

// Partitions implements source.Lister: the slot's one partition, claimed
// in the target before anything is read.
func (s *Source) Partitions() []string { return []string{s.part} }

// Open implements source.Source: it makes sure of the publication and the
// slot, and starts replication at the stored position (or, with none, at
// the slot's).
func (s *Source) Open(ctx context.Context, at source.Start) ([]source.Reader, error) {
	var start source.Stored
	if at.Stored != nil {
		if st, ok := at.Stored(s.part); ok {
			start = st
		}
	}
	st, err := openStream(ctx, &s.cfg, s.part, start, s.env)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.stream = st
	s.mu.Unlock()
	return []source.Reader{st}, nil
}

// Close implements source.Source: it stops replication and disconnects.
func (s *Source) Close() error {
	s.mu.Lock()
	st := s.stream
	s.stream = nil
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	return st.close()
}

// Committed implements source.Committer: the next standby status update
// confirms the committed position to the server. It does not wait.
// During the initial snapshot it logs the committed progress.
func (s *Source) Committed(_ context.Context, progress []changelog.Position) {
	if st := s.current(); st != nil {
		st.committedAt(progress)
		if sn := st.snap; sn != nil {
			sn.mu.Lock()
			m := sn.lastMarked
			sn.lastMarked = nil
			if m != nil {
				st.logCommitted(sn, m, sn.tables)
			}
			sn.mu.Unlock()
		}
	}
}

// Mark implements source.Marker: the mark of a position is the initial
// snapshot's progress after it (each table's last committed key), while
// the snapshot, or the windows of a resumed one, last; "" after.
func (s *Source) Mark(pos changelog.Position) (string, error) {
	st := s.current()
	if st == nil || st.snap == nil || pos.Partition != s.part {
		return "", nil
	}
	m, state, err := st.snap.mark(pos)
	if state != nil {
		st.snap.mu.Lock()
		st.snap.lastMarked = state
		st.snap.mu.Unlock()
	}
	return m, err
}

// Stopping implements source.Committer: replication stops and the last
// committed position is confirmed to the server, within ctx.
func (s *Source) Stopping(ctx context.Context, progress []changelog.Position) {
	if st := s.current(); st != nil {
		st.committedAt(progress)
		st.stop(ctx)
	}
}

func (s *Source) current() *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stream
}
