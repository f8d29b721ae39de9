package write

import (
	"fmt"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// FileMeta builds the DataFileMeta of a freshly written KeyValue file, as
// §7.6–7.7 of the format spec describe it.
func FileMeta(st *datafile.FileStats, schema *table.TableSchema, level int32, source manifest.FileSource, now time.Time) (manifest.DataFileMeta, error) {
	keyTypes := types(schema.TrimmedPrimaryKeyType())
	minKey, err := table.EncodeBinaryRow(keyTypes, st.MinKey)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: min key: %w", st.Path, err)
	}
	maxKey, err := table.EncodeBinaryRow(keyTypes, st.MaxKey)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: max key: %w", st.Path, err)
	}
	keyStats, err := simpleStats(table.StatsTypes(keyTypes), st.KeyStats)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: key stats: %w", st.Path, err)
	}
	valueStats, cols, err := denseValueStats(schema.Fields, st)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: value stats: %w", st.Path, err)
	}
	created := manifest.LocalMillis(now)
	deletes := st.DeleteRowCount
	src := source
	return manifest.DataFileMeta{
		FileName:          baseName(st.Path),
		FileSize:          st.FileSize,
		RowCount:          st.RowCount,
		MinKey:            minKey,
		MaxKey:            maxKey,
		KeyStats:          keyStats,
		ValueStats:        valueStats,
		MinSequenceNumber: st.MinSeq,
		MaxSequenceNumber: st.MaxSeq,
		SchemaID:          schema.ID,
		Level:             level,
		ExtraFiles:        []string{},
		CreationTime:      &created,
		DeleteRowCount:    &deletes,
		FileSource:        &src,
		ValueStatsCols:    cols,
	}, nil
}

// AppendFileMeta builds the DataFileMeta of an append-table file whose rows
// got the sequence numbers minSeq.. in order.
func AppendFileMeta(st *datafile.FileStats, schema *table.TableSchema, minSeq int64, source manifest.FileSource, now time.Time) (manifest.DataFileMeta, error) {
	valueStats, cols, err := denseValueStats(schema.Fields, st)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: value stats: %w", st.Path, err)
	}
	created := manifest.LocalMillis(now)
	zero := int64(0)
	src := source
	return manifest.DataFileMeta{
		FileName:          baseName(st.Path),
		FileSize:          st.FileSize,
		RowCount:          st.RowCount,
		MinKey:            table.EmptyBinaryRow(),
		MaxKey:            table.EmptyBinaryRow(),
		KeyStats:          manifest.EmptySimpleStats(),
		ValueStats:        valueStats,
		MinSequenceNumber: minSeq,
		MaxSequenceNumber: minSeq + st.RowCount - 1,
		SchemaID:          schema.ID,
		Level:             0,
		ExtraFiles:        []string{},
		CreationTime:      &created,
		DeleteRowCount:    &zero,
		FileSource:        &src,
		ValueStatsCols:    cols,
	}, nil
}

// denseValueStats applies metadata.stats-dense-store (default true): columns
// whose min, max and null count are all unknown are left out and the kept
// names listed, the list being null when every column is kept.
func denseValueStats(fields table.RowType, st *datafile.FileStats) (manifest.SimpleStats, []string, error) {
	s := st.ValueStats
	byName := map[string]int{}
	for i, n := range st.ValueStatsCols {
		byName[n] = i
	}
	var keptTypes []table.DataType
	var keptNames []string
	var mins, maxs table.Row
	var nulls []*int64
	for _, f := range fields {
		i, ok := byName[f.Name]
		if !ok {
			continue
		}
		mn, mx, nc := at(s.Min, i), at(s.Max, i), atp(s.NullCounts, i)
		if mn == nil && mx == nil && nc == nil {
			continue
		}
		keptTypes = append(keptTypes, f.Type.WithNullable(true))
		keptNames = append(keptNames, f.Name)
		mins, maxs, nulls = append(mins, mn), append(maxs, mx), append(nulls, nc)
	}
	stats, err := table.NewSimpleStats(keptTypes, mins, maxs, orEmpty(nulls))
	if err != nil {
		return manifest.SimpleStats{}, nil, err
	}
	if len(keptNames) == len(fields) {
		return stats, nil, nil
	}
	if keptNames == nil {
		keptNames = []string{}
	}
	return stats, keptNames, nil
}

func simpleStats(types []table.DataType, s datafile.Stats) (manifest.SimpleStats, error) {
	nulls := make([]*int64, len(types))
	mins := make(table.Row, len(types))
	maxs := make(table.Row, len(types))
	for i := range types {
		mins[i], maxs[i], nulls[i] = at(s.Min, i), at(s.Max, i), atp(s.NullCounts, i)
	}
	return table.NewSimpleStats(types, mins, maxs, nulls)
}

func orEmpty(n []*int64) []*int64 {
	if n == nil {
		return []*int64{}
	}
	return n
}

func at(r table.Row, i int) any {
	if i < len(r) {
		return r[i]
	}
	return nil
}

func atp(r []*int64, i int) *int64 {
	if i < len(r) {
		return r[i]
	}
	return nil
}

func types(rt table.RowType) []table.DataType {
	out := make([]table.DataType, len(rt))
	for i, f := range rt {
		out[i] = f.Type
	}
	return out
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
