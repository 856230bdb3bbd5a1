package mysql

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The session a mysql:// URL opens is txsink's: strict SQL mode, UTC,
// utf8mb4, times parsed in UTC, found rows counted. A URL parameter that
// would change how values are written or read is refused when the target
// is opened (and so by txsink check too), naming it, rather than applied:
// go-sql-driver reads some parameters itself (loc, parseTime, charset)
// and runs SET name=value on every connection for every other one, so
// ?loc=Local, ?time_zone='+05:00' or ?sql_mode='' would otherwise bend
// values with nothing said. What a URL may carry:
//
//   - txsink's own parameters: tls, tls-ca, tls-cert, tls-key,
//     tls-server-name and bulk-load;
//   - connectionParams, the driver's parameters that only say how to
//     reach and talk to the server;
//   - fixedParams, which txsink sets itself, with txsink's own value
//     only (parseTime=true is harmless, parseTime=false is not);
//   - charset=utf8mb4 and a utf8mb4 collation, which cannot change text;
//   - sessionVariables, the session variables that only bound how long
//     the server waits.
//
// Everything else is refused: the variables refusedParams names, with the
// reason, and any other session variable, since txsink cannot vouch that
// it leaves values as the changelog gave them (sql_select_limit cuts the
// progress reads, unique_checks=0 lets duplicates in, and the server has
// hundreds more).

// connectionParams are go-sql-driver's parameters that say how to connect
// and authenticate, never what a value becomes.
var connectionParams = []string{
	"allowCleartextPasswords", "allowFallbackToPlaintext", "allowNativePasswords", "allowOldPasswords",
	"checkConnLiveness", "compress", "connectionAttributes", "maxAllowedPacket", "readTimeout",
	"rejectReadOnly", "serverPubKey", "timeout", "writeTimeout",
}

// fixedParams are the driver parameters txsink sets itself: the value it
// sets, and why another would be wrong.
var fixedParams = map[string]struct{ value, why string }{
	"parseTime": {"true", "txsink reads DATE, DATETIME and TIMESTAMP values as times (parseTime=true), " +
		"and compares and reports them as such"},
	"loc": {"UTC", "txsink writes and reads DATETIME values as the wall-clock times the changelog gave and " +
		"TIMESTAMP values in the session's UTC (loc=UTC); another location moves every one by its offset " +
		"(loc=Local under TZ=Asia/Kolkata stores 10:00Z as 15:30)"},
	"clientFoundRows": {"true", "the fenced update of txsink_progress must count its row even when the position " +
		"did not move (clientFoundRows=true), or txsink takes its own commit for another instance's"},
	"multiStatements": {"true", "txsink sends a bulk load, its savepoint and its check as one query " +
		"(multiStatements=true); every value in them is escaped by the driver"},
	"interpolateParams": {"true", "txsink has the driver escape values into its statements " +
		"(interpolateParams=true), for the character set txsink sets"},
}

// sessionVariables are the session variables a URL may set (compared in
// lower case, as the server does): each only bounds a wait.
var sessionVariables = []string{
	"idle_readonly_transaction_timeout", "idle_transaction_timeout", "idle_write_transaction_timeout",
	"innodb_lock_wait_timeout", "interactive_timeout", "lock_wait_timeout", "max_execution_time",
	"max_statement_time", "net_read_timeout", "net_write_timeout", "wait_timeout",
}

