package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/txsink/txsink/internal/bulktext"
)

// tableDump is one bench table's final rows, written for the bulk load.
type tableDump struct {
	name string // without the run's prefix
	path string
	cols []string
	rows int64
}

// dump writes each bench table's rows in the bulk loaders' text format
// (tab-separated, \N for NULL, backslash escapes: what both LOAD DATA and
// COPY read by default), one file per table.
func (r *Result) dump(ctx context.Context, db *sql.DB) ([]tableDump, error) {
	var dumps []tableDump
	r.finalRows = 0
	for _, t := range r.tables() {
		d := tableDump{name: t.name, path: filepath.Join(r.opts.Dir, "bulk-"+t.name+".tsv")}
		var err error
		if d.cols, d.rows, err = dumpTable(ctx, db, r.prefix+t.name, t.order, d.path); err != nil {
			return dumps, err
		}
		r.finalRows += d.rows
		dumps = append(dumps, d)
	}
	return dumps, nil
}

// bulkMethods names each dialect's bulk path, for the report.
var bulkMethods = map[string]string{
	"mysql":    "LOAD DATA LOCAL INFILE",
	"mariadb":  "LOAD DATA LOCAL INFILE",
	"postgres": "COPY FROM STDIN",
	"sqlite":   "prepared INSERTs",
}

// bulkLoad times loading the dumps into the empty txsink_bulk_ copies
// with the database's own bulk path, in n transactions, each loading the
// next n-th of every table's rows, as txsink's units hold some of every
// table's, and checks every row arrived.
func (r *Result) bulkLoad(ctx context.Context, db *sql.DB, dumps []tableDump, n int) (took, serverCPU time.Duration, err error) {
	chunks := make([][]*io.SectionReader, len(dumps)) // per table, per transaction
	for i, d := range dumps {
		f, err := os.Open(d.path)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		// Finding the cuts is not the database's work: it comes first.
		cuts, err := lineCuts(bufio.NewReaderSize(f, 1<<20), d.rows, n)
		if err != nil {
			return 0, 0, fmt.Errorf("read %s: %w", d.path, err)
		}
		for c := range n {
			chunks[i] = append(chunks[i], io.NewSectionReader(f, cuts[c], cuts[c+1]-cuts[c]))
		}
	}
	server0, serverOK := r.serverCPU()
	for c := range n {
		t, err := loadChunks(ctx, db, r.dialect, r.bulkPrefix, dumps, chunks, c)
		if err != nil {
			return 0, 0, err
		}
		took += t
	}
	serverCPU = -1
	if server1, ok := r.serverCPU(); ok && serverOK {
		serverCPU = server1 - server0
	}
	for _, t := range dumps {
		var got int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+r.bulkPrefix+t.name).Scan(&got); err != nil {
			return 0, 0, fmt.Errorf("count %s: %w", r.bulkPrefix+t.name, err)
		}
		if got != t.rows {
			return 0, 0, fmt.Errorf("bulk load of %s in %s loaded %d rows of %d", t.name, countOf(n, "transaction"), got, t.rows)
		}
	}
	return took, serverCPU, nil
}

