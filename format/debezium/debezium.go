// Package debezium decodes Debezium change events in JSON, the format
// called "debezium-json".
//
// A record is one Debezium envelope
//
//	{"before": {...}, "after": {...}, "source": {...}, "op": "u", "ts_ms": ..., "transaction": {...}}
//
// either bare (JsonConverter with schemas.enable=false) or wrapped in the
// Kafka Connect schema envelope {"schema": {...}, "payload": {envelope}}
// (schemas.enable=true). The decoder tells them apart by itself.
//
// What a record becomes:
//
//	op "c", "r"  one +I change with After
//	op "u"       one +U change with After, and Before when the event has it, so
//	             the engine can see a key change; no separate -U is emitted
//	op "d"       one -D change with Before
//	op "t"       an error: txsink does not apply TRUNCATE
//	op "m"       one row-less changelog.Message change (a PostgreSQL logical
//	             decoding message): skipped and counted, never data
//	schema change event ("databaseName", "ddl", "tableChanges", no op: the
//	             connector's schema change topic) one row-less
//	             changelog.SchemaChange change, naming source's table or the
//	             database: skipped and counted, never data
//	tombstone    (empty, white space or null) no change and no error
//	BEGIN        transaction boundary event ({"status": "BEGIN"}, no op): no change
//	END          one row-less changelog.EndTxn change with TxnID and TxnEvents
//	             (the END's event_count), marking where the transaction ends
//
// The table is source.schema (when present and not empty, as the PostgreSQL
// and SQL Server connectors write it) or else source.db, and source.table.
// Change.TxnID is transaction.id when the event carries transaction metadata,
// through TxnKey: PostgreSQL's "txId:LSN" ids differ between BEGIN, the data
// events and END, so they are grouped by their txId part. Change.TxnOrder
// is transaction.total_order, the event's place in its transaction, by
// which transaction mode drops events published twice. Change.Order is,
// once the decoder is told to read it (ReadOrders; the engine tells it for
// a NATS stream only), the event's place in its source database's log, by
// which the engine drops copies published again across restarts (see
// changelog.Order): for the
// postgresql connector source.sequence (["last commit LSN", "LSN"]), for
// mysql and mariadb the number of source.file and source.pos (not
// source.row: a compressed transaction payload's events share a position
// and number their rows from 0 each), each under the log source.connector:source.name (and :server_id for a
// binlog), with total_order as N. Snapshot records (op "r", or
// source.snapshot other than false) and other connectors have none.
//
// Values keep their exact JSON text: numbers become changelog.Number, nested
// objects and arrays changelog.JSON; the target column's type decides later
// what they mean. When the record carries the Connect schema, the Kafka
// Connect and Debezium logical types it declares are decoded exactly:
//
//	org.apache.kafka.connect.data.Decimal     base64 unscaled bytes -> Number "-12.50"
//	io.debezium.data.VariableScaleDecimal     {"scale","value"}     -> Number
//	type "bytes" (no logical name)            base64                -> []byte
//	io.debezium.time.Date, connect Date       days                  -> "YYYY-MM-DD"
//	io.debezium.time.Timestamp, connect Timestamp  ms               -> "YYYY-MM-DD HH:MM:SS[.fff]"
//	io.debezium.time.MicroTimestamp           µs                    -> "YYYY-MM-DD HH:MM:SS[.ffffff]"
//	io.debezium.time.NanoTimestamp            ns                    -> "YYYY-MM-DD HH:MM:SS[.fffffffff]"
//	io.debezium.time.Time, connect Time       ms since midnight     -> "HH:MM:SS[.fff]"
//	io.debezium.time.MicroTime, NanoTime      µs, ns                -> "HH:MM:SS[.ffffff]"
//
// Timestamps are naive wall times (Debezium writes DATETIME and timestamp
// without time zone as if they were UTC); fractions keep every significant
// digit and drop trailing zeros. ZonedTimestamp, Json and the other string
// logical types stay strings.
//
// A column whose value is Debezium's unavailable-value placeholder (an
// unchanged TOASTed column under REPLICA IDENTITY DEFAULT, in any of the
// forms placeholder lists) is dropped from its image: the change does not
// carry it, and the target keeps the value it holds. The placeholder is
// OptionUnavailableValuePlaceholder's.
//
// Every error is a *format.Error naming the record's position, its table
// when known, and a hint.
package debezium

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/format"
	envreader "github.com/txsink/txsink/format/internal/envelope"
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// Name is the format's name in the pipeline config.
const Name = "debezium-json"

