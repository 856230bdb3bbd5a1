package postgres_test

// The command links the sinks in; these tests do as it does.
import _ "github.com/txsink/txsink/sink/sinks"
