package fileio_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
)

// The S3 tests run against the server named by COMPACTD_TEST_S3_ENDPOINT
// (start one with `eval "$(scripts/s3-server.sh start)"`). Without it they
// skip, unless COMPACTD_REQUIRE_S3=1 (set by `make test`), which makes a
// missing server a failure instead of a silent pass.

type s3Env struct {
	endpoint string
	bucket   string
}

func requireS3(t testing.TB) s3Env {
	t.Helper()
	ep := os.Getenv("COMPACTD_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COMPACTD_REQUIRE_S3") == "1" {
			t.Fatal("COMPACTD_REQUIRE_S3=1 but COMPACTD_TEST_S3_ENDPOINT is not set; run: eval \"$(scripts/s3-server.sh start)\"")
		}
		t.Skip("S3 tests need COMPACTD_TEST_S3_ENDPOINT; run: eval \"$(scripts/s3-server.sh start)\"")
	}
	bucket := os.Getenv("COMPACTD_TEST_S3_BUCKET")
	if bucket == "" {
		bucket = "compactd-test"
	}
	return s3Env{endpoint: ep, bucket: bucket}
}

// testConfig keeps tests fast: minimum part size, small list pages.
func (e s3Env) testConfig(endpoint string) fileio.S3Config {
	return fileio.S3Config{
		Endpoint:     endpoint,
		PartSize:     5 << 20,
		ListPageSize: 100,
	}
}

func newS3(t testing.TB, cfg fileio.S3Config) *fileio.S3 {
	t.Helper()
	s, err := fileio.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newRoot returns a fresh prefix for the test and removes everything under
// it when the test ends.
func (e s3Env) newRoot(t testing.TB, s *fileio.S3) string {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	if len(name) > 60 {
		name = name[:60]
	}
	prefix := "test/" + name + "-" + uuid.NewString()[:8]
	t.Cleanup(func() { e.removeAll(t, s, prefix) })
	return "s3://" + e.bucket + "/" + prefix
}

func (e s3Env) removeAll(t testing.TB, s *fileio.S3, prefix string) {
	ctx := context.Background()
	var paths []string
	pager := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: &e.bucket, Prefix: aws.String(prefix + "/")})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Logf("cleanup list %s: %v", prefix, err)
			return
		}
		for _, o := range page.Contents {
			paths = append(paths, "s3://"+e.bucket+"/"+aws.ToString(o.Key))
		}
	}
	if err := s.DeleteMany(ctx, paths); err != nil {
		t.Logf("cleanup %s: %v", prefix, err)
	}
}

func TestS3Acceptance(t *testing.T) {
	env := requireS3(t)
	s := newS3(t, env.testConfig(env.endpoint))
	fileiotest.RunWithOptions(t, func(t *testing.T) (fileio.FileIO, string) {
		return s, env.newRoot(t, s)
	}, fileiotest.Options{
		// Three list pages of 100; DeleteObjects batching is tested with
		// missing keys in TestS3DeleteManyBatchesByThousand, which is cheaper
		// than writing 1001 objects.
		ManyFiles:   250,
		BigFileSize: 12<<20 + 12345,
	})
}

func TestS3AbortRemovesMultipartUpload(t *testing.T) {
	env := requireS3(t)
	s := newS3(t, env.testConfig(env.endpoint))
	root := env.newRoot(t, s)
	ctx := context.Background()
	path := fileio.Join(root, "big-aborted")
	w, err := s.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 11<<20)); err != nil { // two full parts uploaded
		t.Fatal(err)
	}
	key := strings.TrimPrefix(path, "s3://"+env.bucket+"/")
	ups, err := s.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &env.bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 1 {
		t.Fatalf("before Abort: %d multipart uploads, want 1 (parts are uploaded as they fill)", len(ups.Uploads))
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	ups, err = s.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &env.bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Fatalf("after Abort: %d multipart uploads left", len(ups.Uploads))
	}
	if ok, err := fileio.Exists(ctx, s, path); ok || err != nil {
		t.Fatalf("Exists after Abort = %v, %v", ok, err)
	}
}

func TestS3ConditionalWriteProbePassesOnAHonestStore(t *testing.T) {
	env := requireS3(t)
	s := newS3(t, env.testConfig(env.endpoint))
	root := env.newRoot(t, s)
	if err := s.CheckConditionalWrites(context.Background(), root); err != nil {
		t.Fatalf("CheckConditionalWrites: %v", err)
	}
	ents, err := s.List(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("the probe left %+v behind", ents)
	}
}

func TestS3ForUsesTheEnvironment(t *testing.T) {
	env := requireS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", env.endpoint)
	ctx := context.Background()
	fio, err := fileio.For(ctx, "s3://"+env.bucket+"/wh")
	if err != nil {
		t.Fatal(err)
	}
	s := fio.(*fileio.S3)
	root := env.newRoot(t, s)
	path := fileio.Join(root, "x")
	if err := fileio.WriteFile(ctx, fio, path, []byte("via For")); err != nil {
		t.Fatal(err)
	}
	got, err := fileio.ReadFile(ctx, fio, path)
	if err != nil || string(got) != "via For" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}

// With COMPACTD_REQUIRE_S3=1 a missing server must fail the S3 tests, not
// skip them into a green run.
func TestS3RequiredButMissingFails(t *testing.T) {
	if os.Getenv("COMPACTD_S3_REQUIRE_CHILD") == "1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestS3Acceptance$", "-test.count=1")
	cmd.Env = append(os.Environ(), "COMPACTD_TEST_S3_ENDPOINT=", "COMPACTD_REQUIRE_S3=1", "COMPACTD_S3_REQUIRE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("S3 tests passed without a server under COMPACTD_REQUIRE_S3=1:\n%s", out)
	}
	if !strings.Contains(string(out), "COMPACTD_REQUIRE_S3=1 but COMPACTD_TEST_S3_ENDPOINT is not set") {
		t.Fatalf("unexpected failure:\n%s", out)
	}
	cmd = exec.Command(os.Args[0], "-test.run=^TestS3Acceptance$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "COMPACTD_TEST_S3_ENDPOINT=", "COMPACTD_REQUIRE_S3=", "COMPACTD_S3_REQUIRE_CHILD=1")
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SKIP") {
		t.Fatalf("without COMPACTD_REQUIRE_S3 the S3 tests should skip: err %v\n%s", err, out)
	}
}

func TestS3ConfigNeverShowsTheSecret(t *testing.T) {
	cfg := fileio.S3Config{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG"}
	for _, s := range []string{cfg.String(), cfg.LogValue().String()} {
		if strings.Contains(s, "wJalrXUtnFEMI") {
			t.Fatalf("secret in %q", s)
		}
		if !strings.Contains(s, "AKIDEXAMPLE") {
			t.Fatalf("access key id missing from %q", s)
		}
	}
}

func TestS3RejectsNonS3Paths(t *testing.T) {
	s := newS3(t, fileio.S3Config{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range []string{"/local/path", "s3:///no-bucket", "gs://b/k"} {
		if _, err := s.Stat(ctx, p); err == nil {
			t.Errorf("Stat(%q) succeeded", p)
		}
	}
}
