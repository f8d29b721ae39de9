package fileio

// S3 reads: ranged GETs with read-ahead and retried body reads.

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Open returns a reader doing ranged GETs. The size comes from one HEAD.
func (s *S3) Open(ctx context.Context, path string) (Reader, error) {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return nil, err
	}
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, s3Error("open", path, err)
	}
	return &s3Reader{
		s: s, ctx: ctx, bucket: bucket, key: key, path: path,
		size: aws.ToInt64(head.ContentLength), window: s.cfg.ReadAhead,
	}, nil
}

type s3Reader struct {
	s                 *S3
	ctx               context.Context
	bucket, key, path string
	size              int64

	mu     sync.Mutex
	pos    int64  // position of sequential Read
	buf    []byte // read-ahead window, holding bytes [bufOff, bufOff+len(buf))
	bufOff int64
	window int
	closed bool
}

func (r *s3Reader) Size() int64 { return r.size }

func (r *s3Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.buf = nil
	return nil
}

// ReadAt serves the range from the read-ahead window when it holds it, else
// with one ranged GET. Safe for parallel calls.
func (r *s3Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", r.path, off)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := len(p)
	var eof error
	if rem := r.size - off; int64(n) > rem {
		n, eof = int(rem), io.EOF
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, fmt.Errorf("read %s: reader closed", r.path)
	}
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		copy(p[:n], r.buf[off-r.bufOff:])
		r.mu.Unlock()
		return n, eof
	}
	r.mu.Unlock()
	if err := r.s.getRange(r.ctx, r.bucket, r.key, r.path, off, p[:n]); err != nil {
		return 0, err
	}
	return n, eof
}

// Read reads sequentially through a read-ahead window that grows while the
// caller keeps reading, so small reads do not each cost a request.
func (r *s3Reader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, fmt.Errorf("read %s: reader closed", r.path)
	}
	if r.pos >= r.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.pos < r.bufOff || r.pos >= r.bufOff+int64(len(r.buf)) {
		rem := r.size - r.pos
		if len(p) >= r.window {
			// Large reads go straight into the caller's buffer.
			n := int(min(int64(len(p)), rem))
			if err := r.s.getRange(r.ctx, r.bucket, r.key, r.path, r.pos, p[:n]); err != nil {
				return 0, err
			}
			r.pos += int64(n)
			return n, nil
		}
		want := int(min(int64(r.window), rem))
		if cap(r.buf) < want {
			r.buf = make([]byte, want)
		}
		r.buf = r.buf[:want]
		if err := r.s.getRange(r.ctx, r.bucket, r.key, r.path, r.pos, r.buf); err != nil {
			r.buf = r.buf[:0]
			return 0, err
		}
		r.bufOff = r.pos
		r.window = min(r.window*2, maxReadAhead)
	}
	n := copy(p, r.buf[r.pos-r.bufOff:])
	r.pos += int64(n)
	return n, nil
}

// getRange fills p with the bytes at off. The SDK retries a request that
// fails before its body arrives; a body cut off mid-stream is resumed here
// from the first missing byte.
func (s *S3) getRange(ctx context.Context, bucket, key, path string, off int64, p []byte) error {
	var lastErr error
	for attempt := 0; len(p) > 0; attempt++ {
		if attempt >= bodyReadAttempts {
			return fmt.Errorf("read %s at %d: %w", path, off, lastErr)
		}
		if attempt > 0 {
			if err := sleepCtx(ctx, retryDelay(attempt-1)); err != nil {
				return fmt.Errorf("read %s at %d: %w (after %v)", path, off, err, lastErr) //nolint:errorlint // the earlier attempt's error is context only: wrapping it would let errors.Is match a failure that is not the outcome
			}
		}
		rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: &rng})
		if err != nil {
			return s3Error(fmt.Sprintf("read (range %s)", rng), path, err)
		}
		if cl := aws.ToInt64(out.ContentLength); cl > int64(len(p)) {
			out.Body.Close()
			return fmt.Errorf("read %s: server sent %d bytes for range %s (range requests unsupported?)", path, cl, rng)
		}
		n, err := io.ReadFull(out.Body, p)
		out.Body.Close()
		off += int64(n)
		p = p[n:]
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("read %s at %d: %w", path, off, ctx.Err())
			}
			lastErr = err
			continue
		}
	}
	return nil
}
