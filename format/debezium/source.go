package debezium

import (
	envreader "github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// readSourceAt reads the "source" block at s in place (jsonrecord.Key16,
// ScanString, ScanUint) when it is written the way Debezium's MySQL,
// MariaDB and PostgreSQL connectors write it, member for member, and
// reports whether it was; when it was not, nothing of s has moved and
// readSourceMembers reads the block member by member. The block is a third
// of a row event's text and its fifteen members are read for three (and,
// with readOrder, seven more): passed over one by one, each costs a key's
// scan and look-up; here each key is compared with the one its connector
// writes there.
//
// The shapes, each member's value plain (see jsonrecord.ScanString):
//
//	{"version":S,"connector":S,"name":S,"ts_ms":N,"snapshot":S,"db":S|null[,"sequence":Q|null][,"ts_us":N][,"ts_ns":N]
//	  ,"table":S|null,"server_id":N,"gtid":S|null,"file":S,"pos":N,"row":N,"thread":N|null,"query":S|null}  (MySQL, MariaDB)
//	  ,"schema":S|null,"table":S|null,"txId":N|null,"lsn":N|null,"xmin":N|null}                             (PostgreSQL)
//
// with S a string, N a whole number and Q a string whose only escapes are
// \" (PostgreSQL's sequence, ["LSN","LSN"] as a string). Anything else (a
// snapshot's boolean, a member more or less, white space) is left to
// readSourceMembers.
func readSourceAt(s *jsonscan.Scanner, e *envelope, env *envreader.Reader) bool {
	// Each step takes the offset the one before it ended at and returns
	// where it ends, -1 once one did not match: -1 matches nothing.
	d, i := s.Data(), s.Pos()
	var connector, name, snapshot, db, seq, schema, table, serverID, file, pos []byte
	i, _ = jsonrecord.ScanString(d, kVersion.End(d, i), false)
	i, connector = jsonrecord.ScanString(d, kConnector.End(d, i), false)
	i, name = jsonrecord.ScanString(d, kName.End(d, i), false)
	i, _ = jsonrecord.ScanUint(d, kTsMs.End(d, i), false)
	i, snapshot = jsonrecord.ScanString(d, kSnapshot.End(d, i), false)
	i, db = jsonrecord.ScanString(d, kDB.End(d, i), true)
	if j := kSequence.End(d, i); j >= 0 {
		if i = jsonrecord.NullEnd(d, j); i < 0 {
			i = jsonrecord.QuotedEnd(d, j)
			seq = d[j+1 : max(i-1, j+1)]
		}
	}
	if j := kTsUs.End(d, i); j >= 0 {
		i, _ = jsonrecord.ScanUint(d, j, false)
	}
	if j := kTsNs.End(d, i); j >= 0 {
		i, _ = jsonrecord.ScanUint(d, j, false)
	}
	j := kSchema.End(d, i)
	pg := j >= 0
	if pg {
		i, schema = jsonrecord.ScanString(d, j, true)
	}
	i, table = jsonrecord.ScanString(d, kTable.End(d, i), true)
	if pg {
		i, _ = jsonrecord.ScanUint(d, kTxID.End(d, i), true)
		i, _ = jsonrecord.ScanUint(d, kLSN.End(d, i), true)
		i, _ = jsonrecord.ScanUint(d, kXmin.End(d, i), true)
	} else {
		i, serverID = jsonrecord.ScanUint(d, kServerID.End(d, i), false)
		i, _ = jsonrecord.ScanString(d, kGTID.End(d, i), true)
		i, file = jsonrecord.ScanString(d, kFile.End(d, i), false)
		i, pos = jsonrecord.ScanUint(d, kPos.End(d, i), false)
		i, _ = jsonrecord.ScanUint(d, kRow.End(d, i), false)
		i, _ = jsonrecord.ScanUint(d, kThread.End(d, i), true)
		i, _ = jsonrecord.ScanString(d, kQuery.End(d, i), true)
	}
	if i < 0 || i >= len(d) || d[i] != '}' || e.readOrder && len(seq) > 64 {
		// (A sequence that long is parsed from its decoded copy by
		// readSource: it is not two LSNs.)
		return false
	}
	if e.readOrder {
		// What sourceOrder.read makes of the same values.
		o := &e.order
		o.connector, o.name, o.serverID = connector, name, serverID
		o.snapshot = string(snapshot) != "false"
		if seq != nil {
			var buf [64]byte
			o.seq, o.hasSeq = parseSequence(unquote(buf[:0], seq))
		}
		if !pg {
			o.file, o.hasFile = fileNumber(file)
			o.pos, o.hasPos = parseUint(pos)
		}
	}
	s.Skip(i + 1 - s.Pos())
	e.hasSource = true
	e.table = namedTable(db, schema, table, env)
	return true
}

// The keys of the members of a "source" block readSourceAt expects, as
// written after the member before them.
var (
	kVersion   = jsonrecord.NewKey16(`{"version":`)
	kConnector = jsonrecord.NewKey16(`,"connector":`)
	kName      = jsonrecord.NewKey16(`,"name":`)
	kTsMs      = jsonrecord.NewKey16(`,"ts_ms":`)
	kSnapshot  = jsonrecord.NewKey16(`,"snapshot":`)
	kDB        = jsonrecord.NewKey16(`,"db":`)
	kSequence  = jsonrecord.NewKey16(`,"sequence":`)
	kTsUs      = jsonrecord.NewKey16(`,"ts_us":`)
	kTsNs      = jsonrecord.NewKey16(`,"ts_ns":`)
	kSchema    = jsonrecord.NewKey16(`,"schema":`)
	kTable     = jsonrecord.NewKey16(`,"table":`)
	kServerID  = jsonrecord.NewKey16(`,"server_id":`)
	kGTID      = jsonrecord.NewKey16(`,"gtid":`)
	kFile      = jsonrecord.NewKey16(`,"file":`)
	kPos       = jsonrecord.NewKey16(`,"pos":`)
	kRow       = jsonrecord.NewKey16(`,"row":`)
	kThread    = jsonrecord.NewKey16(`,"thread":`)
	kQuery     = jsonrecord.NewKey16(`,"query":`)
	kTxID      = jsonrecord.NewKey16(`,"txId":`)
	kLSN       = jsonrecord.NewKey16(`,"lsn":`)
	kXmin      = jsonrecord.NewKey16(`,"xmin":`)
)

// unquote appends to b the value of text matched by jsonrecord.QuotedEnd: the
// text without its backslashes.
func unquote(b, text []byte) []byte {
	for _, c := range text {
		if c != '\\' {
			b = append(b, c)
		}
	}
	return b
}
