package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table/manifest"
)

// tsSeed is the seed of the random instants: $COMPACTD_TIMESTAMP_SEED to
// replay a failure, else a fresh one (printed by the test).
func tsSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("COMPACTD_TIMESTAMP_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("COMPACTD_TIMESTAMP_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

const (
	minInstantSec = -62135596800 // 0001-01-01T00:00:00Z
	maxInstantSec = 253402300799 // 9999-12-31T23:59:59Z
)

// tsEdges are instants where splitting into millis and nano-of-milli (or
// INT96 day and nanos of day) goes wrong with division towards zero.
var tsEdges = []string{
	"1969-12-31T23:59:59.999999999",
	"1969-12-31T23:59:59.999000001",
	"1969-12-31T23:59:59.000000001",
	"1969-12-31T23:59:59.999999",
	"1969-12-31T00:00:00.000000001",
	"1969-12-30T23:59:59.999999999",
	"1970-01-01T00:00:00.000000000",
	"1970-01-01T00:00:00.000000001",
	"0001-01-01T00:00:00.000000000",
	"0001-01-01T00:00:00.000000001",
	"0001-01-01T23:59:59.999999999",
	"1582-10-04T12:34:56.789012345",
	"1582-10-15T00:00:00.000000001",
	"1900-02-28T23:59:59.999999999",
	"1677-09-21T00:12:43.145224191", // just before the int64-nanosecond range
	"2262-04-11T23:47:16.854775808", // just after it
	"9999-12-31T23:59:59.999999999",
}

// randomInstant draws an instant between 0001 and 9999, half of them within
// two days of the epoch, always with nanosecond digits (truncated later to
// the column's precision).
func randomInstant(rng *rand.Rand) time.Time {
	var sec int64
	if rng.IntN(2) == 0 {
		sec = rng.Int64N(4*86400) - 2*86400
	} else {
		sec = minInstantSec + rng.Int64N(maxInstantSec-minInstantSec+1)
	}
	return time.Unix(sec, rng.Int64N(1e9)).UTC()
}

// truncTo drops the digits a TIMESTAMP(p) cannot hold (towards the past,
// as the instant's fraction of a second is non-negative).
func truncTo(tm time.Time, p int) time.Time {
	unit := int64(1)
	for range 9 - p {
		unit *= 10
	}
	ns := int64(tm.Nanosecond())
	return time.Unix(tm.Unix(), ns-ns%unit).UTC()
}

func canonTS(tm time.Time) string { return tm.Format("2006-01-02T15:04:05.000000000") }

type tsTable struct {
	name      string // db.t
	typ       string // Paimon SQL type of k and w
	precision int
	rows      []byte // write script: two commits
	model     map[string]interop.Row
}

// timestampTable builds one table of TIMESTAMP(p) or TIMESTAMP_LTZ(p) keys:
// a first commit with a few hundred instants, a second that rewrites about
// half of them and adds more, so a full compaction merges the two.
func timestampTable(t *testing.T, rng *rand.Rand, ltz bool, p int) tsTable {
	t.Helper()
	typ := fmt.Sprintf("TIMESTAMP(%d)", p)
	name := fmt.Sprintf("db.ts%d", p)
	if ltz {
		typ = fmt.Sprintf("TIMESTAMP_LTZ(%d)", p)
		name = fmt.Sprintf("db.ltz%d", p)
	}
	tt := tsTable{name: name, typ: typ, precision: p, model: map[string]interop.Row{}}
	var keys []string
	add := func(tm time.Time) {
		k := canonTS(truncTo(tm, p))
		if _, dup := tt.model[k]; !dup {
			tt.model[k] = nil
			keys = append(keys, k)
		}
	}
	for _, e := range tsEdges {
		tm, err := time.Parse("2006-01-02T15:04:05.999999999", e)
		if err != nil {
			t.Fatal(err)
		}
		add(tm)
	}
	for range 250 {
		add(randomInstant(rng))
	}
	first := len(keys)
	for range 60 {
		add(randomInstant(rng))
	}
	var script []byte
	put := func(k string, v int64, commit int) {
		w := canonTS(truncTo(randomInstant(rng), p))
		if v%5 == 0 {
			w = k // a value equal to the key, edges included
		}
		r := interop.Row{"k": k, "v": v, "w": w}
		tt.model[k] = r
		line, err := json.Marshal(map[string]any{"k": k, "v": v, "w": w, "_commit": commit})
		if err != nil {
			t.Fatal(err)
		}
		script = append(append(script, line...), '\n')
	}
	for i, k := range keys[:first] {
		put(k, int64(i), 1)
	}
	for i, k := range keys {
		if i >= first || rng.IntN(2) == 0 {
			put(k, int64(1000+i), 2)
		}
	}
	tt.rows = script
	return tt
}

func (tt tsTable) spec() fixtures.Spec {
	return fixtures.Spec{
		Columns: []fixtures.Column{
			{Name: "k", Type: tt.typ + " NOT NULL"},
			{Name: "v", Type: "BIGINT"},
			{Name: "w", Type: tt.typ},
		},
		PrimaryKeys: []string{"k"},
		Bucket:      2,
		Options:     map[string]string{"write-only": "true"},
	}
}

func (tt tsTable) want() []string {
	rows := make([]interop.Row, 0, len(tt.model))
	for _, r := range tt.model {
		rows = append(rows, interop.Normalize(r).(interop.Row))
	}
	return canonRows(rows)
}

func canonRows(rows []interop.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// TestPreEpochSubMillisecondTimestampKeysCompactLikeJava: Java writes, in two
// commits, tables keyed by TIMESTAMP(p) and TIMESTAMP_LTZ(p) for every p in
// 0..9, with random instants across years 0001-9999 (half of them within two
// days of the epoch, where splitting with division towards zero breaks) and
// the edge instants above. compactd must scan what Java reads, compact
// --full (batch and row path), and leave tables Java reads exactly as
// before; its files must hold the same physical timestamp values and the
// same keys and statistics as Java's own full compaction of a copy.
// pypaimon reads the compacted tables of precision 0..6 as written.
func TestPreEpochSubMillisecondTimestampKeysCompactLikeJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	seed := tsSeed(t)
	t.Logf("seed %d (replay with COMPACTD_TIMESTAMP_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>32|1))

	wh := filepath.Join(t.TempDir(), "wh")
	dir := t.TempDir()
	var tables []tsTable
	var reqs []interop.BatchRequest
	for _, ltz := range []bool{false, true} {
		for p := 0; p <= 9; p++ {
			tt := timestampTable(t, rng, ltz, p)
			tables = append(tables, tt)
			base := filepath.Join(dir, tt.name)
			specFile, rowsFile := base+".spec.json", base+".rows.jsonl"
			if err := writeFile(specFile, tt.spec().JSON()); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(rowsFile, tt.rows); err != nil {
				t.Fatal(err)
			}
			f := flags(wh, tt.name)
			f["spec"], f["rows"] = specFile, rowsFile
			reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: f},
				interop.BatchRequest{Verb: "read", Flags: flags(wh, tt.name)})
		}
	}
	res := batch(t, j, reqs)
	for i, tt := range tables {
		if res[2*i].Err != nil {
			t.Fatalf("%s: Java create: %v", tt.name, res[2*i].Err)
		}
		diffRows(t, tt.name+": Java read after its writes", tt.want(), canonRows(rowsOf(t, res[2*i+1])))
		got, err := scanRows(wh, tt.name)
		if err != nil {
			t.Fatalf("%s: compactd scan: %v", tt.name, err)
		}
		diffRows(t, tt.name+": compactd scan before compaction", tt.want(), canonRows(got))
	}
	if t.Failed() {
		t.FailNow()
	}

	ref := filepath.Join(t.TempDir(), "ref") // Paimon's own compaction
	rowPath := filepath.Join(t.TempDir(), "row")
	copyDir(t, wh, ref)
	copyDir(t, wh, rowPath)
	for _, tt := range tables {
		for _, c := range []struct {
			wh      string
			rowPath bool
		}{{wh, false}, {rowPath, true}} {
			sum, err := compact.Run(ctx, openLocal(t, c.wh, tt.name), compact.Options{Full: true, RowPath: c.rowPath})
			if err != nil {
				t.Fatalf("%s: compactd compact --full (row path %v): %v", tt.name, c.rowPath, err)
			}
			if sum.Snapshot == 0 {
				t.Fatalf("%s: compactd committed nothing", tt.name)
			}
		}
	}
	reqs = reqs[:0]
	for _, tt := range tables {
		reqs = append(reqs,
			interop.BatchRequest{Verb: "compact", Flags: flags(ref, tt.name)},
			interop.BatchRequest{Verb: "read", Flags: flags(wh, tt.name)},
			interop.BatchRequest{Verb: "read", Flags: flags(rowPath, tt.name)})
	}
	res = batch(t, j, reqs)
	// pypaimon 2.1.0 reads TIMESTAMP(7..9) into int64 nanoseconds and fails
	// outside 1677-2262 whoever wrote the table; it reads the others.
	py := interop.Python(t)
	var pyReqs []interop.BatchRequest
	var pyTables []int
	for i, tt := range tables {
		if tt.precision <= 6 {
			pyReqs = append(pyReqs, interop.BatchRequest{Verb: "read", Flags: flags(wh, tt.name)})
			pyTables = append(pyTables, i)
		}
	}
	pyRes, err := py.Batch(ctx, pyReqs)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range pyTables {
		diffRows(t, tables[i].name+": pypaimon after compactd's compaction", tables[i].want(), canonRows(rowsOf(t, pyRes[k])))
	}
	for i, tt := range tables {
		t.Run(tt.name, func(t *testing.T) {
			if res[3*i].Err != nil {
				t.Fatalf("Java full compaction of the copy: %v", res[3*i].Err)
			}
			diffRows(t, "Java after compactd's compaction", tt.want(), canonRows(rowsOf(t, res[3*i+1])))
			diffRows(t, "Java after compactd's row-path compaction", tt.want(), canonRows(rowsOf(t, res[3*i+2])))
			got, err := scanRows(wh, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			diffRows(t, "compactd after its compaction", tt.want(), canonRows(got))
			javaFiles := compactedFiles(t, ref, tt.name)
			for _, w := range []string{wh, rowPath} {
				sameCompactedFiles(t, javaFiles, compactedFiles(t, w, tt.name))
			}
		})
	}
}

// compactedFile is what of a compacted file must not depend on who wrote it.
type compactedFile struct {
	Bucket                 int32
	Level                  int32
	RowCount               int64
	MinKey, MaxKey         string
	KeyStats, ValueStats   manifest.SimpleStats
	KeyColumn, ValueColumn []string // physical Parquet values of _KEY_k and w
}

func compactedFiles(t *testing.T, warehouse, name string) []compactedFile {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, warehouse, name)
	snap, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	var out []compactedFile
	for _, p := range fs.Partitions {
		for _, b := range p.Buckets {
			for i := range b.Files {
				e := &b.Files[i]
				path, err := tb.DataFilePath(e)
				if err != nil {
					t.Fatal(err)
				}
				cols := physicalColumns(t, path, "_KEY_k", "w")
				out = append(out, compactedFile{
					Bucket: e.Bucket, Level: e.File.Level, RowCount: e.File.RowCount,
					MinKey: hex.EncodeToString(e.File.MinKey), MaxKey: hex.EncodeToString(e.File.MaxKey),
					KeyStats: e.File.KeyStats, ValueStats: e.File.ValueStats,
					KeyColumn: cols[0], ValueColumn: cols[1],
				})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Bucket != out[b].Bucket {
			return out[a].Bucket < out[b].Bucket
		}
		return out[a].MinKey < out[b].MinKey
	})
	return out
}

func sameCompactedFiles(t *testing.T, java, got []compactedFile) {
	t.Helper()
	if len(java) != len(got) {
		t.Fatalf("%d files after compaction, Java's compaction has %d", len(got), len(java))
	}
	for i := range java {
		j, g := java[i], got[i]
		if !reflect.DeepEqual(j.KeyColumn, g.KeyColumn) || !reflect.DeepEqual(j.ValueColumn, g.ValueColumn) {
			t.Errorf("file %d (bucket %d): physical timestamp values differ from Java's compaction:\n%s", i, j.Bucket, firstDiff(j, g))
		}
		j.KeyColumn, j.ValueColumn, g.KeyColumn, g.ValueColumn = nil, nil, nil, nil
		if !reflect.DeepEqual(j, g) {
			t.Errorf("file %d: metadata differs from Java's compaction:\n java %+v\n got  %+v", i, j, g)
		}
	}
}

func firstDiff(j, g compactedFile) string {
	for _, c := range []struct {
		name string
		a, b []string
	}{{"_KEY_k", j.KeyColumn, g.KeyColumn}, {"w", j.ValueColumn, g.ValueColumn}} {
		for i := range max(len(c.a), len(c.b)) {
			var a, b string
			if i < len(c.a) {
				a = c.a[i]
			}
			if i < len(c.b) {
				b = c.b[i]
			}
			if a != b {
				return fmt.Sprintf("%s row %d: java %s, got %s", c.name, i, a, b)
			}
		}
	}
	return ""
}

// physicalColumns returns each named leaf column's values as hex of their
// Parquet physical bytes (INT64 little endian, INT96 as stored), NULL as "".
func physicalColumns(t *testing.T, path string, names ...string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := make([][]string, len(names))
	for n, name := range names {
		leaf, ok := pf.Schema().Lookup(name)
		if !ok {
			t.Fatalf("%s: no column %s", path, name)
		}
		for _, rg := range pf.RowGroups() {
			pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
			for {
				pg, err := pages.ReadPage()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: column %s: %v", path, name, err)
				}
				vals := make([]parquet.Value, pg.NumValues())
				k, err := pg.Values().ReadValues(vals)
				if err != nil && !errors.Is(err, io.EOF) {
					t.Fatalf("%s: column %s: %v", path, name, err)
				}
				for _, v := range vals[:k] {
					if v.IsNull() {
						out[n] = append(out[n], "")
					} else {
						out[n] = append(out[n], hex.EncodeToString(v.Bytes()))
					}
				}
				parquet.Release(pg)
			}
			pages.Close()
		}
	}
	return out
}