// OptionAllowMissingBefore, when "true", lets an update event without a
// "before" image decode as a plain +U. Without it such an event is an error,
// because txsink cannot tell whether the update changed the row's key.
const OptionAllowMissingBefore = "debezium.allow-missing-before"

// Decoder decodes debezium-json records. It is safe for concurrent use.
type Decoder struct {
	allowMissingBefore bool
	// unavailable is the unavailable-value placeholder, nil when its
	// detection is off.
	unavailable *placeholder
	schemas     schemaCache
	// keys caches record key schemas (see KeyedTypes).
	keys keyCache
	// logName shares the name of the source log records name (see
	// changelog.Order) between the records that repeat it.
	logName jsonrecord.LastString
	// env interns the tables records name, the transaction id the events
	// of a transaction repeat, and the column lists of row images.
	env envreader.Reader
	// narrow is the columns an update's before image is read for, nil
	// for all (see narrow.go); narrowMu serializes its writers.
	narrow atomic.Pointer[narrowing]
	// orders is set once the decoder reads each record's place in its
	// source's log (see ReadOrders).
	orders   atomic.Bool
	narrowMu sync.Mutex
}

var (
	_ format.Decoder        = (*Decoder)(nil)
	_ format.ColumnDeclarer = (*Decoder)(nil)
	_ format.TypeDeclarer   = (*Decoder)(nil)
)

// New returns a Decoder configured by opts: OptionAllowMissingBefore and
// OptionUnavailableValuePlaceholder. An unknown option is an error.
func New(opts format.Options) (*Decoder, error) {
	if err := opts.Check(Name, OptionAllowMissingBefore, OptionUnavailableValuePlaceholder); err != nil {
		return nil, err
	}
	allow, err := opts.Bool(Name, OptionAllowMissingBefore, false)
	if err != nil {
		return nil, err
	}
	spec, ok := opts[OptionUnavailableValuePlaceholder]
	if !ok {
		spec = DefaultUnavailableValuePlaceholder
	}
	unavailable, err := newPlaceholder(spec)
	if err != nil {
		return nil, err
	}
	return &Decoder{
		allowMissingBefore: allow, unavailable: unavailable,
		env: envreader.Reader{Format: Name, HintJSON: hintJSON},
	}, nil
}

// The fields of an envelope debezium reads, by their index in
// topFields.
const (
	fBefore = iota
	fAfter
	fOp
	fSource
	fTransaction
	fStatus
	// Only boundary events have a top-level "id" and "event_count"; on any
	// other record they are someone else's fields, which may repeat.
	fID
	fEventCount
	// Only schema change events (the connector's schema change topic) have
	// these; on other records they are someone else's, which may repeat.
	fDatabaseName
	fDDL
	fTableChanges
	// The event's time, not read: a field so that the members after it
	// are expected (see envreader.Fields.Sequence). It is never refused
	// for appearing twice, as when it was passed over.
	fTsMs
	// The Kafka Connect wrapper's, at the top level only.
	fSchema
	fPayload
	envelopeFields = 1<<fBefore | 1<<fAfter | 1<<fOp | 1<<fSource | 1<<fTransaction | 1<<fStatus
	// schemaChangeFields are those of a schema change event, which has
	// no "op".
	schemaChangeFields = 1<<fDatabaseName | 1<<fDDL | 1<<fTableChanges
)

