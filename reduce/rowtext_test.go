package reduce

import (
	"strings"
	"testing"
)

// TestRowMemText: rowMem.text copies texts of every length (words for 4
// to 16 bytes, copy for the rest) into its block's back, exactly their
// bytes, writing nothing else but their header at its front.
func TestRowMemText(t *testing.T) {
	const sentinel = 0xAA
	for n := 0; n <= 40; n++ {
		var b strings.Builder
		for i := range n {
			b.WriteByte(byte('a' + i%26))
		}
		s := b.String()
		m := &rowMem{block: make([]byte, 256), lo: 0, hi: 256}
		for i := range m.block {
			m.block[i] = sentinel
		}
		placed := 0
		h := m.text(s, &placed)
		if h == nil || *h != s {
			t.Fatalf("%d bytes: text gives %v", n, h)
		}
		if m.lo != headerBytes || m.hi != 256-n || placed != headerBytes+n {
			t.Errorf("%d bytes: lo %d, hi %d, placed %d", n, m.lo, m.hi, placed)
		}
		for i := headerBytes; i < 256-n; i++ {
			if m.block[i] != sentinel {
				t.Errorf("%d bytes: byte %d of the block written", n, i)
				break
			}
		}
		if got := string(m.block[256-n:]); got != s {
			t.Errorf("%d bytes: the block's back holds %q", n, got)
		}
	}
}
