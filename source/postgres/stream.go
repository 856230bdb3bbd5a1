package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// statusInterval is how often the standby status is sent while streaming.
// It is the server's view of what the target holds, for WAL retention and
// lag, and far below wal_sender_timeout (60s by default); it decides no
// pipeline behaviour, so it runs on the wall clock.
const statusInterval = time.Second

// sessionParams make the server's text output what value expects: ISO
// dates, timestamps with zones in UTC, hexadecimal bytea, and floats
// written exactly (PostgreSQL 12 and later write the shortest exact text
// with any extra_float_digits above 0).
var sessionParams = map[string]string{
	"DateStyle":          "ISO, YMD",
	"TimeZone":           "UTC",
	"IntervalStyle":      "postgres",
	"bytea_output":       "hex",
	"extra_float_digits": "1",
	"application_name":   "txsink",
}

// item is what the pump hands the reader: a record, or the error that
// stopped the stream.
type item struct {
	rec source.Record
	err error
}

// stream is the replication connection of one slot, and the Reader of its
// partition. A pump goroutine owns the connection: it receives, decodes
// and sends standby status; Next takes its records from a channel.
type stream struct {
	part  string
	slot  string
	start changelog.Position
	log   interface{ Info(string, ...any) }

	conn *pgconn.PgConn
	out  chan item
	// from is where replication starts, args its pgoutput options.
	from pglogrepl.LSN
	args []string

	// committed is the highest position the target committed (an LSN).
	committed atomic.Uint64
	// walEnd is the server's WAL end as last reported, for lag.
	walEnd atomic.Uint64
	// streaming is set once replication started (after the snapshot).
	streaming atomic.Bool
	// snap is the initial copy's progress, nil when there is none to
	// keep: its chunks to read (none, when only its windows remain), and
	// the marks of its positions.
	snap *snapshot

	cancel context.CancelFunc
	done   chan struct{}
	// err is the permanent error Next returns once the pump stopped on it.
	err error

	stopOnce sync.Once
}

// openStream connects, makes sure of the publication and the slot, checks
// the stored position against the slot, and starts replication there (or
// once the snapshot is read).
func openStream(ctx context.Context, cfg *Config, part string, at source.Stored, env source.Env) (*stream, error) {
	st, err := open(ctx, cfg, part, at, env)
	if err != nil && ctx.Err() != nil {
		// Stopped while connecting: the cancellation, not what it broke.
		return nil, ctx.Err()
	}
	return st, err
}

