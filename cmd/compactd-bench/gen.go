package main

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// genSpec describes the benchmark table: one bucket of a deduplicate table
// whose rows arrive as `runs` commits, each commit one level-0 file (one
// sorted run).
type genSpec struct {
	Schema string // "narrow" or "wide"
	Rows   int64  // total records in the level-0 files (approximately)
	Runs   int
	Seed   uint64
	// DV sets deletion-vectors.enabled=true.
	DV bool
	// Buckets is the table's fixed bucket count (0: 1); rows spread over
	// them by key, each commit one level-0 file per bucket.
	Buckets int
}

// benchOptions are the table options of every generated table. The large
// target-file-size keeps each commit one level-0 file (one sorted run) even
// for the wide schema; both compactd and Java honour it for their outputs.
var benchOptions = map[string]string{
	"bucket":           "1",
	"file.format":      "parquet",
	"merge-engine":     "deduplicate",
	"write-only":       "true",
	"target-file-size": "1 gb",
}

func bigint(nullable bool) table.DataType {
	return table.DataType{Root: table.TypeBigInt, Nullable: nullable}
}

// valueTypes are the types the wide schemas cycle through.
var valueTypes = []table.DataType{
	{Root: table.TypeInt, Nullable: true},
	{Root: table.TypeBigInt, Nullable: true},
	{Root: table.TypeDouble, Nullable: true},
	{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true},
	{Root: table.TypeDecimal, Precision: 10, Scale: 2, Nullable: true},
	{Root: table.TypeBoolean, Nullable: true},
	{Root: table.TypeDate, Nullable: true},
	{Root: table.TypeTimestamp, Precision: 3, Nullable: true},
}

// puStreams is the number of writers of the "widepu" table (the
// multi-stream wide table: partial-update, one sequence group per stream).
const puStreams = 3

// puGroup is the number of columns per stream: its sequence field and
// puGroup-1 values.
const puGroup = 10

// orcSuffix marks a benchmark schema whose table writes ORC data files
// (narrow_orc: the narrow schema with file.format=orc).
const orcSuffix = "_orc"

// baseSchema is a schema's name without orcSuffix, and whether it had it.
func baseSchema(schema string) (string, bool) { return strings.CutSuffix(schema, orcSuffix) }

// benchFields returns the columns of a schema; column 0 is the BIGINT key.
func benchFields(schema string) (table.RowType, error) {
	schema, _ = baseSchema(schema)
	switch schema {
	case "widepu":
		// id, then per stream s: s<s>_ts (its sequence field) and 9 values.
		f := table.RowType{{ID: 0, Name: "id", Type: bigint(false)}}
		for st := 0; st < puStreams; st++ {
			f = append(f, table.DataField{ID: len(f), Name: fmt.Sprintf("s%d_ts", st), Type: bigint(true)})
			for i := 1; i < puGroup; i++ {
				f = append(f, table.DataField{ID: len(f), Name: fmt.Sprintf("s%d_c%d", st, i), Type: valueTypes[(st*puGroup+i)%len(valueTypes)]})
			}
		}
		return f, nil
	case "narrow":
		return table.RowType{
			{ID: 0, Name: "id", Type: bigint(false)},
			{ID: 1, Name: "v_long", Type: bigint(true)},
			{ID: 2, Name: "v_double", Type: table.DataType{Root: table.TypeDouble, Nullable: true}},
			{ID: 3, Name: "v_str", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}},
		}, nil
	case "wide":
		// 30 columns: the key and 29 values cycling through common types.
		f := table.RowType{{ID: 0, Name: "id", Type: bigint(false)}}
		for i := 1; i < 30; i++ {
			f = append(f, table.DataField{ID: i, Name: fmt.Sprintf("c%02d", i), Type: valueTypes[(i-1)%len(valueTypes)]})
		}
		return f, nil
	}
	return nil, fmt.Errorf("schema %q: want narrow, wide or widepu", schema)
}

// tableOptions are benchOptions, plus for widepu the partial-update engine
// with one sequence group per stream.
func tableOptions(schema string, fields table.RowType, dv bool) map[string]string {
	o := maps.Clone(benchOptions)
	if dv {
		maps.Copy(o, dvOptions)
	}
	schema, orc := baseSchema(schema)
	if orc {
		o["file.format"] = "orc"
	}
	if schema != "widepu" {
		return o
	}
	o["merge-engine"] = "partial-update"
	for st := 0; st < puStreams; st++ {
		var cols []string
		for i := 1; i < puGroup; i++ {
			cols = append(cols, fields[1+st*puGroup+i].Name)
		}
		o["fields."+fields[1+st*puGroup].Name+".sequence-group"] = strings.Join(cols, ",")
	}
	return o
}

// fillRow sets the value columns of row from rng; about 5% of values are NULL.
func fillRow(fields table.RowType, row table.Row, rng *rand.Rand) {
	fillColumns(fields, row, rng, 1, len(fields))
}

