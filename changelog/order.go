package changelog

// Order is a change's place in the log of the source database it was
// read from, when the format tells it (Debezium's "source" block: a
// PostgreSQL connector's sequence, a MySQL or MariaDB connector's binlog
// file and event position). Within one Log, a change written later has a
// greater place, whatever stream or topic carried it: a change whose
// place is not after one already applied from its Log is a copy
// published again (Debezium Server after its own restart), not news.
//
// The zero Order (Log "") tells nothing, and nothing is judged by it. An
// Order with Restart set is no place but a new start of the logs it names
// (a snapshot: Debezium snapshots after its offsets were lost or reset,
// and the log it streams from then may number its places anew, as after
// RESET MASTER or a restore): a change after it is not judged against the
// places before it.
type Order struct {
	// Log names the log the place is in: the connector and its logical
	// server name (Debezium's source.connector and source.name), and for
	// a binlog its server_id. Places in two logs are never compared.
	Log string
	// At is the place: compared element by element (PostgreSQL: the last
	// commit's LSN, the change's LSN; a binlog: the file's number, the
	// event's position).
	At [2]uint64
	// N is the change's place in its source transaction, from 1, when the
	// format says (Debezium's transaction.total_order), else 0. With it
	// no two changes of a Log share an Order; without it two may (the
	// rows of one PostgreSQL COPY share their LSN, the rows of a binlog
	// event, or of a compressed transaction payload, its position), so an
	// equal Order is a copy only when N is not 0.
	N uint32
	// Restart marks a new start of Log and of the logs whose names extend
	// it by ":..." (every server_id of a binlog connector: a snapshot's
	// records name none); At and N are then 0.
	Restart bool
}

// Restarts reports whether o is a new start of log (see Restart).
func (o Order) Restarts(log string) bool {
	return o.Restart && (log == o.Log || len(log) > len(o.Log) && log[len(o.Log)] == ':' && log[:len(o.Log)] == o.Log)
}

// IsZero reports whether o tells nothing.
func (o Order) IsZero() bool { return o.Log == "" }

// Compare compares the places of o and p, which are of one Log: -1 when
// o is before p, 0 when they are equal, +1 when o is after p.
func (o Order) Compare(p Order) int {
	for i := range o.At {
		if o.At[i] != p.At[i] {
			return cmp3(o.At[i] < p.At[i])
		}
	}
	if o.N != p.N {
		return cmp3(o.N < p.N)
	}
	return 0
}

// NotAfter reports whether a change at o, read after one at p of the
// same Log was applied, is a copy of one applied already: o is before p,
// or equal to it with a transaction order (N) telling changes apart.
func (o Order) NotAfter(p Order) bool {
	c := o.Compare(p)
	return c < 0 || c == 0 && o.N != 0
}

func cmp3(less bool) int {
	if less {
		return -1
	}
	return 1
}