func open(ctx context.Context, cfg *Config, part string, at source.Stored, env source.Env) (*stream, error) {
	start := at.Position
	var admin *pgconn.PgConn
	err := source.Await(ctx, source.Wait{What: "the source database", Timeout: env.StartupTimeout, Log: env.Log,
		Hint: "check that the server runs and that this host reaches it at that address (host, port, firewall, pg_hba.conf), or raise startup-timeout"},
		func(ctx context.Context) (err error) {
			admin, err = connect(ctx, cfg.URL, false)
			return err
		}, unanswered)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.Background())
	pub, err := ensurePublication(ctx, admin, cfg)
	if err != nil {
		return nil, err
	}
	slot, err := lookupSlot(ctx, admin, cfg.Slot)
	if err != nil {
		return nil, err
	}
	cat, err := loadCatalog(ctx, admin, pub)
	if err != nil {
		return nil, err
	}
	state, err := parseMark(at.Mark)
	if err != nil {
		return nil, fmt.Errorf("postgres source: partition %s: %w; forget the progress (%s), empty the target tables and run again", part, err, resetHint(env, part))
	}
	repl, err := connect(ctx, cfg.URL, true)
	if err != nil {
		return nil, err
	}
	ok := false
	var snap *snapshot
	var win *window
	defer func() {
		if !ok {
			repl.Close(context.Background())
			if snap != nil {
				snap.close()
			}
			win.close()
		}
	}()
	from := pglogrepl.LSN(start.Offset)
	switch {
	case slot == nil && start.Offset > 0:
		return nil, fmt.Errorf("postgres source: the replication slot %s is gone, but the target holds the position %s of it (partition %s): "+
			"the changes since may be lost. Take the data over again: empty the target tables, forget the progress (%s), and run again, "+
			"which creates the slot", cfg.Slot, from, part, resetHint(env, part))
	case slot == nil:
		action := "NOEXPORT_SNAPSHOT"
		if cfg.Snapshot != SnapshotNever {
			action = "EXPORT_SNAPSHOT"
		}
		res, err := pglogrepl.CreateReplicationSlot(ctx, repl, cfg.Slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
		if err != nil {
			return nil, fmt.Errorf("postgres source: create the replication slot %s: %w (the role needs the REPLICATION attribute, "+
				"and the server max_replication_slots above those in use)", cfg.Slot, err)
		}
		if from, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
			return nil, fmt.Errorf("postgres source: slot %s's consistent point %q: %w", cfg.Slot, res.ConsistentPoint, err)
		}
		if cfg.Snapshot != SnapshotNever {
			// The exported snapshot lasts until the replication
			// connection's next command: it is imported now, and
			// replication starts once the copy is read.
			if snap, err = importSnapshot(ctx, cfg, pub, res.SnapshotName, cfg.Parallel); err != nil {
				return nil, err
			}
			snap.state = &snapState{At: uint64(from), Tables: map[string]*tableState{}}
			env.Log.Info("created the replication slot; copying the tables as of its consistent point, then streaming from it", "slot", cfg.Slot, "lsn", from.String(),
				"tables", len(snap.tables), "parallel", len(snap.conns), "chunk_rows", cfg.ChunkRows)
		} else {
			env.Log.Info("created the replication slot; streaming from its consistent point", "slot", cfg.Slot, "lsn", from.String())
		}
	default:
		if err := slot.usable(cfg.Slot, part, env); err != nil {
			return nil, err
		}
		switch {
		case start.Offset == 0 && cfg.Snapshot != SnapshotNever:
			// A slot whose snapshot committed nothing (stopped before its
			// first chunk): the copy is taken anew as of a temporary
			// slot's consistent point, and the stream starts there.
			if snap, err = resumeSnapshot(ctx, cfg, pub, env, nil); err != nil {
				return nil, err
			}
			from = pglogrepl.LSN(snap.state.At)
			if slot.confirmed > from {
				return nil, fmt.Errorf("postgres source: the replication slot %s confirmed %s, beyond the new snapshot's point %s: drop the slot (txsink drop-slot) and run again", cfg.Slot, slot.confirmed, from)
			}
		case start.Offset == 0:
			from = slot.confirmed
		default:
			if state != nil && uint64(start.Offset) <= state.At {
				// A position of the snapshot (its chunk count): the
				// stream starts at the snapshot's point.
				from = pglogrepl.LSN(state.At)
			}
			if slot.confirmed > from {
				return nil, fmt.Errorf("postgres source: the replication slot %s confirmed %s, beyond the target's position %s (partition %s): "+
					"the changes between are no longer available (another client used the slot, or the target was restored). "+
					"Take the data over again: empty the target tables, forget the progress (%s), drop the slot (txsink drop-slot) and run again",
					cfg.Slot, slot.confirmed, from, part, resetHint(env, part))
			}
			if state == nil {
				break
			}
			done := true
			for _, ts := range state.Tables {
				done = done && ts.Done
			}
			if done && len(state.Tables) > 0 {
				// The copy is whole: only the windows remain to pass.
				snap = &snapshot{state: state, final: state.encode(), marks: map[int64]*snapState{}}
			} else if snap, err = resumeSnapshot(ctx, cfg, pub, env, state); err != nil {
				return nil, err
			} else {
				snap.txn = start.Offset
			}
			if len(snap.state.Segs) > 0 && uint64(from) <= snap.state.windowEnd() {
				if win, err = openWindow(ctx, cfg, admin, snap.state); err != nil {
					return nil, err
				}
			}
		}
	}
	if from > math.MaxInt64 {
		return nil, fmt.Errorf("postgres source: LSN %s is beyond what a position holds", from)
	}
	s := &stream{part: part, slot: cfg.Slot, log: env.Log, conn: repl, out: make(chan item, 1024), done: make(chan struct{}),
		start: changelog.Position{Partition: part, Offset: int64(from)}, from: from, snap: snap,
		args: []string{"proto_version '1'", "publication_names " + quoteLiteral(pub)}}
	if snap == nil || len(snap.conns) == 0 {
		if err := s.startReplication(ctx); err != nil {
			return nil, err
		}
	}
	ok = true
	s.committed.Store(uint64(from))
	pctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	d := newDecoder(part)
	d.win, d.ctx, d.cat, d.truncate = win, pctx, cat, cfg.Truncate == TruncateDeleteAll
	go s.pump(pctx, d)
	return s, nil
}

