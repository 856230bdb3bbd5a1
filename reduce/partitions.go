package reduce

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/txsink/txsink/changelog"
)

// ErrCrossPartition is wrapped by the *Error a confined Buffer returns for
// a key whose changes came from two partitions (see
// Buffer.ConfinePartitions): test for it with errors.Is.
var ErrCrossPartition = errors.New("one key's changes came from two partitions")

// crossHint is what to do about ErrCrossPartition, said once for every
// place that finds it.
const crossHint = "the order of changes is only known inside one partition, so which change of this key is the last cannot be told; " +
	"put one key's changes in one partition: for files, list them as one sequence in source.paths; " +
	"for Kafka, key records by the row's primary key. Nothing past the last commit was applied"

// KeyPartitions remembers, across commit units, the partition the most
// recent keys were written from, so that a confined Buffer (see
// Buffer.ConfinePartitions) notices a key whose changes come from two
// partitions even when the two changes fall in different units: inserts
// in one file and updates of the same keys in another, read at once, are
// committed in many units, and which of a key's changes lands last
// depends on how the reads raced.
//
// What it guarantees:
//
//   - Exact for what it holds. A key is known by a 128-bit hash of its
//     table and its encoding (the one the Buffer reduces by), so a stop it
//     causes is never false: two different keys would have to share 128
//     bits (with seeds random per process, about 2^-128 per look-up).
//   - Bounded. It holds the keys of the last Limit key writes, a key
//     write being a key entering a Buffer: a key counts once per unit (per
//     chunk of finished transactions in transaction mode) however often
//     the unit changes it, and a key written again moves to the front.
//     A key is forgotten once Limit other key writes came after its last
//     one, never sooner; the oldest goes first.
//   - Modest: at most about 32 bytes per key of Limit (see Bytes), taken
//     as keys come, not up front.
//
// It is not safe for concurrent use; the Buffers sharing one are used by
// one goroutine, as the engine's loop does.
type KeyPartitions struct {
	limit int
	// ring holds the last limit key writes, in pages of ringPage slots
	// allocated as the ring first fills; head is where the next goes,
	// and full says the ring has wrapped: head's slot is the oldest.
	ring [][]keySlot
	head int
	full bool
	// index finds a key's slot in ring: open addressing with linear
	// probing, kept at most half full. A value is the ring position + 1
	// in its low posBits bits (0: empty) and a tag of the key's hash in
	// the bits above, so that a probe rarely reads a ring slot that is
	// not the key's.
	index []uint32
	live  int
	// parts lists the partitions met; a slot names its partition by
	// index + 1.
	parts   []string
	partIdx map[string]uint64
}

// keySlot is one key write: the key's 128-bit hash, and meta, the
// partition's index + 1 (above seqBits) and the sequence number of the
// change in it (0 when it does not fit); meta 0 marks a slot whose key was
// written again since (its slot is the newer one).
type keySlot struct {
	h1, h2 uint64
	meta   uint64
}

const (
	ringPage = 1 << 13
	posBits  = 26
	posMask  = 1<<posBits - 1
	seqBits  = 40
	seqMask  = 1<<seqBits - 1
	// MaxKeyPartitions is the largest Limit: a ring position must fit an
	// index value beside its tag.
	MaxKeyPartitions = posMask - 1
	// maxParts is how many partitions a slot can name.
	maxParts = 1<<(64-seqBits) - 1
	// keyBytes is what a key of Limit costs once the ring is full: its
	// slot, and two index values (the index is kept at most half full).
	keyBytes = 24 + 2*4
)

// KeyPartitionsBytes returns the most memory a KeyPartitions of limit
// key writes takes: 32 bytes a key, and while its index grows the old
// index beside the new one (a quarter of its size: 2 bytes a key more),
// and one page of the ring's rounding.
func KeyPartitionsBytes(limit int) int64 {
	return int64(limit)*(keyBytes+2) + ringPage*24
}

// keySeeds seed the two halves of a key's hash. They are random per
// process: nothing stored outlives it, and keys a source chooses cannot be
// made to collide.
var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// NewKeyPartitions returns an empty memory of the last limit key writes,
// 1 to MaxKeyPartitions.
func NewKeyPartitions(limit int) *KeyPartitions {
	if limit < 1 || limit > MaxKeyPartitions {
		panic(fmt.Sprintf("reduce.NewKeyPartitions(%d): the limit must be 1 to %d", limit, MaxKeyPartitions))
	}
	return &KeyPartitions{limit: limit, partIdx: map[string]uint64{}}
}

