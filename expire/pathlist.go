package expire

import (
	"errors"
	"hash/maphash"

	"github.com/compactd/compactd/internal/spool"
)

// spillAfter (a variable for tests) is how many paths a PathList keeps in memory before it moves
// them to a temporary file. Small expirations (every test, most daemon
// runs) never touch the disk.
var spillAfter = 1 << 16

// PathList is the deduplicated, ordered list of data-file paths an
// expiration plans to delete. At a million deleted files the paths alone
// take ~100 MiB and a map deduplicating them as much again, so a PathList
// keeps only a 64-bit hash of each path in memory and, past spillAfter
// paths, the paths themselves in an unlinked temporary file that is read
// back in order. A hash collision can only drop a path (the file is then
// left for orphan cleanup), never add one.
//
// The zero value is not usable; NewPathList makes one. Close releases the
// temporary file.
type PathList struct {
	seed  maphash.Seed
	seen  map[uint64]struct{}
	paths *spool.List[string]
}

// NewPathList returns an empty list.
func NewPathList() *PathList {
	return &PathList{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{},
		paths: spool.New(spillAfter, "data files to delete",
			func(dst []byte, p string) ([]byte, error) { return append(dst, p...), nil },
			func(rec []byte) (string, error) { return string(rec), nil })}
}

// Add appends path unless the list already holds it.
func (l *PathList) Add(path string) error {
	if l.seen == nil {
		return errors.New("expire: PathList.Add after Seal")
	}
	h := maphash.String(l.seed, path)
	if _, dup := l.seen[h]; dup {
		return nil
	}
	l.seen[h] = struct{}{}
	return l.paths.Add(path)
}

// Seal ends adding: the hashes that deduplicated the paths are dropped (at
// a million paths they are ~30 MiB). Add after Seal is an error.
func (l *PathList) Seal() {
	if l != nil {
		l.seen = nil
	}
}

// Len is the number of paths in the list.
func (l *PathList) Len() int {
	if l == nil {
		return 0
	}
	return l.paths.Len()
}

// Each calls fn with every path in the order they were added, stopping at
// the first error. The list may not be added to while Each runs.
func (l *PathList) Each(fn func(path string) error) error {
	if l == nil {
		return nil
	}
	return l.paths.Each(fn)
}

// Strings returns every path. It holds them all in memory: for small
// lists and tests.
func (l *PathList) Strings() ([]string, error) {
	var out []string
	err := l.Each(func(p string) error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// Close releases the temporary file, if any.
func (l *PathList) Close() error {
	if l == nil {
		return nil
	}
	return l.paths.Close()
}

// nameSet is a set of file names kept as 64-bit hashes: membership may
// answer true for a name never added (a collision), never false for one
// added. It serves where a false positive only costs work.
type nameSet struct {
	seed maphash.Seed
	m    map[uint64]struct{}
}

func newNameSet() *nameSet { return &nameSet{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}} }

func (s *nameSet) add(name string) { s.m[maphash.String(s.seed, name)] = struct{}{} }

func (s *nameSet) mayContain(name string) bool {
	_, ok := s.m[maphash.String(s.seed, name)]
	return ok
}
