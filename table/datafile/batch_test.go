package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// batchTestSchema is every flat type of allTypesSchema plus three columns
// shaped to hit page-level cases: a low-cardinality string (dictionary
// pages), large random binaries (the dictionary outgrows its limit and the
// column falls back to PLAIN) and an INT null over a long stretch (all-null
// pages). The key mixes INT, STRING and DATE.
func batchTestSchema(t testing.TB) Schema {
	var fields table.RowType
	for _, f := range allTypesSchema(t) {
		if !f.Type.IsComposite() {
			fields = append(fields, f)
		}
	}
	fields = append(fields,
		table.DataField{ID: 40, Name: "dict", Type: mustType(t, "STRING")},
		table.DataField{ID: 41, Name: "big", Type: mustType(t, "BYTES")},
		table.DataField{ID: 42, Name: "sparse", Type: mustType(t, "INT")},
	)
	// cd0 INT NOT NULL, cn0 STRING, cq0 DATE
	return Schema{Fields: fields, KeyNames: []string{"cd0", "cn0", "cq0"}}
}

const sparseNullFrom, sparseNullTo = 700, 2300

// batchTestRecords returns n records in key order (keys unique), with
// special float values, empty and multi-byte strings and null runs mixed in.
func batchTestRecords(t testing.TB, r *rand.Rand, s Schema, n int) []table.KeyValue {
	keyFields, err := s.KeyFields()
	if err != nil {
		t.Fatal(err)
	}
	keyTypes := make([]table.DataType, len(keyFields))
	keyIdx := make([]int, len(keyFields))
	for i, f := range keyFields {
		keyTypes[i] = f.Type.WithNullable(false)
		keyIdx[i] = s.Fields.Index(f.Name)
	}
	dictWords := []string{"", "a", "日本", "€üx", "zzz"}
	seen := map[string]bool{}
	var out []table.KeyValue
	kinds := []table.RowKind{table.RowKindInsert, table.RowKindUpdateBefore, table.RowKindUpdateAfter, table.RowKindDelete}
	for len(out) < n {
		key := make(table.Row, len(keyTypes))
		for i, kt := range keyTypes {
			key[i] = randValue(r, kt)
		}
		// Keys with a small INT part make the string and date parts matter.
		key[0] = int32(r.IntN(50))
		ks := fmt.Sprint([]any(key))
		if seen[ks] {
			continue
		}
		seen[ks] = true
		row := make(table.Row, len(s.Fields))
		for i, f := range s.Fields {
			row[i] = randValue(r, f.Type)
			switch f.Type.Root {
			case table.TypeFloat:
				switch r.IntN(40) {
				case 0:
					row[i] = float32(math.NaN())
				case 1:
					row[i] = float32(math.Copysign(0, -1))
				case 2:
					row[i] = float32(0)
				}
			case table.TypeDouble:
				switch r.IntN(20) {
				case 0:
					row[i] = math.Copysign(0, -1)
				case 1:
					row[i] = 0.0
				case 2:
					row[i] = math.Inf(-1)
				}
			}
		}
		for i, j := range keyIdx {
			row[j] = key[i]
		}
		row[s.Fields.Index("dict")] = dictWords[r.IntN(len(dictWords))]
		big := make([]byte, 300+r.IntN(300))
		for i := range big {
			big[i] = byte(r.Uint32())
		}
		row[s.Fields.Index("big")] = big
		if r.IntN(10) == 0 {
			row[s.Fields.Index("big")] = nil
		}
		out = append(out, table.KeyValue{Key: key, Seq: r.Int64N(1 << 40), Kind: kinds[r.IntN(4)], Value: row})
	}
	slices.SortFunc(out, func(a, b table.KeyValue) int { return table.CompareRows(keyTypes, a.Key, b.Key) })
	sp := s.Fields.Index("sparse")
	for i := range out {
		if i >= sparseNullFrom && i < sparseNullTo {
			out[i].Value[sp] = nil
		} else if out[i].Value[sp] == nil {
			out[i].Value[sp] = int32(i)
		}
	}
	return out
}

func kvEqual(a, b table.KeyValue) bool {
	return a.Seq == b.Seq && a.Kind == b.Kind && flatEqual(a.Key, b.Key) && flatEqual(a.Value, b.Value)
}

