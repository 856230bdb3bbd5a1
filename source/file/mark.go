package file

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
)

// A Mark is a fingerprint of what a stored position points into: which
// file of the partition, where in it, and checksums of the bytes at the
// file's head and just before the position. The engine stores it with the
// position, in the same target transaction; on resume the file must still
// hold those bytes, or the position is refused. An offset alone cannot tell
// the file it was taken in from a replaced, rotated, truncated and refilled
// or different one, and reading one of those from the old offset skips or
// splits records without a word.
//
// The windows are small and fixed: the first headWindow bytes of the file
// (or all bytes before the position, if fewer) and the tailWindow bytes
// before the position. Both lie in the part of the file already applied,
// which an append-only changelog never changes.
type Mark struct {
	// File names the file the position is in, as the partition names its
	// files (see Name). A partition of one file that later lists more
	// finds its position in the same file.
	File string `json:"file"`
	// At is the byte offset within File; the stored position's offset is
	// At plus the bytes of the partition's files before File.
	At int64 `json:"at"`
	// HeadLen and Head are the length and CRC-32C of the file's first
	// bytes.
	HeadLen int64  `json:"head_len"`
	Head    uint32 `json:"head"`
	// TailLen and Tail are the length and CRC-32C of the bytes ending at
	// At.
	TailLen int64  `json:"tail_len"`
	Tail    uint32 `json:"tail"`
}

// The windows a Mark checksums. 4 KiB holds a few records of any format,
// and reading them costs one page of the page cache per commit.
const (
	headWindow = 4 << 10
	tailWindow = 4 << 10
)

// markVersion prefixes the stored text, so a later layout can be told from
// this one.
const markVersion = "v1 "

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// String returns the Mark's stored form.
func (m Mark) String() string {
	b, _ := json.Marshal(m) // cannot fail: a struct of strings and numbers
	return markVersion + string(b)
}

// ParseMark reads a Mark written by String. An empty s is no mark: the
// position was stored by a txsink that did not write marks.
func ParseMark(s string) (m Mark, ok bool, err error) {
	if s == "" {
		return Mark{}, false, nil
	}
	if len(s) < len(markVersion) || s[:len(markVersion)] != markVersion {
		return Mark{}, false, fmt.Errorf("stored position mark %.40q is not one this txsink writes (a newer version wrote it?)", s)
	}
	if err := json.Unmarshal([]byte(s[len(markVersion):]), &m); err != nil {
		return Mark{}, false, fmt.Errorf("stored position mark %.40q: %w", s, err)
	}
	if m.At < 0 || m.HeadLen < 0 || m.TailLen < 0 || m.HeadLen > m.At || m.TailLen > m.At {
		return Mark{}, false, fmt.Errorf("stored position mark %.80q is inconsistent", s)
	}
	return m, true, nil
}

// markOf fingerprints offset at of f, for the file named file.
func markOf(f io.ReaderAt, file string, at int64) (Mark, error) {
	m := Mark{File: file, At: at, HeadLen: min(at, headWindow), TailLen: min(at, tailWindow)}
	var err error
	if m.Head, err = checksum(f, 0, m.HeadLen); err != nil {
		return Mark{}, err
	}
	if m.Tail, err = checksum(f, at-m.TailLen, m.TailLen); err != nil {
		return Mark{}, err
	}
	return m, nil
}

// check reports whether f, of size bytes, holds the bytes m recorded: nil
// when it does, else an error saying what differs, in words for a person.
func (m Mark) check(f io.ReaderAt, size int64) error {
	if size < m.At {
		return fmt.Errorf("it is %d bytes long, shorter than the position (byte %d): it was truncated or replaced", size, m.At)
	}
	head, err := checksum(f, 0, m.HeadLen)
	if err != nil {
		return err
	}
	if head != m.Head {
		return fmt.Errorf("its first %d bytes are not the ones read before (CRC-32C %08x, expected %08x): it was replaced or rewritten, as by a rotation to the same name", m.HeadLen, head, m.Head)
	}
	tail, err := checksum(f, m.At-m.TailLen, m.TailLen)
	if err != nil {
		return err
	}
	if tail != m.Tail {
		return fmt.Errorf("the %d bytes before byte %d are not the ones applied (CRC-32C %08x, expected %08x): it was rewritten, or truncated and refilled", m.TailLen, m.At, tail, m.Tail)
	}
	return nil
}

// checksum returns the CRC-32C of n bytes of f at off.
func checksum(f io.ReaderAt, off, n int64) (uint32, error) {
	if n == 0 {
		return 0, nil
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		if err == io.EOF {
			return 0, fmt.Errorf("it ended before byte %d: it was truncated", off+n)
		}
		return 0, err
	}
	return crc32.Checksum(buf, crcTable), nil
}
