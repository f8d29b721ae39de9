package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

func atomic(t testing.TB, s string) table.DataType {
	t.Helper()
	dt, err := table.ParseAtomicType(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return dt
}

// sliceRun serves the records of one sorted run as batches of random small
// sizes (sometimes empty), so the merge refills batches mid-key-group.
type sliceRun struct {
	codec  *datafile.KVCodec
	recs   []table.KeyValue
	rng    *rand.Rand
	closed *int
}

func (s *sliceRun) Next(b *datafile.Batch, max int) error {
	b.Reset()
	if len(s.recs) == 0 {
		return io.EOF
	}
	if s.rng.Intn(8) == 0 {
		return nil // an empty batch is not the end
	}
	n := min(max, 1+s.rng.Intn(5), len(s.recs))
	for _, kv := range s.recs[:n] {
		if err := s.codec.Append(b, kv); err != nil {
			return err
		}
	}
	s.recs = s.recs[n:]
	return nil
}

func (s *sliceRun) Close() error {
	*s.closed++
	return nil
}

// keyShape is a primary key: its columns and a generator of distinct keys.
type keyShape struct {
	name string
	cols []string // "name TYPE"
	gen  func(rng *rand.Rand) table.Row
}

func keyShapes() []keyShape {
	strs := []string{"", "a", "ab", "b", "日本", "€", "ü", "z", "Z", "0"}
	return []keyShape{
		{"INT", []string{"k INT NOT NULL"}, func(rng *rand.Rand) table.Row {
			return table.Row{int32(rng.Intn(60) - 30)}
		}},
		{"VARCHAR", []string{"k VARCHAR(10) NOT NULL"}, func(rng *rand.Rand) table.Row {
			return table.Row{strs[rng.Intn(len(strs))] + strs[rng.Intn(len(strs))]}
		}},
		{"INT + STRING", []string{"k1 INT NOT NULL", "k2 STRING NOT NULL"}, func(rng *rand.Rand) table.Row {
			return table.Row{int32(rng.Intn(5) - 2), strs[rng.Intn(len(strs))]}
		}},
		{"SMALLINT + BOOLEAN + DECIMAL(10,2) + TIMESTAMP(6) + BYTES + DATE",
			[]string{"k1 SMALLINT NOT NULL", "k2 BOOLEAN NOT NULL", "k3 DECIMAL(10, 2) NOT NULL", "k4 TIMESTAMP(6) NOT NULL", "k5 BYTES NOT NULL", "k6 DATE NOT NULL"},
			func(rng *rand.Rand) table.Row {
				b := make([]byte, rng.Intn(3))
				for i := range b {
					b[i] = []byte{0, 0x7f, 0x80, 0xff}[rng.Intn(4)]
				}
				return table.Row{
					int16(rng.Intn(3) - 1),
					rng.Intn(2) == 0,
					table.Decimal{Unscaled: big.NewInt(int64(rng.Intn(5)-2) * 1e9), Precision: 10, Scale: 2},
					table.Timestamp{Millis: int64(rng.Intn(3) - 1), NanoOfMilli: int32(rng.Intn(2) * 1000)},
					b,
					int32(rng.Intn(2) - 1),
				}
			}},
	}
}

// shapeRowType is the key columns followed by randomRowType's value columns
// (v BIGINT, m INT, s STRING, ts INT), which the random configs refer to.
func shapeRowType(t testing.TB, sh keyShape) (table.RowType, []string) {
	var rt table.RowType
	var names []string
	for i, c := range sh.cols {
		name, typ, _ := strings.Cut(c, " ")
		rt = append(rt, table.DataField{ID: i, Name: name, Type: atomic(t, typ)})
		names = append(names, name)
	}
	for _, f := range randomRowType[1:] {
		f.ID = len(rt)
		rt = append(rt, f)
	}
	return rt, names
}

func cloneKVs(kvs []table.KeyValue) []table.KeyValue {
	out := make([]table.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = table.KeyValue{Key: slices.Clone(kv.Key), Seq: kv.Seq, Kind: kv.Kind, Value: slices.Clone(kv.Value)}
	}
	return out
}

func fmtKeyed(kvs []table.KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = fmtVal([]any(kv.Key)) + "=" + fmtKV(kv)
	}
	return strings.Join(parts, " ")
}

