package debezium

import (
	"strings"
	"testing"

	"github.com/txsink/txsink/format/internal/jsonscan"
)

// TestReadTransactionInPlace checks that the "transaction" block as every
// Debezium connector writes it is read in place (readTransactionAt), with
// what the general way (readTransactionMembers) reads from it, at the
// record's end or before other members, and that every other block is
// left to the general way.
func TestReadTransactionInPlace(t *testing.T) {
	const block = `{"id":"t1","total_order":2,"data_collection_order":1}`
	for _, tc := range []struct {
		name, block string
		fast        bool
	}{
		{"as written", block, true},
		{"postgresql id", strings.Replace(block, `"t1"`, `"571:53195832"`, 1), true},
		{"gtid", strings.Replace(block, `"t1"`, `"5d0bc1e2-d6a4-11ee-a2d6-0242ac120002:42"`, 1), true},
		{"long numbers", strings.Replace(block, `2,`, `12345678901,`, 1), true},
		{"white space", strings.Replace(block, `,"total_order"`, `, "total_order"`, 1), false},
		{"another order", `{"total_order":2,"id":"t1","data_collection_order":1}`, false},
		{"no data_collection_order", `{"id":"t1","total_order":2}`, false},
		{"a member more", strings.Replace(block, `}`, `,"x":1}`, 1), false},
		{"id null", strings.Replace(block, `"t1"`, `null`, 1), false},
		{"id a number", strings.Replace(block, `"t1"`, `7`, 1), false},
		{"escaped id", strings.Replace(block, `"t1"`, `"t\u0031"`, 1), false},
		{"total_order null", strings.Replace(block, `2,`, `null,`, 1), false},
		{"total_order negative", strings.Replace(block, `2,`, `-2,`, 1), false},
		{"data_collection_order a fraction", strings.Replace(block, `1}`, `1.5}`, 1), false},
		{"data_collection_order misspelt", strings.Replace(block, `collection_order`, `collection_ordex`, 1), false},
		{"not closed", strings.Replace(block, `}`, `]`, 1), false},
	} {
		for _, rest := range []string{"}", "}\n", `,"op":"c","ts_ms":1767225600000}`} {
			data := []byte(tc.block + rest)
			var fast, slow envelope
			sf, ss := jsonscan.New(data), jsonscan.New(data)
			if took := readTransactionAt(&sf, &fast); took != tc.fast || !took && sf.Pos() != 0 {
				t.Errorf("%s%s: read in place %v to %d, want %v", tc.block, rest, took, sf.Pos(), tc.fast)
			}
			sf = jsonscan.New(data)
			errFast := readTransaction(&sf, &fast)
			errSlow := readTransactionMembers(&ss, &slow)
			if (errFast == nil) != (errSlow == nil) || sf.Pos() != ss.Pos() ||
				string(fast.txnID) != string(slow.txnID) || fast.txnOrder != slow.txnOrder {
				t.Errorf("%s%s: readTransaction %q %d to %d (%v); general %q %d to %d (%v)", tc.block, rest,
					fast.txnID, fast.txnOrder, sf.Pos(), errFast, slow.txnID, slow.txnOrder, ss.Pos(), errSlow)
			}
		}
	}
}
