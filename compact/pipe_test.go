package compact_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

func pipeCodec(t *testing.T) *datafile.KVCodec {
	t.Helper()
	c, err := datafile.NewKVCodec(datafile.Schema{Fields: table.RowType{{ID: 0, Name: "k", Type: bigint(false)}}, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// source yields batches holding keys 0, 1, 2, ... one per batch, failing
// with failAt (if set) instead of batch number failAt.
func source(codec *datafile.KVCodec, n int, failAt int, calls *atomic.Int64) func(*datafile.Batch) error {
	return func(b *datafile.Batch) error {
		i := int(calls.Add(1)) - 1
		if failAt >= 0 && i == failAt {
			return errors.New("disk on fire")
		}
		if n >= 0 && i >= n {
			return io.EOF
		}
		b.Reset()
		return codec.Append(b, table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i), Value: table.Row{int64(i)}})
	}
}

func TestPipeBatchesWritesEveryBatchInOrder(t *testing.T) {
	codec := pipeCodec(t)
	var calls atomic.Int64
	var got []int64
	err := compact.PipeBatches(context.Background(), codec.Codec, source(codec, 50, -1, &calls), func(b *datafile.Batch) error {
		got = append(got, b.Cols[0].I64[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 {
		t.Fatalf("wrote %d batches, want 50", len(got))
	}
	for i, k := range got {
		if k != int64(i) {
			t.Fatalf("batch %d holds key %d: out of order", i, k)
		}
	}
}

func TestPipeBatchesStopsReadingWhenAWriteFails(t *testing.T) {
	codec := pipeCodec(t)
	var calls atomic.Int64
	writes := 0
	err := compact.PipeBatches(context.Background(), codec.Codec, source(codec, -1, -1, &calls), func(b *datafile.Batch) error {
		writes++
		if writes == 3 {
			return errors.New("bucket full")
		}
		return nil
	})
	if err == nil || err.Error() != "bucket full" {
		t.Fatalf("PipeBatches = %v, want the write error", err)
	}
	n := calls.Load()
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != n {
		t.Fatal("next was called after PipeBatches returned")
	}
	if writes != 3 {
		t.Fatalf("%d writes after the failing one, want none", writes-3)
	}
}

func TestPipeBatchesReturnsTheReadErrorAfterWritingWhatCameBefore(t *testing.T) {
	codec := pipeCodec(t)
	var calls atomic.Int64
	writes := 0
	err := compact.PipeBatches(context.Background(), codec.Codec, source(codec, -1, 7, &calls), func(b *datafile.Batch) error {
		writes++
		return nil
	})
	if err == nil || err.Error() != "disk on fire" {
		t.Fatalf("PipeBatches = %v, want the read error", err)
	}
	if writes != 7 {
		t.Fatalf("wrote %d batches before the failure, want 7", writes)
	}
}

func TestPipeBatchesHonoursCancellation(t *testing.T) {
	codec := pipeCodec(t)
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	writes := 0
	err := compact.PipeBatches(ctx, codec.Codec, source(codec, -1, -1, &calls), func(b *datafile.Batch) error {
		writes++
		if writes == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PipeBatches = %v, want context.Canceled", err)
	}
}
