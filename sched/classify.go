package sched

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// Class is how the scheduler treats a failed job.
type Class int

const (
	// Unknown errors are retried with backoff like transient ones, but a
	// table failing this way Retry.Attempts times in a row is halted.
	Unknown Class = iota
	// Transient errors (network and storage hiccups, commit conflicts, a
	// spent time budget) are retried with backoff, never halting. A missing
	// file is Unknown: a concurrent expiration explains it once, a broken
	// table every time.
	Transient
	// Permanent errors (unsupported table, invalid options, corrupt files,
	// metadata expire or orphan cleanup must read but cannot) halt the
	// table until `compactd resume`.
	Permanent
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	}
	return "unknown"
}

// PermanentError marks an error retrying cannot fix.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// permanent wraps err as permanent.
func permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// Classify decides how a job failure is handled.
func Classify(err error) Class {
	var perm *PermanentError
	var damaged *table.DamagedError
	var conflict *table.ConflictError
	var netErr net.Error
	switch {
	case errors.As(err, &perm), errors.As(err, &damaged):
		// A damaged table stays damaged: expire and orphan refused to delete
		// anything, and retrying would only refuse again.
		return Permanent
	case errors.Is(err, table.ErrReadOnly):
		// A table compactd reads but cannot write (a manifest codec it has
		// no encoder for) stays so until its options change.
		return Permanent
	case errors.Is(err, table.ErrInvalidName), errors.Is(err, fileio.ErrOutsideRoot):
		// A table name or directory that leads out of the warehouse
		// stays refused however often it is retried.
		return Permanent
	case errors.As(err, &conflict), errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return Transient
	}
	return Unknown
}
