// Package sources links every source type into the program that imports
// it: each source package registers its source.Driver from init (see
// package source). The command imports this package; engine and diagnose
// know sources through the registry only. To add a source, add its import
// here.
package sources

import (
	// Registered source types.
	_ "github.com/txsink/txsink/source/file"
	_ "github.com/txsink/txsink/source/kafka"
	_ "github.com/txsink/txsink/source/nats"
	_ "github.com/txsink/txsink/source/postgres"
)