// Limit returns how many key writes k remembers.
func (k *KeyPartitions) Limit() int { return k.limit }

// Len returns how many keys k holds now.
func (k *KeyPartitions) Len() int { return k.live }

// Bytes returns the memory k has allocated: its ring pages and its
// index. It grows with the keys met up to about 32 bytes per key of Limit
// (24 for the key's slot, 8 for its share of the index), and stays there.
func (k *KeyPartitions) Bytes() int64 {
	n := int64(4 * len(k.index))
	for _, p := range k.ring {
		n += int64(24 * len(p))
	}
	return n
}

// A key's 128-bit hash in t is indexHash(t, key) (the half the buffer's
// index finds the key by, see keyIndex) and keyHash2(t, key).

// keyHash2 returns the second half of the 128-bit hash of the key encoded
// as key in t.
func keyHash2(t *Table, key []byte) uint64 {
	return maphash.Bytes(keySeeds[1], key) ^ t.salt[1]
}

// tableSalt returns what a table's keys' hashes are mixed with: equal
// encodings of two tables' keys hash apart, and a table described again
// (a new Table of the same name) finds the keys of the old one.
func tableSalt(name string) [2]uint64 {
	return [2]uint64{maphash.String(keySeeds[0], name) * 0x9e3779b97f4a7c15, maphash.String(keySeeds[1], name) * 0xbf58476d1ce4e5b9}
}

// part returns the index + 1 of partition name, 0 when k cannot name
// more partitions. Callers keep it for a run of one partition's keys.
func (k *KeyPartitions) part(name string) uint64 {
	i, ok := k.partIdx[name]
	if !ok {
		if len(k.parts) >= maxParts {
			return 0
		}
		k.parts = append(k.parts, name)
		i = uint64(len(k.parts))
		k.partIdx[name] = i
	}
	return i
}

// position returns where the write of meta was read: its partition and,
// when it fitted, its sequence number.
func (k *KeyPartitions) position(meta uint64) changelog.Position {
	return changelog.Position{Partition: k.parts[meta>>seqBits-1], Seq: int64(meta & seqMask)}
}

func (k *KeyPartitions) slot(pos int) *keySlot { return &k.ring[pos/ringPage][pos%ringPage] }

// home returns the index position a hash's probe starts at.
func (k *KeyPartitions) home(h1 uint64) int {
	hi, _ := bits.Mul64(h1, uint64(len(k.index)))
	return int(hi)
}

func tag(h2 uint64) uint32 { return uint32(h2>>(64-(32-posBits))) << posBits }

// find returns the index position of the key hashed (h1, h2) and true,
// or, when k does not hold it, the empty position its probe ended at and
// false. The index must not be empty.
func (k *KeyPartitions) find(h1, h2 uint64) (int, bool) {
	tg := tag(h2)
	for i := k.home(h1); ; {
		v := k.index[i]
		if v == 0 {
			return i, false
		}
		if v&^posMask == tg {
			if s := k.slot(int(v&posMask) - 1); s.h1 == h1 && s.h2 == h2 {
				return i, true
			}
		}
		if i++; i == len(k.index) {
			i = 0
		}
	}
}

// check returns where the key hashed (h1, h2) was written from, when k
// holds it and a partition other than part's wrote it.
func (k *KeyPartitions) check(h1, h2 uint64, part string) (changelog.Position, bool) {
	if len(k.index) == 0 {
		return changelog.Position{}, false
	}
	i, ok := k.find(h1, h2)
	if !ok {
		return changelog.Position{}, false
	}
	meta := k.slot(int(k.index[i]&posMask) - 1).meta
	if k.parts[meta>>seqBits-1] == part {
		return changelog.Position{}, false
	}
	return k.position(meta), true
}

