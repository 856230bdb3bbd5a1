package diagnose

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/coerce"
	"github.com/txsink/txsink/config"
	"github.com/txsink/txsink/format"
	"github.com/txsink/txsink/format/formats"
	"github.com/txsink/txsink/route"
	"github.com/txsink/txsink/schema"
	"github.com/txsink/txsink/source"
)

// problem is one kind of trouble the sample shows at one place (a column
// of a table, a partition), with the first record that shows it and how
// many records do: a bad column in 1000 sampled records is one finding,
// not 1000.
type problem struct {
	finding Finding
	first   changelog.Position
	count   int
	// longest is the most characters of a refused string, for the fix.
	longest int
	// unit is what count counts: "change" unless set ("record").
	unit string
}

// digits finds the numbers of a cause (a byte offset, a line), which differ
// between records whose cause is the same.
var digits = regexp.MustCompile(`[0-9]+`)

// note records one occurrence of a problem; key identifies its kind and
// place.
func (c *checker) note(key string, pos changelog.Position, f Finding) *problem {
	p := c.problems[key]
	if p == nil {
		p = &problem{finding: f, first: pos}
		c.problems[key] = p
		c.problemOrder = append(c.problemOrder, key)
	}
	p.count++
	return p
}

// badInput is the severity of input a run refuses: it stops the pipeline
// under bad-input: fail, and is quarantined under dead-letter.
func (c *checker) badInput() Severity {
	if c.cfg.BadInput == config.BadInputDeadLetter {
		return Warning
	}
	return Error
}

