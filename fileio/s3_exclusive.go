package fileio

// The commit point on S3: exclusive create by conditional PUT
// (If-None-Match: *), the resolution of ambiguous attempts by write id, and
// the probe that refuses stores which ignore the condition.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
)

// ErrConditionalWritesUnsupported means the store accepted a conditional PUT
// onto an existing key: it ignores If-None-Match, and committing snapshots to
// it would not be safe against concurrent writers.
var ErrConditionalWritesUnsupported = errors.New("object store ignores conditional writes (If-None-Match: *)")

// WriteExclusive creates path with a conditional PUT (If-None-Match: *); a
// 412 means another writer got there first and gives ErrExist.
//
// It never hands a conditional PUT to the SDK's blind retry: when an attempt
// fails without a definitive answer (no response, 5xx) the write may have
// landed, and a retry would see 412 for our own object. Each PUT carries a
// random write id in its metadata; a 412 after an ambiguous attempt is
// resolved by reading the object's metadata (or, on stores that drop
// metadata, comparing size and MD5 ETag), so a commit is neither doubled nor
// falsely reported as lost.
func (s *S3) WriteExclusive(ctx context.Context, path string, data []byte) error {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return err
	}
	if !s.cfg.TrustConditionalWrites {
		if err := s.ensureConditionalWrites(ctx, bucket, Dir(path)); err != nil {
			return fmt.Errorf("write %s: refusing to commit: %w", path, err)
		}
	}
	return s.putIfAbsent(ctx, bucket, key, path, data)
}

func (s *S3) putIfAbsent(ctx context.Context, bucket, key, path string, data []byte) error {
	writeID := uuid.NewString()
	hexSum, b64, _ := md5Sums(data)
	ambiguous := false
	var lastErr error
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, retryDelay(attempt-1)); err != nil {
				return fmt.Errorf("write %s: %w (last error: %v)", path, err, lastErr) //nolint:errorlint // the earlier attempt's error is context only: wrapping it would let errors.Is match a failure that is not the outcome
			}
		}
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))), ContentMD5: &b64,
			IfNoneMatch: aws.String("*"),
			Metadata:    map[string]string{writeIDMetaKey: writeID},
		}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("write %s: %w", path, ctx.Err())
		}
		lastErr = err
		switch {
		case isPreconditionFailed(err):
			if !ambiguous {
				return fmt.Errorf("write %s: %w", path, ErrExist)
			}
			ours, verr := s.isOurWrite(ctx, bucket, key, writeID, hexSum, int64(len(data)))
			if verr != nil {
				return fmt.Errorf("write %s: outcome unknown after an interrupted attempt (%v): verify: %w", path, lastErr, verr) //nolint:errorlint // the earlier attempt's error is context only: wrapping it would let errors.Is match a failure that is not the outcome
			}
			if ours {
				return nil
			}
			return fmt.Errorf("write %s: %w", path, ErrExist)
		case httpStatus(err) == http.StatusConflict:
			// ConditionalRequestConflict: a concurrent conditional write to
			// the key is in flight; ask again once it settled.
			continue
		case isTransient(err):
			ambiguous = true
			continue
		default:
			return s3Error("write", path, err)
		}
	}
	return fmt.Errorf("write %s: giving up after %d attempts: %w", path, s.cfg.MaxAttempts, lastErr)
}

// isOurWrite reports whether the object at key was written by the PUT with
// this write id. HEAD is retried by the SDK.
func (s *S3) isOurWrite(ctx context.Context, bucket, key, writeID, md5Hex string, size int64) (bool, error) {
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return false, err
	}
	if id, ok := head.Metadata[writeIDMetaKey]; ok {
		return id == writeID, nil
	}
	// The store dropped user metadata: identical bytes are the best evidence
	// left (two committers never write identical snapshot files).
	return aws.ToInt64(head.ContentLength) == size && cleanETag(head.ETag) == md5Hex, nil
}

// probe is one conditional-write probe of a bucket, shared by every S3
// of the process that talks to the same store (the daemon compacts many
// tables, each commit of each asking).
type probe struct {
	done chan struct{} // closed when err is set
	err  error
}

var (
	probesMu sync.Mutex
	probes   = map[string]*probe{} // S3.probeKey + "|" + bucket
)

// probeTimeout bounds a probe started in the background: its answer is
// shared, so it does not run on one caller's context.
const probeTimeout = 2 * time.Minute

// startProbe returns the probe of bucket, starting it unless one is under
// way or has succeeded. A failed probe is forgotten once it has ended, so
// the next commit asks again (as before this was cached per process).
func (s *S3) startProbe(ctx context.Context, bucket, dir string) *probe {
	key := s.probeKey + "|" + bucket
	probesMu.Lock()
	defer probesMu.Unlock()
	if p, ok := probes[key]; ok {
		select {
		case <-p.done:
			if p.err == nil {
				return p
			}
		default:
			return p // under way
		}
	}
	p := &probe{done: make(chan struct{})}
	probes[key] = p
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	go func() {
		defer cancel()
		p.err = s.CheckConditionalWrites(pctx, dir)
		close(p.done)
	}()
	return p
}

// PrepareExclusive starts the probe of conditional writes for dir's bucket
// in the background, so that a later WriteExclusive does not wait three
// round trips for it; it does nothing when the store is trusted or the
// probe already succeeded in this process.
func (s *S3) PrepareExclusive(ctx context.Context, dir string) {
	if s.cfg.TrustConditionalWrites {
		return
	}
	bucket, _, err := splitS3Path(dir)
	if err != nil {
		return
	}
	s.startProbe(ctx, bucket, dir)
}

// ensureConditionalWrites waits for the bucket's probe (started here if
// PrepareExclusive did not): once it has succeeded in this process, no
// request is made.
func (s *S3) ensureConditionalWrites(ctx context.Context, bucket, dir string) error {
	p := s.startProbe(ctx, bucket, dir)
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CheckConditionalWrites verifies that the store honours If-None-Match: * by
// writing a hidden probe key in dir twice: the second write must fail with
// 412. It returns ErrConditionalWritesUnsupported when the second write
// succeeds. The probe key is deleted afterwards.
func (s *S3) CheckConditionalWrites(ctx context.Context, dir string) error {
	bucket, key, err := splitS3Path(dir)
	if err != nil {
		return err
	}
	probeKey := dirPrefix(key) + probeNamePrefix + uuid.NewString()
	probePath := "s3://" + bucket + "/" + probeKey
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = s.Delete(dctx, probePath)
	}()
	if err := s.putIfAbsent(ctx, bucket, probeKey, probePath, []byte("first")); err != nil {
		return fmt.Errorf("conditional write probe %s: %w", probePath, err)
	}
	err = s.putIfAbsent(ctx, bucket, probeKey, probePath, []byte("second"))
	switch {
	case err == nil:
		return fmt.Errorf("conditional write probe %s: second write succeeded: %w", probePath, ErrConditionalWritesUnsupported)
	case errors.Is(err, ErrExist):
		return nil
	default:
		return fmt.Errorf("conditional write probe %s: %w", probePath, err)
	}
}
