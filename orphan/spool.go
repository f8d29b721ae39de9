package orphan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"

	records "github.com/compactd/compactd/internal/spool"
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
	seed  maphash.Seed
	keys  []uint64 // hash of each candidate's name, in order until refSet sorts them
	files *records.List[File]
}

func newSpool() *spool {
	return &spool{seed: maphash.MakeSeed(), files: records.New(spillAfter, "orphan candidates", encodeFile, decodeFile)}
}

// hashName is the name hash of spool and refSet (a variable so that a test
// can force collisions).
var hashName = func(seed maphash.Seed, name string) uint64 { return maphash.String(seed, name) }

func (s *spool) hash(name string) uint64 { return hashName(s.seed, name) }

// add appends a candidate.
func (s *spool) add(f File) error {
	s.keys = append(s.keys, s.hash(f.Name))
	return s.files.Add(f)
}

// encodeFile is a spilled candidate: the path (length-prefixed: a path may
// hold any byte), the size and the modification time in time's binary
// form, which keeps the instant and the zone offset (UTC and Local as
// such), so a spilled candidate encodes in the report exactly as a kept
// one. The name is not stored: a candidate's name is its path's last
// element.
func encodeFile(dst []byte, f File) ([]byte, error) {
	mt, err := f.ModTime.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.Path)))
	dst = append(dst, f.Path...)
	dst = binary.AppendVarint(dst, f.Size)
	return append(dst, mt...), nil
}

func decodeFile(rec []byte) (File, error) {
	n, k := binary.Uvarint(rec)
	if k <= 0 || n > uint64(len(rec)-k) {
		return File{}, errors.New("a damaged path")
	}
	rec = rec[k:]
	f := File{Path: string(rec[:n])}
	rec = rec[n:]
	size, k := binary.Varint(rec)
	if k <= 0 {
		return File{}, errors.New("a damaged size")
	}
	f.Size = size
	if err := f.ModTime.UnmarshalBinary(rec[k:]); err != nil {
		return File{}, err
	}
	f.Name = baseName(f.Path)
	return f, nil
}

// Len is the number of candidates.
func (s *spool) Len() int { return s.files.Len() }

// each calls fn with every candidate in the order they were added,
// stopping at the first error. The spool may not be added to meanwhile.
func (s *spool) each(fn func(File) error) error { return s.files.Each(fn) }

// spilled reports whether the candidates moved to the temporary file.
func (s *spool) spilled() bool { return s.files.Spilled() }

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
func (s *spool) close() error { return s.files.Close() }

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
