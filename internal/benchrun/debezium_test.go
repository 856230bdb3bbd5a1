package benchrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/debezium"
	"github.com/txsink/txsink/internal/workload"
)

// TestDebeziumWriterRoundTrip writes the txn workload (inserts, updates
// with their before images, deletes, -D/+I pairs) as the bench does and
// reads it back with txsink's own Debezium decoder: every row change comes
// back with its kind, table, images and transaction, and every
// transaction ends where it ended, with its event count; the counts the
// writer keeps are those of what it wrote.
func TestDebeziumWriterRoundTrip(t *testing.T) {
	res := workload.Generate(workload.Spec{Orders: 60, Partitions: 2, Seed: 7})
	bufs := make([]bytes.Buffer, 2)
	w := &debeziumWriter{}
	for i := range bufs {
		w.out = append(w.out, bufio.NewWriter(&bufs[i]))
	}
	var txns int64
	for p, changes := range res.Partitions {
		start := 0
		for i := range changes {
			if changes[i].TxnEnd {
				if err := w.txn(p, changes[start:i+1]); err != nil {
					t.Fatal(err)
				}
				txns++
				start = i + 1
			}
		}
	}
	for _, b := range w.out {
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	dec, err := debezium.New(format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var events, records, size int64
	for p := range bufs {
		size += int64(bufs[p].Len())
		var want []changelog.Change
		for _, c := range res.Partitions[p] {
			if c.Kind != changelog.UpdateBefore {
				want = append(want, c)
			}
		}
		var got []changelog.Change
		ends := 0
		for n, line := range bytes.Split(bytes.TrimSuffix(bufs[p].Bytes(), []byte("\n")), []byte("\n")) {
			records++
			cs, err := dec.Decode(line, changelog.Position{Partition: fmt.Sprint(p), Seq: int64(n + 1)})
			if err != nil {
				t.Fatalf("partition %d record %d: %v\n%s", p, n+1, err, line)
			}
			for _, c := range cs {
				switch c.Kind {
				case changelog.EndTxn:
					ends++
				case changelog.UpdateBefore:
				default:
					got = append(got, c)
				}
			}
		}
		events += int64(len(got))
		if len(got) != len(want) {
			t.Fatalf("partition %d: %d row changes decoded, %d written", p, len(got), len(want))
		}
		for i := range want {
			g, c := got[i], want[i]
			if g.Kind != c.Kind || g.Table != c.Table || g.TxnID != c.TxnID || render(g.After) != render(c.After) {
				t.Errorf("partition %d change %d: decoded %v %v %s %s, wrote %v %v %s %s", p, i, g.Kind, g.Table, g.TxnID, render(g.After), c.Kind, c.Table, c.TxnID, render(c.After))
			}
			if c.Kind == changelog.Delete && render(g.Before) != render(c.Before) {
				t.Errorf("partition %d change %d: delete of %s decoded as %s", p, i, render(c.Before), render(g.Before))
			}
		}
		var wantEnds int
		for _, c := range res.Partitions[p] {
			if c.TxnEnd {
				wantEnds++
			}
		}
		if ends != wantEnds {
			t.Errorf("partition %d: %d transaction ends decoded, %d written", p, ends, wantEnds)
		}
	}
	if w.events != events || w.records != records || w.bytes != size || w.txns != txns {
		t.Errorf("the writer counted %d events, %d records, %d bytes, %d transactions; it wrote %d, %d, %d, %d",
			w.events, w.records, w.bytes, w.txns, events, records, size, txns)
	}
}

// render writes a row image as column=value pairs, values as the workload
// renders them, so a Number and the decoder's number compare equal.
func render(r changelog.Row) string {
	var b bytes.Buffer
	for i, name := range r.Names {
		fmt.Fprintf(&b, "%s=%s;", name, workload.Render(r.Values[i]))
	}
	return b.String()
}

// TestAppendJSONString writes strings that JSON reads back as they were:
// quotes, backslashes, control characters, UTF-8.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b\c`, "tab\tnl\nnul\x00bell\x07\x1f", "日本語 ü", "\u2028"} {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("appendJSONString(%q) = %s: %v", s, b, err)
		}
		if got != s {
			t.Errorf("appendJSONString(%q) = %s, reads back as %q", s, b, got)
		}
	}
}

// TestAppendJSONRow writes each value kind the workload makes, and any
// other as its text in a string.
func TestAppendJSONRow(t *testing.T) {
	row := changelog.Row{
		Names:  []string{"n", "s", "i", "b", "null", "other"},
		Values: []changelog.Value{changelog.Number("12.50"), "x\"y", int64(-3), true, nil, 1.5},
	}
	want := `{"n":12.50,"s":"x\"y","i":-3,"b":true,"null":null,"other":"1.5"}`
	if got := string(appendJSONRow(nil, row)); got != want {
		t.Errorf("appendJSONRow = %s, want %s", got, want)
	}
}