// flatEqual compares flat rows exactly: floats by their bits (NaN equals
// NaN, -0.0 differs from 0.0), the rest as valuesEqual does.
func flatEqual(a, b table.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !exactEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func exactEqual(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return valuesEqual(a, b)
}

func requireSameKVs(t *testing.T, what string, got, want []table.KeyValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !kvEqual(got[i], want[i]) {
			t.Fatalf("%s: record %d differs:\ngot  %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

// statsEqual is a deep comparison of two FileStats except Path and
// FileSize; decimals compare by value (a decoded zero and a computed zero
// differ in their big.Int internals).
func statsEqual(a, b *FileStats) error {
	if a.RowCount != b.RowCount || a.MinSeq != b.MinSeq || a.MaxSeq != b.MaxSeq || a.DeleteRowCount != b.DeleteRowCount {
		return fmt.Errorf("counts: rows %d/%d seq %d-%d/%d-%d deletes %d/%d", a.RowCount, b.RowCount, a.MinSeq, a.MaxSeq, b.MinSeq, b.MaxSeq, a.DeleteRowCount, b.DeleteRowCount)
	}
	if !flatEqual(a.MinKey, b.MinKey) || !flatEqual(a.MaxKey, b.MaxKey) {
		return fmt.Errorf("keys: %v..%v vs %v..%v", a.MinKey, a.MaxKey, b.MinKey, b.MaxKey)
	}
	if !slices.Equal(a.ValueStatsCols, b.ValueStatsCols) {
		return fmt.Errorf("value stats columns %v vs %v", a.ValueStatsCols, b.ValueStatsCols)
	}
	for _, p := range []struct {
		name string
		x, y Stats
		cols []string
	}{{"key", a.KeyStats, b.KeyStats, nil}, {"value", a.ValueStats, b.ValueStats, a.ValueStatsCols}} {
		if len(p.x.Min) != len(p.y.Min) || len(p.x.Max) != len(p.y.Max) || len(p.x.NullCounts) != len(p.y.NullCounts) {
			return fmt.Errorf("%s stats arity differs", p.name)
		}
		for i := range p.x.Min {
			col := fmt.Sprint(i)
			if p.cols != nil {
				col = p.cols[i]
			}
			if !exactEqual(p.x.Min[i], p.y.Min[i]) || !exactEqual(p.x.Max[i], p.y.Max[i]) {
				return fmt.Errorf("%s stats of %s: min/max %#v/%#v vs %#v/%#v", p.name, col, p.x.Min[i], p.x.Max[i], p.y.Min[i], p.y.Max[i])
			}
			nx, ny := p.x.NullCounts[i], p.y.NullCounts[i]
			if (nx == nil) != (ny == nil) || (nx != nil && *nx != *ny) {
				return fmt.Errorf("%s stats of %s: null counts %v vs %v", p.name, col, deref(nx), deref(ny))
			}
		}
	}
	return nil
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// writeKVRows writes recs with KeyValueWriter.Write.
func writeKVRows(t *testing.T, path string, s Schema, opts map[string]string, recs []table.KeyValue) *FileStats {
	t.Helper()
	st, _ := writeKVRowsEstimated(t, path, s, opts, recs)
	return st
}

// writeKVRowsEstimated also returns EstimatedSize before Close.
func writeKVRowsEstimated(t *testing.T, path string, s Schema, opts map[string]string, recs []table.KeyValue) (*FileStats, int64) {
	t.Helper()
	w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), path, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range recs {
		if err := w.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	est := w.EstimatedSize()
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return st, est
}

// writeKVBatches writes recs with WriteBatch: chunks of random size built
// with KVCodec.Append, each written in one or two row ranges. With
// mixRows, some chunks go through Write instead.
func writeKVBatches(t *testing.T, r *rand.Rand, path string, s Schema, opts map[string]string, recs []table.KeyValue, mixRows bool) *FileStats {
	t.Helper()
	st, _ := writeKVBatchesEstimated(t, r, path, s, opts, recs, mixRows)
	return st
}

// writeKVBatchesEstimated also returns EstimatedSize before Close.
func writeKVBatchesEstimated(t *testing.T, r *rand.Rand, path string, s Schema, opts map[string]string, recs []table.KeyValue, mixRows bool) (*FileStats, int64) {
	t.Helper()
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), path, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	b := codec.NewBatch()
	for i := 0; i < len(recs); {
		n := min(1+r.IntN(300), len(recs)-i)
		if mixRows && r.IntN(3) == 0 {
			for _, kv := range recs[i : i+n] {
				if err := w.Write(kv); err != nil {
					t.Fatal(err)
				}
			}
			i += n
			continue
		}
		b.Reset()
		for _, kv := range recs[i : i+n] {
			if err := codec.Append(b, kv); err != nil {
				t.Fatalf("append record %d: %v", i, err)
			}
		}
		if b.N != n {
			t.Fatalf("batch has %d rows after %d appends", b.N, n)
		}
		cut := r.IntN(n + 1)
		if err := w.WriteBatch(b, 0, cut); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(b, cut, n); err != nil {
			t.Fatal(err)
		}
		i += n
	}
	est := w.EstimatedSize()
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return st, est
}

// readKVBatches reads a whole file through the batch path with batches of
// random size; records are kept across Next calls, so they must not alias
// the batch.
func readKVBatches(t *testing.T, r *rand.Rand, path string, fileSchema, readSchema Schema, codec *KVCodec) ([]table.KeyValue, error) {
	t.Helper()
	br, err := OpenKeyValueBatches(context.Background(), fileio.NewLocal(), path, fileSchema, readSchema, codec)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	b := codec.NewBatch()
	var out []table.KeyValue
	for {
		max := 1 + r.IntN(700)
		err := br.Next(b, max)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if b.N < 1 || b.N > max {
			t.Fatalf("%s: batch of %d rows for max %d", path, b.N, max)
		}
		for i := range b.N {
			kv, err := codec.Record(b, i)
			if err != nil {
				// Record has no file to name: the caller adds it.
				return nil, fmt.Errorf("data file %s record %d: %w", path, len(out), err)
			}
			out = append(out, kv)
		}
	}
}

// pageKinds counts the data pages of a column that use the dictionary and
// those that do not, and the data pages where every row is null.
func pageKinds(t *testing.T, path, column string) (dict, plain, allNull int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	leaf, ok := pf.Schema().Lookup(column)
	if !ok {
		t.Fatalf("%s: no column %s", path, column)
	}
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Dictionary() != nil {
				dict++
			} else {
				plain++
			}
			if p.NumValues() > 0 && p.NumNulls() == p.NumValues() {
				allNull++
			}
			parquet.Release(p)
		}
		pages.Close()
	}
	return dict, plain, allNull
}

func TestBatchWriteMatchesRowWrite(t *testing.T) {
	s := batchTestSchema(t)
	r := rand.New(rand.NewPCG(7, 11))
	recs := batchTestRecords(t, r, s, 3000)
	dir := t.TempDir()
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		opts          map[string]string
		plainFallback bool // "big" must have dictionary and PLAIN pages
	}{
		// One row group: "big" outgrows the 1 MiB dictionary and falls back to PLAIN.
		{"small pages, one row group", map[string]string{"parquet.page.size": "1 kb", "file.compression": "snappy"}, true},
		// Several row groups (the dictionaries restart in each).
		{"small pages, several row groups", map[string]string{"parquet.page.size": "1 kb", "parquet.block.size": "256 kb"}, false},
		{"full stats, no compression", map[string]string{"metadata.stats-mode": "full", "file.compression": "none", "parquet.page.size": "4 kb"}, false},
		{"counts mode with per-column overrides", map[string]string{"metadata.stats-mode": "counts", "fields.dict.stats-mode": "full",
			"fields.cn0.stats-mode": "truncate(2)", "fields.cf0.stats-mode": "none", "fields.cg0.stats-mode": "full", "parquet.page.size": "2 kb"}, false},
		{"keep first columns", map[string]string{"metadata.stats-keep-first-n-columns": "6", "fields.big.stats-mode": "truncate(3)", "parquet.page.size": "2 kb"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rowPath := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+"-rows.parquet")
			rowStats, rowEst := writeKVRowsEstimated(t, rowPath, s, c.opts, recs)
			for _, mixed := range []bool{false, true} {
				batchPath := filepath.Join(dir, fmt.Sprintf("%s-batches-%v.parquet", strings.ReplaceAll(c.name, " ", "_"), mixed))
				batchStats, batchEst := writeKVBatchesEstimated(t, r, batchPath, s, c.opts, recs, mixed)
				// File rolling uses the estimate: the paths may cut row
				// groups at other rows, but must estimate alike.
				if d := float64(batchEst-rowEst) / float64(rowEst); d > 0.05 || d < -0.05 {
					t.Errorf("mixed=%v: EstimatedSize %d on the batch path, %d on the row path", mixed, batchEst, rowEst)
				}
				if err := statsEqual(rowStats, batchStats); err != nil {
					t.Fatalf("mixed=%v: stats of the batch-written file differ from the row-written one: %v", mixed, err)
				}
				if batchStats.Path != batchPath || batchStats.FileSize <= 0 {
					t.Fatalf("path %s size %d", batchStats.Path, batchStats.FileSize)
				}
				requireSameKVs(t, "row reader on the batch-written file", readAllKV(t, batchPath, s, s), recs)
				got, err := readKVBatches(t, r, batchPath, s, s, codec)
				if err != nil {
					t.Fatalf("batch reader on the batch-written file: %v", err)
				}
				requireSameKVs(t, "batch reader on the batch-written file", got, recs)
			}
			requireSameKVs(t, "row reader on the row-written file", readAllKV(t, rowPath, s, s), recs)
			got, err := readKVBatches(t, r, rowPath, s, s, codec)
			if err != nil {
				t.Fatalf("batch reader on the row-written file: %v", err)
			}
			requireSameKVs(t, "batch reader on the row-written file", got, recs)

			// The file shapes the test is about really occur.
			if d, _, _ := pageKinds(t, rowPath, "dict"); d == 0 {
				t.Errorf("column dict has no dictionary-encoded page")
			}
			if _, _, n := pageKinds(t, rowPath, "sparse"); n == 0 {
				t.Errorf("column sparse has no all-null page")
			}
			if c.plainFallback {
				if d, p, _ := pageKinds(t, rowPath, "big"); d == 0 || p == 0 {
					t.Errorf("column big: %d dictionary and %d plain pages, want both", d, p)
				}
			}
		})
	}
}

