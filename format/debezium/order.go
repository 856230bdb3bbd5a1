package debezium

import (
	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

var _ format.OrderReader = (*Decoder)(nil)

// ReadOrders implements format.OrderReader: from now on each row event's
// Change.Order is its place in its source's log, when its source block
// tells one. Until then the source block's members that tell it are
// passed over, as the other members are, and Change.Order stays nil: the
// place costs about a tenth of decoding and reducing a record (docs/performance.md, issue
// #31), paid only where copies come (a NATS stream). Safe for concurrent
// use with decoding.
func (d *Decoder) ReadOrders() { d.orders.Store(true) }

// sourceOrder is what a record's "source" block says of its place in the
// source database's log (see changelog.Order), as read: views of the
// record's text and the numbers parsed from them.
type sourceOrder struct {
	connector, name, serverID []byte
	// snapshot is set when the record comes from a snapshot (source.snapshot
	// true, or any string but "false"): a snapshot's records share one
	// place, so they have none.
	snapshot bool
	// seq is a PostgreSQL connector's sequence, [last commit LSN, LSN].
	seq    [2]uint64
	hasSeq bool
	// file is the number of a binlog file's name, pos the event's
	// position in it.
	file, pos       uint64
	hasFile, hasPos bool
}

// read reads the value of "source" member k (one of the sourceOrder*
// indexes) into o. A value it cannot use leaves the order unknown; it is
// never an error, since the order only lets copies be told apart.
func (o *sourceOrder) read(s *jsonscan.Scanner, k int) error {
	tok, err := s.Value()
	if err != nil {
		return err
	}
	var b []byte
	if tok.Kind == jsonscan.String || tok.Kind == jsonscan.Number {
		b = s.Bytes(tok)
	}
	switch k {
	case sourceConnector:
		o.connector = b
	case sourceName:
		o.name = b
	case sourceServerID:
		o.serverID = b
	case sourceSnapshot:
		o.snapshot = tok.Kind == jsonscan.True || tok.Kind == jsonscan.String && string(b) != "false"
	case sourceSequence:
		o.seq, o.hasSeq = parseSequence(b)
	case sourceFile:
		o.file, o.hasFile = fileNumber(b)
	case sourcePos:
		o.pos, o.hasPos = parseUint(b)
	}
	return nil
}

// logKinds are the connectors whose records carry a usable place, by
// source.connector; the others' records have none.
const (
	logNone = iota
	logPostgres
	logBinlog
)

func logKind(connector []byte) int {
	switch string(connector) {
	case "postgresql":
		return logPostgres
	case "mysql", "mariadb":
		return logBinlog
	}
	return logNone
}

// order returns the place of a row event read from e (the zero Order when
// it has none: a connector that tells no usable place, a field missing).
// A snapshot's record has no place, its records share one: it is a new
// start of its connector's logs (changelog.Order.Restart).
func (d *Decoder) order(e *envelope) changelog.Order {
	o := &e.order
	kind := logKind(o.connector)
	if len(o.name) == 0 || kind == logNone {
		return changelog.Order{}
	}
	var scratch [128]byte
	b := append(append(append(scratch[:0], o.connector...), ':'), o.name...)
	if e.op == "r" || o.snapshot {
		return changelog.Order{Log: d.logName.Get(nil, b), Restart: true}
	}
	var ord changelog.Order
	switch kind {
	case logPostgres:
		if !o.hasSeq {
			return changelog.Order{}
		}
		ord.At = o.seq
	case logBinlog:
		if !o.hasFile || !o.hasPos {
			return changelog.Order{}
		}
		// Not the row: the events a compressed transaction payload
		// holds share its position, and their rows count from 0 in each.
		ord.At = [2]uint64{o.file, o.pos}
	default:
		return changelog.Order{}
	}
	if e.txnOrder > 0 {
		ord.N = uint32(e.txnOrder)
	}
	// The log's name: the connector, its logical server name and, for a
	// binlog, the server that wrote it (a failover's new primary numbers
	// its files anew).
	if len(o.serverID) > 0 && kind == logBinlog {
		b = append(append(b, ':'), o.serverID...)
	}
	ord.Log = d.logName.Get(nil, b)
	return ord
}

// parseSequence parses a PostgreSQL connector's source.sequence, the JSON
// text of an array of two strings, ["last commit LSN", "LSN"], in decimal;
// the first may be null (no commit seen yet: 0), the second may not.
func parseSequence(b []byte) ([2]uint64, bool) {
	var out [2]uint64
	i, n := 0, 0
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	skip()
	if i >= len(b) || b[i] != '[' {
		return out, false
	}
	i++
	for ; n < 2; n++ {
		skip()
		switch {
		case i+4 <= len(b) && string(b[i:i+4]) == "null":
			if n == 1 {
				return out, false
			}
			i += 4
		case i < len(b) && b[i] == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				j++
			}
			v, ok := parseUint(b[i+1 : min(j, len(b))])
			if !ok || j >= len(b) {
				return out, false
			}
			out[n], i = v, j+1
		default:
			return out, false
		}
		skip()
		if n == 0 {
			if i >= len(b) || b[i] != ',' {
				return out, false
			}
			i++
		}
	}
	if i >= len(b) || b[i] != ']' {
		return out, false
	}
	return out, true
}

// fileNumber returns the number a binlog file's name ends in
// ("mysql-bin.000003": 3).
func fileNumber(b []byte) (uint64, bool) {
	i := len(b)
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	return parseUint(b[i:])
}

// parseUint parses a decimal whole number of 1 to 19 digits.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