// startReplication starts the stream at s.from.
func (s *stream) startReplication(ctx context.Context) error {
	if err := pglogrepl.StartReplication(ctx, s.conn, s.slot, s.from, pglogrepl.StartReplicationOptions{PluginArgs: s.args}); err != nil {
		return fmt.Errorf("postgres source: start replication on slot %s at %s: %w", s.slot, s.from, err)
	}
	s.streaming.Store(true)
	return nil
}

// resumeSnapshot takes a new snapshot, as of a temporary slot's
// consistent point (the slot lives only until its snapshot is imported),
// to copy what state has not: every table when state is nil. The copy
// goes on from each table's committed bound, and the window from the
// stream's start to the new point keeps the bounds.
func resumeSnapshot(ctx context.Context, cfg *Config, pub string, env source.Env, state *snapState) (*snapshot, error) {
	tmp, err := connect(ctx, cfg.URL, true)
	if err != nil {
		return nil, err
	}
	defer tmp.Close(context.Background())
	name := cfg.Slot
	if len(name) > 58 {
		name = name[:58]
	}
	name += "_snap"
	res, err := pglogrepl.CreateReplicationSlot(ctx, tmp, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return nil, fmt.Errorf("postgres source: create the temporary replication slot %s, whose snapshot resumes the initial copy: %w "+
			"(the server's max_replication_slots must leave one slot free for it)", name, err)
	}
	point, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return nil, fmt.Errorf("postgres source: slot %s's consistent point %q: %w", name, res.ConsistentPoint, err)
	}
	snap, err := importSnapshot(ctx, cfg, pub, res.SnapshotName, cfg.Parallel)
	if err != nil {
		return nil, err
	}
	if state == nil {
		snap.state = &snapState{At: uint64(point), Tables: map[string]*tableState{}}
		env.Log.Info("the replication slot exists, but the target holds no snapshot of it; copying the tables as of a new consistent point, then streaming from it",
			"slot", cfg.Slot, "lsn", point.String(), "tables", len(snap.tables), "parallel", len(snap.conns), "chunk_rows", cfg.ChunkRows)
	} else {
		state.resumed(uint64(point))
		snap.state = state
		rows := int64(0)
		for _, ts := range state.Tables {
			rows += ts.Rows
		}
		env.Log.Info("resuming the initial snapshot from the chunks the target committed, as of a new consistent point; then streaming from the slot's",
			"slot", cfg.Slot, "lsn", point.String(), "committed_rows", rows, "tables", len(snap.tables), "parallel", len(snap.conns))
	}
	return snap, nil
}

// openWindow connects the window's comparisons and reads the primary keys
// of the tables it compares.
func openWindow(ctx context.Context, cfg *Config, admin *pgconn.PgConn, st *snapState) (*window, error) {
	w := &window{segs: st.Segs, keys: map[string]*tableInfo{}}
	var tables []changelog.Table
	seen := map[string]bool{}
	for _, sg := range st.Segs {
		for name, b := range sg.Bounds {
			if b.After != nil && !b.Done && !seen[name] {
				seen[name] = true
				schema, table, _ := strings.Cut(name, ".")
				tables = append(tables, changelog.Table{Namespace: schema, Name: table})
			}
		}
	}
	infos, err := loadTables(ctx, admin, tables)
	if err != nil {
		return nil, err
	}
	for _, ti := range infos {
		w.keys[ti.name()] = ti
	}
	if w.cmp, err = connect(ctx, cfg.URL, false); err != nil {
		return nil, err
	}
	return w, nil
}

