package fileio

// S3 reads: ranged GETs with read-ahead and retried body reads.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// openTail is how much of an object Open fetches with its first request: a
// suffix-range GET instead of a HEAD, so the request that learns the size
// (from Content-Range) also brings the end of the file, where Parquet keeps
// its footer and Avro readers start. Files up to this size (metadata and
// many level-0 data files) then cost one request in all; on an object store
// with 20 ms per request that is most of a small compaction's wall time.
const openTail = 256 << 10

// Open returns a reader doing ranged GETs. Its first request fetches the
// tail of the object and the size with it.
func (s *S3) Open(ctx context.Context, path string) (Reader, error) {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return nil, err
	}
	r := &s3Reader{s: s, ctx: ctx, bucket: bucket, key: key, path: path, window: s.cfg.ReadAhead}
	tail, size, err := s.getTail(ctx, bucket, key, path, openTail)
	switch {
	case err == nil:
		r.size, r.tail, r.tailOff = size, tail, size-int64(len(tail))
	case httpStatus(err) == http.StatusRequestedRangeNotSatisfiable || errorCode(err) == "InvalidRange":
		// A suffix range of an empty object is unsatisfiable: ask its size.
		head, herr := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		if herr != nil {
			return nil, s3Error("open", path, herr)
		}
		r.size, r.tailOff = aws.ToInt64(head.ContentLength), aws.ToInt64(head.ContentLength)
	default:
		return nil, s3Error("open", path, err)
	}
	return r, nil
}

// getTail fetches the last n bytes of an object (all of it when smaller)
// and its size. A body cut off mid-stream is fetched again.
func (s *S3) getTail(ctx context.Context, bucket, key, path string, n int) ([]byte, int64, error) {
	rng := fmt.Sprintf("bytes=-%d", n)
	var lastErr error
	for attempt := 0; attempt < bodyReadAttempts; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, retryDelay(attempt-1)); err != nil {
				return nil, 0, fmt.Errorf("read %s: %w (after %v)", path, err, lastErr) //nolint:errorlint // the earlier attempt's error is context only
			}
		}
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: &rng})
		if err != nil {
			return nil, 0, err
		}
		want := aws.ToInt64(out.ContentLength)
		size := want // a server that ignores Range sends the whole object
		if cr := aws.ToString(out.ContentRange); cr != "" {
			if size, err = contentRangeTotal(cr); err != nil {
				out.Body.Close()
				return nil, 0, fmt.Errorf("read %s: %w", path, err)
			}
		}
		if want < 0 || want > int64(n) && want != size || want > size {
			out.Body.Close()
			return nil, 0, fmt.Errorf("read %s: server sent %d bytes of a %d-byte object for range %s", path, want, size, rng)
		}
		buf := make([]byte, want)
		_, err = io.ReadFull(out.Body, buf)
		out.Body.Close()
		if err == nil {
			if int64(len(buf)) > int64(n) { // the whole object: keep only the tail
				buf = buf[int64(len(buf))-int64(n):]
			}
			return buf, size, nil
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, ctx.Err())
		}
		lastErr = err
	}
	return nil, 0, fmt.Errorf("read %s (range %s): %w", path, rng, lastErr)
}

// contentRangeTotal reads the object size from "bytes a-b/total".
func contentRangeTotal(cr string) (int64, error) {
	_, total, ok := strings.Cut(cr, "/")
	if !ok || total == "*" {
		return 0, fmt.Errorf("Content-Range %q has no object size", cr)
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Content-Range %q: bad object size", cr)
	}
	return n, nil
}

type s3Reader struct {
	s                 *S3
	ctx               context.Context
	bucket, key, path string
	size              int64
	// tail holds the object's bytes [tailOff, size), fetched by Open.
	tail    []byte
	tailOff int64

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
	r.buf, r.tail = nil, nil
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
	if err := r.fetch(off, p[:n]); err != nil {
		return 0, err
	}
	return n, eof
}

// fetch fills p with the bytes at off: what lies in the tail from memory,
// the rest with one ranged GET.
func (r *s3Reader) fetch(off int64, p []byte) error {
	if end := off + int64(len(p)); end > r.tailOff {
		from := max(off, r.tailOff)
		copy(p[from-off:], r.tail[from-r.tailOff:end-r.tailOff])
		p = p[:from-off]
	}
	if len(p) == 0 {
		return nil
	}
	return r.s.getRange(r.ctx, r.bucket, r.key, r.path, off, p)
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
			if err := r.fetch(r.pos, p[:n]); err != nil {
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
		if err := r.fetch(r.pos, r.buf); err != nil {
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
