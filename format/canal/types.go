package canal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/txsink/txsink/format/internal/jsonscan"
	"github.com/txsink/txsink/schema/coltype"
)

// DeclaresTypes reports true (format.TypeDeclarer): a message's
// mysqlType and pkNames declare its table.
func (d *Decoder) DeclaresTypes() bool { return true }

// maxCachedTypes bounds the type cache. A table has one mysqlType per
// version of its definition, so the bound is only reached by a stream of
// ever-changing tables; the cache then starts over.
const maxCachedTypes = 1024

// typeCache remembers the tables parsed from a message's "mysqlType" and
// "pkNames", by their exact text: every message repeats them, and a
// change only points at the parsed table. It is safe for concurrent use.
type typeCache struct {
	mu sync.RWMutex
	// m is keyed by the mysqlType text, then by the pkNames text.
	m map[string]map[string]*coltype.Table
	n int
}

// lookup returns the table mysqlType and pkNames (JSON texts, nil when
// absent) declare, parsing them on first sight; nil without a mysqlType.
// A declaration it cannot read is a table whose Invalid says why: the
// rows still decode, and only creating a table from it is refused.
func (c *typeCache) lookup(mysqlType, pkNames []byte) *coltype.Table {
	if mysqlType == nil {
		return nil
	}
	c.mu.RLock()
	t, ok := c.m[string(mysqlType)][string(pkNames)]
	c.mu.RUnlock()
	if ok {
		return t
	}
	t, err := parseTypes(mysqlType, pkNames)
	if err != nil {
		t = &coltype.Table{From: "mysqlType", Invalid: err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.n >= maxCachedTypes {
		c.m, c.n = map[string]map[string]*coltype.Table{}, 0
	}
	byKey := c.m[string(mysqlType)]
	if byKey == nil {
		byKey = map[string]*coltype.Table{}
		c.m[string(mysqlType)] = byKey
	}
	byKey[string(pkNames)] = t
	c.n++
	return t
}

// parseTypes reads a mysqlType object, in its columns' order, and the
// pkNames list.
func parseTypes(mysqlType, pkNames []byte) (*coltype.Table, error) {
	dec := json.NewDecoder(bytes.NewReader(mysqlType))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf(`"mysqlType" must be an object`)
	}
	t := &coltype.Table{From: "mysqlType"}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf(`"mysqlType": %w`, err)
		}
		var typ string
		if err := dec.Decode(&typ); err != nil {
			return nil, fmt.Errorf(`"mysqlType" of column %q must be a string`, name)
		}
		t.Columns = append(t.Columns, coltype.Column{Name: name.(string), Type: coltype.ParseMySQL(typ), Nullable: true})
	}
	var key []string
	if pkNames != nil {
		if err := json.Unmarshal(pkNames, &key); err != nil {
			return nil, fmt.Errorf(`"pkNames" must be a list of column names`)
		}
	}
	if len(key) == 0 {
		return t, nil
	}
	return t.WithKey(key)
}

// rawValue reads any value and returns its JSON text, nil for null.
func rawValue(s *jsonscan.Scanner) ([]byte, error) {
	tok, err := s.Value()
	if err != nil || tok.Kind == jsonscan.Null {
		return nil, err
	}
	return s.Data()[tok.Start:tok.End], nil
}
