package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// remoteFS is the local store seen as an object store (not *fileio.Local),
// counting the reads that reach it: each would be a round trip.
type remoteFS struct {
	*fileio.Local
	reads atomic.Int64
}

func (r *remoteFS) Open(ctx context.Context, path string) (fileio.Reader, error) {
	f, err := r.Local.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &countedReader{Reader: f, n: &r.reads}, nil
}

type countedReader struct {
	fileio.Reader
	n *atomic.Int64
}

func (c *countedReader) ReadAt(p []byte, off int64) (int, error) {
	c.n.Add(1)
	return c.Reader.ReadAt(p, off)
}

func (c *countedReader) Read(p []byte) (int, error) {
	c.n.Add(1)
	return c.Reader.Read(p)
}

// A data file larger than the small-file limit on an object store is read
// whole in a few parallel parts, not column chunk by column chunk, and the
// memory budget it held comes back when it is closed.
func TestRemoteLargeFileIsReadWholeWithinTheBudget(t *testing.T) {
	t.Parallel()
	fields := table.RowType{{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}}}
	for i := 1; i <= 20; i++ {
		fields = append(fields, table.DataField{ID: i, Name: fmt.Sprintf("c%d", i), Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}})
	}
	s := Schema{Fields: fields, KeyNames: []string{"k"}}
	r := rand.New(rand.NewPCG(1, 2))
	var recs []table.KeyValue
	for k := range 40_000 {
		v := table.Row{int64(k)}
		for range 20 {
			v = append(v, fmt.Sprintf("%016x", r.Uint64()))
		}
		recs = append(recs, table.KeyValue{Key: table.Row{int64(k)}, Seq: int64(k), Value: v})
	}
	path := filepath.Join(t.TempDir(), "data-0.parquet")
	writeKVRows(t, path, s, map[string]string{"file.compression": "none"}, recs)
	fs := &remoteFS{Local: fileio.NewLocal()}
	f, err := fs.Local.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	size := f.Size()
	f.Close()
	if size <= wholeReadMax || size > remoteWholeReadMax {
		t.Fatalf("test file is %d bytes; the test needs (%d, %d]", size, wholeReadMax, remoteWholeReadMax)
	}
	before := remoteWholeBudget.free.Load()
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	br, err := OpenKeyValueBatches(context.Background(), fs, path, s, s, codec)
	if err != nil {
		t.Fatal(err)
	}
	if got := remoteWholeBudget.free.Load(); got != before-size {
		t.Fatalf("open file holds %d bytes of the budget, want %d", before-got, size)
	}
	b := codec.NewBatch()
	rows := 0
	for {
		err := br.Next(b, 1024)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += b.N
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if rows != len(recs) {
		t.Fatalf("read %d rows, want %d", rows, len(recs))
	}
	if want := (size + remotePart - 1) / remotePart; fs.reads.Load() > want {
		t.Fatalf("%d reads reached the store for a %d-byte file, want at most %d", fs.reads.Load(), size, want)
	}
	if got := remoteWholeBudget.free.Load(); got != before {
		t.Fatalf("budget after close: %d free, want %d", got, before)
	}
}

func TestBudgetRefusesWhatIsNotFree(t *testing.T) {
	t.Parallel()
	b := newBudget(10)
	if !b.TryAcquire(6) || b.TryAcquire(6) || !b.TryAcquire(4) {
		t.Fatal("budget of 10: 6 then 6 must fail, 4 must fit")
	}
	b.Release(10)
	if !b.TryAcquire(10) {
		t.Fatal("released bytes are free again")
	}
}