// topFields are the fields of a record's top level; payloadFields those
// of the envelope in a Connect "payload", where the wrapper's fields are
// someone else's.
var (
	topFields = envreader.NewFields("before", "after", "op", "source", "transaction", "status",
		"id", "event_count", "databaseName", "ddl", "tableChanges", "ts_ms", "schema", "payload").
		Repeatable(fID, fEventCount, fDatabaseName, fDDL, fTableChanges, fTsMs).
		Sequence(fBefore, fAfter, fSource, fOp, fTsMs, fTransaction).Sequence(fStatus, fID, fEventCount).
		Sequence(fSchema, fPayload)
	payloadFields = envreader.NewFields(topFields.Names()[:fSchema]...).
			Repeatable(fID, fEventCount, fDatabaseName, fDDL, fTableChanges, fTsMs).
			Sequence(fBefore, fAfter, fSource, fOp, fTsMs, fTransaction)
)

// ops are the values of "op" txsink knows, and statuses those of a
// transaction boundary's "status".
var (
	ops      = []string{"c", "r", "u", "d", "t", "m"}
	statuses = []string{"BEGIN", "END"}
)

// envelope is what a record's fields said, gathered in one pass.
type envelope struct {
	seen envreader.Seen
	op   string
	// before and after are the row images, read and checked; the change
	// is built with them once the whole record is read (see
	// jsonscan.Rows.Change).
	before, after jsonscan.Pending
	hasBefore     bool // "before" is an object (not null, not absent)
	hasAfter      bool
	// narrowed is the narrowing "before" was read for, nil when it was
	// read whole; beforeAt is where its object starts in the record.
	narrowed  *narrowing
	beforeAt  int
	table     changelog.Table
	hasSource bool
	// txnID, boundaryID and eventCount are views of the record's text
	// (or decoded copies of escaped strings), made strings only when the
	// change needs them: BEGIN's id and most ids repeated by a
	// transaction's events are never allocated.
	txnID      []byte // transaction.id
	txnOrder   int32  // transaction.total_order, 0 for none
	boundary   bool   // "status" is BEGIN or END
	status     string // "BEGIN" or "END" on a boundary event
	boundaryID []byte // "id" of a boundary event
	eventCount []byte // "event_count" of an END event, as written
	// database is a schema change event's "databaseName".
	database []byte
	// order is what "source" says of the record's place in its log, read
	// only when readOrder is set (see ReadOrders): its members are
	// otherwise passed over like the others. (Here, not behind a
	// pointer: decode's changes point into the envelope, so a pointer
	// would move what it points to to the heap for every record.)
	order     sourceOrder
	readOrder bool

	// The Kafka Connect wrapper, at the top level only.
	schema      *rowSchema // nil without a schema (or with "schema": null)
	payload     *envelope
	payloadNull bool
}

// recordError is a refused record before it gets its position and table.
type recordError = jsonrecord.Error

// Hints shared by several errors.
const (
	hintJSON = "each record must be one Debezium change event in JSON (one per line in a file); " +
		"check that the connector uses the JSON converter (value.converter=org.apache.kafka.connect.json.JsonConverter)"
	hintMalformed = "the record is not a well-formed Debezium envelope; check the producer of this topic or file"
	hintSchema    = "the value does not match the Kafka Connect schema sent with the record; " +
		"check the converter settings of the connector (JsonConverter with schemas.enable=true)"
	hintNoOp = "txsink reads the full Debezium envelope (before/after/source/op): remove the ExtractNewRecordState " +
		"(unwrap) transform from the connector, or configure the format that matches these records"
	hintSource = "txsink takes the table from source.db (or source.schema) and source.table; " +
		"do not drop or rewrite the \"source\" block with a transform"
)

// Decode decodes one record. See the package documentation for what a
// record becomes.
func (d *Decoder) Decode(data []byte, pos changelog.Position) ([]changelog.Change, error) {
	return d.DecodeIn(nil, data, pos)
}

// DecodeIn is Decode with the change in a (format.ArenaDecoder).
func (d *Decoder) DecodeIn(a *changelog.Arena, data []byte, pos changelog.Position) ([]changelog.Change, error) {
	// envreader.Reader.Decode's steps, without its closures.
	if jsonrecord.IsTombstone(data) {
		return nil, nil
	}
	top := envelope{readOrder: d.orders.Load()}
	cs, err := d.decode(a, data, &top)
	if err != nil {
		return nil, d.env.Refuse(pos, tableOf(data, &top), err)
	}
	return d.env.Decoded(cs, data, pos), nil
}

