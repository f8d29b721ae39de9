package fileio

// S3 writes: buffered single PUTs and multipart uploads, visible only after Close.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

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