// A page-level check that value stats of special floats are the same on
// both paths: NaN disables min/max, -0.0 and 0.0 tie.
func TestBatchWriteSpecialFloatStats(t *testing.T) {
	s := Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
		{ID: 1, Name: "f", Type: mustType(t, "FLOAT")},
		{ID: 2, Name: "d", Type: mustType(t, "DOUBLE")},
	}, KeyNames: []string{"k"}}
	negZero := math.Copysign(0, -1)
	cases := [][][2]any{
		{{float32(1), negZero}, {float32(math.NaN()), 0.0}, {nil, -1.5}},
		{{float32(negZero), 0.0}, {float32(0), negZero}, {float32(-0.5), nil}},
		{{nil, nil}, {nil, nil}},
		{{float32(math.Inf(1)), math.Inf(-1)}, {float32(math.Inf(-1)), math.NaN()}},
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for ci, vals := range cases {
		var recs []table.KeyValue
		for i, v := range vals {
			recs = append(recs, table.KeyValue{Key: table.Row{int32(i)}, Seq: int64(i), Value: table.Row{int32(i), v[0], v[1]}})
		}
		a := writeKVRows(t, filepath.Join(dir, fmt.Sprintf("rows-%d.parquet", ci)), s, nil, recs)
		b := writeKVBatches(t, r, filepath.Join(dir, fmt.Sprintf("batches-%d.parquet", ci)), s, nil, recs, false)
		if err := statsEqual(a, b); err != nil {
			t.Errorf("case %d: %v", ci, err)
		}
	}
}

