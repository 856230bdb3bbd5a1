package metrics_test

// The command links the sources in; these tests do as it does.
import _ "github.com/txsink/txsink/source/sources"
