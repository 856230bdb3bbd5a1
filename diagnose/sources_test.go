package diagnose

// The command links the sources in; diagnose's tests do as it does.
import _ "github.com/txsink/txsink/source/sources"
