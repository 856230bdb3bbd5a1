package debezium

import (
	"github.com/txsink/txsink/format/internal/jsonrecord"
	"github.com/txsink/txsink/format/internal/jsonscan"
)

// What readEventAt did.
const (
	// eventNot: nothing read, the record does not start as a row event
	// written by Debezium does.
	eventNot = iota
	// eventRead: the whole top-level object was read.
	eventRead
	// eventAgain: part of it was read, then a member not where Debezium
	// writes it: the record is to be read again the general way.
	eventAgain
)

// readEventAt reads a row event's top-level object at s (from its '{')
// into e when its members come in the order Debezium writes them,
//
//	{"before":…,"after":…,"source":…[,"transaction":…],"op":…,"ts_ms":…[,"ts_us":N][,"ts_ns":N][,"transaction":…]}
//
// without white space between them: it finds each member's key by
// comparing the text with the one expected there (a Key16), and reads its
// value with what readEnvelope's field function calls for that field,
// at the same place, so that a value refused is refused with the same
// error (returned with eventRead). Any other member, or a key elsewhere,
// stops it: eventNot when it read nothing, else eventAgain. This is
// Fields.Read's loop, its call of the field function per member and its
// look for each key, left out for the records that are most of a
// stream.
func (d *Decoder) readEventAt(s *jsonscan.Scanner, rs *jsonscan.Rows, e *envelope) (int, error) {
	data := s.Data()
	j := kBefore.End(data, s.Pos())
	if j < 0 {
		return eventNot, nil
	}
	s.Skip(j - s.Pos())
	if err := d.readBefore(s, rs, e); err != nil {
		return eventRead, err
	}
	if j = kAfter.End(data, s.Pos()); j < 0 {
		return eventAgain, nil
	}
	s.Skip(j - s.Pos())
	var err error
	if e.hasAfter, err = jsonrecord.ScanImage(s, rs, &e.after, "after", hintMalformed); err != nil {
		return eventRead, err
	}
	if j = kSource.End(data, s.Pos()); j < 0 {
		return eventAgain, nil
	}
	s.Skip(j - s.Pos())
	if err := readSource(s, e, &d.env); err != nil {
		return eventRead, err
	}
	e.seen = 1<<fBefore | 1<<fAfter | 1<<fSource | 1<<fOp | 1<<fTsMs
	if j = kTransaction.End(data, s.Pos()); j >= 0 {
		s.Skip(j - s.Pos())
		if err := readTransaction(s, e); err != nil {
			return eventRead, err
		}
		e.seen |= 1 << fTransaction
	}
	if j = kOp.End(data, s.Pos()); j < 0 {
		return eventAgain, nil
	}
	s.Skip(j - s.Pos())
	// The op, one of ops' letters in quotes, as ReadEnum would return it.
	if op := opOf(data, j); op != "" {
		e.op = op
		s.Skip(3)
	} else if e.op, err = jsonrecord.ReadEnum(s, "op", hintMalformed, true, ops); err != nil {
		return eventRead, err
	}
	i := s.Pos()
	if j = kTsMs.End(data, i); j < 0 {
		// The record's end: fewer than the 16 bytes a Key16 reads.
		if len(data)-i < 9 || string(data[i:i+9]) != `,"ts_ms":` {
			return eventAgain, nil
		}
		j = i + 9
	}
	if i, _ = jsonrecord.ScanUint(data, j, false); i < 0 {
		// Not a whole number: as readEnvelope passes over it.
		s.Skip(j - s.Pos())
		if _, err := s.Value(); err != nil {
			return eventRead, err
		}
		i = s.Pos()
	}
	if k := kTsUs.End(data, i); k >= 0 {
		if i, _ = jsonrecord.ScanUint(data, k, false); i < 0 {
			return eventAgain, nil
		}
		if k := kTsNs.End(data, i); k >= 0 {
			if i, _ = jsonrecord.ScanUint(data, k, false); i < 0 {
				return eventAgain, nil
			}
		}
	}
	s.Skip(i - s.Pos())
	if !e.seen.Has(fTransaction) {
		i, j = s.Pos(), kTransaction.End(data, s.Pos())
		if j < 0 && len(data)-i >= 15 && string(data[i:i+15]) == `,"transaction":` {
			j = i + 15 // the record's end
		}
		if j >= 0 {
			s.Skip(j - i)
			if err := readTransaction(s, e); err != nil {
				return eventRead, err
			}
			e.seen |= 1 << fTransaction
		}
	}
	if i = s.Pos(); i >= len(data) || data[i] != '}' {
		return eventAgain, nil
	}
	s.Skip(1)
	return eventRead, nil
}

// The keys of a row event's members, as readEventAt expects them.
var (
	kBefore      = jsonrecord.NewKey16(`{"before":`)
	kAfter       = jsonrecord.NewKey16(`,"after":`)
	kSource      = jsonrecord.NewKey16(`,"source":`)
	kTransaction = jsonrecord.NewKey16(`,"transaction":`)
	kOp          = jsonrecord.NewKey16(`,"op":`)
)

// opOf returns the op of ops written at data[i] as a one-letter plain
// string, "" for any other text.
func opOf(data []byte, i int) string {
	if i < 0 || len(data)-i < 3 || data[i] != '"' || data[i+2] != '"' {
		return ""
	}
	switch data[i+1] {
	case 'c':
		return "c"
	case 'u':
		return "u"
	case 'd':
		return "d"
	case 'r':
		return "r"
	case 't':
		return "t"
	case 'm':
		return "m"
	}
	return ""
}