// collectBatches drains a BatchReader, materializing every output row.
func collectBatches(t *testing.T, codec *datafile.KVCodec, br *BatchReader, size int) ([]table.KeyValue, error) {
	t.Helper()
	var out []table.KeyValue
	b := codec.NewBatch()
	for {
		err := br.NextInto(b)
		if errors.Is(err, io.EOF) {
			return out, br.Close()
		}
		if err != nil {
			return out, errors.Join(err, br.Close())
		}
		if b.N < 1 || b.N > size {
			t.Fatalf("output batch of %d rows for size %d", b.N, size)
		}
		for i := range b.N {
			kv, err := codec.Record(b, i)
			if err != nil {
				t.Fatalf("output row %d: %v", i, err)
			}
			out = append(out, kv)
		}
	}
}

func TestBatchMergeMatchesRowMerge(t *testing.T) {
	rng := rand.New(rand.NewSource(randomSeed(t)))
	configs := randomConfigs()
	configs = append(configs,
		randomConfig{name: "first-row", options: map[string]string{"merge-engine": "first-row"}, retracts: true},
		randomConfig{name: "aggregation without retractions", options: map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg"}},
		randomConfig{name: "partial-update sequence groups", options: map[string]string{"merge-engine": "partial-update", "fields.ts.sequence-group": "v,m"}},
	)
	iterations := 40
	if testing.Short() {
		iterations = 8
	}
	firstRowErrors := 0
	for _, sh := range keyShapes() {
		rt, keyNames := shapeRowType(t, sh)
		codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: keyNames})
		if err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		keyTypes := make([]table.DataType, len(keyNames))
		for i := range keyNames {
			keyTypes[i] = rt[i].Type
		}
		if !BatchKeysSupported(keyTypes) {
			t.Fatalf("%s: BatchKeysSupported = false", sh.name)
		}
		for _, cfg := range configs {
			e, err := NewEngine(cfg.options, rt, keyNames)
			if err != nil {
				t.Fatalf("%s / %s: %v", sh.name, cfg.name, err)
			}
			for it := range iterations {
				// Distinct keys in key order.
				keySpace := 1 + rng.Intn(30)
				var keys []table.Row
				seen := map[string]bool{}
				for range keySpace {
					k := sh.gen(rng)
					if s := fmtVal([]any(k)); !seen[s] {
						seen[s] = true
						keys = append(keys, k)
					}
				}
				slices.SortFunc(keys, func(a, b table.Row) int { return table.CompareRows(keyTypes, a, b) })
				numRuns := 1 + rng.Intn(6)
				runs := make([][]table.KeyValue, numRuns)
				for r := range runs {
					for _, k := range keys {
						if rng.Intn(3) == 0 {
							continue
						}
						x := randomRecord(rng, 0, cfg.retracts)
						value := append(slices.Clone(k), x.Value[1:]...)
						runs[r] = append(runs[r], table.KeyValue{Key: slices.Clone(k), Seq: x.Seq, Kind: x.Kind, Value: value})
					}
				}
				for _, dropDelete := range []bool{false, true} {
					iters := make([]Iterator, numRuns)
					for r, kvs := range runs {
						kvs = cloneKVs(kvs)
						a, b := splitPoints(rng, len(kvs))
						iters[r] = Concat(FromSlice(kvs[:a]), FromSlice(kvs[a:b]), FromSlice(kvs[b:]))
					}
					want, wantErr := Collect(e.NewReader(context.Background(), iters, dropDelete))

					closed := 0
					bruns := make([]BatchRun, numRuns)
					for r, kvs := range runs {
						bruns[r] = &sliceRun{codec: codec, recs: cloneKVs(kvs), rng: rng, closed: &closed}
					}
					size := 1 + rng.Intn(7)
					br, err := e.NewBatchReader(context.Background(), codec, bruns, dropDelete, size)
					if err != nil {
						t.Fatalf("%s / %s: NewBatchReader: %v", sh.name, cfg.name, err)
					}
					got, gotErr := collectBatches(t, codec, br, size)
					if closed != numRuns {
						t.Fatalf("%s / %s: %d of %d runs closed", sh.name, cfg.name, closed, numRuns)
					}
					where := fmt.Sprintf("%s / %s, iteration %d, dropDelete=%v, %d runs, batch size %d", sh.name, cfg.name, it, dropDelete, numRuns, size)
					if wantErr != nil || gotErr != nil {
						if errors.Is(wantErr, ErrFirstRowRetract) && errors.Is(gotErr, ErrFirstRowRetract) {
							firstRowErrors++
							continue
						}
						t.Fatalf("%s:\nrow path error   %v\nbatch path error %v", where, wantErr, gotErr)
					}
					if fmtKeyed(got) != fmtKeyed(want) {
						t.Fatalf("%s:\nruns %v\nbatch %s\nrow   %s", where, runs, fmtKeyed(got), fmtKeyed(want))
					}
				}
			}
		}
	}
	if firstRowErrors == 0 {
		t.Errorf("no random first-row merge met a retraction")
	}
}