func TestBatchReaderMatchesRowReaderOnFixtures(t *testing.T) {
	files := fixtureParquetFiles(t)
	r := rand.New(rand.NewPCG(5, 6))
	var pk, batched, evolvedRefused int
	var fallbacks []string
	for _, ff := range files {
		schemas := loadSchemas(t, ff.table)
		if len(schemas[len(schemas)-1].PrimaryKeys) == 0 {
			continue
		}
		name, _ := filepath.Rel(fixtureRoot, ff.path)
		t.Run(name, func(t *testing.T) {
			fs := fileSchemaOf(t, ff.path, schemas)
			if len(fs.PrimaryKeys) == 0 {
				return
			}
			pk++
			s := fs.schema()
			codec, err := NewKVCodec(s)
			if err != nil {
				fallbacks = append(fallbacks, name+": "+err.Error())
				return
			}
			got, err := readKVBatches(t, r, ff.path, s, s, codec)
			if errors.Is(err, ErrNoBatchPath) {
				fallbacks = append(fallbacks, name+": "+err.Error())
				return
			}
			if err != nil {
				t.Fatalf("batch read: %v", err)
			}
			batched++
			requireSameKVs(t, "batch reader vs row reader", got, readAllKV(t, ff.path, s, s))
			// Through a newer schema the batch path refuses (casts are the
			// row reader's job).
			if latest := schemas[len(schemas)-1]; latest.ID != fs.ID {
				lc, err := NewKVCodec(latest.schema())
				if err == nil {
					_, err = readKVBatches(t, r, ff.path, s, latest.schema(), lc)
					if !errors.Is(err, ErrNoBatchPath) {
						t.Fatalf("read through schema %d (file has %d): err = %v, want ErrNoBatchPath", latest.ID, fs.ID, err)
					}
					evolvedRefused++
				}
			}
		})
	}
	for _, f := range fallbacks {
		t.Logf("row path: %s", f)
	}
	t.Logf("%d primary-key fixture files, %d read through the batch path, %d refused through a newer schema", pk, batched, evolvedRefused)
	if evolvedRefused == 0 {
		t.Errorf("no fixture file was read through a newer schema")
	}
	if pk < 20 {
		t.Fatalf("found only %d primary-key fixture data files", pk)
	}
	if batched == 0 || batched < pk/2 {
		t.Fatalf("only %d of %d primary-key fixture files take the batch path", batched, pk)
	}
}

func TestBatchPathRefusals(t *testing.T) {
	s := batchTestSchema(t)
	r := rand.New(rand.NewPCG(8, 9))
	recs := batchTestRecords(t, r, s, 50)
	dir := t.TempDir()
	path := filepath.Join(dir, "data-refuse-0.parquet")
	writeKVRows(t, path, s, nil, recs)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(path string, fileSchema, readSchema Schema, codec *KVCodec) error {
		br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, fileSchema, readSchema, codec)
		if err == nil {
			br.Close()
		}
		return err
	}

	evolved := func(change func(fields table.RowType) table.RowType) Schema {
		fields := change(slices.Clone(s.Fields))
		return Schema{Fields: fields, KeyNames: s.KeyNames}
	}
	for _, c := range []struct {
		name string
		read Schema
	}{
		{"a column added", evolved(func(f table.RowType) table.RowType {
			return append(f, table.DataField{ID: 99, Name: "added", Type: mustType(t, "INT")})
		})},
		{"a column renamed", evolved(func(f table.RowType) table.RowType {
			f[1].Name = "renamed"
			return f
		})},
		{"a column widened", evolved(func(f table.RowType) table.RowType {
			i := f.Index("sparse")
			f[i].Type = mustType(t, "BIGINT")
			return f
		})},
		{"a column dropped", evolved(func(f table.RowType) table.RowType {
			return slices.Delete(f, 1, 2)
		})},
		{"a column made NOT NULL", evolved(func(f table.RowType) table.RowType {
			i := f.Index("sparse")
			f[i].Type = f[i].Type.WithNullable(false)
			return f
		})},
	} {
		t.Run("read schema with "+c.name, func(t *testing.T) {
			rc, err := NewKVCodec(c.read)
			if err != nil {
				t.Fatal(err)
			}
			err = open(path, s, c.read, rc)
			if !errors.Is(err, ErrNoBatchPath) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want ErrNoBatchPath naming the file", err)
			}
			// The row path reads it (or refuses the cast explicitly).
			if r, err := OpenKeyValue(ctx, fileio.NewLocal(), path, s, c.read); err == nil {
				r.Close()
			} else if !errors.Is(err, cast.ErrUnsupportedEvolution) {
				t.Fatalf("row path: %v", err)
			}
		})
	}

	t.Run("file written with another schema than the read schema's twin", func(t *testing.T) {
		// Same columns in the file, but the caller says the file has another
		// schema: the check is on the schemas, so it is refused.
		other := evolved(func(f table.RowType) table.RowType {
			f[0].ID = 77
			return f
		})
		if err := open(path, other, s, codec); !errors.Is(err, ErrNoBatchPath) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("avro file", func(t *testing.T) {
		avros, _ := filepath.Glob(filepath.Join(fixtureRoot, "avro", "pk_with_multiple_type.db", "*", "*", "bucket-*", "data-*.avro"))
		if len(avros) == 0 {
			t.Fatal("no Avro primary-key fixture file")
		}
		// The codec is irrelevant: the format is refused before any read.
		err := open(avros[0], s, s, codec)
		if !errors.Is(err, ErrNoBatchPath) || !strings.Contains(err.Error(), avros[0]) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("nested schema has no codec", func(t *testing.T) {
		for _, f := range allTypesSchema(t) {
			if !f.Type.IsComposite() {
				continue
			}
			ns := Schema{Fields: table.RowType{{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")}, f}, KeyNames: []string{"k"}}
			if _, err := NewKVCodec(ns); err == nil {
				t.Errorf("NewKVCodec accepted nested column %s %s", f.Name, f.Type)
			}
		}
	})

	t.Run("file of a nested schema read with a flat codec", func(t *testing.T) {
		ns := Schema{Fields: table.RowType{
			{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
			{ID: 1, Name: "arr", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "INT"))}},
		}, KeyNames: []string{"k"}}
		npath := filepath.Join(dir, "data-nested-0.parquet")
		writeKVRows(t, npath, ns, nil, []table.KeyValue{{Key: table.Row{int32(1)}, Value: table.Row{int32(1), []any{int32(2)}}}})
		flat := Schema{Fields: table.RowType{ns.Fields[0], {ID: 1, Name: "arr", Type: mustType(t, "INT")}}, KeyNames: []string{"k"}}
		fc, err := NewKVCodec(flat)
		if err != nil {
			t.Fatal(err)
		}
		if err := open(npath, flat, flat, fc); !errors.Is(err, ErrNoBatchPath) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestBatchReaderCorruptFiles(t *testing.T) {
	s := Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "s", Type: mustType(t, "STRING")},
		{ID: 2, Name: "d", Type: mustType(t, "DOUBLE")},
		{ID: 3, Name: "dec", Type: mustType(t, "DECIMAL(38, 4)")},
	}, KeyNames: []string{"k"}}
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	var recs []table.KeyValue
	for i := range 3000 {
		var sv any = strings.Repeat("x", i%37)
		if i%5 == 0 {
			sv = nil
		}
		recs = append(recs, table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i), Value: table.Row{int64(i), sv, float64(i) / 7, nil}})
	}
	dir := t.TempDir()
	ctx := context.Background()
	for _, compression := range []string{"none", "zstd"} {
		good := filepath.Join(dir, "data-good-"+compression+".parquet")
		writeKVRows(t, good, s, map[string]string{"file.compression": compression, "parquet.page.size": "2 kb"}, recs)
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		// drainBatches reads to the end, closes, and returns the first error.
		drainBatches := func(path string) (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("PANIC: %v", p)
				}
			}()
			br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
			if err != nil {
				return err
			}
			defer br.Close()
			b := codec.NewBatch()
			for {
				if err := br.Next(b, 333); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
				for i := range b.N {
					if _, err := codec.Record(b, i); err != nil {
						return fmt.Errorf("%s: record: %w", path, err)
					}
				}
			}
		}
		if err := drainBatches(good); err != nil {
			t.Fatalf("%s: %v", good, err)
		}
		type mutation struct {
			name    string
			mustErr bool
			mutate  func([]byte) []byte
		}
		muts := []mutation{
			{"truncated to half", true, func(b []byte) []byte { return b[:len(b)/2] }},
			{"truncated by one byte", true, func(b []byte) []byte { return b[:len(b)-1] }},
			{"empty", true, func(b []byte) []byte { return nil }},
			{"garbage over the pages", true, func(b []byte) []byte {
				for i := 4; i < len(b)/2; i += 7 {
					b[i] ^= 0xa5
				}
				return b
			}},
		}
		// Flipped bytes at spread positions of the page area: compactd's
		// pages carry a CRC (parquet-go writes one), so every flip is
		// detected, in a page header, a page body or the CRC itself.
		for k := 1; k < 40; k++ {
			muts = append(muts, mutation{fmt.Sprintf("bytes flipped at %d/40", k), true, func(b []byte) []byte {
				at := 4 + (len(b)*3/4)*k/40
				for i := at; i < min(at+3, len(b)); i++ {
					b[i] ^= 0xff
				}
				return b
			}})
		}
		errs := 0
		for _, m := range muts {
			t.Run(compression+"/"+m.name, func(t *testing.T) {
				path := filepath.Join(dir, "data-bad-"+compression+"-"+strings.NewReplacer(" ", "_", "/", "of").Replace(m.name)+".parquet")
				if err := os.WriteFile(path, m.mutate(slices.Clone(data)), 0o644); err != nil {
					t.Fatal(err)
				}
				err := drainBatches(path)
				if err != nil && strings.HasPrefix(err.Error(), "PANIC") {
					t.Fatal(err)
				}
				if err == nil && m.mustErr {
					t.Fatal("corrupt file read without error")
				}
				if err != nil {
					errs++
					if !strings.Contains(err.Error(), path) {
						t.Fatalf("error does not name the file: %v", err)
					}
				}
			})
		}
		t.Logf("%s: %d of %d corruptions reported", compression, errs, len(muts))
	}
}

