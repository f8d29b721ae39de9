package fileio

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sourcegraph/conc/pool"
)

// DeleteConcurrently deletes paths one request each, on up to par
// goroutines (8 if par <= 0), and stops at the first failure (DeleteAll, by
// contrast, batches requests and tries every file). The error returned is that failure, never the
// "context canceled" of a deletion stopped because of it: the pool cancels
// the others only after the failing deletion returned, so the first error
// recorded is the cause.
func DeleteConcurrently(ctx context.Context, fio FileIO, paths []string, par int) error {
	if len(paths) == 0 {
		return nil
	}
	if par <= 0 {
		par = 8
	}
	var mu sync.Mutex
	var first error
	p := pool.New().WithContext(ctx).WithMaxGoroutines(par).WithCancelOnError()
	for _, path := range paths {
		p.Go(func(ctx context.Context) error {
			err := fio.Delete(ctx, path)
			if err == nil {
				return nil
			}
			err = fmt.Errorf("delete %s: %w", path, err)
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
			return err
		})
	}
	if err := p.Wait(); err != nil {
		if first != nil {
			return first
		}
		return err
	}
	return nil
}

// BatchDeleter is implemented by stores that delete many files per request.
type BatchDeleter interface {
	// DeleteMany removes the files; missing files are not an error.
	DeleteMany(ctx context.Context, paths []string) error
}

// DeleteAll removes the files with the store's batch delete when it has one,
// one by one otherwise. It tries every file and reports all failures.
func DeleteAll(ctx context.Context, fio FileIO, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if bd, ok := fio.(BatchDeleter); ok {
		return bd.DeleteMany(ctx, paths)
	}
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := fio.Delete(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
