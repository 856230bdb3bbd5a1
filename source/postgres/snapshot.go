package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/native"
	"github.com/txsink/txsink/source"
)

// The initial snapshot is read in chunks of each table's primary key
// order (keyset pagination), tables in parallel, each chunk handed on as a
// source transaction of its own. Its progress is the position's mark
// (source.Marker), stored in the target with the chunk's rows: which key
// each table was copied up to. docs/postgres-snapshot.md gives the
// consistency argument; in short:
//
//   - The first run reads every chunk in transactions that imported the
//     slot's exported snapshot, as of the slot's consistent point C, and
//     streams from C once the copy is done.
//   - An exported snapshot lives only while the replication connection
//     that created the slot is open, so a run that resumes a snapshot
//     takes a new one: a temporary slot's, as of its consistent point C2.
//     It reads the rest of each table (keys after the committed bound B)
//     in it, and streams from C. A change of a transaction committed
//     before C2 is applied only when its key is at most B (the rows
//     copied as of C, which need every change since); for a key after B
//     the copy as of C2 already holds it. Each key of the target then
//     follows one history of the source, from its copy on, and from C2 on
//     the target is the source.
//   - Each resume adds a window (segment) [previous point, C2) with the
//     bounds committed when it started; the windows are kept in the mark
//     until the stream passed the last one.

// markPrefix begins a mark that holds a snapshot's state, with its
// version.
const markPrefix = "pgsnap1 "

// tableState is how far the snapshot of one table got.
type tableState struct {
	// Done: every row was copied.
	Done bool `json:"done,omitempty"`
	// After is the primary key (text, in key order) of the last row
	// copied; nil: none yet.
	After []string `json:"after,omitempty"`
	// Rows counts the rows copied.
	Rows int64 `json:"rows,omitempty"`
}

// segment is a window of the stream after a resumed snapshot: a change
// of a transaction that committed before Until (and at or after the
// previous segment's Until) is applied only if its table's bound in
// Bounds covers its key (see keeps).
type segment struct {
	Until  uint64                `json:"until"`
	Bounds map[string]tableState `json:"bounds"`
}

// snapState is a snapshot's progress: where the stream starts, how far
// each table's copy got, and the windows of resumed snapshots.
type snapState struct {
	At     uint64                 `json:"at"`
	Tables map[string]*tableState `json:"tables"`
	Segs   []segment              `json:"segs,omitempty"`
}

// parseMark returns the snapshot state a mark holds, or nil for a mark
// of none (a position of the stream past every window).
func parseMark(mark string) (*snapState, error) {
	rest, ok := strings.CutPrefix(mark, markPrefix)
	if !ok {
		return nil, nil
	}
	var st snapState
	if err := json.Unmarshal([]byte(rest), &st); err != nil {
		return nil, fmt.Errorf("the snapshot progress stored in the target is unreadable (%v)", err)
	}
	if st.Tables == nil {
		st.Tables = map[string]*tableState{}
	}
	return &st, nil
}

// encode returns st as a mark.
func (st *snapState) encode() string {
	b, err := json.Marshal(st)
	if err != nil {
		panic(err) // plain data
	}
	return markPrefix + string(b)
}

// done reports whether table t was copied in full.
func (st *snapState) done(t string) bool {
	ts := st.Tables[t]
	return ts != nil && ts.Done
}

// windowEnd is the last window's end: 0 with none.
func (st *snapState) windowEnd() uint64 {
	if len(st.Segs) == 0 {
		return 0
	}
	return st.Segs[len(st.Segs)-1].Until
}

// resumed adds the window of a snapshot resumed as of until.
func (st *snapState) resumed(until uint64) {
	b := make(map[string]tableState, len(st.Tables))
	for t, ts := range st.Tables {
		b[t] = *ts
	}
	st.Segs = append(st.Segs, segment{Until: until, Bounds: b})
}

// clone returns a deep enough copy of st for a mark.
func (st *snapState) clone() *snapState {
	c := &snapState{At: st.At, Tables: make(map[string]*tableState, len(st.Tables)), Segs: st.Segs}
	for t, ts := range st.Tables {
		v := *ts
		c.Tables[t] = &v
	}
	return c
}

// keyCol is a primary key column: its name, its type as SQL writes it,
// its collation (quoted, "" for a type without one) and type OID.
type keyCol struct {
	name, typ, coll string
	oid             uint32
}

// tableInfo is a published table as the snapshot reads it.
type tableInfo struct {
	table changelog.Table
	// pk is the primary key; none: the table is copied in one chunk.
	pk []keyCol
	// estimate is the planner's row count, for progress.
	estimate int64
	// types is the "types" text of the table's records (types.go).
	types []byte
}

