package e2e

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// The S3 end-to-end tests run against the server named by
// COMPACTD_TEST_S3_ENDPOINT (eval "$(scripts/s3-server.sh start)"), like the
// fileio S3 tests: without it they skip, unless COMPACTD_REQUIRE_S3=1 (set by
// `make test`), which turns a missing server into a failure.

type s3Env struct {
	endpoint string
	bucket   string
}

func requireS3(t *testing.T) s3Env {
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
	// The Java oracle's paimon-s3 file IO takes its endpoint from here
	// (credentials and region from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
	// / AWS_REGION, which scripts/s3-server.sh exports).
	t.Setenv("COMPACTD_S3_ENDPOINT", ep)
	return s3Env{endpoint: ep, bucket: bucket}
}

// store returns an S3 store talking to endpoint (the server, or a fault
// proxy in front of it).
func (e s3Env) store(t *testing.T, endpoint string, edit ...func(*fileio.S3Config)) *fileio.S3 {
	t.Helper()
	cfg := fileio.S3Config{Endpoint: endpoint, ListPageSize: 200}
	for _, f := range edit {
		f(&cfg)
	}
	s, err := fileio.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newWarehouse returns a fresh s3:// warehouse prefix, emptied when the test
// ends.
func (e s3Env) newWarehouse(t *testing.T, s *fileio.S3, what string) string {
	t.Helper()
	prefix := "e2e/" + what + "-" + uuid.NewString()[:8]
	t.Cleanup(func() {
		keys := e.keys(t, s, prefix)
		paths := make([]string, len(keys))
		for i, k := range keys {
			paths[i] = "s3://" + e.bucket + "/" + k
		}
		if err := s.DeleteMany(context.Background(), paths); err != nil {
			t.Logf("cleanup %s: %v", prefix, err)
		}
	})
	return "s3://" + e.bucket + "/" + prefix
}

// keys lists every object key under prefix (recursively), sorted.
func (e s3Env) keys(t *testing.T, s *fileio.S3, prefix string) []string {
	t.Helper()
	prefix = strings.TrimPrefix(prefix, "s3://"+e.bucket+"/")
	var out []string
	pager := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: &e.bucket, Prefix: aws.String(prefix + "/")})
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	slices.Sort(out)
	return out
}

// uploadDir copies the local directory tree src to the S3 prefix dst with
// the store (empty directories vanish: S3 has none).
func uploadDir(t *testing.T, fio fileio.FileIO, src, dst string) {
	t.Helper()
	ctx := context.Background()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fileio.WriteFile(ctx, fio, fileio.Join(dst, filepath.ToSlash(rel)), data)
	})
	if err != nil {
		t.Fatalf("upload %s to %s: %v", src, dst, err)
	}
}

// openTable opens db.t ("db.t" form of name) of a warehouse on any store.
func openTable(t *testing.T, fio fileio.FileIO, warehouse, name string) *table.Table {
	t.Helper()
	db, tbl, _ := strings.Cut(name, ".")
	tb, err := table.Open(context.Background(), fio, warehouse, db, tbl)
	if err != nil {
		t.Fatalf("open %s in %s: %v", name, warehouse, err)
	}
	return tb
}

// scanTable is scanRows for any store and snapshot (nil: the latest).
func scanTable(ctx context.Context, tb *table.Table, snap *table.Snapshot) ([]interop.Row, error) {
	sc, err := scan.New(ctx, tb, snap)
	if err != nil {
		return nil, err
	}
	var buf []byte
	err = sc.Each(ctx, func(r table.Row) error {
		var err error
		buf, err = scan.AppendJSON(buf, sc.ReadType(), r)
		buf = append(buf, '\n')
		return err
	})
	if err != nil {
		return nil, err
	}
	return interop.ParseRows(buf)
}

func mustScan(t *testing.T, tb *table.Table, snap *table.Snapshot) []string {
	t.Helper()
	rows, err := scanTable(context.Background(), tb, snap)
	if err != nil {
		t.Fatalf("compactd scan of %s: %v", tb.Path(), err)
	}
	return canon(t, rows)
}

func latestID(t *testing.T, tb *table.Table) int64 {
	t.Helper()
	id, err := tb.LatestSnapshotID(context.Background())
	if err != nil {
		t.Fatalf("latest snapshot of %s: %v", tb.Path(), err)
	}
	return id
}

func snapshotOf(t *testing.T, tb *table.Table, id int64) *table.Snapshot {
	t.Helper()
	s, err := tb.Snapshot(context.Background(), id)
	if err != nil {
		t.Fatalf("snapshot %d of %s: %v", id, tb.Path(), err)
	}
	return s
}
