package fileio

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
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

	// probeKey identifies the store for the process-wide cache of
	// conditional-write probes (s3_exclusive.go): endpoint, region,
	// addressing and, for a caller's own HTTP client, that client.
	probeKey string
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
	key := fmt.Sprintf("%s|%s|%t", endpoint, awsCfg.Region, pathStyle)
	if cfg.HTTPClient != nil {
		// A caller's client may change what the store does (tests'
		// fault injection): its answers are its own.
		key += fmt.Sprintf("|%p", cfg.HTTPClient)
	}
	return &S3{client: client, cfg: cfg, probeKey: key}, nil
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

var (
	_ FileIO       = (*S3)(nil)
	_ BatchDeleter = (*S3)(nil)
)
