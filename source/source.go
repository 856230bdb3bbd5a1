// Package source defines what txsink reads changelogs from: partitions,
// ordered lanes of raw records, each record tagged with the Position that
// resuming after it needs.
//
// A source only moves bytes. It does not parse records (package format does)
// and it does not remember progress: the engine writes each partition's
// Position to the target in the same transaction as the data, and hands it
// back when the pipeline starts again. Implementations live in the
// subpackages: file (newline-delimited files and standard input) and, later,
// kafka.
package source

import (
	"context"

	"github.com/txsink/txsink/changelog"
)

// Record is one raw record of a partition.
type Record struct {
	// Data is the record's bytes as the partition holds them (one JSON
	// document for the JSON formats), without framing such as a line
	// terminator. Each implementation documents how long Data stays valid.
	Data []byte
	// Pos is the record's position: its partition, the offset to resume
	// from once the record is applied, and its ordinal for messages.
	Pos changelog.Position
}

// Reader reads the records of one partition in order.
//
// Failure policy: io.EOF means a finite partition is exhausted; an error
// equal to ctx.Err() means Next gave up waiting, and the Reader may be used
// again with a live context; any other error is permanent, and Next keeps
// returning it.
type Reader interface {
	// Next returns the partition's next record.
	Next(ctx context.Context) (Record, error)
	// Close releases the Reader's resources. Next must not run concurrently
	// with Close: cancel its context first.
	Close() error
}
