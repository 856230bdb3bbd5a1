package debezium

import (
	"math"
	"strconv"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// readBoundaryAt reads a transaction boundary event at s, just inside
// its top-level object, in place (see readSourceAt) when it is written
// the way Debezium writes one, and reports whether it was; when it was
// not, s is where it was and the record is read the general way. A
// BEGIN and an END are a third of the records of a stream of small
// transactions, and have no row: read in place, they cost neither the
// field table's loop nor a jsonscan.Rows.
//
// The shapes: Debezium's order, and the one with "ts_ms" last,
//
//	{"status":"BEGIN"|"END","id":S[,"ts_ms":N],"event_count":N|null,"data_collections":null|[...][,"ts_ms":N]}
//
// with S a plain string, N a whole number, and the array of
// "data_collections" passed over by the scanner. On success e holds what
// readEnvelope reads from the same record.
func readBoundaryAt(s *jsonscan.Scanner, e *envelope) bool {
	d, i := s.Data(), s.Pos()
	var status string
	switch j := kStatus.End(d, i); {
	case j < 0:
		return false
	case len(d)-j >= 8 && string(d[j:j+8]) == `"BEGIN",`:
		status, i = "BEGIN", j+7
	case len(d)-j >= 6 && string(d[j:j+6]) == `"END",`:
		status, i = "END", j+5
	default:
		return false
	}
	var id, count []byte
	i, id = jsonrecord.ScanString(d, kBoundaryID.End(d, i), false)
	ts := false
	if j := kTsMs.End(d, i); j >= 0 {
		i, _ = jsonrecord.ScanUint(d, j, false)
		ts = true
	}
	i, count = jsonrecord.ScanUint(d, kEventCount.End(d, i), true)
	// `,"data_collections":` is longer than a Key16: its first 16 bytes
	// are kCollectionOrder's, the rest compared as a constant.
	j := kCollectionOrder.End(d, i)
	if j < 0 || len(d)-j < 4 || string(d[j:j+4]) != `ns":` {
		return false
	}
	i = j + 4
	if k := jsonrecord.NullEnd(d, i); k >= 0 {
		i = k
	} else if i < len(d) && d[i] == '[' {
		// An END's counts per table: checked by the scanner, as the
		// general way would, and not read.
		at := *s // the whole scanner, as an error may leave it
		s.Skip(i - s.Pos())
		_, err := s.Value()
		i = s.Pos()
		if *s = at; err != nil {
			return false // refused the general way, at the same place
		}
	} else {
		return false
	}
	if !ts {
		if j := kTsMs.End(d, i); j >= 0 {
			i, _ = jsonrecord.ScanUint(d, j, false)
		} else if len(d)-i >= 9 && string(d[i:i+9]) == `,"ts_ms":` {
			// The record's end: fewer than 16 bytes left.
			i, _ = jsonrecord.ScanUint(d, i+9, false)
		}
	}
	if i < 0 || i >= len(d) || d[i] != '}' {
		return false
	}
	s.Skip(i + 1 - s.Pos())
	e.seen = 1<<fStatus | 1<<fID | 1<<fEventCount
	if ts {
		e.seen |= 1 << fTsMs
	}
	e.status, e.boundary, e.boundaryID, e.eventCount = status, true, id, count
	return true
}

// The keys of a boundary event's members, as readBoundaryAt expects
// them.
var (
	kStatus     = jsonrecord.NewKey16(`{"status":`)
	kBoundaryID = jsonrecord.NewKey16(`,"id":`)
	kEventCount = jsonrecord.NewKey16(`,"event_count":`)
)

// boundary returns what the boundary event e (no "op", e.boundary set)
// becomes: nothing for a BEGIN; for an END, the row-less EndTxn change
// that shows transaction assembly where the transaction ends and how
// many events it had.
func (d *Decoder) boundary(a *changelog.Arena, e *envelope) ([]changelog.Change, error) {
	if e.status == "BEGIN" {
		return nil, nil
	}
	if len(e.boundaryID) == 0 {
		return nil, &recordError{Reason: `transaction END event has no "id"`, Hint: hintMalformed}
	}
	var events int32
	if len(e.eventCount) > 0 {
		n, err := strconv.Atoi(string(e.eventCount))
		if err != nil || n < 0 {
			return nil, &recordError{Reason: `"event_count" must be a whole number, not ` + strconv.Quote(string(e.eventCount)), Hint: hintMalformed}
		}
		events = int32(min(n, math.MaxInt32))
	}
	cs := a.Changes(1)
	cs[0] = changelog.Change{Kind: changelog.EndTxn, TxnID: d.txnKey(a, e.boundaryID), TxnEnd: true, TxnEvents: events}
	return cs, nil
}
