package sched

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
)

// LockFile names the daemon lock in the warehouse root (Paimon catalogs
// only look at <db>.db directories there). The lock is a sequence of
// generation files LockFile.<N> (N zero-padded to 20 digits); the highest
// generation is the holder. LockFile itself is the lock of compactd
// versions before generations: it is honoured as a foreign lock, and the
// holder keeps a copy of its lease there so that such a version does not
// start beside it.
const LockFile = "_compactd.lock"

// ErrLocked means another live daemon holds the warehouse.
var ErrLocked = errors.New("warehouse is locked by another compactd daemon")

// ErrLockLost means the lock was taken over, or our lease lapsed without a
// renewal; the daemon must stop changing the warehouse.
var ErrLockLost = errors.New("warehouse lock lost")

// lease is the content of a lock file.
type lease struct {
	Owner      string    `json:"owner"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	Generation int64     `json:"generation,omitempty"`
	Released   bool      `json:"released,omitempty"`
	Acquired   time.Time `json:"acquired"`
	Expires    time.Time `json:"expires"`
}

// Lock is a lease on a warehouse, built on the one atomic primitive every
// store has (fileio.WriteExclusive: link(2) locally, If-None-Match: * on
// S3), with no compare-and-swap:
//
//   - The holder is the highest generation LockFile.<N>. Taking over an
//     expired generation N means creating N+1 exclusively, so of any
//     number of takers exactly one wins; the winner then deletes the older
//     generations.
//   - The holder renews by rewriting its own generation file (no one else
//     ever writes it), then lists the generations: a higher one means the
//     lock was taken over.
//   - A lease is expired only when both its Expires (the holder's clock)
//     and its file's mtime plus the lease duration (the store's clock) have
//     passed on the taker's clock: either clock running slow only delays a
//     take-over. Torn or unreadable files are judged by mtime alone.
//   - The holder counts its lease from the start of its last successful
//     renewal and treats it as lost at that point plus the lease minus a
//     safety margin (Deadline): a renewal that starts or ends after the
//     deadline does not count, so a holder that renews late, after a pause,
//     or keeps failing never acts on a lease a taker may consider expired.
//     This holds while the clocks of daemons and store differ by less than
//     the margin.
type Lock struct {
	fio       fileio.FileIO
	warehouse string
	lease     time.Duration
	margin    time.Duration
	now       func() time.Time

	// op serializes Heartbeat and Release: a renewal in flight never
	// lands after a release.
	op       sync.Mutex
	mu       sync.Mutex
	me       lease
	deadline time.Time
	lost     error
}

// LockMargin is the part of the lease a holder gives up for safety: it
// stops at lease-end minus the margin, so that its jobs are cancelled
// before anyone may take the lock over.
func LockMargin(leaseFor time.Duration) time.Duration { return leaseFor / 4 }

// AcquireLock takes the warehouse lock or fails with ErrLocked naming the
// holder. A lock whose lease expired is taken over.
func AcquireLock(ctx context.Context, fio fileio.FileIO, warehouse string, leaseFor time.Duration, now func() time.Time) (*Lock, error) {
	if now == nil {
		now = time.Now
	}
	host, _ := os.Hostname()
	l := &Lock{fio: fio, warehouse: warehouse, lease: leaseFor, margin: LockMargin(leaseFor), now: now,
		me: lease{Owner: uuid.NewString(), Host: host, PID: os.Getpid(), Acquired: now().UTC()}}
	var createErr error // of the last attempt, if its outcome is unknown
	for attempt := 0; attempt < 5; attempt++ {
		createErr = nil
		gens, legacy, err := l.list(ctx)
		if err != nil {
			return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, err)
		}
		if legacy != nil {
			cur, err := l.judge(ctx, *legacy)
			if errors.Is(err, fileio.ErrNotExist) {
				cur, err = nil, nil // released meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, err)
			}
			if cur != nil && cur.Owner != l.me.Owner && cur.Generation == 0 {
				return nil, fmt.Errorf("%w: %s (an older compactd: owner %s, host %s, pid %d, lease until %s)",
					ErrLocked, legacy.Path, cur.Owner, cur.Host, cur.PID, cur.Expires.Format(time.RFC3339))
			}
		}
		var top int64
		if len(gens) > 0 {
			g := gens[len(gens)-1]
			top = g.gen
			cur, err := l.judge(ctx, g.info)
			if errors.Is(err, fileio.ErrNotExist) {
				continue // released or cleaned up meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, err)
			}
			if cur != nil && cur.Owner == l.me.Owner {
				// Our own create of an earlier attempt landed although it
				// reported an error.
				return l.won(ctx, top)
			}
			if cur != nil {
				return nil, fmt.Errorf("%w: %s (owner %s, host %s, pid %d, lease until %s)",
					ErrLocked, g.info.Path, cur.Owner, cur.Host, cur.PID, cur.Expires.Format(time.RFC3339))
			}
		}
		next := top + 1
		start := l.now()
		l.me.Generation = next
		l.me.Expires = start.Add(leaseFor).UTC()
		data, _ := json.Marshal(l.me)
		err = fio.WriteExclusive(ctx, l.genPath(next), data)
		if errors.Is(err, fileio.ErrExist) {
			continue // another taker won generation next: judge it
		}
		if err != nil {
			// The create may have landed: the next attempt finds out.
			if ctx.Err() != nil {
				return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, err)
			}
			createErr = err
			continue
		}
		l.deadline = start.Add(leaseFor - l.margin)
		return l.won(ctx, next)
	}
	if createErr != nil {
		return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, createErr)
	}
	return nil, fmt.Errorf("%w: %s (contended)", ErrLocked, fileio.Join(warehouse, LockFile))
}

// won finishes an acquisition of generation gen. A taker that judged an
// old listing (it paused between listing and creating) can create a
// generation under the top one, which a newer holder already deleted:
// a listing after the create tells, as the top generation is never
// deleted (Release marks it released instead), so generations only grow.
// Then the copy for older versions, and the older generations deleted.
func (l *Lock) won(ctx context.Context, gen int64) (*Lock, error) {
	l.me.Generation = gen
	if l.deadline.IsZero() {
		// Recovered from an ambiguous create: count from its Expires.
		l.deadline = l.me.Expires.Add(-l.margin)
	}
	abandon := func(err error) (*Lock, error) {
		_ = l.fio.Delete(context.WithoutCancel(ctx), l.genPath(gen))
		return nil, err
	}
	gens, _, err := l.list(ctx)
	if err != nil {
		return abandon(fmt.Errorf("lock warehouse %s: confirm: %w", l.warehouse, err))
	}
	if len(gens) == 0 {
		return abandon(fmt.Errorf("lock warehouse %s: the generation we created, %s, is not listed", l.warehouse, l.genPath(gen)))
	}
	if top := gens[len(gens)-1]; top.gen > gen {
		return abandon(fmt.Errorf("%w: %s (generation %s is newer than the one we created)", ErrLocked, top.info.Path, top.info.Name))
	}
	if err := l.writeLegacy(ctx, l.me); err != nil {
		return abandon(fmt.Errorf("lock warehouse %s: %w", l.warehouse, err))
	}
	l.deleteBelow(ctx, gen, gens)
	return l, nil
}

// writeLegacy keeps our lease in LockFile, in the format older versions
// read, so that they refuse to start while we hold the warehouse.
func (l *Lock) writeLegacy(ctx context.Context, me lease) error {
	data, _ := json.Marshal(me)
	if err := fileio.WriteFile(ctx, l.fio, fileio.Join(l.warehouse, LockFile), data); err != nil {
		return fmt.Errorf("write %s: %w", LockFile, err)
	}
	return nil
}

// deleteBelow deletes the generations under gen (best effort: a leftover
// is deleted by the next holder).
func (l *Lock) deleteBelow(ctx context.Context, gen int64, gens []generation) {
	for _, g := range gens {
		if g.gen < gen {
			_ = l.fio.Delete(ctx, g.info.Path)
		}
	}
}

type generation struct {
	gen  int64
	info fileio.FileInfo
}

func (l *Lock) genPath(gen int64) string {
	return fileio.Join(l.warehouse, fmt.Sprintf("%s.%020d", LockFile, gen))
}

// list returns the generation files, lowest first, and the legacy lock
// file if there is one.
func (l *Lock) list(ctx context.Context) ([]generation, *fileio.FileInfo, error) {
	entries, err := l.fio.List(ctx, l.warehouse)
	if err != nil {
		return nil, nil, err
	}
	var gens []generation
	var legacy *fileio.FileInfo
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		if e.Name == LockFile {
			e := e
			legacy = &e
			continue
		}
		num, ok := strings.CutPrefix(e.Name, LockFile+".")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		gens = append(gens, generation{n, e})
	}
	slices.SortFunc(gens, func(a, b generation) int { return int(min(max(a.gen-b.gen, -1), 1)) })
	return gens, legacy, nil
}

// judge reads a lock file: nil if its lease expired, the lease if it is
// live (an unreadable file that is still young is live as "unknown").
func (l *Lock) judge(ctx context.Context, info fileio.FileInfo) (*lease, error) {
	raw, err := fileio.ReadFile(ctx, l.fio, info.Path)
	if err != nil {
		return nil, err
	}
	now := l.now()
	byStore := !now.Before(info.ModTime.Add(l.lease))
	var cur lease
	if err := json.Unmarshal(raw, &cur); err != nil || cur.Owner == "" {
		// Torn or foreign content: judged by its age in the store.
		if byStore {
			return nil, nil
		}
		return &lease{Owner: "unknown (unreadable lock file)", Expires: info.ModTime.Add(l.lease)}, nil
	}
	if cur.Owner == l.me.Owner {
		return &cur, nil
	}
	if cur.Released || byStore && !now.Before(cur.Expires) {
		return nil, nil
	}
	return &cur, nil
}

// Owner identifies this holder.
func (l *Lock) Owner() string { return l.me.Owner }

// Path is the holder's generation file.
func (l *Lock) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.genPath(l.me.Generation)
}

// Generation is the holder's generation.
func (l *Lock) Generation() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.me.Generation
}

// Deadline is when this holder must consider its lease lost unless a
// renewal succeeds before: the start of the last successful renewal plus
// the lease minus the safety margin (LockMargin).
func (l *Lock) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Expires is the lease end written at the last successful renewal.
func (l *Lock) Expires() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.me.Expires
}

// Err is why the lock is no longer held (taken over, lapsed, released), nil
// while it is.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Heartbeat renews the lease. It fails with ErrLockLost if the lock was
// taken over or the lease's deadline passed before the renewal completed
// (once lost, always lost); other errors are transient and leave the
// deadline where it was.
func (l *Lock) Heartbeat(ctx context.Context) error {
	l.op.Lock()
	defer l.op.Unlock()
	l.mu.Lock()
	if l.lost != nil {
		l.mu.Unlock()
		return l.lost
	}
	me, deadline := l.me, l.deadline
	l.mu.Unlock()
	start := l.now()
	if !start.Before(deadline) {
		return l.setLost(fmt.Errorf("%w: %s: lease not renewed before %s", ErrLockLost, l.genPath(me.Generation), deadline.Format(time.RFC3339Nano)))
	}
	me.Expires = start.Add(l.lease).UTC()
	data, _ := json.Marshal(me)
	if err := fileio.WriteFile(ctx, l.fio, l.genPath(me.Generation), data); err != nil {
		return fmt.Errorf("renew %s: %w", l.genPath(me.Generation), err)
	}
	gens, _, err := l.list(ctx)
	if err != nil {
		return fmt.Errorf("renew %s: confirm: %w", l.genPath(me.Generation), err)
	}
	if len(gens) > 0 && gens[len(gens)-1].gen > me.Generation {
		top := gens[len(gens)-1]
		owner := "?"
		if raw, err := fileio.ReadFile(ctx, l.fio, top.info.Path); err == nil {
			var cur lease
			if json.Unmarshal(raw, &cur) == nil {
				owner = cur.Owner
			}
		}
		// Our file is ours alone: remove it rather than leave it to the
		// new holder.
		_ = l.fio.Delete(ctx, l.genPath(me.Generation))
		return l.setLost(fmt.Errorf("%w: %s taken over by %s (owner %q)", ErrLockLost, l.genPath(me.Generation), top.info.Name, owner))
	}
	if err := l.writeLegacy(ctx, me); err != nil {
		return fmt.Errorf("renew %s: %w", l.genPath(me.Generation), err)
	}
	if end := l.now(); !end.Before(deadline) {
		// A taker may have judged the lease before our write landed.
		return l.setLost(fmt.Errorf("%w: %s: renewal completed at %s, after the lease's deadline %s", ErrLockLost,
			l.genPath(me.Generation), end.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano)))
	}
	l.mu.Lock()
	l.me.Expires = me.Expires
	l.deadline = start.Add(l.lease - l.margin)
	l.mu.Unlock()
	l.deleteBelow(ctx, me.Generation, gens)
	return nil
}

func (l *Lock) setLost(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = err
	}
	return l.lost
}

// Release gives the lock up: our generation file is rewritten as released
// (kept, so that the highest generation never goes away and generations
// only grow; the next holder takes the next one and deletes it), and our
// copy in LockFile is deleted if it still holds our lease. A lost lock is
// left as it is: a newer generation exists.
func (l *Lock) Release(ctx context.Context) error {
	l.op.Lock()
	defer l.op.Unlock()
	l.mu.Lock()
	me, lost := l.me, l.lost
	if l.lost == nil {
		l.lost = fmt.Errorf("%w: %s: released", ErrLockLost, l.genPath(me.Generation))
	}
	l.mu.Unlock()
	legacy := fileio.Join(l.warehouse, LockFile)
	var errs []error
	if lost == nil {
		me.Released = true
		me.Expires = l.now().UTC()
		data, _ := json.Marshal(me)
		if err := fileio.WriteFile(ctx, l.fio, l.genPath(me.Generation), data); err != nil {
			errs = append(errs, err)
		}
	}
	if raw, err := fileio.ReadFile(ctx, l.fio, legacy); err == nil {
		var cur lease
		if json.Unmarshal(raw, &cur) == nil && cur.Owner == me.Owner {
			errs = append(errs, l.fio.Delete(ctx, legacy))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release lock of %s: %w", l.warehouse, err)
	}
	return nil
}