// refusedParams says why txsink refuses parameters users are known to set
// (session variables in lower case); any other is refused as unknown.
var refusedParams = map[string]string{
	"time_zone": "txsink runs every session in UTC (time_zone '+00:00'), so a TIMESTAMP holds the instant " +
		"the changelog gave; another zone shifts every TIMESTAMP by its offset",
	"sql_mode": "txsink runs every session in strict mode (STRICT_ALL_TABLES, NO_ZERO_DATE, NO_ZERO_IN_DATE, " +
		"ERROR_FOR_DIVISION_BY_ZERO), so the server refuses what it would truncate, round or make up; " +
		"another mode lets it bend values silently (sql_mode='' turns a missing NOT NULL column into '')",
	"timeTruncate":     "it truncates every time value the driver sends, and txsink never rounds a value",
	"charset":          "txsink's connections are utf8mb4, which holds every character; another character set replaces what it cannot hold with '?'",
	"collation":        "txsink's connections are utf8mb4, which holds every character; a collation of another character set replaces what it cannot hold with '?'",
	"allowAllFiles":    "it lets the server read any file of this host through LOAD DATA LOCAL INFILE; txsink sends its loads from memory and needs none",
	"columnsWithAlias": "it renames the columns of the results txsink reads",
	"strict":           "go-sql-driver no longer has it (it stops the program on it); txsink's sessions are strict already",
	"names":            "txsink's connections are utf8mb4, which holds every character",
	"autocommit":       "txsink commits each flush as one transaction of its own",
	"sql_select_limit": "it cuts the catalog and progress reads txsink relies on",
	"max_error_count":  "txsink counts the warnings of a bulk load to refuse one that bent a value",
	"unique_checks":    "it lets a bulk load write duplicates of a unique key",
	"foreign_key_checks": "txsink orders a flush's statements so that foreign keys hold; switching the checks off " +
		"hides a changelog that breaks them",
	"explicit_defaults_for_timestamp": "it makes a NULL written into a TIMESTAMP column the current time instead of a refusal",
	"transaction_read_only":           "txsink writes its flushes and progress in read-write transactions",
	"tx_read_only":                    "txsink writes its flushes and progress in read-write transactions",
}

// textParams are refused the way charset is: every character-set and
// collation session variable.
var textParams = []string{
	"character_set_client", "character_set_connection", "character_set_results", "collation_connection",
}

// checkParams returns, for the query parameters of a mysql:// URL, the
// ones to pass to the driver (txsink's own left out) and an error naming
// every parameter refused, in sorted order.
func checkParams(query map[string][]string) (map[string]string, error) {
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pass := map[string]string{}
	var errs []error
	for _, k := range keys {
		vs := query[k]
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		switch why := refusal(k, v); why {
		case "":
			pass[k] = v
		case "-":
			// txsink's own: read elsewhere.
		default:
			errs = append(errs, fmt.Errorf("target url: parameter %s: %s", k, why))
		}
	}
	return pass, errors.Join(errs...)
}

// ownParams are the URL parameters txsink reads itself.
var ownParams = []string{"bulk-load", "tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name"}

// refusal says why parameter k=v is refused, "" when the driver may have
// it, "-" when it is txsink's own. Driver parameters are matched as the
// driver matches them, exactly; session variables in any case, as the
// server matches them.
func refusal(k, v string) string {
	switch {
	case slices.Contains(ownParams, k):
		return "-"
	case slices.Contains(connectionParams, k):
		return ""
	}
	if f, ok := fixedParams[k]; ok {
		if v == f.value || f.value == "true" && (strings.EqualFold(v, "true") || v == "1") {
			return ""
		}
		return f.why + "; remove " + k + " from the URL, or set " + k + "=" + f.value
	}
	name := strings.ToLower(k)
	switch {
	case k == "charset" && strings.EqualFold(v, "utf8mb4"),
		k == "collation" && strings.HasPrefix(strings.ToLower(v), "utf8mb4_"),
		slices.Contains(sessionVariables, name):
		return ""
	}
	why, ok := refusedParams[k]
	if !ok {
		why, ok = refusedParams[name]
	}
	if !ok && slices.Contains(textParams, name) {
		why, ok = refusedParams["names"], true
	}
	if ok {
		return why + "; remove " + k + " from the URL"
	}
	return "not a parameter txsink passes on: go-sql-driver would run SET " + k + " on every connection, and " +
		"txsink cannot vouch that it leaves values as the changelog gave them; remove " + k + " from the URL " +
		"(a URL may set the session variables " + strings.Join(sessionVariables, ", ") +
		" and the driver's connection parameters " + strings.Join(connectionParams, ", ") + ")"
}
