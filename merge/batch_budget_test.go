package merge

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// An output batch of large values ends at the byte budget rather than at
// its row count: three such batches circulate between merge and encoder.
func TestBatchMergeBoundsOutputBatchesByBytes(t *testing.T) {
	rt := schema("s", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	const keys, size = 300, 256 << 10
	val := strings.Repeat("x", size)
	closed := 0
	var runs []BatchRun
	for r := range 2 {
		var recs []table.KeyValue
		for k := range keys {
			if k%2 == r || k%5 == 0 { // every fifth key in both runs
				recs = append(recs, rec("+I", int64(r), int32(k), val))
			}
		}
		runs = append(runs, &sliceRun{codec: codec, recs: recs, rng: rand.New(rand.NewSource(int64(r))), closed: &closed})
	}
	br, err := e.NewBatchReader(context.Background(), codec, runs, true, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	out := codec.NewBatch()
	rows, batches := 0, 0
	for {
		err := br.NextInto(out)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		batches++
		if out.ByteSize() > outByteBudget+size {
			t.Fatalf("output batch %d holds %d value bytes in %d rows, budget %d", batches, out.ByteSize(), out.N, outByteBudget)
		}
		rows += out.N
	}
	// 75 MiB of values: without the budget they would fit one batch of
	// 1024 rows.
	if want := max(2, keys*size/outByteBudget); rows != keys || batches < want {
		t.Fatalf("merged %d rows in %d batches, want %d rows in at least %d", rows, batches, keys, want)
	}
}