// fillColumns sets columns [from, to) of row.
func fillColumns(fields table.RowType, row table.Row, rng *rand.Rand, from, to int) {
	for i := from; i < to; i++ {
		if rng.IntN(20) == 0 {
			row[i] = nil
			continue
		}
		switch fields[i].Type.Root {
		case table.TypeInt:
			row[i] = rng.Int32N(1_000_000)
		case table.TypeBigInt:
			row[i] = rng.Int64N(1 << 40)
		case table.TypeDouble:
			row[i] = rng.Float64() * 1000
		case table.TypeVarChar:
			row[i] = words[rng.IntN(len(words))] + fmt.Sprint(rng.IntN(10000))
		case table.TypeDecimal:
			row[i] = table.Decimal{Unscaled: big.NewInt(rng.Int64N(10_000_000)), Precision: 10, Scale: 2}
		case table.TypeBoolean:
			row[i] = rng.IntN(2) == 0
		case table.TypeDate:
			row[i] = int32(19000 + rng.IntN(2000))
		case table.TypeTimestamp:
			row[i] = table.Timestamp{Millis: 1_700_000_000_000 + rng.Int64N(1<<35)}
		}
	}
}

var words = []string{"alpha-", "bravo-", "charlie-", "delta-", "echo-", "foxtrot-", "golf-", "hotel-"}

// runKeys calls emit with the keys of run r in ascending order. Run r adds
// m new keys (k*runs + r) spread over the whole key range, so every run
// overlaps every other, and (for r > 0) updates one in four keys of earlier
// runs (k*runs + k%r), so the merge has duplicates to resolve.
func runKeys(m int64, runs, r int, emit func(key int64) error) error {
	for k := int64(0); k < m; k++ {
		base := k * int64(runs)
		if r > 0 && k%4 == 0 {
			if err := emit(base + k%int64(r)); err != nil {
				return err
			}
		}
		if err := emit(base + int64(r)); err != nil {
			return err
		}
	}
	return nil
}

// puKeys emits the keys of run r of the widepu table: the runs of one
// stream split the keys [0, m) between them by key modulo, so each key gets
// exactly one record from each stream.
func puKeys(m int64, runs, r int, emit func(key int64) error) error {
	st := r % puStreams
	slots := int64((runs - st + puStreams - 1) / puStreams) // runs of stream st
	slot := int64(r / puStreams)
	for k := slot; k < m; k += slots {
		if err := emit(k); err != nil {
			return err
		}
	}
	return nil
}

// keysPerRun is m such that runs runs of runKeys hold about rows records.
func keysPerRun(rows int64, runs int) int64 {
	// runs*m new keys + (runs-1)*m/4 updates.
	return max(1, rows*4/int64(5*runs-1))
}

// generate creates warehouse/db.name and writes spec.Runs commits of one
// level-0 file each. It returns the number of records written.
func generate(ctx context.Context, warehouse, db, name string, spec genSpec) (int64, error) {
	fio, err := fileio.For(ctx, warehouse)
	if err != nil {
		return 0, err
	}
	fields, err := benchFields(spec.Schema)
	if err != nil {
		return 0, err
	}
	opts := tableOptions(spec.Schema, fields, spec.DV)
	if spec.Buckets > 1 {
		opts["bucket"] = fmt.Sprint(spec.Buckets)
	}
	s, err := table.NewTableSchema(0, fields, len(fields)-1, nil, []string{"id"}, opts, nil, 0)
	if err != nil {
		return 0, fmt.Errorf("schema %s: %w", spec.Schema, err)
	}
	t, err := write.CreateTable(ctx, fio, warehouse, db, name, s)
	if err != nil {
		return 0, err
	}
	w, err := write.NewWriter(ctx, t, "bench-writer")
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))
	m := keysPerRun(spec.Rows, spec.Runs)
	if base, _ := baseSchema(spec.Schema); base == "widepu" {
		m = max(1, spec.Rows/puStreams)
	}
	var total int64
	for r := 0; r < spec.Runs; r++ {
		emit := func(key int64) error {
			row := make(table.Row, len(fields))
			row[0] = key
			fillRow(fields, row, rng)
			total++
			return w.Write(table.RowKindInsert, row)
		}
		keys := func(emit func(int64) error) error { return runKeys(m, spec.Runs, r, emit) }
		if base, _ := baseSchema(spec.Schema); base == "widepu" {
			// Run r is a commit of stream r%3: only that stream's columns,
			// its sequence field rising; every key gets one record per stream.
			st := r % puStreams
			emit = func(key int64) error {
				row := make(table.Row, len(fields))
				row[0] = key
				first := 1 + st*puGroup
				row[first] = int64(r)<<40 | key
				fillColumns(fields, row, rng, first+1, first+puGroup)
				total++
				return w.Write(table.RowKindInsert, row)
			}
			keys = func(emit func(int64) error) error { return puKeys(m, spec.Runs, r, emit) }
		}
		err := keys(emit)
		if err != nil {
			return 0, fmt.Errorf("write %s run %d: %w", t.FullName(), r, err)
		}
		if _, err := w.Commit(ctx); err != nil {
			return 0, fmt.Errorf("commit %s run %d: %w", t.FullName(), r, err)
		}
	}
	return total, nil
}