func TestKVCodecAndAppendTake(t *testing.T) {
	s := batchTestSchema(t)
	r := rand.New(rand.NewPCG(21, 22))
	recs := batchTestRecords(t, r, s, 400)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	if codec.KeyCols() != 3 || codec.SeqCol() != 3 || codec.KindCol() != 4 {
		t.Fatalf("key cols %d seq %d kind %d", codec.KeyCols(), codec.SeqCol(), codec.KindCol())
	}
	// Three sources: record i is row i/3 of srcs[i%3].
	srcs := []*Batch{codec.NewBatch(), codec.NewBatch(), codec.NewBatch()}
	for i, kv := range recs {
		if err := codec.Append(srcs[i%3], kv); err != nil {
			t.Fatal(err)
		}
	}
	if srcs[0].N+srcs[1].N+srcs[2].N != len(recs) {
		t.Fatalf("%d+%d+%d rows", srcs[0].N, srcs[1].N, srcs[2].N)
	}
	// Append/Record round trip.
	for i := range recs {
		kv, err := codec.Record(srcs[i%3], i/3)
		if err != nil {
			t.Fatal(err)
		}
		if !kvEqual(kv, recs[i]) {
			t.Fatalf("record %d: got %+v, want %+v", i, kv, recs[i])
		}
	}
	// AppendTake in a scrambled order, with repeats, in several calls
	// taking from one, two or three of the sources, onto a batch that
	// already holds rows.
	out := codec.NewBatch()
	if err := codec.Append(out, recs[0]); err != nil {
		t.Fatal(err)
	}
	want := []table.KeyValue{recs[0]}
	for round := range 8 {
		var take []Take
		for range r.IntN(120) {
			i := r.IntN(len(recs))
			if round%3 != 2 {
				i = i - i%3 + round%3 // only source round%3 (then all three)
				if i >= len(recs) {
					i -= 3
				}
			}
			take = append(take, Take{Src: srcs[i%3], Row: int32(i / 3)})
			want = append(want, recs[i])
		}
		if err := out.AppendTake(take); err != nil {
			t.Fatal(err)
		}
		if out.N != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, out.N, len(want))
		}
	}
	for i := range want {
		kv, err := codec.Record(out, i)
		if err != nil {
			t.Fatal(err)
		}
		if !kvEqual(kv, want[i]) {
			t.Fatalf("taken row %d: got %+v, want %+v", i, kv, want[i])
		}
	}
	// Every column is dense: one entry per row in its kind's slice.
	for c, v := range out.Cols {
		n := len(v.I32) + len(v.I64) + len(v.F32) + len(v.F64) + len(v.Bool) + len(v.I96) + len(v.Offs) - 1
		if n != out.N || (v.Optional() && len(v.Null) != out.N) {
			t.Fatalf("column %d: %d values, %d nulls for %d rows", c, n, len(v.Null), out.N)
		}
	}
	// Reset keeps the layout.
	out.Reset()
	if out.N != 0 {
		t.Fatal("reset")
	}
	if err := codec.Append(out, recs[7]); err != nil {
		t.Fatal(err)
	}
	if kv, err := codec.Record(out, 0); err != nil || !kvEqual(kv, recs[7]) {
		t.Fatalf("after reset: %+v %v", kv, err)
	}

	t.Run("append refuses bad records", func(t *testing.T) {
		bad := []table.KeyValue{
			{Key: table.Row{int32(1)}, Value: recs[0].Value},                                     // key arity
			{Key: recs[0].Key, Value: recs[0].Value[:3]},                                         // value arity
			{Key: table.Row{"not an int", recs[0].Key[1], recs[0].Key[2]}, Value: recs[0].Value}, // key type
		}
		for i, kv := range bad {
			if err := codec.Append(codec.NewBatch(), kv); err == nil {
				t.Errorf("bad record %d accepted", i)
			}
		}
		v := slices.Clone(recs[0].Value)
		v[s.Fields.Index("cd0")] = nil // INT NOT NULL
		if err := codec.Append(codec.NewBatch(), table.KeyValue{Key: recs[0].Key, Value: v}); err == nil {
			t.Error("null in a NOT NULL column accepted")
		}
	})
	t.Run("record refuses an invalid row kind", func(t *testing.T) {
		x := codec.NewBatch()
		if err := codec.Append(x, recs[0]); err != nil {
			t.Fatal(err)
		}
		x.Cols[codec.KindCol()].I32[0] = 9
		if _, err := codec.Record(x, 0); err == nil {
			t.Error("row kind 9 accepted")
		}
	})
}

