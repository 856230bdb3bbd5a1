package kafka

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/txsink/txsink/source"
)

// startPolicies lists the accepted values of source.start.
var startPolicies = []string{StartEarliest, StartLatest}

// saslMechanisms lists the accepted values of source.sasl.mechanism.
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// Summary implements source.Keyed.
func (Driver) Summary() string { return "topics of a Kafka cluster, read by a consumer group" }

// Keys implements source.Keyed: the keys of Config, documented here once
// (docs/config.md prints them).
func (Driver) Keys() []source.Key {
	return []source.Key{{
		Name: "brokers", Type: source.KeyStrings, Required: true,
		Want: "a list of host:port, such as [127.0.0.1:9092]",
		Doc:  "The seed brokers of the Kafka cluster; the others are discovered.",
		Check: func(v any) string {
			for _, b := range v.([]string) {
				if _, port, ok := strings.Cut(b, ":"); !ok || port == "" {
					return fmt.Sprintf("broker %q has no port", b)
				}
			}
			return ""
		},
	}, {
		Name: "topics", Type: source.KeyStrings,
		Want: "a list of topic names", DefaultDoc: "none",
		Doc: "The topics to read. Each topic-partition is one source partition: its position is kept in the " +
			"target's progress table. Set `topics` or `topic-regex`.",
	}, {
		Name: "topic-regex", Type: source.KeyString,
		Want: "a regular expression (RE2) matching whole topic names", DefaultDoc: "none",
		Doc: "Reads every topic whose whole name matches, including topics created later. Set `topics` or `topic-regex`.",
		Check: func(v any) string {
			if s := v.(string); s != "" {
				if _, err := regexp.Compile(s); err != nil {
					return err.Error()
				}
			}
			return ""
		},
	}, {
		Name: "transaction-topic", Type: source.KeyString,
		Want: "the Debezium transaction topic, such as dbserver1.transaction", DefaultDoc: "none",
		Doc: "Debezium's transaction topic (`<topic.prefix>.transaction`, one partition) for the data topics. With it, " +
			"txsink joins each source transaction's events across the data topics — Debezium writes one topic per table — " +
			"by the transaction's END event, and commits whole transactions in source commit order. Needs " +
			"`sink.transaction.multi-table.enabled: true` and `format: debezium-json`. One instance of the group then " +
			"reads every partition (a transaction spans them); other instances stand by and take over if it stops.",
		Check: func(v any) string {
			if s := v.(string); s != "" && !validTopic(s) {
				return fmt.Sprintf("%q is not a Kafka topic name", s)
			}
			return ""
		},
	}, {
		Name: "group", Type: source.KeyString, Required: true,
		Want: "a consumer group name",
		Doc: "The Kafka consumer group. Start more txsink processes with the same config and group to spread " +
			"the partitions over them. The group's committed offsets are kept up to date for lag tools, but " +
			"txsink resumes from the target's progress table, never from them.",
	}, {
		Name: "start", Type: source.KeyString,
		Want: "one of: " + strings.Join(startPolicies, ", "), DefaultDoc: StartEarliest,
		Doc: "Where a partition that has no progress in the target starts: `earliest` (its oldest record) or " +
			"`latest` (only what is produced from now on).",
		Check: source.OneOf("start", startPolicies),
	}, {
		Name: "session-timeout", Type: source.KeyDuration, Unit: "duration",
		Want: "a duration such as 45s, within the brokers' group.min/max.session.timeout.ms", DefaultDoc: "45s",
		Doc: "How long the group waits for a member that stopped answering (a crash, a network split) before " +
			"its partitions move to the other members.",
		Check: func(v any) string {
			if d := v.(time.Duration); d < 0 {
				return d.String() + " is negative"
			}
			return ""
		},
	}, {
		Name: "tls", Type: source.KeyBool,
		Want: "true or false",
		Doc:  "Connect to the brokers with TLS. Implied by `tls-ca`, `tls-cert` and `tls-key`.",
	}, {
		Name: "tls-ca", Type: source.KeyString, Path: true,
		Want: "a PEM file", DefaultDoc: "the system's CAs",
		Doc: "The CA certificates that sign the brokers' certificates.",
	}, {
		Name: "tls-cert", Type: source.KeyString, Path: true,
		Want: "a PEM file", DefaultDoc: "none",
		Doc: "The client certificate, for brokers that require mutual TLS; needs `tls-key`.",
	}, {
		Name: "tls-key", Type: source.KeyString, Path: true,
		Want: "a PEM file", DefaultDoc: "none",
		Doc: "The client certificate's private key; needs `tls-cert`.",
	}, {
		Name: "sasl.mechanism", Type: source.KeyString,
		Want: "one of: " + strings.Join(saslMechanisms, ", "), DefaultDoc: "none",
		Doc:   "SASL authentication: `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` (use TLS with PLAIN).",
		Check: source.OneOf("SASL mechanism", saslMechanisms),
	}, {
		Name: "sasl.user", Type: source.KeyString, Env: true,
		Want: "a user name", DefaultDoc: "none",
		Doc: "The SASL user. `${NAME}` is replaced by the environment variable NAME.",
	}, {
		Name: "sasl.password", Type: source.KeyString, Env: true,
		Want: "a password, best as ${NAME}", DefaultDoc: "none",
		Doc: "The SASL password. `${NAME}` is replaced by the environment variable NAME, so it need not be in the file.",
	}}
}

// Validate implements source.Validator: the keys that depend on each
// other and on the pipeline.
func (Driver) Validate(settings source.Settings, p source.Pipeline) []source.Problem {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return []source.Problem{{Msg: err.Error()}}
	}
	var probs []source.Problem
	add := func(key, msg string) { probs = append(probs, source.Problem{Key: key, Msg: msg}) }
	if c.TransactionTopic != "" {
		if !p.Transactions {
			add("transaction-topic", "joins transactions across topics, which needs sink.transaction.multi-table.enabled: true; set it")
		}
		if p.Format != "" && p.Format != "debezium-json" {
			add("transaction-topic", fmt.Sprintf("is Debezium's; format %s has no transaction topic; remove it", p.Format))
		}
		if p.DeadLetter {
			add("transaction-topic", "cannot be combined with bad-input: dead-letter yet: a transaction joined across topics is applied whole or stops the pipeline; set bad-input: fail")
		}
		if slices.Contains(c.Topics, c.TransactionTopic) {
			add("transaction-topic", "is also in source.topics; list only the data topics there")
		}
	}
	switch {
	case len(c.Topics) == 0 && c.TopicRegex == "":
		add("topics", "missing; set it to the topics to read, or set source.topic-regex")
	case len(c.Topics) > 0 && c.TopicRegex != "":
		add("topic-regex", "is set together with source.topics; keep one of them")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		add("tls-cert", "source.tls-cert and source.tls-key go together; set both or neither")
	}
	if c.SASLMechanism != "" && (c.SASLUser == "" || c.SASLPassword == "") {
		add("sasl.mechanism", "needs source.sasl.user and source.sasl.password; set them")
	}
	if c.SASLMechanism == "" && (c.SASLUser != "" || c.SASLPassword != "") {
		add("sasl.user", "is set without source.sasl.mechanism; set it to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
	return probs
}
