package expiretest

import (
	"context"
	"fmt"
	"sync"

	"github.com/compactd/compactd/fileio"
)

// FailingFS wraps a store and fails the k-th mutating operation (Create,
// WriteExclusive, Delete, DeleteDir; counted from 1) and every one after
// it, as a process that crashed at that point would never perform them.
// FailAt 0 never fails. Ops counts the mutating operations attempted.
type FailingFS struct {
	fileio.FileIO
	FailAt int

	mu  sync.Mutex
	Ops int
}

func (f *FailingFS) step(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Ops++
	if f.FailAt > 0 && f.Ops >= f.FailAt {
		return fmt.Errorf("%s %s: %w", op, path, ErrInjected)
	}
	return nil
}

func (f *FailingFS) Create(ctx context.Context, path string) (fileio.Writer, error) {
	if err := f.step("create", path); err != nil {
		return nil, err
	}
	return f.FileIO.Create(ctx, path)
}

func (f *FailingFS) WriteExclusive(ctx context.Context, path string, data []byte) error {
	if err := f.step("write", path); err != nil {
		return err
	}
	return f.FileIO.WriteExclusive(ctx, path, data)
}

func (f *FailingFS) Delete(ctx context.Context, path string) error {
	if err := f.step("delete", path); err != nil {
		return err
	}
	return f.FileIO.Delete(ctx, path)
}

func (f *FailingFS) DeleteDir(ctx context.Context, path string) error {
	if err := f.step("deletedir", path); err != nil {
		return err
	}
	return f.FileIO.DeleteDir(ctx, path)
}
