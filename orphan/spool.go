package orphan

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"os"
	"slices"
)

// spillAfter (a variable for tests) is how many candidates a spool keeps in
// memory before it moves them to a temporary file. Small tables (every
// test, most daemon runs) never touch the disk.
var spillAfter = 1 << 16

// deleteBatch (a variable for tests) is how many paths Run hands to one
// concurrent deletion: the deletion phase holds one batch of paths, not all.
var deleteBatch = 4096

// spool is the ordered list of a run's candidates: files that are old
// enough, recognised and inside the table, to be deleted unless referenced.
// In a table that is mostly live data nearly every file is a candidate, so
// at a million files the File values alone would take ~200 MiB. Past
// spillAfter candidates a spool keeps them in an unlinked temporary file,
// read back in order as often as needed, and in memory only the 64-bit hash
// of each name (for the reference check, refSet).
//
// Close releases the temporary file.
type spool struct {
	seed maphash.Seed
	keys []uint64 // hash of each candidate's name, in order until refSet sorts them
	mem  []File
	f    *os.File // the spill file, unlinked at creation
	w    *bufio.Writer
	size int64  // bytes written to f
	buf  []byte // one record being written
	n    int
}

func newSpool() *spool { return &spool{seed: maphash.MakeSeed()} }

// hashName is the name hash of spool and refSet (a variable so that a test
// can force collisions).
var hashName = func(seed maphash.Seed, name string) uint64 { return maphash.String(seed, name) }

func (s *spool) hash(name string) uint64 { return hashName(s.seed, name) }

// add appends a candidate.
func (s *spool) add(f File) error {
	s.keys = append(s.keys, s.hash(f.Name))
	s.n++
	if s.f == nil && len(s.mem) < spillAfter {
		s.mem = append(s.mem, f)
		return nil
	}
	if s.f == nil {
		if err := s.spill(); err != nil {
			return err
		}
	}
	return s.write(f)
}

// spill moves the in-memory candidates to a new temporary file. The file
// is unlinked right away: only the open descriptor keeps it, so no crash
// leaves it behind.
func (s *spool) spill() error {
	f, err := os.CreateTemp("", "compactd-orphan-*")
	if err != nil {
		return fmt.Errorf("spool the orphan candidates: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return fmt.Errorf("spool the orphan candidates: %w", err)
	}
	s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
	mem := s.mem
	s.mem = nil
	for _, c := range mem {
		if err := s.write(c); err != nil {
			return err
		}
	}
	return nil
}

// write appends one record: the path (length-prefixed: a path may hold any
// byte), the size and the modification time in time's binary form, which
// keeps the instant and the zone offset (UTC and Local as such), so a
// spilled candidate encodes in the report exactly as a kept one. The
// name is not stored: a candidate's name is its path's last element.
func (s *spool) write(f File) error {
	mt, err := f.ModTime.MarshalBinary()
	if err != nil {
		return fmt.Errorf("spool the orphan candidate %s: %w", f.Path, err)
	}
	buf := binary.AppendUvarint(s.buf[:0], uint64(len(f.Path)))
	buf = append(buf, f.Path...)
	buf = binary.AppendVarint(buf, f.Size)
	buf = binary.AppendUvarint(buf, uint64(len(mt)))
	buf = append(buf, mt...)
	s.buf = buf
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("spool the orphan candidates: %w", err)
	}
	s.size += int64(len(buf))
	return nil
}

// Len is the number of candidates.
func (s *spool) Len() int { return s.n }

// each calls fn with every candidate in the order they were added,
// stopping at the first error. The spool may not be added to meanwhile.
func (s *spool) each(fn func(File) error) error {
	if s.f == nil {
		for _, f := range s.mem {
			if err := fn(f); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spool the orphan candidates: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.size), 256<<10)
	bad := func(err error) error { return fmt.Errorf("read back the spooled orphan candidates: %w", err) }
	readBytes := func(max uint64) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > max {
			return nil, fmt.Errorf("a record of %d bytes", n)
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return b, err
	}
	for {
		p, err := readBytes(1 << 20)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return bad(err)
		}
		size, err := binary.ReadVarint(r)
		if err != nil {
			return bad(err)
		}
		mt, err := readBytes(64)
		if err != nil {
			return bad(err)
		}
		f := File{Path: string(p), Size: size}
		if err := f.ModTime.UnmarshalBinary(mt); err != nil {
			return bad(err)
		}
		f.Name = baseName(f.Path)
		if err := fn(f); err != nil {
			return err
		}
	}
}

// refs returns the set of the candidates' name hashes, to be marked by the
// reference walk. The spool's own hash list becomes the set's (sorted):
// a spool must not be added to afterwards.
func (s *spool) refs() *refSet {
	keys := s.keys
	s.keys = nil
	slices.Sort(keys)
	keys = slices.Compact(keys)
	return &refSet{seed: s.seed, keys: slices.Clip(keys), marked: make([]uint64, (len(keys)+63)/64)}
}

// close releases the temporary file, if any.
func (s *spool) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f, s.w = nil, nil
	return err
}

// refSet records which candidate names something references: the sorted
// hashes of the candidate names and one bit each, 8 bytes and a bit per
// candidate instead of a map of names. Hashing can only err towards keeping
// a file: a candidate whose hash equals that of a referenced name (another
// candidate's or any other) counts as referenced, never the reverse.
type refSet struct {
	seed   maphash.Seed
	keys   []uint64
	marked []uint64 // bit i: keys[i] is referenced
}

// mark records that name is referenced (names that are not candidates are
// ignored).
func (r *refSet) mark(name string) {
	if i, ok := slices.BinarySearch(r.keys, hashName(r.seed, name)); ok {
		r.marked[i/64] |= 1 << (i % 64)
	}
}

// referenced reports whether a name with the hash of name was marked.
func (r *refSet) referenced(name string) bool {
	i, ok := slices.BinarySearch(r.keys, hashName(r.seed, name))
	return ok && r.marked[i/64]&(1<<(i%64)) != 0
}

// count is the number of marked hashes (for the log).
func (r *refSet) count() int {
	n := 0
	for _, w := range r.marked {
		n += bits.OnesCount64(w)
	}
	return n
}