func (d *Decoder) decode(a *changelog.Arena, data []byte, top *envelope) (_ []changelog.Change, err error) {
	s := d.env.Scanner(a, data)
	if len(data) == 0 || data[0] != '{' { // else an object, told without a call
		if err := d.env.Object(&s); err != nil {
			return nil, err
		}
	}
	if readBoundaryAt(&s, top) {
		if err := s.End(); err != nil {
			return nil, err
		}
		return d.boundary(a, top)
	}
	return d.decodeEnvelope(a, data, &s, top)
}

// decodeEnvelope is decode for a record read the general way, from just
// inside its top-level object at s.
func (d *Decoder) decodeEnvelope(a *changelog.Arena, data []byte, s *jsonscan.Scanner, top *envelope) (_ []changelog.Change, err error) {
	var rs jsonscan.Rows
	start := *s
	switch read, err := d.readEventAt(s, &rs, top); {
	case err != nil:
		return nil, err
	case read == eventAgain:
		// Read the general way from the start, with what was read
		// forgotten (the names interned stay: they are the record's).
		*s, *top, rs = start, envelope{readOrder: top.readOrder}, jsonscan.Rows{}
		fallthrough
	case read == eventNot:
		if err := d.readEnvelope(s, &rs, top, topFields); err != nil {
			return nil, err
		}
	}
	return d.change(a, data, s, &rs, top)
}

