package fileio

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"
)

// S3Config configures the S3 store. The zero value uses the standard AWS
// configuration chain (environment, shared config files, instance roles) for
// region, endpoint (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and credentials;
// every field set here overrides the chain.
type S3Config struct {
	// Endpoint is the base URL of an S3-compatible server, e.g.
	// "http://127.0.0.1:7070". Empty: AWS, or the endpoint of the chain.
	Endpoint string
	// Region defaults to the chain's region, then to "us-east-1".
	Region string
	// AddressingStyle is "path", "virtual" or "" (auto: path style when an
	// endpoint is configured, since most S3-compatible servers need it;
	// virtual-hosted style on AWS).
	AddressingStyle string
	// Static credentials; when AccessKeyID is empty the chain provides them.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Profile selects a shared-config profile.
	Profile string

	// PartSize is the multipart part size (default 8 MiB, at least 5 MiB,
	// the S3 minimum). Files smaller than one part are one PutObject.
	PartSize int64
	// UploadConcurrency is the number of parts a writer uploads in parallel
	// (default 2). A writer holds at most UploadConcurrency+1 parts in memory.
	UploadConcurrency int
	// ReadAhead is the initial read-ahead window of sequential reads (default
	// 256 KiB); it doubles on each refill up to 8 MiB.
	ReadAhead int
	// ListPageSize is the MaxKeys of each ListObjectsV2 request (default
	// 1000, the S3 maximum).
	ListPageSize int32
	// MaxAttempts bounds the attempts of every request (default 8).
	MaxAttempts int
	// TrustConditionalWrites skips the probe that WriteExclusive otherwise
	// runs once per bucket to make sure the store honours If-None-Match. A
	// store that silently ignores it would let two committers both "win".
	TrustConditionalWrites bool
	// HTTPClient replaces the SDK's HTTP client (tests, proxies).
	HTTPClient *http.Client
}

// String never shows the secret.
func (c S3Config) String() string {
	secret := ""
	if c.SecretAccessKey != "" {
		secret = "<redacted>"
	}
	return fmt.Sprintf("S3Config{Endpoint:%q Region:%q AddressingStyle:%q AccessKeyID:%q SecretAccessKey:%q Profile:%q PartSize:%d}",
		c.Endpoint, c.Region, c.AddressingStyle, c.AccessKeyID, secret, c.Profile, c.PartSize)
}

// LogValue keeps secrets out of structured logs.
func (c S3Config) LogValue() slog.Value {
	return slog.StringValue(c.String())
}

// ErrConditionalWritesUnsupported means the store accepted a conditional PUT
// onto an existing key: it ignores If-None-Match, and committing snapshots to
// it would not be safe against concurrent writers.
var ErrConditionalWritesUnsupported = errors.New("object store ignores conditional writes (If-None-Match: *)")

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

// ForWithS3Config is For with an explicit S3 configuration for s3:// paths.
func ForWithS3Config(ctx context.Context, path string, cfg S3Config) (FileIO, error) {
	if scheme, _, ok := cutScheme(path); ok && isS3Scheme(scheme) {
		return NewS3(ctx, cfg)
	}
	return For(ctx, path)
}

func isS3Scheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n":
		return true
	}
	return false
}

// S3 is the store for s3://bucket/key paths on AWS S3 or an S3-compatible
// server. It is safe for concurrent use.
type S3 struct {
	client *s3.Client
	cfg    S3Config

	probeMu sync.Mutex
	probed  map[string]bool // bucket -> conditional writes verified
}

const (
	minPartSize       = 5 << 20
	defaultPartSize   = 8 << 20
	defaultReadAhead  = 256 << 10
	maxReadAhead      = 8 << 20
	writeIDMetaKey    = "compactd-write-id"
	probeNamePrefix   = ".compactd-probe-"
	deleteBatchSize   = 1000
	bodyReadAttempts  = 5
	cleanupTimeout    = 30 * time.Second
	defaultListMaxKey = 1000
	maxParts          = 10000 // the S3 limit of parts per upload
)

