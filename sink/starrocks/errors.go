package starrocks

import (
	"fmt"
	"strings"

	"github.com/txsink/txsink/errkind"
)

// Error is a failed request to StarRocks: which operation, on which label
// and table, what the server answered (its status as spelt, and the code it
// stands for), and what the failure asks of the pipeline.
type Error struct {
	// Op is the operation: "begin", "load", "commit", "rollback" or
	// "get_load_state".
	Op string
	// URL is the address the request was sent to last.
	URL string
	// Label and Table name the transaction and, for a load, its table.
	Label, Table string
	// HTTPStatus is the HTTP status of the answer; 0 when none arrived.
	HTTPStatus int
	// Status is the answer's Status as the server spelt it ("FAILED",
	// "Fail", "TXN_NOT_EXISTS", ...); Code is the code it stands for,
	// in the code-name spelling (see Code).
	Status, Code string
	// Message is the answer's Message.
	Message string
	// State is the label's state read through get_load_state after a
	// commit whose answer was not OK (or did not arrive), if it was read.
	State string
	// ErrorURL is the answer's ErrorURL; ErrorLog the start of the log it
	// serves, which names the rows the server filtered.
	ErrorURL, ErrorLog string
	// Err is the transport error, when the request got no answer.
	Err error

	kind errkind.Kind
}

// Error says what failed, on what, what the server said and what to do.
func (e *Error) Error() string {
	s := e.Reason()
	switch e.kind {
	case errkind.Transient:
		s += " (transient: the transaction is redone)"
	case errkind.BadInput:
		s += " (the server refused rows: fix the input or the table)"
	}
	return s
}

// Reason is Error without what to do about it, for an error that says
// that itself.
func (e *Error) Reason() string {
	var b strings.Builder
	fmt.Fprintf(&b, "starrocks %s", e.Op)
	if e.Table != "" {
		fmt.Fprintf(&b, " into table %s", e.Table)
	}
	if e.Label != "" {
		fmt.Fprintf(&b, " (label %s)", e.Label)
	}
	switch {
	case tlsHint(e.Err) != "":
		fmt.Fprintf(&b, ": TLS with %s failed: %v: %s", e.URL, e.Err, tlsHint(e.Err))
	case e.Err != nil:
		fmt.Fprintf(&b, ": no answer from %s: %v", e.URL, e.Err)
	case e.HTTPStatus != 0 && e.HTTPStatus != 200:
		fmt.Fprintf(&b, ": HTTP %d from %s", e.HTTPStatus, e.URL)
		if e.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Message)
		}
	default:
		fmt.Fprintf(&b, ": %s", e.Status)
		if e.Code != e.Status {
			fmt.Fprintf(&b, " (%s)", e.Code)
		}
		if e.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Message)
		}
	}
	if e.State != "" {
		fmt.Fprintf(&b, "; the label's state is %s", e.State)
	}
	if e.ErrorLog != "" {
		fmt.Fprintf(&b, "; the server's error log: %s", firstLine(e.ErrorLog))
	} else if e.ErrorURL != "" {
		fmt.Fprintf(&b, "; the server's error log is at %s", e.ErrorURL)
	}
	return b.String()
}

// reasonOnly is an *Error told by its Reason: the error wrapping it says
// what to do.
type reasonOnly struct{ e *Error }

func (r reasonOnly) Error() string { return r.e.Reason() }
func (r reasonOnly) Unwrap() error { return r.e }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Unwrap returns the transport error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Kind says what the failure asks of the pipeline: Transient for what a
// retry of the transaction may cure (no answer, HTTP 5xx, a leader change,
// TXN_IN_PROCESSING, a transaction the server no longer has), BadInput
// for rows the server filtered, Permanent for the rest (a refused
// argument, bad credentials, a table that does not exist).
func (e *Error) Kind() errkind.Kind { return e.kind }

// Where names the table of a load.
func (e *Error) Where() errkind.Where { return errkind.Where{Table: e.Table} }