func TestBatchMergeFirstRowRetraction(t *testing.T) {
	rt := schema("v", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	runsOf := func() [][]table.KeyValue {
		return [][]table.KeyValue{
			{rec("+I", 1, 1, "a"), rec("+I", 2, 2, "b")},
			{rec("-D", 3, 1, "a"), rec("-U", 4, 3, "c")},
		}
	}
	for _, c := range []struct {
		name    string
		options map[string]string
		want    string // "" means ErrFirstRowRetract
	}{
		{"first-row fails on a retraction", map[string]string{"merge-engine": "first-row"}, ""},
		{"first-row ignore-delete skips it", map[string]string{"merge-engine": "first-row", "ignore-delete": "true"}, "+I1(1,a) +I2(2,b) -U4(3,c)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewEngine(c.options, rt, []string{"k"})
			if err != nil {
				t.Fatal(err)
			}
			var iters []Iterator
			var bruns []BatchRun
			closed := 0
			rng := rand.New(rand.NewSource(1))
			for _, r := range runsOf() {
				iters = append(iters, FromSlice(r))
				bruns = append(bruns, &sliceRun{codec: codec, recs: r, rng: rng, closed: &closed})
			}
			rowOut, rowErr := Collect(e.NewReader(context.Background(), iters, false))
			br, err := e.NewBatchReader(context.Background(), codec, bruns, false, 2)
			if err != nil {
				t.Fatal(err)
			}
			batchOut, batchErr := collectBatches(t, codec, br, 2)
			if c.want == "" {
				if !errors.Is(rowErr, ErrFirstRowRetract) || !errors.Is(batchErr, ErrFirstRowRetract) {
					t.Fatalf("row path: %v; batch path: %v; want ErrFirstRowRetract from both", rowErr, batchErr)
				}
				if !strings.Contains(batchErr.Error(), "merge key [1]") {
					t.Errorf("batch error does not name the key: %v", batchErr)
				}
				return
			}
			if rowErr != nil || batchErr != nil {
				t.Fatalf("row path: %v; batch path: %v", rowErr, batchErr)
			}
			if fmtKVs(rowOut) != c.want || fmtKVs(batchOut) != c.want {
				t.Fatalf("row %s\nbatch %s\nwant %s", fmtKVs(rowOut), fmtKVs(batchOut), c.want)
			}
		})
	}
}