// name is the table's name as the state keys it.
func (ti *tableInfo) name() string { return ti.table.String() }

// quoted is the table's name in SQL.
func (ti *tableInfo) quoted() string {
	return quoteIdent(ti.table.Namespace) + "." + quoteIdent(ti.table.Name)
}

// keyTuple renders the key columns, or the parameters $from.. cast to
// their types, as a row constructor in the key's order and collations.
func keyTuple(pk []keyCol, from int) string {
	parts := make([]string, len(pk))
	for i, c := range pk {
		p := quoteIdent(c.name)
		if from > 0 {
			p = "CAST($" + strconv.Itoa(from+i) + " AS " + c.typ + ")"
		}
		if c.coll != "" {
			p += " COLLATE " + c.coll
		}
		parts[i] = p
	}
	return "ROW(" + strings.Join(parts, ", ") + ")"
}

// loadTables describes the tables to copy, on a connection that sees the
// snapshot.
func loadTables(ctx context.Context, c *pgconn.PgConn, tables []changelog.Table) ([]*tableInfo, error) {
	var out []*tableInfo
	for _, t := range tables {
		ti := &tableInfo{table: t}
		rel := quoteIdent(t.Namespace) + "." + quoteIdent(t.Name)
		rows, err := query(ctx, c, `SELECT a.attname, format_type(a.atttypid, a.atttypmod),
	coalesce(quote_ident(cn.nspname) || '.' || quote_ident(co.collname), ''), a.atttypid::text
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
WHERE i.indrelid = $1::regclass AND i.indisprimary
ORDER BY array_position(i.indkey::int2[], a.attnum)`, rel)
		if err != nil {
			return nil, fmt.Errorf("postgres source: read the primary key of table %s: %w", t, err)
		}
		for _, r := range rows {
			oid, _ := strconv.ParseUint(string(r[3]), 10, 32)
			ti.pk = append(ti.pk, keyCol{name: string(r[0]), typ: string(r[1]), coll: string(r[2]), oid: uint32(oid)})
		}
		if ti.types, err = snapshotTypes(ctx, c, rel, ti.pk); err != nil {
			return nil, fmt.Errorf("postgres source: read the columns of table %s: %w", t, err)
		}
		if rows, err = query(ctx, c, "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = $1::regclass", rel); err == nil && len(rows) == 1 {
			ti.estimate, _ = strconv.ParseInt(string(rows[0][0]), 10, 64)
		}
		out = append(out, ti)
	}
	return out, nil
}

// snapshot is an initial copy in progress: connections in transactions
// that imported one snapshot, the tables, and the state the copy moves on.
type snapshot struct {
	conns  []*pgconn.PgConn
	tables []*tableInfo
	// chunk is the rows of a chunk.
	chunk int

	// hand serializes the chunks handed on, so that a chunk's records
	// are contiguous; it is held while Next is not taking them.
	hand sync.Mutex
	// mu guards state, seq, txn, marks, final, lastMarked and the logging
	// fields, never held while waiting: the committing goroutine takes it
	// (Mark, Committed), and the records wait for a commit.
	mu    sync.Mutex
	state *snapState
	// seq numbers the rows handed on, for messages; txn the chunks: a
	// chunk's records are at position txn, 1, 2, 3... so that each is
	// after the one before and all before the stream's start (an LSN).
	seq int64
	txn int64
	// marks holds the state after each chunk handed on and not yet
	// committed, by its position.
	marks map[int64]*snapState
	// final is the mark of stream positions inside the windows: every
	// table done, with the windows.
	final string

	// lastMarked is the state of the last mark given, logged once
	// committed.
	lastMarked *snapState
	// logged is when committed progress was last logged; doneLogged
	// holds the tables whose end was.
	logged     time.Time
	doneLogged map[string]bool
}

// importSnapshot opens n connections whose transactions see the database
// as the exported snapshot name does, and describes the publication's
// tables in it.
func importSnapshot(ctx context.Context, cfg *Config, pub, name string, n int) (*snapshot, error) {
	sn := &snapshot{chunk: cfg.ChunkRows, marks: map[int64]*snapState{}}
	ok := false
	defer func() {
		if !ok {
			sn.close()
		}
	}()
	for range max(n, 1) {
		c, err := connect(ctx, cfg.URL, false)
		if err != nil {
			return nil, err
		}
		sn.conns = append(sn.conns, c)
		if err := c.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET TRANSACTION SNAPSHOT "+quoteLiteral(name)).Close(); err != nil {
			return nil, fmt.Errorf("postgres source: import the snapshot %s: %w", name, err)
		}
	}
	rows, err := query(ctx, sn.conns[0], "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2", pub)
	if err != nil {
		return nil, fmt.Errorf("postgres source: list the tables of publication %s: %w", pub, err)
	}
	var tables []changelog.Table
	for _, r := range rows {
		tables = append(tables, changelog.Table{Namespace: string(r[0]), Name: string(r[1])})
	}
	if sn.tables, err = loadTables(ctx, sn.conns[0], tables); err != nil {
		return nil, err
	}
	ok = true
	return sn, nil
}