// Codes, in the code-name spelling of the transaction API. An answer's
// status is mapped to one of these by Code.
const (
	CodeOK                 = "OK"
	CodeLabelAlreadyExists = "LABEL_ALREADY_EXISTS"
	CodeTxnNotExists       = "TXN_NOT_EXISTS"
	CodeTxnInProcessing    = "TXN_IN_PROCESSING"
	CodePublishTimeout     = "PUBLISH_TIMEOUT"
	CodeInvalidArgument    = "INVALID_ARGUMENT"
	CodeFailed             = "FAILED"
)

// knownCodes are the code names found inside a FAILED answer's message.
var knownCodes = []string{CodeLabelAlreadyExists, CodeTxnNotExists, CodeTxnInProcessing, CodePublishTimeout, CodeInvalidArgument,
	"INTERNAL_ERROR", "SERVICE_UNAVAILABLE", "SR_EAGAIN", "TIMEOUT", "DATA_QUALITY_ERROR", "NOT_FOUND", "ABORTED", "RESOURCE_BUSY"}

// Code maps an answer's Status and Message to a code name, accepting every
// spelling StarRocks uses: the transaction API's code names ("OK",
// "TXN_NOT_EXISTS"), plain stream load's words ("Success", "Label Already
// Exists", "Publish Timeout", "Fail"), and the FE's "FAILED" with the code
// or the documentation's phrase ("Transcation Not Exist", sic) in the
// message.
func Code(status, message string) string {
	s := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(status), " ", "_"))
	switch s {
	case "OK", "SUCCESS":
		return CodeOK
	case "FAIL", "FAILED", "":
	default:
		return s
	}
	// A code name in the message is upper case, as the server writes it;
	// lower-case words ("publish timeout") are phrases, matched below.
	for _, c := range knownCodes {
		if strings.Contains(message, c) {
			return c
		}
	}
	m := strings.ToUpper(message)
	switch {
	case strings.Contains(m, "TRANSCATION NOT EXIST"), strings.Contains(m, "TRANSACTION NOT EXIST"):
		return CodeTxnNotExists
	case strings.Contains(m, "IN PROCESSING"):
		return CodeTxnInProcessing
	case strings.Contains(m, "PUBLISH TIMEOUT"):
		return CodePublishTimeout
	case strings.Contains(m, "HAS ALREADY BEEN USED"):
		return CodeLabelAlreadyExists
	}
	return CodeFailed
}

// classify sets e's Kind from its HTTP status, code and message.
func (e *Error) classify() *Error {
	m := strings.ToLower(e.Message)
	switch {
	case tlsHint(e.Err) != "":
		// A certificate the client cannot trust, or no TLS: the request
		// was never sent, and every retry meets the same server.
		e.kind = errkind.Permanent
	case e.Err != nil:
		// No answer: a dropped connection, a refused one, a timeout. The
		// request may or may not have been carried out; a commit is then
		// resolved through the label's state.
		e.kind = errkind.Transient
	case e.HTTPStatus == 401 || e.HTTPStatus == 403:
		e.kind = errkind.Permanent
	case e.HTTPStatus >= 500, e.HTTPStatus == 429:
		e.kind = errkind.Transient
	case e.HTTPStatus != 0 && e.HTTPStatus != 200:
		e.kind = errkind.Permanent
	case e.ErrorURL != "" || e.Code == "DATA_QUALITY_ERROR" || strings.Contains(m, "too many filtered rows"):
		e.kind = errkind.BadInput
	case e.Code == CodeTxnInProcessing, e.Code == CodeTxnNotExists, e.Code == CodePublishTimeout,
		e.Code == "SERVICE_UNAVAILABLE", e.Code == "SR_EAGAIN", e.Code == "TIMEOUT", e.Code == "RESOURCE_BUSY":
		e.kind = errkind.Transient
	case e.Code == CodeFailed || e.Code == "INTERNAL_ERROR":
		// The FE says FAILED for a leader that changed, a BE that is gone,
		// a timeout: words, not codes.
		e.kind = errkind.Permanent
		for _, w := range []string{"leader", "no backend", "timeout", "unavailable", "busy", "retry", "try again", "election"} {
			if strings.Contains(m, w) {
				e.kind = errkind.Transient
			}
		}
	default:
		e.kind = errkind.Permanent
	}
	return e
}