func TestBatchKeysSupported(t *testing.T) {
	cases := []struct {
		types []string
		want  bool
	}{
		{[]string{"BOOLEAN"}, true},
		{[]string{"TINYINT"}, true},
		{[]string{"SMALLINT"}, true},
		{[]string{"INT NOT NULL"}, true},
		{[]string{"BIGINT"}, true},
		{[]string{"DATE"}, true},
		{[]string{"TIME(0)"}, true},
		{[]string{"CHAR(3)"}, true},
		{[]string{"VARCHAR(20)"}, true},
		{[]string{"STRING"}, true},
		{[]string{"BINARY(4)"}, true},
		{[]string{"BYTES"}, true},
		{[]string{"DECIMAL(5, 2)"}, true},
		{[]string{"DECIMAL(18, 4)"}, true},
		{[]string{"TIMESTAMP(0)"}, true},
		{[]string{"TIMESTAMP(3)"}, true},
		{[]string{"TIMESTAMP(6)"}, true},
		{[]string{"TIMESTAMP(3) WITH LOCAL TIME ZONE"}, true},
		{[]string{"TIMESTAMP(6) WITH LOCAL TIME ZONE"}, true},
		{[]string{"INT", "STRING", "BIGINT"}, true},
		{nil, true},
		{[]string{"FLOAT"}, false},
		{[]string{"DOUBLE"}, false},
		{[]string{"DECIMAL(19, 0)"}, false},
		{[]string{"DECIMAL(20, 0)"}, false},
		{[]string{"DECIMAL(38, 10)"}, false},
		{[]string{"TIMESTAMP(7)"}, false},
		{[]string{"TIMESTAMP(9)"}, false},
		{[]string{"TIMESTAMP(9) WITH LOCAL TIME ZONE"}, false},
		{[]string{"INT", "DOUBLE"}, false},
		{[]string{"STRING", "TIMESTAMP(9)"}, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.types, ", "), func(t *testing.T) {
			var types []table.DataType
			for _, s := range c.types {
				types = append(types, atomic(t, s))
			}
			if got := BatchKeysSupported(types); got != c.want {
				t.Fatalf("BatchKeysSupported(%v) = %v, want %v", c.types, got, c.want)
			}
		})
	}
	t.Run("nested key type", func(t *testing.T) {
		if BatchKeysSupported([]table.DataType{tIntList}) {
			t.Fatal("ARRAY key accepted")
		}
	})
}