// as can be, the first lines%n parts one line longer; parts are empty
// when in has fewer lines than n.
func lineCuts(in *bufio.Reader, lines int64, n int) ([]int64, error) {
	cuts := make([]int64, 1, n+1)
	var at int64
	for i := range int64(n) {
		want := lines / int64(n)
		if i < lines%int64(n) {
			want++
		}
		for range want {
			line, err := in.ReadSlice('\n')
			for errors.Is(err, bufio.ErrBufferFull) {
				at += int64(len(line))
				line, err = in.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			at += int64(len(line))
		}
		cuts = append(cuts, at)
	}
	return cuts, nil
}

// loadChunks loads part c of every table's rows (chunks[table][c]) into
// the tables of prefix with the dialect's bulk path, in one transaction,
// and returns how long it took, from BEGIN to COMMIT.
func loadChunks(ctx context.Context, db *sql.DB, dialect, prefix string, dumps []tableDump, chunks [][]*io.SectionReader, c int) (time.Duration, error) {
	switch dialect {
	case "mysql", "mariadb":
		start := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		defer tx.Rollback()
		for i, t := range dumps {
			if chunks[i][c].Size() == 0 {
				continue
			}
			name := fmt.Sprintf("txsink-bench-%s%s-%d", prefix, t.name, c)
			chunk := chunks[i][c]
			mysqldrv.RegisterReaderHandler(name, func() io.Reader { return bufio.NewReaderSize(chunk, 1<<20) })
			_, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+prefix+t.name+
				" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ("+strings.Join(dumps[i].cols, ",")+")")
			mysqldrv.DeregisterReaderHandler(name)
			if err != nil {
				return 0, fmt.Errorf("LOAD DATA LOCAL INFILE into %s: %w (the server needs local_infile=ON)", prefix+t.name, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	case "postgres":
		conn, err := db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		start := time.Now()
		err = conn.Raw(func(dc any) error {
			sc, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("driver connection is a %T, not pgx", dc)
			}
			pc := sc.Conn().PgConn()
			if _, err := pc.Exec(ctx, "BEGIN").ReadAll(); err != nil {
				return err
			}
			for i, t := range dumps {
				if chunks[i][c].Size() == 0 {
					continue
				}
				if _, err := pc.CopyFrom(ctx, bufio.NewReaderSize(chunks[i][c], 1<<20), "COPY "+prefix+t.name+" ("+strings.Join(dumps[i].cols, ",")+") FROM STDIN"); err != nil {
					pc.Exec(ctx, "ROLLBACK").ReadAll()
					return fmt.Errorf("COPY into %s: %w", prefix+t.name, err)
				}
			}
			_, err := pc.Exec(ctx, "COMMIT").ReadAll()
			return err
		})
		if err != nil {
			return 0, err
		}
		return time.Since(start), nil
	case "sqlite":
		return loadSQLite(ctx, db, prefix, dumps, chunks, c)
	}
	return 0, fmt.Errorf("no bulk load for dialect %s", dialect)
}

// dumpTable writes table's rows, in key order (the order a bulk load
// would get them in from an export), to path in the text format of
// LOAD DATA and COPY.
func dumpTable(ctx context.Context, db *sql.DB, table, order, path string) ([]string, int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY "+order)
	if err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	var line []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, 0, fmt.Errorf("dump %s: %w", table, err)
		}
		line = line[:0]
		for i, v := range vals {
			if i > 0 {
				line = append(line, '\t')
			}
			line = appendBulkText(line, v)
		}
		line = append(line, '\n')
		w.Write(line)
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("dump %s: %w", table, err)
	}
	if err := w.Flush(); err != nil {
		return nil, 0, err
	}
	return cols, n, f.Close()
}

// appendBulkText appends v as one field of LOAD DATA's and COPY's default
// text format.
func appendBulkText(b []byte, v any) []byte {
	var s string
	switch x := v.(type) {
	case nil:
		return append(b, `\N`...)
	case []byte:
		s = string(x)
	case string:
		s = x
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case time.Time:
		return x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
	default:
		s = fmt.Sprint(x)
	}
	return bulktext.AppendEscaped(b, s, false)
}

// loadSQLite is SQLite's bulk path for loadChunks: prepared single-row
// INSERTs, in one transaction. Fields are bound as text; the
// columns' affinities convert them as they would a CSV import's.
func loadSQLite(ctx context.Context, db *sql.DB, prefix string, dumps []tableDump, chunks [][]*io.SectionReader, c int) (time.Duration, error) {
	// Parsing the dump is not the database's work: it comes first.
	records := make([][][]any, len(dumps))
	for i := range dumps {
		data, err := io.ReadAll(chunks[i][c])
		if err != nil {
			return 0, err
		}
		for line := range bytes.Lines(data) {
			fields := strings.Split(strings.TrimSuffix(string(line), "\n"), "\t")
			rec := make([]any, len(fields))
			for j, fl := range fields {
				if fl != `\N` {
					rec[j] = bulktext.Unescape(fl)
				}
			}
			records[i] = append(records[i], rec)
		}
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for i, t := range dumps {
		cols := t.cols
		marks := strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")
		st, err := tx.PrepareContext(ctx, "INSERT INTO "+prefix+t.name+" ("+strings.Join(cols, ",")+") VALUES ("+marks+")")
		if err != nil {
			return 0, fmt.Errorf("prepare insert into %s: %w", prefix+t.name, err)
		}
		for _, rec := range records[i] {
			if _, err := st.ExecContext(ctx, rec...); err != nil {
				return 0, fmt.Errorf("insert into %s: %w", prefix+t.name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return time.Since(start), nil
}