// NewS3 builds the S3 store.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.PartSize == 0 {
		cfg.PartSize = defaultPartSize
	}
	if cfg.PartSize < minPartSize {
		cfg.PartSize = minPartSize
	}
	if cfg.UploadConcurrency <= 0 {
		cfg.UploadConcurrency = 2
	}
	if cfg.ReadAhead <= 0 {
		cfg.ReadAhead = defaultReadAhead
	}
	if cfg.ListPageSize <= 0 || cfg.ListPageSize > defaultListMaxKey {
		cfg.ListPageSize = defaultListMaxKey
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = defaultMaxAttempts
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return newRetryer(cfg.MaxAttempts) }),
		// Checksums only where the API requires them: many S3-compatible
		// servers reject the SDK's default trailing CRC32 (aws-chunked)
		// uploads. Integrity of uploads is covered by Content-MD5 instead.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(cfg.HTTPClient))
	} else {
		opts = append(opts, config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = 64
			// A server that accepted a request but never answers is a
			// transient failure, not a hang of the daemon.
			t.ResponseHeaderTimeout = 2 * time.Minute
		})))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load S3 configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if endpoint == "" && awsCfg.BaseEndpoint != nil {
		endpoint = *awsCfg.BaseEndpoint
	}
	var pathStyle bool
	switch strings.ToLower(cfg.AddressingStyle) {
	case "path":
		pathStyle = true
	case "virtual":
	case "", "auto":
		pathStyle = endpoint != ""
	default:
		return nil, fmt.Errorf("S3 addressing style %q: want path, virtual or auto", cfg.AddressingStyle)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
		// The SDK logs a warning for every GetObject whose checksum it does
		// not validate; with validation "when required" that is every read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	return &S3{client: client, cfg: cfg, probed: map[string]bool{}}, nil
}

// Client exposes the SDK client (tests, tools).
func (s *S3) Client() *s3.Client { return s.client }

// splitS3Path splits "s3://bucket/key" into bucket and key.
func splitS3Path(path string) (bucket, key string, err error) {
	scheme, rest, ok := cutScheme(path)
	if !ok || !isS3Scheme(scheme) {
		return "", "", fmt.Errorf("path %s: not an s3:// path", path)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("path %s: no bucket", path)
	}
	return bucket, key, nil
}

// dirPrefix turns a directory key into the listing prefix "a/b/" ("" for the
// bucket root).
func dirPrefix(key string) string {
	key = strings.TrimRight(key, "/")
	if key == "" {
		return ""
	}
	return key + "/"
}

func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	switch errorCode(err) {
	case "NoSuchKey", "NotFound":
		return true
	case "NoSuchBucket", "NoSuchUpload":
		return false
	}
	return httpStatus(err) == http.StatusNotFound
}

func isPreconditionFailed(err error) bool {
	return httpStatus(err) == http.StatusPreconditionFailed || errorCode(err) == "PreconditionFailed"
}

// s3Error wraps an SDK error with the operation and path, mapping "no such
// key" to ErrNotExist.
func s3Error(op, path string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%s %s: %w: %w", op, path, ErrNotExist, err)
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

func md5Sums(data []byte) (hexSum, b64Sum string, raw [16]byte) {
	raw = md5.Sum(data)
	return hex.EncodeToString(raw[:]), base64.StdEncoding.EncodeToString(raw[:]), raw
}

func cleanETag(etag *string) string {
	if etag == nil {
		return ""
	}
	return strings.Trim(*etag, `"`)
}

// ---------------------------------------------------------------- reading

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

// ---------------------------------------------------------------- writing

// Create returns a buffered writer: one PutObject on Close for a file
// smaller than a part, a multipart upload with parts sent as they fill
// otherwise. Nothing is visible before Close succeeds.
func (s *S3) Create(ctx context.Context, path string) (Writer, error) {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("create %s: not a file path", path)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	maxBufs := s.cfg.UploadConcurrency + 1
	return &s3Writer{
		s: s, ctx: ctx, bucket: bucket, key: key, path: path,
		partSize: int(s.cfg.PartSize),
		free:     make(chan []byte, maxBufs),
		maxBufs:  maxBufs,
	}, nil
}

type s3Writer struct {
	s                 *S3
	ctx               context.Context
	bucket, key, path string
	partSize          int

	buf     []byte
	free    chan []byte // part buffers returned by finished uploads
	nbufs   int
	maxBufs int

	uploadID *string
	nextPart int32
	wg       sync.WaitGroup
	mu       sync.Mutex
	parts    []types.CompletedPart
	partMD5s map[int32][16]byte
	err      error // first failed part upload
	done     bool
}

func (w *s3Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// getBuf returns an empty part buffer, waiting for an upload to finish when
// all maxBufs buffers are in use: this is what bounds a writer's memory.
func (w *s3Writer) getBuf() ([]byte, error) {
	select {
	case b := <-w.free:
		return b[:0], nil
	default:
	}
	if w.nbufs < w.maxBufs {
		w.nbufs++
		return make([]byte, 0, w.partSize), nil
	}
	select {
	case b := <-w.free:
		return b[:0], nil
	case <-w.ctx.Done():
		return nil, w.ctx.Err()
	}
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: writer closed", w.path)
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		if w.buf == nil {
			b, err := w.getBuf()
			if err != nil {
				return written, fmt.Errorf("write %s: %w", w.path, err)
			}
			w.buf = b
		}
		n := min(len(p), w.partSize-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
		written += n
		if len(w.buf) == w.partSize {
			if err := w.flushPart(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flushPart hands the current buffer to a background upload.
func (w *s3Writer) flushPart() error {
	if w.uploadID == nil {
		out, err := w.s.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: &w.bucket, Key: &w.key})
		if err != nil {
			return s3Error("create multipart upload", w.path, err)
		}
		w.uploadID = out.UploadId
		w.partMD5s = map[int32][16]byte{}
	}
	if w.nextPart >= maxParts {
		return fmt.Errorf("write %s: more than %d parts of %d bytes: raise the part size", w.path, maxParts, w.partSize)
	}
	w.nextPart++
	num, data := w.nextPart, w.buf
	w.buf = nil
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { w.free <- data }()
		_, b64, raw := md5Sums(data)
		out, err := w.s.client.UploadPart(w.ctx, &s3.UploadPartInput{
			Bucket: &w.bucket, Key: &w.key, UploadId: w.uploadID, PartNumber: aws.Int32(num),
			Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))), ContentMD5: &b64,
		})
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			if w.err == nil {
				w.err = s3Error(fmt.Sprintf("upload part %d of", num), w.path, err)
			}
			return
		}
		w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
		w.partMD5s[num] = raw
	}()
	return nil
}