// pageSpan is one page of a file: its header and body positions.
type pageSpan struct {
	headerAt, bodyAt, bodyLen int
	header                    format.PageHeader
}

// filePages lists every page of every column chunk of a Parquet file.
func filePages(t *testing.T, data []byte) []pageSpan {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []pageSpan
	for _, rg := range pf.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			at := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < at {
				at = md.DictionaryPageOffset
			}
			end := at + md.TotalCompressedSize
			for at < end {
				var h format.PageHeader
				proto := &thrift.CompactProtocol{}
				if err := thrift.NewDecoder(proto.NewReader(bytes.NewReader(data[at:end]))).Decode(&h); err != nil {
					t.Fatalf("page header at %d: %v", at, err)
				}
				enc, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
				if err != nil || !bytes.Equal(enc, data[at:int(at)+len(enc)]) {
					t.Fatalf("page header at %d does not re-encode to its bytes (%v)", at, err)
				}
				body := int(at) + len(enc)
				out = append(out, pageSpan{headerAt: int(at), bodyAt: body, bodyLen: int(h.CompressedPageSize), header: h})
				at = int64(body) + int64(h.CompressedPageSize)
			}
		}
	}
	return out
}

// TestBatchReaderGarbageWithValidChecksums corrupts page bodies and then
// fixes their CRC, so the garbage reaches the decoders: the batch reader
// must fail with an error naming the file or, when the garbage still
// decodes, return exactly what the row reader returns.
func TestBatchReaderGarbageWithValidChecksums(t *testing.T) {
	s := Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "s", Type: mustType(t, "STRING")},
		{ID: 2, Name: "n", Type: mustType(t, "INT")},
		{ID: 3, Name: "b", Type: mustType(t, "BOOLEAN")},
		{ID: 4, Name: "dec", Type: mustType(t, "DECIMAL(20, 2)")},
		{ID: 5, Name: "ts", Type: mustType(t, "TIMESTAMP(9)")},
	}, KeyNames: []string{"k"}}
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	var recs []table.KeyValue
	for i := range 600 {
		v := table.Row{int64(i), fmt.Sprintf("w%d", i%7), int32(i * 3), i%3 == 0,
			table.Decimal{Unscaled: big.NewInt(int64(i) * 101), Precision: 20, Scale: 2}, table.Timestamp{Millis: int64(i), NanoOfMilli: int32(i)}}
		if i%4 == 0 {
			v[1], v[2], v[3], v[4], v[5] = nil, nil, nil, nil, nil
		}
		recs = append(recs, table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i), Kind: table.RowKind(i % 4), Value: v})
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "data-good-0.parquet")
	writeKVRows(t, good, s, map[string]string{"file.compression": "none", "parquet.page.size": "512b"}, recs)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pages := filePages(t, data)
	r := rand.New(rand.NewPCG(31, 32))
	ctx := context.Background()
	var nErr, nSame, nRecovered, nRowOnly, nBatchOnly int
	for trial := range 100 {
		p := pages[r.IntN(len(pages))]
		if p.bodyLen == 0 {
			continue
		}
		mut := slices.Clone(data)
		body := mut[p.bodyAt : p.bodyAt+p.bodyLen]
		for range 1 + r.IntN(3) {
			body[r.IntN(len(body))] ^= byte(1 + r.IntN(255))
		}
		h := p.header
		h.CRC = int32(crc32.ChecksumIEEE(body))
		enc, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) != p.bodyAt-p.headerAt {
			continue // the new CRC encodes to another length: try another
		}
		copy(mut[p.headerAt:], enc)
		path := filepath.Join(dir, fmt.Sprintf("data-garbage-%d.parquet", trial))
		if err := os.WriteFile(path, mut, 0o644); err != nil {
			t.Fatal(err)
		}
		var batchKVs []table.KeyValue
		var batchErr error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("trial %d: panic: %v", trial, p)
				}
			}()
			batchKVs, batchErr = readKVBatches(t, r, path, s, s, codec)
		}()
		rowKVs, rowErr := func() (out []table.KeyValue, err error) {
			rr, err := OpenKeyValue(ctx, fileio.NewLocal(), path, s, s)
			if err != nil {
				return nil, err
			}
			defer rr.Close()
			for {
				kv, err := rr.Next()
				if errors.Is(err, io.EOF) {
					return out, nil
				}
				if err != nil {
					return nil, err
				}
				out = append(out, kv)
			}
		}()
		switch {
		case batchErr != nil:
			nErr++
			if !strings.Contains(batchErr.Error(), path) {
				t.Fatalf("trial %d: error does not name the file: %v", trial, batchErr)
			}
			if strings.Contains(batchErr.Error(), "corrupt Parquet data") {
				nRecovered++
				t.Logf("trial %d: recovered: %v", trial, batchErr)
			}
			if rowErr == nil {
				nBatchOnly++
				t.Logf("trial %d (page of %d bytes at %d, %s): batch path fails, row path reads: %v", trial, p.bodyLen, p.bodyAt, p.header.Type, batchErr)
			}
		case rowErr != nil:
			nRowOnly++
			t.Logf("trial %d (page of %d bytes at %d, %s): row path fails (%v), batch path reads %d records", trial, p.bodyLen, p.bodyAt, p.header.Type, rowErr, len(batchKVs))
		default:
			nSame++
			requireSameKVs(t, fmt.Sprintf("trial %d: batch vs row reader", trial), batchKVs, rowKVs)
		}
	}
	t.Logf("%d pages; %d batch errors (%d from a recovered panic), %d read alike, %d batch-only errors, %d row-only errors",
		len(pages), nErr, nRecovered, nSame, nBatchOnly, nRowOnly)
	if nErr == 0 {
		t.Fatal("no corruption was detected")
	}
}