// send hands a record to Next.
func (s *stream) send(ctx context.Context, r source.Record) error {
	select {
	case s.out <- item{rec: r}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resetHint returns the command that forgets part's progress.
func resetHint(env source.Env, part string) string {
	if env.ResetHint != nil {
		return env.ResetHint(part)
	}
	return "txsink reset --partition " + part
}

// unanswered reports whether err, of a connection to the source database,
// is one that waiting may cure: no answer (refused, timed out, a name not
// resolved), or a server still starting up or shutting down (SQLSTATE
// 57P03, 57P01); an answer that refuses (a password, a database, a
// pg_hba.conf rule) is not.
func unanswered(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P03" || pe.Code == "57P01"
	}
	var ne net.Error
	return errors.As(err, &ne) || pgconn.Timeout(err)
}

// connect opens a connection to the source database: a replication one
// (replication=database, for the slot and the stream) or a plain one.
func connect(ctx context.Context, url string, replication bool) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres source: source.url: %w", err)
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	if replication {
		cfg.RuntimeParams["replication"] = "database"
	}
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres source: connect to %s:%d database %s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return c, nil
}

// query runs one SQL statement of text results on a plain connection.
func query(ctx context.Context, c *pgconn.PgConn, sql string, args ...string) ([][][]byte, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	res := c.ExecParams(ctx, sql, params, nil, nil, nil).Read()
	return res.Rows, res.Err
}

// committedAt records the target's committed position of the partition.
func (s *stream) committedAt(progress []changelog.Position) {
	for _, p := range progress {
		if p.Partition != s.part || p.Offset <= 0 {
			continue
		}
		for {
			old := s.committed.Load()
			if uint64(p.Offset) <= old || s.committed.CompareAndSwap(old, uint64(p.Offset)) {
				break
			}
		}
	}
}

// pump receives the stream until ctx ends or it fails, decodes it into
// records for Next, and sends the standby status every statusInterval
// and whenever the server asks.
func (s *stream) pump(ctx context.Context, d *decoder) {
	defer close(s.done)
	defer d.win.close()
	fail := func(err error) {
		select {
		case s.out <- item{err: err}:
		case <-ctx.Done():
		}
	}
	if snap := s.snap; snap != nil && len(snap.conns) > 0 {
		// The replication connection stays idle meanwhile: the server
		// expects no status from it before replication starts.
		if err := s.copy(ctx, snap); err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		if err := s.startReplication(ctx); err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
	}
	var pending []source.Record
	next := time.Now().Add(statusInterval)
	timer := time.NewTimer(statusInterval)
	defer timer.Stop()
	for {
		if !time.Now().Before(next) {
			if err := s.sendStatus(); err != nil {
				fail(err)
				return
			}
			next = time.Now().Add(statusInterval)
		}
		if len(pending) > 0 {
			timer.Reset(time.Until(next))
			select {
			case s.out <- item{rec: pending[0]}:
				pending[0] = source.Record{}
				pending = pending[1:]
			case <-timer.C:
			case <-ctx.Done():
				return
			}
			continue
		}
		rctx, cancel := context.WithDeadline(ctx, next)
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && pgconn.Timeout(err):
			continue
		case err != nil:
			fail(fmt.Errorf("postgres source: slot %s: receive: %w", s.slot, err))
			return
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			fail(fmt.Errorf("postgres source: slot %s: %w", s.slot, pgconn.ErrorResponseToPgError(m)))
			return
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				k, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					fail(fmt.Errorf("postgres source: slot %s: keepalive: %w", s.slot, err))
					return
				}
				s.walEnd.Store(uint64(k.ServerWALEnd))
				if k.ReplyRequested {
					next = time.Now()
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					fail(fmt.Errorf("postgres source: slot %s: XLogData: %w", s.slot, err))
					return
				}
				if uint64(x.ServerWALEnd) > s.walEnd.Load() {
					s.walEnd.Store(uint64(x.ServerWALEnd))
				}
				recs, err := d.decode(x.WALStart, x.WALData)
				if err != nil {
					fail(err)
					return
				}
				pending = append(pending, recs...)
			}
		case *pgproto3.CopyDone:
			fail(fmt.Errorf("postgres source: slot %s: the server ended replication", s.slot))
			return
		}
	}
}