// note records a write of the key hashed (h1, h2) at pos, from the
// partition whose part is p (see part), unless k holds the key from
// another partition: then it returns where that was read, and true, and
// changes nothing.
func (k *KeyPartitions) note(h1, h2 uint64, p uint64, pos changelog.Position) (changelog.Position, bool) {
	if p == 0 {
		return changelog.Position{}, false
	}
	seq := uint64(0)
	if pos.Seq > 0 && pos.Seq <= seqMask {
		seq = uint64(pos.Seq)
	}
	meta := p<<seqBits | seq
	if 2*(k.live+1) > len(k.index) {
		k.grow()
	}
	i, ok := k.find(h1, h2)
	if !ok {
		k.insert(i, h1, h2, meta)
		return changelog.Position{}, false
	}
	old := int(k.index[i]&posMask) - 1
	s := k.slot(old)
	if s.meta>>seqBits != p {
		return k.position(s.meta), true
	}
	if k.full && old == k.head {
		// The key's own slot is the oldest, the one written next.
		s.meta = meta
		k.advance()
		return changelog.Position{}, false
	}
	// The write may evict the oldest key, whose removal may move this
	// key's index value: find it again then.
	at, evicted := k.write(h1, h2, meta)
	if evicted {
		i = k.findPos(h1, old)
	}
	k.index[i] = k.index[i]&^posMask | uint32(at+1)
	s.meta = 0
	return changelog.Position{}, false
}

// findPos returns the index position whose value points at ring position
// pos, for a key whose hash starts with h1. It must be there.
func (k *KeyPartitions) findPos(h1 uint64, pos int) int {
	for i := k.home(h1); ; {
		if int(k.index[i]&posMask) == pos+1 {
			return i
		}
		if i++; i == len(k.index) {
			i = 0
		}
	}
}

// insert records a key k does not hold, whose probe ended at the empty
// index position i.
func (k *KeyPartitions) insert(i int, h1, h2, meta uint64) {
	at, evicted := k.write(h1, h2, meta)
	if evicted {
		// The removal may have moved values into i, or emptied one
		// before it: probe again.
		i = k.home(h1)
		for k.index[i] != 0 {
			if i++; i == len(k.index) {
				i = 0
			}
		}
	}
	k.index[i] = tag(h2) | uint32(at+1)
	k.live++
}

// write puts a key write in the ring's next slot, first forgetting the
// key whose slot it is (evicted), and returns the slot's position. The
// new slot is not indexed yet.
func (k *KeyPartitions) write(h1, h2, meta uint64) (at int, evicted bool) {
	at = k.head
	if !k.full && at%ringPage == 0 {
		k.ring = append(k.ring, make([]keySlot, min(ringPage, k.limit-at)))
	}
	s := k.slot(at)
	if k.full && s.meta != 0 {
		k.remove(k.findPos(s.h1, at))
		evicted = true
	}
	*s = keySlot{h1: h1, h2: h2, meta: meta}
	k.advance()
	return at, evicted
}

// advance moves the ring's head past the slot just written.
func (k *KeyPartitions) advance() {
	if k.head++; k.head == k.limit {
		k.head, k.full = 0, true
	}
}

// remove empties index position i, moving back the values after it that
// their probes would no longer reach (backward-shift deletion, so the
// index needs no tombstones).
func (k *KeyPartitions) remove(i int) {
	n := len(k.index)
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		v := k.index[j]
		if v == 0 {
			break
		}
		h := k.home(k.slot(int(v&posMask) - 1).h1)
		// v stays when its home lies cyclically in (i, j].
		if (i <= j && i < h && h <= j) || (i > j && (i < h || h <= j)) {
			continue
		}
		k.index[i] = v
		i = j
	}
	k.index[i] = 0
	k.live--
}

// grow makes the index four times larger (up to twice the limit and two,
// so that it stays at most half full: live+1 <= limit+1) and indexes the
// ring's live slots again. Four times, not two: each growth writes every
// key again at a random place, which on the txn bench cost as much as the
// look-ups themselves.
func (k *KeyPartitions) grow() {
	n := min(max(1024, 4*len(k.index)), 2*k.limit+2)
	k.index = make([]uint32, n)
	filled := k.head
	if k.full {
		filled = k.limit
	}
	for at := range filled {
		s := k.slot(at)
		if s.meta == 0 {
			continue
		}
		i := k.home(s.h1)
		for k.index[i] != 0 {
			if i++; i == n {
				i = 0
			}
		}
		k.index[i] = tag(s.h2) | uint32(at+1)
	}
}