func TestBatchReaderHonoursCancellation(t *testing.T) {
	s := batchTestSchema(t)
	r := rand.New(rand.NewPCG(41, 42))
	recs := batchTestRecords(t, r, s, 300)
	path := filepath.Join(t.TempDir(), "data-cancel-0.parquet")
	writeKVRows(t, path, s, nil, recs)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	cancel()
	if err := br.Next(codec.NewBatch(), 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v", err)
	}
}

// writeForeignKV writes recs in the KeyValue layout of s with parquet-go
// directly, every leaf given the encoding enc picks for its physical kind:
// the encodings other writers use (parquet-mr dictionary-encodes every
// type, v2 writers use DELTA_* and BYTE_STREAM_SPLIT), which compactd's own
// writer never produces.
func writeForeignKV(t *testing.T, path string, s Schema, recs []table.KeyValue, pageVersion int, enc func(parquet.Kind) encoding.Encoding) {
	t.Helper()
	fields, err := s.KeyValueFields()
	if err != nil {
		t.Fatal(err)
	}
	group := parquet.Group{}
	encs := make([]encodeFunc, len(fields))
	for i, f := range fields {
		leaf, err := parquetLeaf(f.Type)
		if err != nil || leaf == nil {
			t.Fatalf("column %s: %v", f.Name, err)
		}
		if e := enc(leaf.Type().Kind()); e != nil {
			leaf = parquet.Encoded(leaf, e)
		}
		if f.Type.Nullable {
			leaf = parquet.Optional(leaf)
		} else {
			leaf = parquet.Required(leaf)
		}
		group[f.Name] = leaf
		if encs[i], err = leafEncoder(f.Type); err != nil {
			t.Fatal(err)
		}
	}
	schema := parquet.NewSchema("foreign", group)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := parquet.NewWriter(out, schema, parquet.DataPageVersion(pageVersion), parquet.PageBufferSize(700),
		parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1100))
	cols := make([]int, len(fields))
	for i, f := range fields {
		leaf, ok := schema.Lookup(f.Name)
		if !ok {
			t.Fatalf("column %s not in the written schema", f.Name)
		}
		cols[i] = leaf.ColumnIndex
	}
	for _, kv := range recs {
		flat := append(append(slices.Clone(kv.Key), kv.Seq, int8(kv.Kind)), kv.Value...)
		row := make(parquet.Row, len(fields))
		for i, v := range flat {
			col := cols[i]
			if v == nil {
				row[col] = parquet.NullValue().Level(0, 0, col)
				continue
			}
			pv, err := encs[i](v)
			if err != nil {
				t.Fatalf("column %s: %v", fields[i].Name, err)
			}
			def := 0
			if fields[i].Type.Nullable {
				def = 1
			}
			row[col] = pv.Level(0, def, col)
		}
		if _, err := w.WriteRows([]parquet.Row{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBatchReaderForeignEncodings(t *testing.T) {
	s := batchTestSchema(t)
	r := rand.New(rand.NewPCG(51, 52))
	recs := batchTestRecords(t, r, s, 2500)
	// The big column is not what this test is about; keep the files small.
	bi := s.Fields.Index("big")
	for i := range recs {
		if b, ok := recs[i].Value[bi].([]byte); ok {
			recs[i].Value[bi] = b[:len(b)%9]
		}
	}
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	dict := func(k parquet.Kind) encoding.Encoding {
		if k == parquet.Boolean {
			return &parquet.Plain
		}
		return &parquet.RLEDictionary
	}
	delta := func(k parquet.Kind) encoding.Encoding {
		switch k {
		case parquet.Int32, parquet.Int64:
			return &parquet.DeltaBinaryPacked
		case parquet.ByteArray:
			return &parquet.DeltaLengthByteArray
		case parquet.FixedLenByteArray:
			return &parquet.DeltaByteArray
		case parquet.Float, parquet.Double:
			return &parquet.ByteStreamSplit
		case parquet.Boolean:
			return &parquet.RLE
		}
		return &parquet.Plain
	}
	delta2 := func(k parquet.Kind) encoding.Encoding {
		switch k {
		case parquet.ByteArray:
			return &parquet.DeltaByteArray
		case parquet.FixedLenByteArray:
			return &parquet.ByteStreamSplit
		}
		return &parquet.Plain
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		enc  func(parquet.Kind) encoding.Encoding
		want format.Encoding // must occur in the file
	}{{"dictionary", dict, format.RLEDictionary}, {"delta", delta, format.DeltaBinaryPacked}, {"delta byte array and byte stream split", delta2, format.DeltaByteArray}} {
		for _, v := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, data page v%d", c.name, v), func(t *testing.T) {
				path := filepath.Join(dir, fmt.Sprintf("data-%s-v%d-0.parquet", strings.ReplaceAll(c.name, " ", "_"), v))
				writeForeignKV(t, path, s, recs, v, c.enc)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, rg := range pf.Metadata().RowGroups {
					for _, cc := range rg.Columns {
						found = found || slices.Contains(cc.MetaData.Encoding, c.want)
					}
				}
				if !found || len(pf.RowGroups()) < 2 {
					t.Fatalf("file has %d row groups, encoding %s used: %v", len(pf.RowGroups()), c.want, found)
				}
				rows := readAllKV(t, path, s, s)
				requireSameKVs(t, "row reader", rows, recs)
				got, err := readKVBatches(t, r, path, s, s, codec)
				if err != nil {
					t.Fatalf("batch reader: %v", err)
				}
				requireSameKVs(t, "batch reader", got, recs)
			})
		}
	}
}