func TestNewBatchReaderRefusesRowPathCases(t *testing.T) {
	rt := schema("v", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"no reducer", Options{KeyTypes: intKey, NoReducer: true}},
		{"double key", Options{KeyTypes: []table.DataType{tDouble}}},
	} {
		if _, err := NewBatchReader(context.Background(), codec, nil, e.NewFunction(), c.opts, 4); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

func TestBatchMergeHonoursCancellation(t *testing.T) {
	rt := schema("v", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	var recs []table.KeyValue
	for i := range 5000 {
		recs = append(recs, rec("+I", int64(i), int32(i), "x"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	closed := 0
	br, err := e.NewBatchReader(ctx, codec, []BatchRun{&sliceRun{codec: codec, recs: recs, rng: rand.New(rand.NewSource(1)), closed: &closed}}, false, 7)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	b := codec.NewBatch()
	for {
		err := br.NextInto(b)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("after %d rows: %v, want context.Canceled", rows, err)
			}
			break
		}
		rows += b.N
	}
	if rows >= len(recs) {
		t.Fatalf("cancelled merge emitted all %d rows", rows)
	}
	// The error sticks.
	if err := br.NextInto(b); !errors.Is(err, context.Canceled) {
		t.Fatalf("second NextInto: %v", err)
	}
	if err := br.Close(); err != nil || closed != 1 {
		t.Fatalf("close: %v, %d runs closed", err, closed)
	}
}

// failingRun serves its records, then fails.
type failingRun struct {
	sliceRun
	err error
}

func (f *failingRun) Next(b *datafile.Batch, max int) error {
	if len(f.recs) == 0 {
		b.Reset()
		return f.err
	}
	return f.sliceRun.Next(b, max)
}

func TestBatchMergeRunErrorSurfaces(t *testing.T) {
	rt := schema("v", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	rng := rand.New(rand.NewSource(2))
	closed := 0
	var good, bad []table.KeyValue
	for i := range 40 {
		good = append(good, rec("+I", int64(i), int32(i), "g"))
		if i < 10 {
			bad = append(bad, rec("+I", int64(100+i), int32(2*i), "b"))
		}
	}
	runs := []BatchRun{
		&sliceRun{codec: codec, recs: good, rng: rng, closed: &closed},
		&failingRun{sliceRun: sliceRun{codec: codec, recs: bad, rng: rng, closed: &closed}, err: boom},
	}
	br, err := e.NewBatchReader(context.Background(), codec, runs, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	_, err = collectBatches(t, codec, br, 3)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "sorted run 1") {
		t.Fatalf("err = %v, want the run's error naming run 1", err)
	}
	if closed != 2 {
		t.Fatalf("%d runs closed", closed)
	}
}

// TestBatchCompactionOfFilesMatchesRowCompaction runs the whole data path
// of a compaction both ways over real files: sorted runs written as
// Parquet, merged through OpenKeyValue + Reader + Write, and through
// OpenKeyValueBatches + BatchReader + WriteBatch. The outputs must hold the
// same records and the same statistics.
func TestBatchCompactionOfFilesMatchesRowCompaction(t *testing.T) {
	rng := rand.New(rand.NewSource(randomSeed(t)))
	dir := t.TempDir()
	ctx := context.Background()
	fio := fileio.NewLocal()
	opts := map[string]string{"parquet.page.size": "1 kb"}
	configs := append(randomConfigs(),
		randomConfig{name: "first-row", options: map[string]string{"merge-engine": "first-row"}, retracts: false})
	shapes := keyShapes()
	file := 0
	for _, sh := range []keyShape{shapes[2], shapes[3]} {
		rt, keyNames := shapeRowType(t, sh)
		s := datafile.Schema{Fields: rt, KeyNames: keyNames}
		codec, err := datafile.NewKVCodec(s)
		if err != nil {
			t.Fatal(err)
		}
		keyTypes := make([]table.DataType, len(keyNames))
		for i := range keyNames {
			keyTypes[i] = rt[i].Type
		}
		for _, cfg := range configs {
			e, err := NewEngine(cfg.options, rt, keyNames)
			if err != nil {
				t.Fatal(err)
			}
			var keys []table.Row
			seen := map[string]bool{}
			for range 400 {
				k := sh.gen(rng)
				if s := fmtVal([]any(k)); !seen[s] {
					seen[s] = true
					keys = append(keys, k)
				}
			}
			slices.SortFunc(keys, func(a, b table.Row) int { return table.CompareRows(keyTypes, a, b) })
			var paths []string
			for range 2 + rng.Intn(3) {
				file++
				path := filepath.Join(dir, fmt.Sprintf("data-run-%d.parquet", file))
				w, err := datafile.NewKeyValueWriter(ctx, fio, path, s, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					if rng.Intn(3) == 0 {
						continue
					}
					x := randomRecord(rng, 0, cfg.retracts)
					if err := w.Write(table.KeyValue{Key: k, Seq: x.Seq, Kind: x.Kind, Value: append(slices.Clone(k), x.Value[1:]...)}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := w.Close(); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, path)
			}
			for _, dropDelete := range []bool{false, true} {
				where := fmt.Sprintf("%s / %s, dropDelete=%v, %d runs", sh.name, cfg.name, dropDelete, len(paths))
				// Row path.
				var iters []Iterator
				for _, p := range paths {
					r, err := datafile.OpenKeyValue(ctx, fio, p, s, s)
					if err != nil {
						t.Fatal(err)
					}
					iters = append(iters, r)
				}
				file++
				rowOut := filepath.Join(dir, fmt.Sprintf("data-out-%d.parquet", file))
				w, err := datafile.NewKeyValueWriter(ctx, fio, rowOut, s, opts)
				if err != nil {
					t.Fatal(err)
				}
				merged := e.NewReader(ctx, iters, dropDelete)
				for {
					kv, err := merged.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("%s: row merge: %v", where, err)
					}
					if err := w.Write(kv); err != nil {
						t.Fatal(err)
					}
				}
				merged.Close()
				rowStats, err := w.Close()
				if err != nil {
					t.Fatal(err)
				}
				// Batch path: the file readers are the runs.
				var runs []BatchRun
				for _, p := range paths {
					r, err := datafile.OpenKeyValueBatches(ctx, fio, p, s, s, codec)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					runs = append(runs, r)
				}
				file++
				batchOut := filepath.Join(dir, fmt.Sprintf("data-out-%d.parquet", file))
				w, err = datafile.NewKeyValueWriter(ctx, fio, batchOut, s, opts)
				if err != nil {
					t.Fatal(err)
				}
				br, err := e.NewBatchReader(ctx, codec, runs, dropDelete, 1+rng.Intn(300))
				if err != nil {
					t.Fatal(err)
				}
				b := codec.NewBatch()
				for {
					err := br.NextInto(b)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("%s: batch merge: %v", where, err)
					}
					if err := w.WriteBatch(b, 0, b.N); err != nil {
						t.Fatal(err)
					}
				}
				if err := br.Close(); err != nil {
					t.Fatal(err)
				}
				batchStats, err := w.Close()
				if err != nil {
					t.Fatal(err)
				}
				if rowStats.RowCount == 0 {
					t.Fatalf("%s: empty output", where)
				}
				rs, bs := *rowStats, *batchStats
				rs.Path, rs.FileSize, bs.Path, bs.FileSize = "", 0, "", 0
				if a, b := fmt.Sprintf("%+v", statsView(rs)), fmt.Sprintf("%+v", statsView(bs)); a != b {
					t.Fatalf("%s: stats differ\nrow   %s\nbatch %s", where, a, b)
				}
				rowRecs := readFile(t, rowOut, s)
				batchRecs := readFile(t, batchOut, s)
				if fmtKeyed(rowRecs) != fmtKeyed(batchRecs) {
					t.Fatalf("%s: outputs differ\nrow   %s\nbatch %s", where, fmtKeyed(rowRecs), fmtKeyed(batchRecs))
				}
			}
		}
	}
}

// statsView prints FileStats with values through fmtVal (decimals by value,
// null counts dereferenced).
func statsView(s datafile.FileStats) string {
	row := func(r table.Row) string { return fmtVal([]any(r)) }
	counts := func(n []*int64) string {
		parts := make([]string, len(n))
		for i, p := range n {
			parts[i] = "null"
			if p != nil {
				parts[i] = fmt.Sprint(*p)
			}
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprintf("rows=%d keys=%s..%s seq=%d..%d deletes=%d keystats=%s/%s/%s valuestats=%s/%s/%s cols=%v",
		s.RowCount, row(s.MinKey), row(s.MaxKey), s.MinSeq, s.MaxSeq, s.DeleteRowCount,
		row(s.KeyStats.Min), row(s.KeyStats.Max), counts(s.KeyStats.NullCounts),
		row(s.ValueStats.Min), row(s.ValueStats.Max), counts(s.ValueStats.NullCounts), s.ValueStatsCols)
}

func readFile(t *testing.T, path string, s datafile.Schema) []table.KeyValue {
	t.Helper()
	r, err := datafile.OpenKeyValue(context.Background(), fileio.NewLocal(), path, s, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Collect(r)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}