// sample reads the first Options.Sample records of each partition of the
// source, when it can be sampled (a source.Sampler), and checks every
// change they hold as a run would, without writing. What the source says
// is wrong with it (a missing file, a topic the brokers lack) becomes a
// finding.
func (c *checker) sample(ctx context.Context) error {
	d, err := source.Lookup(c.cfg.Source.Type)
	if err != nil {
		return nil // refused by the config's validation
	}
	src, err := d.Open(source.Settings(c.cfg.Source.Settings()),
		source.Env{Pipeline: c.cfg.Name, BaseDir: c.opts.BaseDir, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.add(Finding{Severity: Error, Check: "source", Table: "source", Message: err.Error() + ".", Fix: "correct the source section"})
		return nil
	}
	sm, ok := src.(source.Sampler)
	if !ok {
		return nil
	}
	c.report.unit = sm.SampleUnit()
	dec, err := formats.New(c.cfg.Source.Format, format.Options(c.cfg.Source.FormatOptions))
	if err != nil {
		c.add(Finding{Severity: Error, Check: "source", Table: "source", Message: err.Error() + ".",
			Fix: "correct source.format or source.format-options"})
		return nil
	}
	c.narrowKnown(dec)
	sourceKeyed := c.sourceKeyed()
	req := source.SampleRequest{N: c.opts.Sample, From: c.progress, Skip: c.refusedParts}
	rep, err := sm.Sample(ctx, req, func(r source.Record) error {
		return c.sampleRecord(ctx, dec, r, sourceKeyed)
	})
	if rep != nil {
		c.report.Files += rep.Files
		c.report.Partitions += rep.Partitions
		c.report.count += rep.Count
		for _, n := range rep.Notes {
			c.add(Finding{Severity: severities[n.Severity], Check: "source", Table: n.Subject, Message: n.Message, Fix: n.Fix})
		}
	}
	return err
}

// severities maps a source's severities to check's.
var severities = map[source.Severity]Severity{source.Info: Info, source.Warning: Warning, source.Error: Error}

// emitProblems turns what the sample showed into findings.
func (c *checker) emitProblems() {
	for _, key := range c.problemOrder {
		p := c.problems[key]
		f := p.finding
		if f.Table == p.first.Partition {
			// A problem of the source itself is named by its position
			// alone: "p0.jsonl:7", not "p0.jsonl: p0.jsonl:7".
			f.Table = p.first.String()
		} else {
			f.Message = p.first.String() + ": " + f.Message
		}
		if p.count > 1 {
			f.Message += fmt.Sprintf(" (%d sampled %ss like it; this is the first.)", p.count, cmp.Or(p.unit, "change"))
		}
		if p.longest > 0 {
			f.Fix = fmt.Sprintf("widen the column to at least %s (the longest sampled value), or fix the source", plural(p.longest, "character"))
		}
		c.add(f)
	}
}

// sampleRecord decodes one sampled record and checks its changes.
func (c *checker) sampleRecord(ctx context.Context, dec format.Decoder, rec source.Record, sourceKeyed bool) error {
	part := rec.Pos.Partition
	c.report.Records++
	changes, err := dec.Decode(rec.Data, rec.Pos)
	format.KeyTypes(dec, changes, rec.Key)
	if err != nil {
		sev := c.badInput()
		if c.cfg.Sink.TxnEnabled {
			sev = Error // which transaction it belongs to is unknown
		}
		cause, fix := err.Error(), "fix the record, or check that source.format names the records' format"
		var fe *format.Error
		if errors.As(err, &fe) {
			// The format's error names the format and the position the
			// finding names already, and its hint is the precise fix.
			cause = fe.Cause()
			if fe.Table != "" {
				cause = "table " + fe.Table + ": " + cause
			}
			if fe.Hint != "" {
				fix = fe.Hint
			}
		}
		// Records are grouped only by the same cause: a truncated line is
		// not "like" an earlier line's unknown op.
		p := c.note("decode\x00"+part+"\x00"+digits.ReplaceAllString(cause, "#"), rec.Pos, Finding{Severity: sev, Check: "source", Table: part,
			Message: fmt.Sprintf("a record cannot be decoded as %s: %s.", c.cfg.Source.Format, cause),
			Fix:     fix})
		p.unit = "record"
		return nil
	}
	var declared []string
	if sourceKeyed {
		declared = declaredKey(rec.Data)
	}
	var cols []string
	if cd, ok := dec.(format.ColumnDeclarer); ok && len(changes) > 0 {
		cols, _ = cd.DeclaredColumns(rec.Data)
	}
	for i := range changes {
		if err := c.checkChange(ctx, &changes[i], declared, cols); err != nil {
			return err
		}
	}
	return nil
}

// sourceKeyed reports whether the format's messages declare their table's
// primary key (see declaredKey).
func (c *checker) sourceKeyed() bool {
	switch c.cfg.Source.Format {
	case "canal-json", "maxwell-json", "ogg-json":
		return true
	}
	return false
}

// declaredKey returns the primary key a canal-json (pkNames),
// maxwell-json (primary_key_columns) or ogg-json (primary_keys) message
// declares for its table; nil when it declares none.
func declaredKey(data []byte) []string {
	var m struct {
		PkNames           []string `json:"pkNames"`
		PrimaryKeyColumns []string `json:"primary_key_columns"`
		PrimaryKeys       []string `json:"primary_keys"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	switch {
	case len(m.PkNames) > 0:
		return m.PkNames
	case len(m.PrimaryKeyColumns) > 0:
		return m.PrimaryKeyColumns
	}
	return m.PrimaryKeys
}

// checkChange checks one sampled change the way the run's buffer would
// take it: its table, its key columns, and every value against its column.
// declared is the primary key its message declares, cols the columns its
// message's schema declares (nil when it has none).
func (c *checker) checkChange(ctx context.Context, ch *changelog.Change, declared, cols []string) error {
	if ch.Kind == changelog.EndTxn {
		return nil
	}
	if ch.Kind.Skipped() {
		// A schema change or a logical decoding message: run skips it. It
		// is a note of the source, named by its position alone, as a
		// decode error is ("p.jsonl:7: ...", not ": p.jsonl:7: ...").
		what, fix := "schema change (DDL) records", "none needed; alter a target table yourself when its source table's change must reach it"
		if ch.Kind == changelog.Message {
			what, fix = "logical decoding messages", "none needed: they carry no row"
		}
		p := c.note("note\x00"+ch.Kind.String(), ch.Pos, Finding{Severity: Info, Check: "source", Table: ch.Pos.Partition,
			Message: fmt.Sprintf("the source holds %s; txsink run skips them, counted, and never applies them as data.", what),
			Fix:     fix})
		p.unit = "record"
		return nil
	}
	c.report.Changes++
	rt, err := c.router.Route(ch.Table)
	var re *route.Error
	src := ch.Table.String()
	switch {
	case errors.As(err, &re) && re.Unknown:
		c.note("unknown\x00"+src, ch.Pos, Finding{Severity: c.badInput(), Check: "table", Table: src,
			Message: "changes of this table match no tables entry, and txsink run stops at the first one.",
			Fix:     fmt.Sprintf("add a tables entry with source: %s (wildcards allowed), or set skip-unknown-tables: true", src)})
		return nil
	case err != nil:
		c.note("route\x00"+src, ch.Pos, routeFinding(c.badInput(), ch.Table, err))
		return nil
	case rt.Skipped():
		c.note("unknown\x00"+src, ch.Pos, Finding{Severity: Info, Check: "table", Table: src,
			Message: "changes of this table match no tables entry; skip-unknown-tables skips them.",
			Fix:     "add a tables entry if they should be applied"})
		return nil
	}
	for _, h := range rt.History {
		ti, err := c.table(ctx, h.Entry, ch.Table, h.Target, ch)
		if err != nil {
			return err
		}
		if !ti.ok {
			continue // the table's problem is reported already
		}
		switch ch.Kind {
		case changelog.Insert, changelog.UpdateAfter:
			c.checkValues(ti, ch, ch.After)
		case changelog.Delete:
			c.checkValues(ti, ch, ch.Before)
		}
	}
	tc := rt.Entry
	if tc == nil {
		return nil // only history entries route the table
	}
	ti, err := c.table(ctx, tc, ch.Table, rt.Target, ch)
	if err != nil {
		return err
	}
	if !ti.ok {
		return nil // the table's problem is reported already
	}
	if ch.Kind == changelog.Truncate {
		// No row to check: a run empties the table (or refuses the
		// TRUNCATE where it cannot, see engine/truncate.go).
		return nil
	}
	c.narrowBefore(ch.Table, ti)
	ti.noteColumns(ch, cols)
	if tc.AppendOnly {
		switch ch.Kind {
		case changelog.Insert:
			c.checkValues(ti, ch, ch.After)
		case changelog.UpdateBefore:
		default:
			c.note("appendonly\x00"+ti.label, ch.Pos, Finding{Severity: c.badInput(), Check: "key", Table: ti.label,
				Message: fmt.Sprintf("a %s change reached an append-only table, which takes inserts only.", ch.Kind),
				Fix:     "declare a primary key on the target table and drop append-only from its tables entry, or stop the source from sending updates and deletes for it"})
		}
		return nil
	}
	c.checkDeclaredKey(ti, ch, declared)
	switch ch.Kind {
	case changelog.Delete:
		c.checkKey(ti, ch, ch.Before, "before")
		c.checkVersion(ti, ch, ch.Before)
	case changelog.Insert, changelog.UpdateAfter:
		if c.checkKey(ti, ch, ch.After, "after") {
			c.checkValues(ti, ch, ch.After)
		}
		c.checkVersion(ti, ch, ch.After)
		if ch.Kind == changelog.UpdateAfter && hasAll(ch.Before, ti.key) {
			c.checkKey(ti, ch, ch.Before, "before")
		}
	}
	return nil
}

func hasAll(img changelog.Row, cols []string) bool {
	if img.IsZero() {
		return false
	}
	for _, k := range cols {
		if _, ok := img.Get(k); !ok {
			return false
		}
	}
	return true
}

// checkKey checks that img carries every key column with a value the
// column holds, and reports whether it does.
func (c *checker) checkKey(ti *tableInfo, ch *changelog.Change, img changelog.Row, which string) bool {
	ok := true
	for _, k := range ti.key {
		col, _ := ti.schema.Column(k)
		v, present := img.Get(col.Name)
		if !present {
			c.note("key\x00"+ti.label+"\x00"+col.Name+"\x00"+which, ch.Pos, Finding{Severity: c.badInput(), Check: "key", Table: ti.label,
				Message: fmt.Sprintf("the %s image of a %s change lacks key column %s (the target's PRIMARY KEY is [%s]), so txsink cannot tell which row it is.", which, ch.Kind, col.Name, strings.Join(ti.key, ", ")),
				Fix:     "make the source send every key column (for Debezium on PostgreSQL: REPLICA IDENTITY FULL, or a key in the replica identity), or make the target's PRIMARY KEY the columns the source's key has"})
			ok = false
			continue
		}
		if _, err := coerce.Value(col, v); err != nil {
			c.noteValue(ti, ch, col, v, err)
			ok = false
		}
	}
	return ok
}

// checkVersion reports a change of a table with a version column whose
// image lacks it where a run refuses it: an upsert always, a delete
// unless the column is an integer one (its source position stands in).
func (c *checker) checkVersion(ti *tableInfo, ch *changelog.Change, img changelog.Row) {
	name := ti.entry.VersionColumn
	col, ok := ti.schema.Column(name)
	if name == "" || !ok {
		return
	}
	if _, present := img.Get(col.Name); present {
		return
	}
	if ch.Kind == changelog.Delete && (col.Class == schema.Int || col.Class == schema.Uint) {
		return
	}
	c.note("version\x00"+ti.label+"\x00"+ch.Kind.String(), ch.Pos, Finding{Severity: c.badInput(), Check: "key", Table: ti.label,
		Message: fmt.Sprintf("a %s change's image lacks version column %s, so the version guard has nothing to compare; txsink run refuses it.", ch.Kind, col.Name),
		Fix:     "capture full row images (Debezium PostgreSQL: REPLICA IDENTITY FULL; MySQL: binlog_row_image=FULL), or remove version-column from the tables entry"})
}

// checkValues converts every value of img for its column, as a run does
// before it writes.
func (c *checker) checkValues(ti *tableInfo, ch *changelog.Change, img changelog.Row) {
	for i, name := range img.Names {
		col, ok := ti.schema.Column(name)
		if !ok && c.addedColumn(ti, ch, name) {
			continue
		}
		if !ok {
			c.note("column\x00"+ti.label+"\x00"+strings.ToLower(name), ch.Pos, Finding{Severity: c.badInput(), Check: "value", Table: ti.label,
				Message: fmt.Sprintf("a %s change carries column %s, which the target table does not have; txsink never drops a value silently.", ch.Kind, name),
				Fix:     fmt.Sprintf("add column %s to the target table", name)})
			continue
		}
		if col.Generated || ti.isKey(col.Name) {
			continue // generated: never written; key: checked by checkKey
		}
		if _, err := coerce.Value(col, img.Values[i]); err != nil {
			c.noteValue(ti, ch, col, img.Values[i], err)
		}
	}
}

func (ti *tableInfo) isKey(name string) bool {
	for _, k := range ti.key {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// noteValue records a value coerce refused for col.
func (c *checker) noteValue(ti *tableInfo, ch *changelog.Change, col *schema.Column, v changelog.Value, err error) {
	kind, fix := "value", valueFix(col, v, err)
	if v == nil {
		kind = "null"
	}
	p := c.note(kind+"\x00"+ti.label+"\x00"+col.Name, ch.Pos, Finding{Severity: c.badInput(), Check: "value", Table: ti.label,
		Message: fmt.Sprintf("%v; txsink run refuses it rather than change it.", err),
		Fix:     fix})
	if s, ok := v.(string); ok && col.Class == schema.String && col.Length > 0 && utf8.ValidString(s) {
		p.longest = max(p.longest, utf8.RuneCountInString(s))
	}
}

// valueFix says how to make col hold values like v.
func valueFix(col *schema.Column, v changelog.Value, err error) string {
	var ce *coerce.Error
	reason := ""
	if errors.As(err, &ce) {
		reason = ce.Reason
		if ce.Hint != "" {
			return ce.Hint
		}
	}
	switch {
	case v == nil:
		return fmt.Sprintf("make column %s NULL-able, or have the source send a value", col.Name)
	case (col.Class == schema.DateTime || col.Class == schema.Timestamp || col.Class == schema.Time) && strings.Contains(reason, "fraction"):
		return fmt.Sprintf("declare column %s with as many fractional-second digits as the source sends (for example DATETIME(6), TIMESTAMP(6))", col.Name)
	case col.Class == schema.Decimal:
		return fmt.Sprintf("widen column %s's DECIMAL precision and scale to the source's, or fix the source", col.Name)
	case col.Class == schema.Int || col.Class == schema.Uint:
		return fmt.Sprintf("give column %s an integer type wide enough for the source's values (or DECIMAL for fractions)", col.Name)
	}
	return fmt.Sprintf("change column %s's type to one that holds the source's values, or fix the source data", col.Name)
}

// checkDeclaredKey compares the primary key a message declares for its
// table with the key txsink reduces by.
func (c *checker) checkDeclaredKey(ti *tableInfo, ch *changelog.Change, declared []string) {
	if len(declared) == 0 {
		return
	}
	id := strings.ToLower(strings.Join(declared, "\x00"))
	if ti.sourceKeys[id] {
		return
	}
	ti.sourceKeys[id] = true
	if sameSet(declared, ti.key) {
		return
	}
	src, tgt := "["+strings.Join(declared, ", ")+"]", "["+strings.Join(ti.key, ", ")+"]"
	f := Finding{Severity: Warning, Check: "key", Table: ti.label,
		Message: fmt.Sprintf("%s: the message declares the source's primary key %s, the target's is %s. The target's key has columns the source's lacks, so a change of those columns moves the row, which txsink can only follow when the change carries its before image.", ch.Pos, src, tgt),
		Fix:     fmt.Sprintf("make the target's PRIMARY KEY %s", src)}
	if !subset(declared, ti.key) {
		f.Severity = Error
		f.Message = fmt.Sprintf("%s: the message declares the source's primary key %s, the target's is %s: rows the source keeps apart are one row in the target, and the last change of them overwrites the others.", ch.Pos, src, tgt)
	}
	c.add(f)
}

func sameSet(a, b []string) bool { return len(a) == len(b) && subset(a, b) }

// subset reports whether every column of a is in b (ignoring case).
func subset(a, b []string) bool {
	for _, x := range a {
		found := false
		for _, y := range b {
			if strings.EqualFold(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