// sendStatus confirms to the server what the target committed, and no
// more: the slot keeps the WAL of everything after it.
func (s *stream) sendStatus() error {
	lsn := pglogrepl.LSN(s.committed.Load())
	if err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: lsn}); err != nil {
		return fmt.Errorf("postgres source: slot %s: send standby status: %w", s.slot, err)
	}
	return nil
}

// stop ends the pump and confirms the last committed position, within ctx.
// The connection stays open until close.
func (s *stream) stop(ctx context.Context) {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case <-s.done:
		case <-ctx.Done():
			return
		}
		if !s.streaming.Load() {
			return // stopped during the snapshot: nothing to confirm
		}
		lsn := pglogrepl.LSN(s.committed.Load())
		err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: lsn})
		if err == nil {
			// Ending the stream makes the server read the status before
			// the connection closes: a server busy sending may otherwise
			// notice the close first and never read it.
			if d, ok := ctx.Deadline(); ok {
				_ = s.conn.Conn().SetDeadline(d)
			}
			_, err = pglogrepl.SendStandbyCopyDone(ctx, s.conn)
			_ = s.conn.Conn().SetDeadline(time.Time{})
		}
		if err != nil {
			s.log.Info("could not confirm the last committed position to the server; the slot keeps the WAL since its last confirmation", "slot", s.slot, "lsn", lsn.String(), "err", err)
		}
	})
}

// close stops the pump, if Stopping did not, and disconnects.
func (s *stream) close() error {
	s.cancel()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.conn.Close(ctx)
}

// Next implements source.Reader.
func (s *stream) Next(ctx context.Context) (source.Record, error) {
	if s.err != nil {
		return source.Record{}, s.err
	}
	select {
	case it := <-s.out:
		if it.err != nil {
			s.err = it.err
			return source.Record{}, it.err
		}
		return it.rec, nil
	case <-ctx.Done():
		return source.Record{}, ctx.Err()
	case <-s.done:
		// The pump stopped (Stopping) with nothing more to hand on.
		select {
		case it := <-s.out:
			if it.err == nil {
				return it.rec, nil
			}
			s.err = it.err
		default:
			s.err = io.ErrClosedPipe
		}
		return source.Record{}, s.err
	}
}

// Close implements source.Reader; the Source disconnects.
func (s *stream) Close() error { return nil }

// MayWait implements source.Waiter: the next record may not have come yet.
func (s *stream) MayWait() bool { return len(s.out) == 0 }

// Size implements source.Sizer: the server's WAL end as last reported, so
// that lag is the WAL bytes the target lacks; -1 during the snapshot,
// whose positions count chunks, not bytes.
func (s *stream) Size() int64 {
	if e := s.walEnd.Load(); s.streaming.Load() && e > 0 && e <= math.MaxInt64 {
		return int64(e)
	}
	return -1
}

// SlotLag implements source.SlotLagger: the server's WAL end as last
// reported (by keepalives, or during the snapshot by the copy between
// chunks) minus the position confirmed to the slot.
func (s *stream) SlotLag() int64 {
	e, c := s.walEnd.Load(), s.committed.Load()
	if e == 0 || e > math.MaxInt64 {
		return -1
	}
	return int64(max(e, c) - c)
}

// Partition implements source.Lane.
func (s *stream) Partition() string { return s.part }

// Start implements source.Lane.
func (s *stream) Start() changelog.Position { return s.start }
