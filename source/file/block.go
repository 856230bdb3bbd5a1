package file

import (
	"sync"
	"sync/atomic"
)

// Lease keeps a block of a Reader's input, and the records lent from it
// (see Reader.NextLentBatch), from being reused: Retain takes a reference,
// Release gives it back. It is an alias of an interface literal so that
// callers name it without importing this package.
type Lease = interface {
	Retain()
	Release()
}

// block is a piece of a Reader's input: the Reader reads into b, and the
// lines in it are returned as views. refs counts its holders: the Reader
// while the block is the one it reads into, and every lease of it handed
// out or retained; the last Release recycles it. A line returned stays
// put: the Reader only ever writes into a block after what it has read (a
// line cut by the block's end is copied to the start of the next block,
// not moved within this one).
type block struct {
	b    []byte
	refs atomic.Int32
}

// blocks recycles blocks of bufferSize bytes; larger ones (made to hold a
// line longer than bufferSize) are left to the collector.
var blocks = sync.Pool{New: func() any { return &block{b: make([]byte, bufferSize)} }}

// newBlock returns a block of at least size bytes, referenced once.
func newBlock(size int) *block {
	var b *block
	if size <= bufferSize {
		b = blocks.Get().(*block)
	} else {
		b = &block{b: make([]byte, size)}
	}
	b.refs.Store(1)
	return b
}

// Retain implements Lease.
func (b *block) Retain() { b.refs.Add(1) }

// Release implements Lease.
func (b *block) Release() {
	switch n := b.refs.Add(-1); {
	case n == 0 && len(b.b) == bufferSize:
		blocks.Put(b)
	case n < 0:
		panic("file: a block released more often than retained")
	}
}
