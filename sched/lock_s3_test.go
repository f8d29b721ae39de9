package sched

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
)

// The lock on S3 relies on PutObject with If-None-Match: *. Like the fileio
// S3 tests this needs COMPACTD_TEST_S3_ENDPOINT (scripts/s3-server.sh) and
// fails without it under COMPACTD_REQUIRE_S3=1 (make test).
func TestTheWarehouseLockHoldsOnS3(t *testing.T) {
	fio, newWarehouse := s3Lock(t)
	ctx := context.Background()
	wh := newWarehouse(t)
	a, err := AcquireLock(ctx, fio, wh, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(ctx, fio, wh, time.Minute, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("second holder on S3: want ErrLocked, got %v", err)
	}
	if err := a.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	b, err := AcquireLock(ctx, fio, wh, time.Minute, later)
	if err != nil {
		t.Fatalf("expired lease not taken over on S3: %v", err)
	}
	if err := a.Heartbeat(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("want ErrLockLost, got %v", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The take-over and late-renewal races of lockrace_test.go, on S3: the
// exclusive create there is PutObject with If-None-Match: *.
func TestTakingOverAnExpiredLockHasExactlyOneWinnerOnS3(t *testing.T) {
	fio, newWarehouse := s3Lock(t)
	testTakeOverHasOneWinner(t, fio, newWarehouse)
}

func TestALateRenewalNeverOverlapsATakeOverOnS3(t *testing.T) {
	fio, newWarehouse := s3Lock(t)
	testLateRenewal(t, fio, newWarehouse, 150)
}

// s3Lock is the S3 store of the lock tests and a maker of fresh
// warehouses in it.
func s3Lock(t *testing.T) (fileio.FileIO, func(t *testing.T) string) {
	fio, root := S3TestWarehouse(t, "lock-test-")
	return fio, func(*testing.T) string { return root + "/" + uuid.NewString() }
}

// S3TestWarehouse (exported to the sched_test package) is a fresh prefix
// on the test S3 server (COMPACTD_TEST_S3_*, as the fileio S3 tests; a
// failure without it under COMPACTD_REQUIRE_S3=1) and the store for it.
func S3TestWarehouse(t *testing.T, prefix string) (fileio.FileIO, string) {
	t.Helper()
	ep := os.Getenv("COMPACTD_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COMPACTD_REQUIRE_S3") == "1" {
			t.Fatal("COMPACTD_REQUIRE_S3=1 but COMPACTD_TEST_S3_ENDPOINT is not set")
		}
		t.Skip("needs COMPACTD_TEST_S3_ENDPOINT; run: eval \"$(scripts/s3-server.sh start)\"")
	}
	bucket := os.Getenv("COMPACTD_TEST_S3_BUCKET")
	if bucket == "" {
		bucket = "compactd-test"
	}
	root := "s3://" + bucket + "/" + prefix + uuid.NewString()
	fio, err := fileio.ForWithS3Config(context.Background(), root, fileio.S3Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	return fio, root
}
