package benchrun

// The command links the sources in; benchrun's tests do as it does.
import _ "github.com/txsink/txsink/source/sources"