func (w *s3Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.uploadID == nil {
		data := w.buf
		_, b64, _ := md5Sums(data)
		_, err := w.s.client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket: &w.bucket, Key: &w.key, Body: bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))), ContentMD5: &b64,
		})
		w.buf = nil
		if err != nil {
			return s3Error("write", w.path, err)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.flushPart(); err != nil {
			w.abortUpload()
			return err
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		w.abortUpload()
		return err
	}
	parts := slices.Clone(w.parts)
	sort.Slice(parts, func(i, j int) bool { return *parts[i].PartNumber < *parts[j].PartNumber })
	_, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &w.bucket, Key: &w.key, UploadId: w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err == nil {
		return nil
	}
	// A retried Complete whose first attempt succeeded finds no upload:
	// the object is there if its ETag is the multipart ETag of our parts.
	if errorCode(err) == "NoSuchUpload" && w.landed(len(parts)) {
		return nil
	}
	w.abortUpload()
	return s3Error("complete multipart upload", w.path, err)
}

// landed reports whether the object now at the key is this writer's
// multipart upload: S3's multipart ETag is md5(concat(part md5s))-N.
func (w *s3Writer) landed(nparts int) bool {
	h := md5.New()
	for i := int32(1); i <= int32(nparts); i++ {
		sum := w.partMD5s[i]
		h.Write(sum[:])
	}
	want := fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), nparts)
	head, err := w.s.client.HeadObject(w.ctx, &s3.HeadObjectInput{Bucket: &w.bucket, Key: &w.key})
	return err == nil && cleanETag(head.ETag) == want
}

// abortUpload aborts the multipart upload even when the writer's context
// is already cancelled: left behind, its parts would be billed forever.
func (w *s3Writer) abortUpload() error {
	w.wg.Wait()
	if w.uploadID == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), cleanupTimeout)
	defer cancel()
	_, err := w.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.bucket, Key: &w.key, UploadId: w.uploadID})
	w.uploadID = nil
	if err != nil && errorCode(err) != "NoSuchUpload" {
		return s3Error("abort multipart upload", w.path, err)
	}
	return nil
}

func (w *s3Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.buf = nil
	return w.abortUpload()
}

// ---------------------------------------------------------------- commit

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

// ensureConditionalWrites runs CheckConditionalWrites once per bucket.
func (s *S3) ensureConditionalWrites(ctx context.Context, bucket, dir string) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probed[bucket] {
		return nil
	}
	if err := s.CheckConditionalWrites(ctx, dir); err != nil {
		return err
	}
	s.probed[bucket] = true
	return nil
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

// ---------------------------------------------------------------- metadata

