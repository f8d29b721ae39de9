package fileio_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
)

// An observed store is still a store: the acceptance suite passes through
// the wrapper.
func TestObservedLocalAcceptance(t *testing.T) {
	fileiotest.RunWithOptions(t, func(t *testing.T) (fileio.FileIO, string) {
		return fileio.Observe(fileio.NewLocal(), func(string, error) {}), t.TempDir()
	}, fileiotest.Options{ManyFiles: 50, BigFileSize: 3 << 20})
}

// batchLocal is a local store with a batch delete, as S3 has.
type batchLocal struct {
	*fileio.Local
	batches int
}

func (b *batchLocal) DeleteMany(ctx context.Context, paths []string) error {
	b.batches++
	for _, p := range paths {
		if err := b.Delete(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Every operation is reported once, with its name and an outcome that
// tells a store failure from the answers "missing" and "exists"; the
// store's batch delete stays in use, and Unwrap finds the store.
func TestObserveReportsEveryOperation(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	type call struct{ op, outcome string }
	var mu sync.Mutex
	var calls []call
	inner := &batchLocal{Local: fileio.NewLocal()}
	fio := fileio.Observe(inner, func(op string, err error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, call{op, fileio.OutcomeOf(err)})
	})
	take := func() []call {
		mu.Lock()
		defer mu.Unlock()
		c := calls
		calls = nil
		return c
	}
	expect := func(what string, want ...call) {
		t.Helper()
		if got := take(); !slices.Equal(got, want) {
			t.Errorf("%s: reported %v, want %v", what, got, want)
		}
	}
	p := fileio.Join(root, "a")
	if err := fileio.WriteFile(ctx, fio, p, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	expect("WriteFile", call{fileio.OpCreate, fileio.OutcomeOK}, call{fileio.OpWrite, fileio.OutcomeOK})
	if _, err := fileio.ReadFile(ctx, fio, p); err != nil {
		t.Fatal(err)
	}
	expect("ReadFile", call{fileio.OpOpen, fileio.OutcomeOK}, call{fileio.OpRead, fileio.OutcomeOK})
	if _, err := fio.Open(ctx, fileio.Join(root, "missing")); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatal(err)
	}
	expect("Open of a missing file", call{fileio.OpOpen, fileio.OutcomeNotFound})
	if err := fio.WriteExclusive(ctx, p, []byte("x")); !errors.Is(err, fileio.ErrExist) {
		t.Fatal(err)
	}
	expect("WriteExclusive of an existing file", call{fileio.OpWriteExclusive, fileio.OutcomeExists})
	if _, err := fio.List(ctx, root); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Stat(ctx, p); err != nil {
		t.Fatal(err)
	}
	expect("List, Stat", call{fileio.OpList, fileio.OutcomeOK}, call{fileio.OpStat, fileio.OutcomeOK})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := fio.List(cancelled, root); err == nil {
		t.Fatal("List on a cancelled context succeeded")
	}
	expect("List on a cancelled context", call{fileio.OpList, fileio.OutcomeCancelled})
	// A directory in the way of a file is a store error.
	if _, err := fio.Create(ctx, fileio.Join(p, "under-a-file")); err == nil {
		t.Fatal("Create under a file succeeded")
	}
	expect("Create under a file", call{fileio.OpCreate, fileio.OutcomeError})
	if err := fileio.DeleteAll(ctx, fio, []string{p}); err != nil {
		t.Fatal(err)
	}
	expect("DeleteAll", call{fileio.OpDeleteMany, fileio.OutcomeOK})
	if inner.batches != 1 {
		t.Errorf("the store's batch delete ran %d times through the wrapper, want 1", inner.batches)
	}
	if fileio.Unwrap(fio) != fileio.FileIO(inner) {
		t.Error("Unwrap does not return the observed store")
	}
	if _, ok := fileio.Observe(fileio.NewLocal(), func(string, error) {}).(fileio.BatchDeleter); ok {
		t.Error("an observed store without a batch delete claims one")
	}
}

// A streamed listing is one list operation; a caller stopping it early
// (fn's error) is no store failure, a directory the store cannot list is.
func TestObservedListEachReportsOnlyStoreFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := fileio.WriteFile(ctx, fileio.NewLocal(), dir+"/"+n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	var ops []string
	var errs []error
	o := fileio.Observe(fileio.NewLocal(), func(op string, err error) {
		ops = append(ops, op)
		errs = append(errs, err)
	})
	stop := errors.New("stop")
	if err := fileio.ListEach(ctx, o, dir, func(fileio.FileInfo) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("ListEach = %v, want fn's error", err)
	}
	if err := fileio.ListEach(ctx, o, dir+"/a", func(fileio.FileInfo) error { return nil }); err == nil {
		t.Fatal("listing a file: want an error")
	}
	if !slices.Equal(ops, []string{fileio.OpList, fileio.OpList}) || errs[0] != nil || errs[1] == nil {
		t.Fatalf("reported %v %v, want a successful and a failed list", ops, errs)
	}
}
