package benchrun

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/internal/workload"
)

// writeWorkload generates o's workload into one Debezium JSON file per
// partition in o.Dir, counts it into r, and returns the files' paths and
// the final state's digest.
func writeWorkload(o *Options, r *Result) ([]string, workload.Digest, error) {
	w := &debeziumWriter{}
	var paths []string
	for p := 0; p < o.Partitions; p++ {
		path := filepath.Join(o.Dir, fmt.Sprintf("p%d.json", p))
		f, err := os.Create(path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		w.files = append(w.files, f)
		w.out = append(w.out, bufio.NewWriterSize(f, 1<<20))
		paths = append(paths, path)
	}
	var final workload.Digest
	switch o.Workload {
	case "insert-only":
		s, err := workload.InsertOnly(o.Orders, o.Partitions, 1, o.ForeignKeys != "", w.txn)
		if err != nil {
			return nil, nil, err
		}
		final = s.Final
	case "update-heavy":
		s, err := workload.HotKeys(o.Orders, o.ChangesPerKey, o.Partitions, 1, w.txn)
		if err != nil {
			return nil, nil, err
		}
		final = s.Final
	case "txn":
		res := workload.Generate(workload.Spec{Orders: o.Orders, Partitions: o.Partitions, Seed: 1, Linked: o.ForeignKeys != ""})
		for p, changes := range res.Partitions {
			start := 0
			for i := range changes {
				if changes[i].TxnEnd {
					if err := w.txn(p, changes[start:i+1]); err != nil {
						return nil, nil, err
					}
					start = i + 1
				}
			}
		}
		final = workload.DigestOf(res.Final)
	}
	for i, b := range w.out {
		if err := b.Flush(); err != nil {
			return nil, nil, err
		}
		if err := w.files[i].Close(); err != nil {
			return nil, nil, err
		}
	}
	r.events, r.records, r.inputBytes, r.txns = w.events, w.records, w.bytes, w.txns
	return paths, final, nil
}

// debeziumWriter writes source transactions as Debezium JSON records, one
// per line, the way the MySQL connector writes them with
// provide.transaction.metadata: BEGIN, the row events (an update is one
// "u" event with before and after, so -U changes are not written), END with
// the event count. It counts what it wrote.
type debeziumWriter struct {
	files                  []*os.File
	out                    []*bufio.Writer // one per partition
	buf                    []byte
	events, records, bytes int64
	txns                   int64
}

// txn writes one source transaction (its changes, the last with the end
// mark) to partition p. It is a workload.Emit.
func (w *debeziumWriter) txn(p int, txn []changelog.Change) error {
	id := txn[0].TxnID
	b := w.buf[:0]
	b = append(b, `{"status":"BEGIN","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"event_count":null,"data_collections":null,"ts_ms":1767225600000}`+"\n"...)
	n := 0
	for i := range txn {
		c := &txn[i]
		if c.Kind == changelog.UpdateBefore {
			continue
		}
		n++
		b = appendDebezium(b, c, id, n)
	}
	b = append(b, `{"status":"END","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"event_count":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"data_collections":null,"ts_ms":1767225600000}`+"\n"...)
	w.buf = b
	w.events += int64(n)
	w.records += int64(n + 2)
	w.bytes += int64(len(b))
	w.txns++
	_, err := w.out[p].Write(b)
	return err
}

// appendDebezium appends one change as a bare Debezium envelope (the
// JsonConverter with schemas.enable=false), the order-th event of
// transaction txnID.
func appendDebezium(b []byte, c *changelog.Change, txnID string, order int) []byte {
	op := "c"
	switch c.Kind {
	case changelog.UpdateAfter:
		op = "u"
	case changelog.Delete:
		op = "d"
	}
	b = append(b, `{"before":`...)
	if c.Kind == changelog.Insert || c.Before.IsZero() {
		b = append(b, "null"...)
	} else {
		b = appendJSONRow(b, c.Before)
	}
	b = append(b, `,"after":`...)
	if c.Kind == changelog.Delete {
		b = append(b, "null"...)
	} else {
		b = appendJSONRow(b, c.After)
	}
	b = append(b, `,"source":{"version":"2.7.3.Final","connector":"mysql","name":"bench","ts_ms":1767225600000,"snapshot":"false","db":`...)
	b = appendJSONString(b, c.Table.Namespace)
	b = append(b, `,"sequence":null,"table":`...)
	b = appendJSONString(b, c.Table.Name)
	b = append(b, `,"server_id":1,"gtid":null,"file":"binlog.000001","pos":4711,"row":0,"thread":7,"query":null},"op":"`...)
	b = append(b, op...)
	b = append(b, `","ts_ms":1767225600000,"transaction":{"id":`...)
	b = appendJSONString(b, txnID)
	b = append(b, `,"total_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	b = append(b, `,"data_collection_order":`...)
	b = strconv.AppendInt(b, int64(order), 10)
	b = append(b, "}}\n"...)
	return b
}

// appendJSONRow appends r as a JSON object: numbers as they are written,
// any other value the workload does not make as its fmt text in a string.
func appendJSONRow(b []byte, r changelog.Row) []byte {
	b = append(b, '{')
	for i, name := range r.Names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		switch v := r.Values[i].(type) {
		case nil:
			b = append(b, "null"...)
		case changelog.Number:
			b = append(b, v...)
		case string:
			b = appendJSONString(b, v)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			b = appendJSONString(b, fmt.Sprint(v))
		}
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string. UTF-8 passes through; only
// quotes, backslashes and control characters are escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
