package nats

import "github.com/txsink/txsink/source"

// Summary implements source.Keyed.
func (Driver) Summary() string {
	return "a NATS JetStream stream, such as Debezium Server's, read in stream order"
}

// Keys implements source.Keyed: the keys of Config, documented here once
// (docs/config.md prints them). Open checks them again for a Config
// built in Go.
func (Driver) Keys() []source.Key {
	return []source.Key{source.URLKey, {
		Name: "stream", Type: source.KeyString, Required: true,
		Want: "the name of a JetStream stream, such as DEBEZIUM",
		Doc: "The JetStream stream to read. It is one source partition, `nats:<stream>`: a stream orders all its " +
			"subjects, so the tables' events and Debezium's transaction events keep the order Debezium published " +
			"them in. The target's progress table holds the position (the stream sequence of the last message " +
			"applied + 1); each run reads from there with an ordered consumer, which acknowledges nothing and " +
			"leaves nothing behind on the server.",
		Check: func(v any) string {
			if s := v.(string); s != "" {
				return checkStream(s)
			}
			return ""
		},
	}, {
		Name: "subjects", Type: source.KeyStrings,
		Want: "a list of subject filters, such as [dbserver1.inventory.*, dbserver1.transaction]", DefaultDoc: "all of the stream's",
		Doc: "Reads only the stream's messages on these subjects (`*` one token, `>` the rest). With Debezium's " +
			"transaction metadata, list the transaction subject (`<topic.prefix>.transaction`) too, and leave out no table a " +
			"transaction writes: its END counts every event, and a transaction missing some is refused.",
		Check: func(v any) string {
			for _, s := range v.([]string) {
				if msg := checkSubject(s); msg != "" {
					return msg
				}
			}
			return ""
		},
	}}
}
