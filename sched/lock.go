package sched

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
)

// LockFile is the name of the daemon lock in the warehouse root. Paimon
// catalogs only look at <db>.db directories there.
const LockFile = "_compactd.lock"

// ErrLocked means another live daemon holds the warehouse.
var ErrLocked = errors.New("warehouse is locked by another compactd daemon")

// ErrLockLost means the lock was taken over (our lease expired, e.g. after
// a long pause) or deleted; the daemon must stop changing the warehouse.
var ErrLockLost = errors.New("warehouse lock lost")

// lease is the content of the lock file. The holder renews Expires; a
// holder that died stops renewing, and once Expires has passed another
// daemon may take the lock over.
type lease struct {
	Owner    string    `json:"owner"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Acquired time.Time `json:"acquired"`
	Expires  time.Time `json:"expires"`
}

// Lock is a lease on a warehouse, taken with an exclusive create (the same
// primitive that publishes snapshots, so it works on S3 as on local disks).
type Lock struct {
	fio   fileio.FileIO
	path  string
	lease time.Duration
	me    lease
	now   func() time.Time
}

// AcquireLock takes the warehouse lock or fails with ErrLocked naming the
// holder. A lock whose lease expired is taken over.
func AcquireLock(ctx context.Context, fio fileio.FileIO, warehouse string, leaseFor time.Duration, now func() time.Time) (*Lock, error) {
	if now == nil {
		now = time.Now
	}
	host, _ := os.Hostname()
	l := &Lock{fio: fio, path: fileio.Join(warehouse, LockFile), lease: leaseFor, now: now,
		me: lease{Owner: uuid.NewString(), Host: host, PID: os.Getpid(), Acquired: now().UTC()}}
	for attempt := 0; attempt < 3; attempt++ {
		l.me.Expires = now().Add(leaseFor).UTC()
		data, _ := json.Marshal(l.me)
		err := fio.WriteExclusive(ctx, l.path, data)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, fileio.ErrExist) {
			return nil, fmt.Errorf("lock warehouse %s: %w", warehouse, err)
		}
		cur, raw, err := l.read(ctx)
		if errors.Is(err, fileio.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			// An unreadable lock (torn write of a crashed holder) is
			// judged by its age in the store instead.
			st, serr := fio.Stat(ctx, l.path)
			if serr != nil {
				continue
			}
			cur = lease{Owner: "unknown", Expires: st.ModTime.Add(leaseFor)}
		}
		if now().Before(cur.Expires) {
			return nil, fmt.Errorf("%w: %s (owner %s, host %s, pid %d, lease until %s)", ErrLocked, l.path, cur.Owner, cur.Host, cur.PID, cur.Expires.Format(time.RFC3339))
		}
		// Expired: delete it only if it is still the expired lease we read,
		// then race for the exclusive create like anyone else.
		if _, raw2, _ := l.read(ctx); raw2 != nil && bytes.Equal(raw, raw2) {
			if err := fio.Delete(ctx, l.path); err != nil {
				return nil, fmt.Errorf("lock warehouse %s: remove expired lock: %w", warehouse, err)
			}
		}
	}
	return nil, fmt.Errorf("%w: %s (contended)", ErrLocked, l.path)
}

func (l *Lock) read(ctx context.Context) (lease, []byte, error) {
	raw, err := fileio.ReadFile(ctx, l.fio, l.path)
	if err != nil {
		return lease{}, nil, err
	}
	var cur lease
	if err := json.Unmarshal(raw, &cur); err != nil {
		return lease{}, raw, fmt.Errorf("lock %s: %w", l.path, err)
	}
	return cur, raw, nil
}

// Owner identifies this holder.
func (l *Lock) Owner() string { return l.me.Owner }

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Heartbeat renews the lease. It fails with ErrLockLost if the file no
// longer holds our lease.
func (l *Lock) Heartbeat(ctx context.Context) error {
	cur, _, err := l.read(ctx)
	if errors.Is(err, fileio.ErrNotExist) || (err == nil && cur.Owner != l.me.Owner) {
		return fmt.Errorf("%w: %s now held by %q", ErrLockLost, l.path, cur.Owner)
	}
	if err != nil {
		return err // transient: try again at the next beat
	}
	l.me.Expires = l.now().Add(l.lease).UTC()
	data, _ := json.Marshal(l.me)
	return fileio.WriteFile(ctx, l.fio, l.path, data)
}

// Release deletes the lock if it is still ours.
func (l *Lock) Release(ctx context.Context) error {
	cur, _, err := l.read(ctx)
	if err != nil || cur.Owner != l.me.Owner {
		return nil
	}
	return l.fio.Delete(ctx, l.path)
}
