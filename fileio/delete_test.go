package fileio_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/compactd/compactd/fileio"
)

// deniedDelete refuses to delete the file "denied" and holds every other
// deletion until its context is cancelled.
type deniedDelete struct{ fileio.FileIO }

func (d deniedDelete) Delete(ctx context.Context, path string) error {
	if strings.HasSuffix(path, "/denied") {
		return &fs.PathError{Op: "remove", Path: path, Err: syscall.EACCES}
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestDeleteConcurrentlyReturnsTheFailureNotTheCancellationItCaused(t *testing.T) {
	paths := []string{"/t/a", "/t/b", "/t/c", "/t/denied", "/t/d", "/t/e", "/t/f", "/t/g"}
	// Each round races the failing deletion's report against the
	// cancelled ones'; one lost race would return "context canceled".
	for round := 0; round < 200; round++ {
		err := fileio.DeleteConcurrently(context.Background(), deniedDelete{fileio.NewLocal()}, paths, len(paths))
		if !errors.Is(err, syscall.EACCES) || !strings.Contains(err.Error(), "/t/denied") {
			t.Fatalf("round %d: want the EACCES deleting /t/denied, got %v", round, err)
		}
	}
}