// close disconnects, ending the snapshot's transactions.
func (sn *snapshot) close() {
	for _, c := range sn.conns {
		c.Close(context.Background())
	}
	sn.conns = nil
}

// copy reads every table not yet copied, in chunks, on the snapshot's
// connections in parallel, and hands each chunk on as a source
// transaction at the stream's start. It returns once every chunk is
// handed on, or on the first error.
func (s *stream) copy(ctx context.Context, sn *snapshot) error {
	defer sn.close()
	todo := make(chan *tableInfo, len(sn.tables))
	for _, t := range sn.tables {
		if sn.state.Tables[t.name()] == nil {
			sn.state.Tables[t.name()] = &tableState{}
		}
		if !sn.state.done(t.name()) {
			todo <- t
		}
	}
	close(todo)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(sn.conns))
	for _, c := range sn.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range todo {
				if err := s.copyTable(ctx, sn, c, t); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	rows := int64(0)
	for _, ts := range sn.state.Tables {
		rows += ts.Rows
	}
	sn.mu.Lock()
	sn.final = sn.state.encode()
	sn.mu.Unlock()
	s.log.Info("snapshot read; streaming from the slot's consistent point", "slot", s.slot, "tables", len(sn.tables), "rows", rows)
	return nil
}

// copyTable reads table t from where its state says, chunk by chunk.
func (s *stream) copyTable(ctx context.Context, sn *snapshot, c *pgconn.PgConn, t *tableInfo) error {
	sn.mu.Lock()
	ts := *sn.state.Tables[t.name()]
	sn.mu.Unlock()
	after := ts.After
	for {
		sql := "SELECT * FROM " + t.quoted()
		var params [][]byte
		if len(t.pk) > 0 {
			if after != nil {
				sql += " WHERE " + keyTuple(t.pk, 0) + " > " + keyTuple(t.pk, 1)
				for _, v := range after {
					params = append(params, []byte(v))
				}
			}
			cols := make([]string, len(t.pk))
			for i, k := range t.pk {
				cols[i] = quoteIdent(k.name)
				if k.coll != "" {
					cols[i] += " COLLATE " + k.coll
				}
			}
			sql += " ORDER BY " + strings.Join(cols, ", ") + " LIMIT " + strconv.Itoa(sn.chunk)
		}

		recs, last, err := readChunk(ctx, c, sql, params, t, ts.Rows)
		if err != nil {
			return err
		}
		s.noteWALEnd(ctx, c)
		done := len(t.pk) == 0 || len(recs) < sn.chunk
		if len(recs) > 0 {
			after = last
			if err := s.handChunk(ctx, sn, t, recs, last, done); err != nil {
				return err
			}
			ts.Rows += int64(len(recs))
		}
		if done {
			// Also when the last chunk was empty: the chunks of other
			// tables handed on after it say so.
			sn.mu.Lock()
			sn.state.Tables[t.name()].Done = true
			sn.mu.Unlock()
			s.log.Info("snapshot of a table read", "slot", s.slot, "table", t.name(), "rows", ts.Rows)
			return nil
		}
	}
}

// noteWALEnd reads the server's WAL end, for the slot's lag while no
// keepalive tells it. A failure leaves the last one.
func (s *stream) noteWALEnd(ctx context.Context, c *pgconn.PgConn) {
	rows, err := query(ctx, c, "SELECT pg_current_wal_lsn()::text")
	if err != nil || len(rows) != 1 {
		return
	}
	if lsn, err := pglogrepl.ParseLSN(string(rows[0][0])); err == nil && uint64(lsn) > s.walEnd.Load() {
		s.walEnd.Store(uint64(lsn))
	}
}