func TestBatchPathEdges(t *testing.T) {
	s := Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
		{ID: 1, Name: "v", Type: mustType(t, "STRING")},
	}, KeyNames: []string{"k"}}
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(61, 62))

	t.Run("empty file", func(t *testing.T) {
		rowPath := filepath.Join(dir, "data-empty-rows.parquet")
		rowStats := writeKVRows(t, rowPath, s, nil, nil)
		batchPath := filepath.Join(dir, "data-empty-batches.parquet")
		w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), batchPath, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(codec.NewBatch(), 0, 0); err != nil {
			t.Fatal(err)
		}
		batchStats, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := statsEqual(rowStats, batchStats); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{rowPath, batchPath} {
			got, err := readKVBatches(t, r, p, s, s, codec)
			if err != nil || len(got) != 0 {
				t.Fatalf("%s: %d records, %v", p, len(got), err)
			}
		}
	})

	t.Run("batch of another layout is refused", func(t *testing.T) {
		other, err := NewKVCodec(Schema{Fields: table.RowType{
			{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
			{ID: 1, Name: "v", Type: mustType(t, "STRING")},
			{ID: 2, Name: "w", Type: mustType(t, "STRING")},
		}, KeyNames: []string{"k"}})
		if err != nil {
			t.Fatal(err)
		}
		b := other.NewBatch()
		if err := other.Append(b, table.KeyValue{Key: table.Row{int32(1)}, Value: table.Row{int32(1), "a", "b"}}); err != nil {
			t.Fatal(err)
		}
		w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), filepath.Join(dir, "data-other-0.parquet"), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if err := w.WriteBatch(b, 0, 1); err == nil {
			t.Fatal("batch with an extra column accepted")
		}
	})

	t.Run("nested writer refuses batches", func(t *testing.T) {
		ns := Schema{Fields: table.RowType{
			{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
			{ID: 1, Name: "arr", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "INT"))}},
		}, KeyNames: []string{"k"}}
		w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), filepath.Join(dir, "data-nested-w.parquet"), ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		b := codec.NewBatch()
		if err := codec.Append(b, table.KeyValue{Key: table.Row{int32(1)}, Value: table.Row{int32(1), "a"}}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(b, 0, 1); err == nil {
			t.Fatal("batch written into a file with nested columns")
		}
	})

	t.Run("thin-mode file takes the row path", func(t *testing.T) {
		thin := table.RowType{
			{ID: SequenceNumberID, Name: SequenceNumberName, Type: mustType(t, "BIGINT NOT NULL")},
			{ID: ValueKindID, Name: ValueKindName, Type: mustType(t, "TINYINT NOT NULL")},
			s.Fields[0], s.Fields[1],
		}
		path := filepath.Join(dir, "data-thin-0.parquet")
		w, err := NewRowWriter(ctx, fileio.NewLocal(), path, thin, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(table.Row{int64(1), int8(0), int32(1), "v"}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
		if err == nil {
			br.Close()
		}
		if !errors.Is(err, ErrNoBatchPath) {
			t.Fatalf("err = %v, want ErrNoBatchPath", err)
		}
	})

	t.Run("one row per batch across pages", func(t *testing.T) {
		var recs []table.KeyValue
		for i := range 700 {
			var v any = strings.Repeat("é", i%13)
			if i%3 == 0 {
				v = nil
			}
			recs = append(recs, table.KeyValue{Key: table.Row{int32(i)}, Seq: int64(i), Kind: table.RowKind(i % 4), Value: table.Row{int32(i), v}})
		}
		path := filepath.Join(dir, "data-ones-0.parquet")
		writeKVRows(t, path, s, map[string]string{"parquet.page.size": "256b"}, recs)
		br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
		if err != nil {
			t.Fatal(err)
		}
		defer br.Close()
		b := codec.NewBatch()
		var got []table.KeyValue
		for {
			err := br.Next(b, 1)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			kv, err := codec.Record(b, 0)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, kv)
		}
		requireSameKVs(t, "one row at a time", got, recs)
		// EOF is sticky.
		if err := br.Next(b, 5); !errors.Is(err, io.EOF) || b.N != 0 {
			t.Fatalf("after EOF: %v, %d rows", err, b.N)
		}
	})
}
