package sched

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func TestASecondHolderIsRefusedUntilTheLeaseOfADeadHolderExpires(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	// The clock starts at the real time: a lease is judged by the lock
	// file's mtime too.
	clock := time.Now()
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
		{"a write to a read-only table (an unwritable manifest codec) is permanent", fmt.Errorf("expire t: delete x: %w",
			&table.WriteRefusedError{Table: "t", File: "x", Reason: "manifest.compression=bzip2"}), Permanent},
		{"damaged metadata found by expire or orphan is permanent", fmt.Errorf("orphan t: %w",
			&table.DamagedError{Table: "t", File: "manifest-list-1", By: "snapshot 3", Err: fmt.Errorf("read: %w", fileio.ErrNotExist)}), Permanent},
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

// The lock of compactd versions before generations is the single file
// _compactd.lock: a live one keeps a new daemon out, an expired one does
// not; and while a new daemon holds the warehouse it keeps its lease in
// that file, in the old format, so that an old daemon refuses to start.
// A release removes that copy and leaves the generation marked released,
// so the next holder takes the next generation.
func TestTheLockOfOlderVersionsIsHonouredAndKeptForThem(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	legacy := fileio.Join(wh, LockFile)
	old := fmt.Sprintf(`{"owner":"old-daemon","host":"h","pid":1,"acquired":%q,"expires":%q}`,
		time.Now().Format(time.RFC3339Nano), time.Now().Add(time.Minute).Format(time.RFC3339Nano))
	if err := fio.WriteExclusive(ctx, legacy, []byte(old)); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, 30*time.Second, nil); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "old-daemon") {
		t.Fatalf("live lock of an older version: want ErrLocked naming it, got %v", err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	a, err := AcquireLock(ctx, fio, wh, 30*time.Second, later)
	if err != nil {
		t.Fatalf("expired lock of an older version not taken over: %v", err)
	}
	// What an older version reads: a live lease in _compactd.lock.
	raw, err := fileio.ReadFile(ctx, fio, legacy)
	if err != nil {
		t.Fatal(err)
	}
	var seen lease
	if err := json.Unmarshal(raw, &seen); err != nil || seen.Owner != a.Owner() || !seen.Expires.After(later()) {
		t.Fatalf("_compactd.lock while held: %s (%v)", raw, err)
	}
	if err := a.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	raw, _ = fileio.ReadFile(ctx, fio, legacy)
	json.Unmarshal(raw, &seen)
	if !seen.Expires.Equal(a.Expires()) {
		t.Fatalf("_compactd.lock not renewed with the lease: %s, lease until %s", raw, a.Expires())
	}
	gen := a.Generation()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := fileio.Exists(ctx, fio, legacy); ok {
		t.Fatal("release left _compactd.lock behind")
	}
	b, err := AcquireLock(ctx, fio, wh, 30*time.Second, nil)
	if err != nil {
		t.Fatalf("released lock not taken: %v", err)
	}
	if b.Generation() != gen+1 {
		t.Fatalf("after generation %d the next holder has %d", gen, b.Generation())
	}
	if ok, _ := fileio.Exists(ctx, fio, a.Path()); ok {
		t.Fatal("the new holder left the old generation behind")
	}
	// A heartbeat of the released holder cannot bring it back.
	if err := a.Heartbeat(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("heartbeat after release: %v", err)
	}
}

// A generation file that cannot be parsed (a torn write of a store without
// atomic replace, or foreign content) is judged by its mtime.
func TestATornGenerationIsJudgedByItsAge(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := t.TempDir()
	if err := fio.WriteExclusive(ctx, fileio.Join(wh, LockFile+".00000000000000000007"), []byte(`{"own`)); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, time.Minute, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("fresh torn generation: want ErrLocked, got %v", err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	l, err := AcquireLock(ctx, fio, wh, time.Minute, later)
	if err != nil {
		t.Fatalf("old torn generation not taken over: %v", err)
	}
	if l.Generation() != 8 {
		t.Fatalf("generation %d, want 8", l.Generation())
	}
}
