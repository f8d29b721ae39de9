package fileio

// S3 listing, stat and deletes (single and batched).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

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
