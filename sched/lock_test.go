package sched

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func TestASecondHolderIsRefusedUntilTheLeaseOfADeadHolderExpires(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	a, err := AcquireLock(ctx, fio, wh, 30*time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, 30*time.Second, now); !errors.Is(err, ErrLocked) {
		t.Fatalf("second holder: want ErrLocked, got %v", err)
	}
	// a renews; 20 s later the lease still holds.
	clock = clock.Add(20 * time.Second)
	if err := a.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(20 * time.Second)
	if _, err := AcquireLock(ctx, fio, wh, 30*time.Second, now); !errors.Is(err, ErrLocked) {
		t.Fatalf("renewed lease: want ErrLocked, got %v", err)
	}
	// a dies (stops renewing): after the lease b takes over, and a learns
	// it lost the lock at its next beat.
	clock = clock.Add(31 * time.Second)
	b, err := AcquireLock(ctx, fio, wh, 30*time.Second, now)
	if err != nil {
		t.Fatalf("expired lease not taken over: %v", err)
	}
	if err := a.Heartbeat(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("old holder's heartbeat: want ErrLockLost, got %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := fileio.Exists(ctx, fio, b.Path()); !ok {
		t.Fatal("the old holder's release removed the new holder's lock")
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, 30*time.Second, now); err != nil {
		t.Fatalf("released lock: %v", err)
	}
}

func TestAnUnreadableLockIsJudgedByItsAge(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	if err := fio.WriteExclusive(ctx, fileio.Join(wh, LockFile), []byte("{torn")); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, time.Minute, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("fresh torn lock: want ErrLocked, got %v", err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	if _, err := AcquireLock(ctx, fio, wh, time.Minute, later); err != nil {
		t.Fatalf("old torn lock not taken over: %v", err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"a commit conflict is transient", fmt.Errorf("compact: %w", &table.ConflictError{Table: "t", Reason: "x"}), Transient},
		{"a spent time budget is transient", fmt.Errorf("x: %w", context.DeadlineExceeded), Transient},
		{"an unsupported table is permanent", permanent(errors.New("deletion vectors")), Permanent},
		{"a table outside the warehouse is permanent", fmt.Errorf("open: %w", fileio.ErrOutsideRoot), Permanent},
		{"an invalid table name is permanent", fmt.Errorf("open: %w", table.ErrInvalidName), Permanent},
		{"a missing file is unknown", fmt.Errorf("open: %w", fileio.ErrNotExist), Unknown},
		{"damaged metadata found by expire or orphan is permanent", fmt.Errorf("orphan t: %w",
			&expire.DamagedError{Table: "t", File: "manifest-list-1", By: "snapshot 3", Err: fmt.Errorf("read: %w", fileio.ErrNotExist)}), Permanent},
		{"anything else is unknown", errors.New("parquet: bad magic"), Unknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.err); got != c.want {
				t.Fatalf("Classify(%v) = %s, want %s", c.err, got, c.want)
			}
		})
	}
}
