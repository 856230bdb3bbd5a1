package engine

// The command links the sources in; engine's tests do as it does.
import _ "github.com/txsink/txsink/source/sources"