// List lists the direct children of dir with delimiter "/": objects are
// files, common prefixes are directories.
func (s *S3) List(ctx context.Context, dir string) ([]FileInfo, error) {
	bucket, key, err := splitS3Path(dir)
	if err != nil {
		return nil, err
	}
	prefix := dirPrefix(key)
	base := strings.TrimRight(dir, "/")
	pager := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &bucket, Prefix: &prefix, Delimiter: aws.String("/"), MaxKeys: aws.Int32(s.cfg.ListPageSize),
	})
	var out []FileInfo
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, s3Error("list", dir, err)
		}
		for _, cp := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/")
			if name == "" {
				continue
			}
			out = append(out, FileInfo{Path: base + "/" + name, Name: name, IsDir: true})
		}
		for _, obj := range page.Contents {
			name := strings.TrimPrefix(aws.ToString(obj.Key), prefix)
			if name == "" {
				continue // a "directory marker" object some tools create
			}
			out = append(out, FileInfo{
				Path: base + "/" + name, Name: name,
				Size: aws.ToInt64(obj.Size), ModTime: aws.ToTime(obj.LastModified),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat HEADs the object; a key with no object but with children is a
// directory.
func (s *S3) Stat(ctx context.Context, path string) (FileInfo, error) {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return FileInfo{}, err
	}
	clean := strings.TrimRight(path, "/")
	if key != "" && !strings.HasSuffix(key, "/") {
		head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		if err == nil {
			return FileInfo{
				Path: path, Name: Base(path), Size: aws.ToInt64(head.ContentLength),
				ModTime: aws.ToTime(head.LastModified),
			}, nil
		}
		if !isNotFound(err) {
			return FileInfo{}, s3Error("stat", path, err)
		}
	}
	prefix := dirPrefix(key)
	out, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix, MaxKeys: aws.Int32(1)})
	if err != nil {
		return FileInfo{}, s3Error("stat", path, err)
	}
	if len(out.Contents) == 0 && len(out.CommonPrefixes) == 0 && key != "" {
		return FileInfo{}, fmt.Errorf("stat %s: %w", path, ErrNotExist)
	}
	return FileInfo{Path: clean, Name: Base(clean), IsDir: true}, nil
}

// Delete removes one object; S3 reports success for a missing key anyway.
func (s *S3) Delete(ctx context.Context, path string) error {
	bucket, key, err := splitS3Path(path)
	if err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("delete %s: not a file path", path)
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	if err != nil && !isNotFound(err) {
		return s3Error("delete", path, err)
	}
	return nil
}

// DeleteMany deletes with DeleteObjects, 1000 keys per request, grouped by
// bucket. Missing keys are not errors; every other per-key failure is
// reported.
func (s *S3) DeleteMany(ctx context.Context, paths []string) error {
	byBucket := map[string][]types.ObjectIdentifier{}
	var buckets []string
	for _, p := range paths {
		bucket, key, err := splitS3Path(p)
		if err != nil {
			return err
		}
		if key == "" {
			return fmt.Errorf("delete %s: not a file path", p)
		}
		if _, ok := byBucket[bucket]; !ok {
			buckets = append(buckets, bucket)
		}
		byBucket[bucket] = append(byBucket[bucket], types.ObjectIdentifier{Key: aws.String(key)})
	}
	var errs []error
	for _, bucket := range buckets {
		objs := byBucket[bucket]
		for start := 0; start < len(objs); start += deleteBatchSize {
			batch := objs[start:min(start+deleteBatchSize, len(objs))]
			out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
				Bucket: &bucket,
				Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
			})
			if err != nil {
				return errors.Join(append(errs, fmt.Errorf("delete %d objects in s3://%s (first %s): %w",
					len(batch), bucket, aws.ToString(batch[0].Key), err))...)
			}
			for _, e := range out.Errors {
				if aws.ToString(e.Code) == "NoSuchKey" {
					continue
				}
				errs = append(errs, fmt.Errorf("delete s3://%s/%s: %s: %s",
					bucket, aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
			}
		}
	}
	return errors.Join(errs...)
}

// RealPath returns path unchanged: object keys have no symbolic links.
func (s *S3) RealPath(ctx context.Context, path string) (string, error) { return path, ctx.Err() }

// DeleteDir is a no-op: object stores have no directories, a prefix
// disappears with its last object.
func (s *S3) DeleteDir(ctx context.Context, path string) error {
	if _, _, err := splitS3Path(path); err != nil {
		return err
	}
	return ctx.Err()
}

var (
	_ FileIO       = (*S3)(nil)
	_ BatchDeleter = (*S3)(nil)
)
