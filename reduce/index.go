package reduce

import (
	"hash/maphash"
	"unsafe"
)

// keyIndex finds a table state's entry by its key's encoding (see
// appendKey). It replaces a map[string]int32, which hashed a key twice
// when it was new (the look-up, then the insert) and again to check it
// against KeyPartitions: a key's hash (indexHash, the first half of
// keyHash) is computed once and serves all three.
//
// Open addressing with linear probing, kept at most half full. A slot
// holds the entry's index + 1 in its low 32 bits (0: empty) and the high
// 32 bits of the key's hash above them, so that a probe rarely compares
// the key of an entry that is not the key's. The hash is seeded per
// process (keySeeds), so keys a source chooses cannot be made to collide.
// Entries are never removed but all at once (reset).
type keyIndex struct {
	slots []uint64
	n     int
}

// minIndexSlots is the slots a keyIndex starts with.
const minIndexSlots = 64

// indexHash returns the hash of the key encoded as key in t: keyHash's
// first half.
func indexHash(t *Table, key []byte) uint64 {
	return maphash.Bytes(keySeeds[0], key) ^ t.salt[0]
}

// indexHashString is indexHash of a key already held as a string.
func indexHashString(t *Table, key string) uint64 {
	return maphash.String(keySeeds[0], key) ^ t.salt[0]
}

// find returns the index in entries of the entry whose key is key, of
// hash h.
func (x *keyIndex) find(entries []entry, key []byte, h uint64) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	tag := h >> 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if s>>32 == tag {
			if j := int32(uint32(s)) - 1; entries[j].k == string(key) {
				return j, true
			}
		}
	}
}

// findString is find for a key held as a string.
func (x *keyIndex) findString(entries []entry, key string, h uint64) (int32, bool) {
	return x.find(entries, unsafe.Slice(unsafe.StringData(key), len(key)), h)
}

// add records that entry j has the key of hash h, which x does not hold.
func (x *keyIndex) add(t *Table, entries []entry, j int, h uint64) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(t, entries, max(minIndexSlots, 2*len(x.slots)))
	}
	x.put(j, h)
	x.n++
}

// put writes entry j's slot.
func (x *keyIndex) put(j int, h uint64) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = h>>32<<32 | uint64(j+1)
}

// grow moves x to n slots, rehashing the keys of the entries it holds.
func (x *keyIndex) grow(t *Table, entries []entry, n int) {
	old := x.slots
	x.slots = make([]uint64, n)
	for _, s := range old {
		if s != 0 {
			j := int(uint32(s)) - 1
			x.put(j, indexHashString(t, entries[j].k))
		}
	}
}

// reset empties x, keeping its slots for the next unit unless the last
// one used far fewer than they hold: a unit much larger than the rest
// would otherwise make every later reset clear its slots.
func (x *keyIndex) reset() {
	if len(x.slots) > minIndexSlots && 16*x.n < len(x.slots) {
		x.slots = make([]uint64, max(minIndexSlots, len(x.slots)/4))
	} else {
		clear(x.slots)
	}
	x.n = 0
}