// change returns the change of the record whose top-level object was
// read into top and rs, the scanner just past it.
func (d *Decoder) change(a *changelog.Arena, data []byte, s *jsonscan.Scanner, rs *jsonscan.Rows, top *envelope) (_ []changelog.Change, err error) {
	if err := s.End(); err != nil {
		return nil, err
	}
	e := top
	if top.seen.Has(fPayload) {
		if top.seen&envelopeFields != 0 {
			return nil, &recordError{
				Reason: `record has both a Kafka Connect "payload" and Debezium envelope fields at the top level`,
				Hint:   hintMalformed,
			}
		}
		if top.payloadNull {
			return nil, nil // a tombstone in Connect's schema envelope
		}
		e = top.payload
	}

	if !e.seen.Has(fOp) {
		if e.boundary {
			return d.boundary(a, e)
		}
		if e.seen&schemaChangeFields != 0 {
			return d.skipped(a, changelog.SchemaChange, e), nil
		}
		return nil, &recordError{Reason: `record has no "op" field: it is not a Debezium change event envelope`, Hint: hintNoOp}
	}
	var kind changelog.Kind
	switch e.op {
	case "c", "r":
		kind = changelog.Insert
	case "u":
		kind = changelog.UpdateAfter
	case "d":
		kind = changelog.Delete
	case "m":
		return d.skipped(a, changelog.Message, e), nil
	case "t":
		return nil, &recordError{
			Reason: "truncate events (op \"t\") are not supported",
			Hint: "txsink does not apply TRUNCATE; exclude truncate events at the connector (skipped.operations=t) " +
				"or filter them out before txsink",
		}
	default:
		return nil, &recordError{
			Reason: "unknown op " + strconv.Quote(e.op),
			Hint:   `Debezium ops are "c" (create), "r" (read), "u" (update), "d" (delete) and "t" (truncate); check that the records come from a Debezium connector`,
		}
	}
	if !e.hasSource {
		return nil, &recordError{Reason: `record has no "source" block`, Hint: hintSource}
	}
	if e.table.Name == "" {
		return nil, &recordError{Reason: `"source" has no "table"`, Hint: hintSource}
	}

	if e.narrowed != nil && e.hasBefore && (kind != changelog.UpdateAfter || !e.narrowed.covers(e.table, &e.before)) {
		// Only an update of a table the narrowing names, whose image
		// holds that table's key, does with part of its before image.
		if err := d.wholeBefore(a, data, rs, e); err != nil {
			return nil, err
		}
	}
	var before, after *jsonscan.Pending
	switch kind {
	case changelog.Insert, changelog.UpdateAfter:
		if !e.hasAfter {
			return nil, &recordError{
				Reason: opName(e.op) + ` event has no "after" image`,
				Hint:   `Debezium writes the new row in "after" for ops c, r and u; the record is incomplete, check for transforms that drop it`,
			}
		}
		after = &e.after
		if kind == changelog.UpdateAfter {
			if !e.hasBefore && !d.allowMissingBefore {
				return nil, &recordError{
					Reason: `The "before" field of UPDATE message is null`,
					Hint: "if you are using Debezium Postgres Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level " +
						"(ALTER TABLE " + e.table.String() + " REPLICA IDENTITY FULL), so that txsink can see key changes; " +
						"if the key columns of this table never change, set the format option " + OptionAllowMissingBefore + `: "true" instead`,
				}
			}
			if e.hasBefore {
				before = &e.before
			}
		}
	case changelog.Delete:
		if !e.hasBefore {
			return nil, &recordError{
				Reason: `delete event has no "before" image`,
				Hint: "txsink needs the key of the deleted row; with the Debezium Postgres connector give the table a primary key " +
					"or set REPLICA IDENTITY FULL (ALTER TABLE " + e.table.String() + " REPLICA IDENTITY FULL)",
			}
		}
		before = &e.before
	}
	cs := rs.ChangeIn(a, data, before, after)
	c := &cs[0]
	c.Kind, c.Table, c.TxnID, c.TxnOrder = kind, e.table, d.txnKey(a, e.txnID), e.txnOrder
	if e.readOrder {
		if o := d.order(e); !o.IsZero() {
			c.Order = a.Order()
			*c.Order = o
		}
	}
	if d.unavailable != nil {
		// Before the schema's conversions, which would decode the
		// placeholder's base64 form into bytes like any other.
		var bi, ai *image
		if top.schema != nil && e == top.payload {
			bi, ai = &top.schema.before, &top.schema.after
		}
		d.unavailable.drop(&c.Before, bi)
		d.unavailable.drop(&c.After, ai)
	}
	if top.schema != nil && e == top.payload {
		c.Types = top.schema.types
		if err := convertImage(&top.schema.before, &c.Before, "before"); err != nil {
			return nil, err
		}
		if err := convertImage(&top.schema.after, &c.After, "after"); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// skipped returns the row-less change of kind (a schema change event, a
// logical decoding message) that e is, naming the table its "source"
// does, or else its "databaseName" as the namespace.
func (d *Decoder) skipped(a *changelog.Arena, kind changelog.Kind, e *envelope) []changelog.Change {
	t := e.table
	if t.Namespace == "" && t.Name == "" && len(e.database) > 0 {
		t = d.env.Table(e.database, nil)
	}
	cs := a.Changes(1)
	cs[0] = changelog.Change{Kind: kind, Table: t}
	return cs
}

func convertImage(img *image, row *changelog.Row, field string) error {
	if err := img.apply(row); err != nil {
		return &recordError{Reason: strconv.Quote(field) + " image: " + err.Error(), Hint: hintSchema}
	}
	return nil
}

func opName(op string) string {
	switch op {
	case "c":
		return "create"
	case "r":
		return "read (snapshot)"
	case "u":
		return "update"
	}
	return "op " + strconv.Quote(op)
}

// readEnvelope reads the object at the scanner into e, in one pass, with
// the fields of topFields or payloadFields. The Connect wrapper's
// "payload" is read as an envelope of its own.
func (d *Decoder) readEnvelope(s *jsonscan.Scanner, rs *jsonscan.Rows, e *envelope, fields *envreader.Fields) (err error) {
	e.seen, err = fields.Read(s, hintMalformed, func(f int) (err error) {
		switch f {
		case fBefore:
			err = d.readBefore(s, rs, e)
		case fAfter:
			e.hasAfter, err = jsonrecord.ScanImage(s, rs, &e.after, "after", hintMalformed)
		case fOp:
			e.op, err = jsonrecord.ReadEnum(s, "op", hintMalformed, true, ops)
		case fSource:
			err = readSource(s, e, &d.env)
		case fTransaction:
			err = readTransaction(s, e)
		case fStatus:
			if e.status, err = jsonrecord.ReadEnum(s, "status", hintMalformed, true, statuses); err == nil {
				e.boundary = e.status == "BEGIN" || e.status == "END"
			}
		case fID:
			e.boundaryID, err = scalarBytes(s)
		case fEventCount:
			e.eventCount, err = scalarBytes(s)
		case fDatabaseName:
			e.database, err = scalarBytes(s)
		case fDDL, fTableChanges, fTsMs:
			// What changed is not read: txsink applies rows, not DDL;
			// nor is the time of the event.
			_, err = s.Value()
		case fSchema:
			err = d.readSchema(s, e)
		case fPayload:
			err = d.readPayload(s, rs, e)
		}
		return err
	})
	return err
}

// readBefore reads the "before" image at s into e: whole, or only the
// columns of the narrowing the decoder has (see narrow.go).
func (d *Decoder) readBefore(s *jsonscan.Scanner, rs *jsonscan.Rows, e *envelope) (err error) {
	if n := d.narrow.Load(); n != nil && s.Peek() == '{' {
		e.narrowed, e.beforeAt = n, s.Pos()
		e.hasBefore, err = jsonrecord.ScanImageOf(s, rs, &e.before, &n.keys, "before", hintMalformed)
	} else {
		e.hasBefore, err = jsonrecord.ScanImage(s, rs, &e.before, "before", hintMalformed)
	}
	return err
}

// sourceKeys are the members of the "source" block readSource reads, in
// the order of the indexes sourceDB, sourceSchema and sourceTable; the
// others (a dozen on every record) are passed over by NextKeyOf.
var sourceKeys = jsonscan.NewKeys("db", "schema", "table")

// sourceOrderKeys are sourceKeys and the members that tell a record's
// place in its source's log, read when the decoder reads places (see
// ReadOrders): a decoder that does not passes them over too, and pays
// nothing for them.
var sourceOrderKeys = jsonscan.NewKeys("db", "schema", "table",
	"connector", "name", "server_id", "snapshot", "sequence", "file", "pos")

// Indexes in sourceOrderKeys (and, the first three, in sourceKeys): the table's, then those of the record's place in
// its source's log (see sourceOrder).
const (
	sourceDB = iota
	sourceSchema
	sourceTable
	sourceConnector
	sourceName
	sourceServerID
	sourceSnapshot
	sourceSequence
	sourceFile
	sourcePos
)

// readSource reads the "source" block's db, schema and table, and when
// e.readOrder is set what tells the record's place (see sourceOrder). env,
// if not nil, interns the table.
func readSource(s *jsonscan.Scanner, e *envelope, env *envreader.Reader) error {
	if s.Peek() == 'n' {
		_, err := s.Value()
		return err
	}
	if s.Peek() != '{' {
		tok, err := s.Value()
		if err != nil {
			return err
		}
		return &recordError{Reason: `"source" must be an object, not a ` + tok.Kind.String(), Hint: hintSource}
	}
	if readSourceAt(s, e, env) {
		return nil
	}
	return readSourceMembers(s, e, env)
}

// readSourceMembers is readSource for an object in any shape: member by
// member, those not wanted passed over by NextKeyOf.
func readSourceMembers(s *jsonscan.Scanner, e *envelope, env *envreader.Reader) error {
	if err := s.BeginObject(); err != nil {
		return err
	}
	e.hasSource = true
	keys := &sourceKeys
	if e.readOrder {
		keys = &sourceOrderKeys
	}
	var db, schema, table []byte
	for first := true; ; first = false {
		k, ok, err := s.NextKeyOf(first, keys)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch k {
		case sourceDB:
			db, err = jsonrecord.ReadName(s, "source.db", hintMalformed)
		case sourceSchema:
			schema, err = jsonrecord.ReadName(s, "source.schema", hintMalformed)
		case sourceTable:
			table, err = jsonrecord.ReadName(s, "source.table", hintMalformed)
		default:
			err = e.order.read(s, k)
		}
		if err != nil {
			return err
		}
	}
	e.table = namedTable(db, schema, table, env)
	return nil
}

// namedTable returns the table "source" names: schema (when not empty)
// or else db, and table. env, if not nil, interns it.
func namedTable(db, schema, table []byte, env *envreader.Reader) changelog.Table {
	ns := db
	if len(schema) > 0 {
		ns = schema
	}
	switch {
	case len(table) == 0:
		return changelog.Table{Namespace: string(ns)}
	case env != nil:
		return env.Table(ns, table)
	}
	return changelog.Table{Namespace: string(ns), Name: string(table)}
}

// transactionKeys are the members of the "transaction" block
// readTransaction reads; the others are passed over by NextKeyOf.
var transactionKeys = jsonscan.NewKeys("id", "total_order")

// readTransaction reads the "transaction" block's id and total_order (the
// event's place in its transaction, from 1; 0 when absent, null, or too
// large to be one).
func readTransaction(s *jsonscan.Scanner, e *envelope) error {
	switch s.Peek() {
	case 'n':
		_, err := s.Value()
		return err
	case '{':
	default:
		tok, err := s.Value()
		if err != nil {
			return err
		}
		return &recordError{Reason: `"transaction" must be an object or null, not a ` + tok.Kind.String(), Hint: hintMalformed}
	}
	if readTransactionAt(s, e) {
		return nil
	}
	return readTransactionMembers(s, e)
}

// readTransactionAt reads the "transaction" block at s in place, as every
// Debezium connector writes it ({"id":S,"total_order":N,"data_collection_order":N},
// see readSourceAt), and reports whether it was; when it was not, nothing
// of s has moved. The block is a third of the members of a row event,
// passed over one by one otherwise.
func readTransactionAt(s *jsonscan.Scanner, e *envelope) bool {
	d, i := s.Data(), s.Pos()
	var id, order []byte
	i, id = jsonrecord.ScanString(d, kTxnID.End(d, i), false)
	i, order = jsonrecord.ScanUint(d, kTotalOrder.End(d, i), false)
	// `,"data_collection_order":` is longer than a Key16, and at the
	// record's end, where fewer than the 16 bytes a Key16 reads may be
	// left after the first 16: those are compared as a constant.
	if j := kCollectionOrder.End(d, i); j >= 0 && len(d)-j >= 9 && string(d[j:j+9]) == `n_order":` {
		i, _ = jsonrecord.ScanUint(d, j+9, false)
	} else {
		i = -1
	}
	if i < 0 || i >= len(d) || d[i] != '}' {
		return false
	}
	s.Skip(i + 1 - s.Pos())
	e.txnID, e.txnOrder = id, txnOrder(order)
	return true
}

// readTransactionMembers is readTransaction for an object in any shape:
// member by member, those not wanted passed over by NextKeyOf.
func readTransactionMembers(s *jsonscan.Scanner, e *envelope) error {
	if err := s.BeginObject(); err != nil {
		return err
	}
	for first := true; ; first = false {
		k, ok, err := s.NextKeyOf(first, &transactionKeys)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		tok, err := s.Value()
		if err != nil {
			return err
		}
		if k == 1 {
			e.txnOrder = 0
			if tok.Kind == jsonscan.Number {
				e.txnOrder = txnOrder(s.Bytes(tok))
			}
			continue
		}
		switch tok.Kind {
		case jsonscan.String, jsonscan.Number:
			e.txnID = s.Bytes(tok)
		case jsonscan.Null:
			e.txnID = nil
		default:
			return &recordError{Reason: `"transaction.id" must be a string, not a ` + tok.Kind.String(), Hint: hintMalformed}
		}
	}
}

// The keys of the "transaction" block's first members, as
// readTransaction expects them.
var (
	kTxnID      = jsonrecord.NewKey16(`{"id":`)
	kTotalOrder = jsonrecord.NewKey16(`,"total_order":`)
	// The first 16 bytes of `,"data_collection_order":`.
	kCollectionOrder = jsonrecord.NewKey16(`,"data_collectio`)
)

// txnOrder returns a total_order written as a whole number from 1 to
// 2^31-1, else 0 (none: the order is then not used).
func txnOrder(b []byte) int32 {
	if len(b) == 0 || len(b) > 10 {
		return 0
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if n > math.MaxInt32 {
		return 0
	}
	return int32(n)
}

// readSchema reads the Connect wrapper's "schema" (parsed once per distinct
// text, see schemaCache).
func (d *Decoder) readSchema(s *jsonscan.Scanner, e *envelope) error {
	if s.Peek() == '{' {
		if n, rs := d.schemas.match(s.Data()[s.Pos():]); rs != nil {
			s.Skip(n)
			e.schema = rs
			return nil
		}
	}
	tok, err := s.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.Null:
		return nil
	case jsonscan.Object:
		rs, err := d.schemas.lookup(s.Data()[tok.Start:tok.End])
		if err != nil {
			return &recordError{Reason: "invalid Kafka Connect schema", Hint: hintSchema, Err: err}
		}
		e.schema = rs
		return nil
	}
	return &recordError{Reason: `"schema" must be an object or null, not a ` + tok.Kind.String(), Hint: hintMalformed}
}

func (d *Decoder) readPayload(s *jsonscan.Scanner, rs *jsonscan.Rows, e *envelope) error {
	switch s.Peek() {
	case '{':
		e.payload = &envelope{readOrder: e.readOrder}
		return d.readEnvelope(s, rs, e.payload, payloadFields)
	case 'n':
		_, err := s.Value()
		e.payloadNull = err == nil
		return err
	}
	tok, err := s.Value()
	if err != nil {
		return err
	}
	return &recordError{Reason: `"payload" must be an object or null, not a ` + tok.Kind.String(), Hint: hintMalformed}
}

// tableOf names the table of a record that failed to decode: from what the
// decoder read, or else by a lenient second look at the record, since an
// error can come before the "source" block in the text.
func tableOf(data []byte, top *envelope) string {
	for _, e := range []*envelope{top, top.payload} {
		if e != nil && e.table.Name != "" {
			return e.table.String()
		}
	}
	s := jsonscan.New(data)
	s.TolerateBadText() // the refusal may be a value that is not text
	return findTable(&s, true)
}

// findTable looks for source.table in the object at the scanner, and at the
// top level in the Connect "payload" too. It gives up ("") at the first
// syntax error.
func findTable(s *jsonscan.Scanner, top bool) string {
	if s.Peek() != '{' || s.BeginObject() != nil {
		return ""
	}
	for first := true; ; first = false {
		key, ok, err := s.NextKey(first)
		if err != nil || !ok {
			return ""
		}
		switch {
		case s.Equal(key, "source"):
			var e envelope
			if readSource(s, &e, nil) != nil || e.table.Name == "" {
				return ""
			}
			return e.table.String()
		case top && s.Equal(key, "payload") && s.Peek() == '{':
			if t := findTable(s, false); t != "" {
				return t
			}
			continue
		}
		if _, err := s.Value(); err != nil {
			return ""
		}
	}
}

// TxnKey returns the part of a Debezium transaction id that is the same on
// every event of one transaction. PostgreSQL ids are "txId:LSN" and the LSN
// differs from event to event, so an id of two decimal numbers joined by a
// colon keeps only the first; any other id (a MySQL GTID "uuid:n", a Vitess
// VGTID) is kept whole.
func TxnKey(id string) string { return id[:txnKeyLen(id)] }

// txnKey returns TxnKey of id as a string shared with the previous events
// of the transaction ("" for no id).
func (d *Decoder) txnKey(a *changelog.Arena, id []byte) string {
	if len(id) == 0 {
		return ""
	}
	return d.env.String(a, id[:txnKeyLen(id)])
}

// txnKeyLen returns the length of TxnKey(id).
func txnKeyLen[T string | []byte](id T) int {
	colon := -1
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == ':' && colon < 0:
			colon = i
		case c < '0' || c > '9':
			return len(id)
		}
	}
	if colon <= 0 || colon == len(id)-1 {
		return len(id)
	}
	return colon
}

// scalarBytes reads any value and returns the text of a string or number
// (nil for anything else), as a view of the record's text when it can.
func scalarBytes(s *jsonscan.Scanner) ([]byte, error) {
	tok, err := s.Value()
	if err != nil {
		return nil, err
	}
	switch tok.Kind {
	case jsonscan.String, jsonscan.Number:
		return s.Bytes(tok), nil
	}
	return nil, nil
}
