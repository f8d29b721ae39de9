package fileio_test

import (
	"context"
	"crypto/rand"
	"io"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
)

// BenchmarkS3vsLocal writes a 64 MiB file and reads it back sequentially
// (through the read-ahead path) on the local store and on the S3 test
// server, and reports the S3/local time ratio. It needs
// COMPACTD_TEST_S3_ENDPOINT:
//
//	eval "$(scripts/s3-server.sh start)"
//	go test ./fileio -run '^$' -bench S3vsLocal -benchtime 3x
func BenchmarkS3vsLocal(b *testing.B) {
	env := requireS3(b)
	ctx := context.Background()
	const size = 64 << 20
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	s := newS3(b, fileio.S3Config{Endpoint: env.endpoint})
	s3Root := env.newRoot(b, s)
	localRoot := b.TempDir()

	roundTrip := func(fio fileio.FileIO, path string) (write, read time.Duration) {
		start := time.Now()
		w, err := fio.Create(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < size; off += 1 << 20 { // 1 MiB writes, as an encoder flushing pages
			if _, err := w.Write(data[off : off+1<<20]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		write = time.Since(start)
		start = time.Now()
		r, err := fio.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, make([]byte, 64<<10))
		r.Close()
		if err != nil || n != size {
			b.Fatalf("read back %d bytes, err %v", n, err)
		}
		return write, time.Since(start)
	}

	var lw, lr, sw, sr time.Duration
	b.SetBytes(2 * size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, r := roundTrip(fileio.NewLocal(), fileio.Join(localRoot, "big"))
		lw, lr = lw+w, lr+r
		w, r = roundTrip(s, fileio.Join(s3Root, "big"))
		sw, sr = sw+w, sr+r
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / (1 << 20) }
	b.ReportMetric(mbps(lw), "local-write-MiB/s")
	b.ReportMetric(mbps(lr), "local-read-MiB/s")
	b.ReportMetric(mbps(sw), "s3-write-MiB/s")
	b.ReportMetric(mbps(sr), "s3-read-MiB/s")
	b.ReportMetric(float64(sw+sr)/float64(lw+lr), "s3/local-time")
}