// readChunk runs one chunk's query and returns its rows as changes, and
// the last row's primary key.
func readChunk(ctx context.Context, c *pgconn.PgConn, sql string, params [][]byte, t *tableInfo, before int64) ([]*changelog.Change, []string, error) {
	rr := c.ExecParams(ctx, sql, params, nil, nil, nil)
	fds := rr.FieldDescriptions()
	keyAt := make([]int, len(t.pk))
	for i, k := range t.pk {
		keyAt[i] = -1
		for j, fd := range fds {
			if fd.Name == k.name {
				keyAt[i] = j
			}
		}
	}
	var out []*changelog.Change
	var last []string
	for rr.NextRow() {
		vals := rr.Values()
		row := changelog.Row{Names: make([]string, len(fds)), Values: make([]changelog.Value, len(fds))}
		for i, fd := range fds {
			row.Names[i] = fd.Name
			if vals[i] == nil {
				continue
			}
			v, err := value(fd.DataTypeOID, vals[i])
			if err != nil {
				rr.Close()
				return nil, nil, fmt.Errorf("postgres source: snapshot of table %s, row %d, column %s: %w", t.table, before+int64(len(out))+1, fd.Name, err)
			}
			row.Values[i] = v
		}
		last = last[:0]
		for _, j := range keyAt {
			if j >= 0 {
				last = append(last, string(vals[j]))
			}
		}
		out = append(out, &changelog.Change{Kind: changelog.Insert, Table: t.table, After: row})
	}
	if _, err := rr.Close(); err != nil {
		return nil, nil, fmt.Errorf("postgres source: snapshot of table %s: %w", t.table, err)
	}
	return out, last, nil
}

// handChunk hands a chunk on as one source transaction, and notes the
// state after it for the mark of its last record.
func (s *stream) handChunk(ctx context.Context, sn *snapshot, t *tableInfo, chunk []*changelog.Change, last []string, done bool) error {
	sn.hand.Lock()
	defer sn.hand.Unlock()
	recs, err := sn.number(s.part, t, chunk, last, done)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := s.send(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// number encodes a chunk as records of the next position, and notes the
// state after it for that position's mark.
func (sn *snapshot) number(part string, t *tableInfo, chunk []*changelog.Change, last []string, done bool) ([]source.Record, error) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.txn++
	if uint64(sn.txn) >= sn.state.At {
		return nil, fmt.Errorf("postgres source: snapshot of table %s: chunk %d would not be ordered before the stream's start %d; raise source.snapshot.chunk-rows", t.table, sn.txn, sn.state.At)
	}
	xid := "snapshot-" + strconv.FormatInt(sn.txn, 10)
	recs := make([]source.Record, len(chunk))
	for i, c := range chunk {
		c.TxnID, c.TxnEnd = xid, i == len(chunk)-1
		data, err := native.AppendTyped(nil, c, t.types)
		if err != nil {
			return nil, fmt.Errorf("postgres source: snapshot of table %s: %w", t.table, err)
		}
		sn.seq++
		recs[i] = source.Record{Data: data[:len(data)-1], Pos: changelog.Position{Partition: part, Offset: sn.txn, Seq: sn.seq}}
	}
	ts := sn.state.Tables[t.name()]
	ts.After, ts.Done = append([]string(nil), last...), done
	ts.Rows += int64(len(chunk))
	sn.marks[sn.txn] = sn.state.clone()
	return recs, nil
}

// mark returns the mark of a position the target is about to commit:
// during the snapshot the state after the chunk it ends, inside the
// windows of a resumed snapshot the final state, past them none.
func (sn *snapshot) mark(pos changelog.Position) (string, *snapState, error) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if uint64(pos.Offset) > sn.state.At {
		if uint64(pos.Offset) <= sn.state.windowEnd() {
			return sn.final, nil, nil
		}
		return "", nil, nil
	}
	st, ok := sn.marks[pos.Offset]
	if !ok {
		return "", nil, fmt.Errorf("postgres source: position %s ends no snapshot chunk: the snapshot's progress cannot be stored", pos)
	}
	for q := range sn.marks {
		if q <= pos.Offset {
			delete(sn.marks, q)
		}
	}
	return st.encode(), st, nil
}

// logCommitted logs the snapshot's committed progress, by table: at most
// every few seconds, and whenever a table is done.
func (s *stream) logCommitted(sn *snapshot, st *snapState, tables []*tableInfo) {
	now := time.Now()
	every := now.Sub(sn.logged) >= 5*time.Second
	if every {
		sn.logged = now
	}
	if sn.doneLogged == nil {
		sn.doneLogged = map[string]bool{}
	}
	for _, t := range tables {
		ts := st.Tables[t.name()]
		if ts == nil || ts.Rows == 0 && !ts.Done {
			continue
		}
		if ts.Done && !sn.doneLogged[t.name()] || every && !ts.Done {
			sn.doneLogged[t.name()] = ts.Done
			s.log.Info("snapshot progress committed", "slot", s.slot, "table", t.name(), "rows", ts.Rows, "estimated_rows", t.estimate, "done", ts.Done)
		}
	}
}
