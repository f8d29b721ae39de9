package expire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
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
	seed maphash.Seed
	seen map[uint64]struct{}
	mem  []string
	f    *os.File // the spill file, unlinked at creation
	w    *bufio.Writer
	size int64 // bytes written to f
	n    int
}

// NewPathList returns an empty list.
func NewPathList() *PathList {
	return &PathList{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
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
	l.n++
	if l.f == nil && len(l.mem) < spillAfter {
		l.mem = append(l.mem, path)
		return nil
	}
	if l.f == nil {
		if err := l.spill(); err != nil {
			return err
		}
	}
	return l.write(path)
}

// spill moves the in-memory paths to a new temporary file. The file is
// unlinked right away: only the open descriptor keeps it, so no crash
// leaves it behind.
func (l *PathList) spill() error {
	f, err := os.CreateTemp("", "compactd-expire-*")
	if err != nil {
		return fmt.Errorf("spool the data files to delete: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return fmt.Errorf("spool the data files to delete: %w", err)
	}
	l.f, l.w = f, bufio.NewWriterSize(f, 256<<10)
	mem := l.mem
	l.mem = nil
	for _, p := range mem {
		if err := l.write(p); err != nil {
			return err
		}
	}
	return nil
}

// write appends one length-prefixed record: a path may hold any byte.
func (l *PathList) write(path string) error {
	var hdr [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(hdr[:], uint64(len(path)))
	if _, err := l.w.Write(hdr[:k]); err != nil {
		return fmt.Errorf("spool the data files to delete: %w", err)
	}
	if _, err := l.w.WriteString(path); err != nil {
		return fmt.Errorf("spool the data files to delete: %w", err)
	}
	l.size += int64(k + len(path))
	return nil
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
	return l.n
}

// Each calls fn with every path in the order they were added, stopping at
// the first error. The list may not be added to while Each runs.
func (l *PathList) Each(fn func(path string) error) error {
	if l == nil {
		return nil
	}
	if l.f == nil {
		for _, p := range l.mem {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("spool the data files to delete: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.size), 256<<10)
	var buf []byte
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read back the spooled data files: %w", err)
		}
		if n > 1<<20 {
			return fmt.Errorf("read back the spooled data files: a record of %d bytes", n)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read back the spooled data files: %w", err)
		}
		if err := fn(string(buf)); err != nil {
			return err
		}
	}
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
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.w = nil, nil
	return err
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
