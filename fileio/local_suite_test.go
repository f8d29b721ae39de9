package fileio_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
)

func TestLocalAcceptance(t *testing.T) {
	fileiotest.Run(t, func(t *testing.T) (fileio.FileIO, string) {
		return fileio.NewLocal(), t.TempDir()
	})
}

func TestFileURLAcceptance(t *testing.T) {
	fileiotest.RunWithOptions(t, func(t *testing.T) (fileio.FileIO, string) {
		root := "file://" + t.TempDir()
		fio, err := fileio.For(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		return fio, root
	}, fileiotest.Options{ManyFiles: 50, BigFileSize: 3 << 20})
}

func TestForDispatchesByScheme(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		path string
		want string
	}{
		{"/data/wh", "*fileio.Local"},
		{"s3://bucket/wh", "*fileio.S3"},
		{"s3a://bucket/wh", "*fileio.S3"},
	}
	for _, c := range cases {
		fio, err := fileio.For(ctx, c.path)
		if err != nil {
			t.Fatalf("For(%s): %v", c.path, err)
		}
		if got := typeName(fio); got != c.want {
			t.Errorf("For(%s) = %s, want %s", c.path, got, c.want)
		}
	}
	if _, err := fileio.For(ctx, "hdfs://nn/wh"); err == nil {
		t.Error("For(hdfs://) succeeded; want an unsupported-scheme error")
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
