package compact_test

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// oneBucketFails fails reading the data files of bucket-1 and holds every
// other bucket's reads until the run is cancelled: the siblings of the
// failing job are mid-read when it fails.
type oneBucketFails struct {
	fileio.FileIO
}

func (f *oneBucketFails) Open(ctx context.Context, path string) (fileio.Reader, error) {
	if !strings.Contains(path, "/bucket-") || !strings.Contains(path, "/data-") {
		return f.FileIO.Open(ctx, path)
	}
	if strings.Contains(path, "/bucket-1/") {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EIO}
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestTheErrorOfAFailedBucketIsItsOwnNotASiblingsCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tb := newTable(t, map[string]string{"bucket": "4"})
	writeRandom(t, tb, rng, "writer", 4, 200, 400, false)
	ctx := context.Background()
	faulty, err := table.OpenPath(ctx, &oneBucketFails{FileIO: tb.FileIO()}, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := reopen(t, tb).LatestSnapshotID(ctx)
	_, err = compact.Run(ctx, faulty, compact.Options{Full: true, Parallelism: 8})
	if err == nil {
		t.Fatal("compaction with an unreadable bucket succeeded")
	}
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "bucket 1") {
		t.Fatalf("the error does not name bucket 1's failure: %v", err)
	}
	if errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("the error carries a sibling's cancellation: %v", err)
	}
	if after, _ := reopen(t, tb).LatestSnapshotID(ctx); after != before {
		t.Fatalf("a snapshot was committed: %d -> %d", before, after)
	}
}

// fullDisk fails every manifest (and manifest list) write with ENOSPC, as
// a full disk does, and counts the writes attempted.
type fullDisk struct {
	fileio.FileIO
	writes atomic.Int64
}

func (f *fullDisk) Create(ctx context.Context, path string) (fileio.Writer, error) {
	if strings.Contains(path, "/manifest/") {
		f.writes.Add(1)
		return nil, &fs.PathError{Op: "create", Path: path, Err: syscall.ENOSPC}
	}
	return f.FileIO.Create(ctx, path)
}

// oneListFails fails the first manifest-list write only: the attempt's
// other metadata files, written beside it, land.
type oneListFails struct {
	fileio.FileIO
	failed atomic.Bool
}

func (f *oneListFails) Create(ctx context.Context, path string) (fileio.Writer, error) {
	if strings.Contains(path, "/manifest/manifest-list-") && f.failed.CompareAndSwap(false, true) {
		return nil, &fs.PathError{Op: "create", Path: path, Err: syscall.ENOSPC}
	}
	return f.FileIO.Create(ctx, path)
}

// The metadata files written beside a failed one are deleted with the
// attempt, as the files written before it always were.
func TestAFailedMetadataWriteDeletesTheAttemptsOtherFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tb := newTable(t, map[string]string{"bucket": "2"})
	writeRandom(t, tb, rng, "writer", 4, 100, 200, false)
	ctx := context.Background()
	var files []string
	_ = filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return err
	})
	before, _ := reopen(t, tb).LatestSnapshotID(ctx)
	faulty, err := table.OpenPath(ctx, &oneListFails{FileIO: tb.FileIO()}, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	_, err = compact.Run(ctx, faulty, compact.Options{Full: true})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "manifest-list-") {
		t.Fatalf("want the ENOSPC of the manifest list write, naming it; got %v", err)
	}
	if after, _ := reopen(t, tb).LatestSnapshotID(ctx); after != before {
		t.Fatalf("a snapshot was committed: %d -> %d", before, after)
	}
	var after []string
	_ = filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			after = append(after, p)
		}
		return err
	})
	if !slices.Equal(after, files) {
		t.Fatalf("the failed attempt left files behind:\nbefore %v\nafter  %v", files, after)
	}
}

func TestAFailureBeforeThePublishIsDefiniteAndLeavesNothingBehind(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tb := newTable(t, map[string]string{"bucket": "2"})
	writeRandom(t, tb, rng, "writer", 4, 100, 200, false)
	ctx := context.Background()
	rows := scanRows(t, tb)
	onDisk := func() []string {
		var names []string
		_ = filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				names = append(names, strings.TrimPrefix(p, tb.Path()))
			}
			return err
		})
		slices.Sort(names)
		return names
	}
	files := onDisk()
	before, _ := reopen(t, tb).LatestSnapshotID(ctx)

	disk := &fullDisk{FileIO: tb.FileIO()}
	faulty, err := table.OpenPath(ctx, disk, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	_, err = compact.Run(ctx, faulty, compact.Options{Full: true})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want the ENOSPC of the manifest write, got %v", err)
	}
	if errors.Is(err, table.ErrCommitOutcomeUnknown) {
		t.Fatalf("a failure before the publish is reported as an unknown outcome: %v", err)
	}
	// One attempt writes its three metadata files (base list, delta
	// manifest, delta list) side by side, so one to three of them are
	// tried before the first failure stops it; a retry would try more.
	if n := disk.writes.Load(); n < 1 || n > 3 {
		t.Fatalf("%d manifest writes attempted, want 1 to 3 (one attempt, no retries of a definite failure)", n)
	}
	if after, _ := reopen(t, tb).LatestSnapshotID(ctx); after != before {
		t.Fatalf("a snapshot was committed: %d -> %d", before, after)
	}
	if got := onDisk(); !slices.Equal(got, files) {
		t.Fatalf("the failed compaction left files behind:\nbefore %v\nafter  %v", files, got)
	}
	if got := scanRows(t, tb); !slices.Equal(got, rows) {
		t.Fatal("rows changed")
	}
}
