// Package spool is an append-only list of records that stays in memory up
// to a threshold and past it moves to an unlinked temporary file, read back
// in order as often as needed. Expiry (the data files to delete) and
// orphan cleanup (the candidates) use it so that a run over a million
// files holds a bounded amount of memory; the temporary file disappears
// with its descriptor, so no crash leaves it behind.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxRecord bounds a record read back: the file is ours, so a longer one
// means it was damaged.
const maxRecord = 1 << 20

// List holds values of T; Encode appends one value's bytes and Decode
// parses them back (a record is length-prefixed, so a value may hold any
// byte). The zero value is not usable; New makes one.
type List[T any] struct {
	after  int
	what   string // for errors: what the list holds
	encode func(dst []byte, v T) ([]byte, error)
	decode func(rec []byte) (T, error)
	mem    []T
	f      *os.File // the spill file, unlinked at creation
	w      *bufio.Writer
	size   int64 // bytes written to f
	n      int
	buf    []byte
}

// New returns an empty list that spills past `after` values; what names
// the values in errors ("the orphan candidates").
func New[T any](after int, what string, encode func([]byte, T) ([]byte, error), decode func([]byte) (T, error)) *List[T] {
	return &List[T]{after: after, what: what, encode: encode, decode: decode}
}

// Add appends v.
func (l *List[T]) Add(v T) error {
	l.n++
	if l.f == nil && len(l.mem) < l.after {
		l.mem = append(l.mem, v)
		return nil
	}
	if l.f == nil {
		if err := l.spill(); err != nil {
			return err
		}
	}
	return l.write(v)
}

func (l *List[T]) spill() error {
	f, err := os.CreateTemp("", "compactd-spool-*")
	if err != nil {
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	l.f, l.w = f, bufio.NewWriterSize(f, 256<<10)
	mem := l.mem
	l.mem = nil
	for _, v := range mem {
		if err := l.write(v); err != nil {
			return err
		}
	}
	return nil
}

func (l *List[T]) write(v T) error {
	rec, err := l.encode(l.buf[:0], v)
	if err != nil {
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	l.buf = rec
	var hdr [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(hdr[:], uint64(len(rec)))
	if _, err := l.w.Write(hdr[:k]); err != nil {
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	if _, err := l.w.Write(rec); err != nil {
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	l.size += int64(k + len(rec))
	return nil
}

// Len is the number of values added.
func (l *List[T]) Len() int { return l.n }

// Each calls fn with every value in the order they were added, stopping at
// the first error. The list may not be added to while Each runs.
func (l *List[T]) Each(fn func(T) error) error {
	if l.f == nil {
		for _, v := range l.mem {
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("spool %s: %w", l.what, err)
	}
	bad := func(err error) error { return fmt.Errorf("read back the spooled %s: %w", l.what, err) }
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.size), 256<<10)
	var rec []byte
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return bad(err)
		}
		if n > maxRecord {
			return bad(fmt.Errorf("a record of %d bytes", n))
		}
		if uint64(cap(rec)) < n {
			rec = make([]byte, n)
		}
		rec = rec[:n]
		if _, err := io.ReadFull(r, rec); err != nil {
			return bad(err)
		}
		v, err := l.decode(rec)
		if err != nil {
			return bad(err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}

// Close releases the temporary file, if any.
func (l *List[T]) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.w = nil, nil
	return err
}

// Spilled reports whether the values moved to the temporary file.
func (l *List[T]) Spilled() bool { return l.f != nil }
