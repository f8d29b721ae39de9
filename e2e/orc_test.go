package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/interop"
)

// orcAppendScenario is an append table (no primary key) written in ORC by
// many write-only commits: every commit adds small level-0 files.
func orcAppendScenario(name string, bucket int, opts map[string]string, commits int, seed uint64) (fixtures.Spec, []byte) {
	spec := fixtures.Spec{
		Columns: []fixtures.Column{
			{Name: "dt", Type: "STRING NOT NULL"}, {Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"},
			{Name: "score", Type: "DOUBLE"}, {Name: "qty", Type: "INT"}, {Name: "small", Type: "SMALLINT"},
			{Name: "tiny", Type: "TINYINT"}, {Name: "amount", Type: "DECIMAL(20, 4)"}, {Name: "price", Type: "DECIMAL(9, 2)"},
			{Name: "day", Type: "DATE"}, {Name: "at", Type: "TIMESTAMP(6)"}, {Name: "at3", Type: "TIMESTAMP(3)"},
			{Name: "ltz", Type: "TIMESTAMP(6) WITH LOCAL TIME ZONE"}, {Name: "flag", Type: "BOOLEAN"},
			{Name: "raw", Type: "BYTES"}, {Name: "code", Type: "CHAR(4)"}, {Name: "note", Type: "VARCHAR(12)"},
			{Name: "ratio", Type: "FLOAT"},
		},
		PartitionKeys: []string{"dt"},
		Bucket:        bucket,
		Options:       map[string]string{"write-only": "true", "file.format": "orc"},
	}
	if bucket > 0 {
		spec.Options["bucket-key"] = "id"
	}
	for k, v := range opts {
		spec.Options[k] = v
	}
	r := rand.New(rand.NewPCG(seed, 9))
	var b bytes.Buffer
	maybe := func(v any) any {
		if r.IntN(8) == 0 {
			return nil
		}
		return v
	}
	id := 0
	for c := 0; c < commits; c++ {
		for k := 0; k < 20+r.IntN(40); k++ {
			id++
			row := map[string]any{
				"dt": []string{"2026-01-01", "2026-01-02"}[r.IntN(2)], "id": maybe(id), "name": maybe(fmt.Sprintf("n%d", r.IntN(30))),
				"score": maybe(r.NormFloat64() * 1000), "qty": maybe(r.IntN(1000) - 500), "small": maybe(r.IntN(60000) - 30000),
				"tiny": maybe(r.IntN(256) - 128), "amount": maybe(fmt.Sprintf("%d.%04d", r.IntN(2000000)-1000000, r.IntN(10000))),
				"price": maybe(fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100))), "day": maybe(fmt.Sprintf("19%02d-0%d-1%d", 50+r.IntN(50), 1+r.IntN(9), r.IntN(10))),
				"at":   maybe(fmt.Sprintf("20%02d-03-04T05:06:07.%06d000", r.IntN(40), r.IntN(1000000))),
				"at3":  maybe(fmt.Sprintf("19%02d-11-12T13:14:15.%03d000000", 60+r.IntN(40), r.IntN(1000))),
				"ltz":  maybe(fmt.Sprintf("2025-%02d-20T21:22:23.%06d000", 1+r.IntN(12), r.IntN(1000000))),
				"flag": maybe(r.IntN(2) == 0), "raw": maybe("AQID"), "code": maybe(fmt.Sprintf("c%03d", r.IntN(1000))),
				"note": maybe(fmt.Sprintf("note-%d", r.IntN(5))), "ratio": maybe(float64(float32(r.Float64()))),
				"_commit": c,
			}
			line, _ := json.Marshal(row)
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return spec, b.Bytes()
}

// checkMetadataFormat checks that every manifest, manifest list and index
// manifest of the table db.t in warehouse wh is ORC (wantORC) or Avro:
// Java reads all of them with the reader of the table's manifest.format.
func checkMetadataFormat(t *testing.T, wh string, wantORC bool) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(wh, "db.db", "t", "manifest", "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("manifests of %s: %v %v", wh, names, err)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if isORC := bytes.HasPrefix(data, []byte("ORC")); isORC != wantORC {
			t.Errorf("%s: ORC %v, want %v", filepath.Base(n), isORC, wantORC)
		}
	}
}

// checkORCCodec opens an ORC data file and checks its compression.
func checkORCCodec(t *testing.T, path string, want orc.Compression) {
	t.Helper()
	b, err := os.ReadFile(strings.TrimPrefix(path, "file:"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := orc.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if f.Compression != want {
		t.Errorf("%s: compression %s, want %s", path, f.Compression, want)
	}
}

type orcCase struct {
	name  string
	spec  fixtures.Spec
	rows  []byte
	model *fixtures.Scenario // nil for append tables
	codec orc.Compression    // of the files compactd writes
}

// javaCompactsOnTop reports whether the harness's compact verb compacts
// the table: not an unaware-bucket append table (Java compacts those
// through a dedicated coordinator, its writers' compact manager is a
// no-op).
func (c orcCase) javaCompactsOnTop() bool { return c.model != nil || c.spec.Bucket > 0 }

// TestORCTablesCompactAgainstJava is issue #21's compaction proof: Java
// writes ORC tables (deduplicate and partial-update primary-key tables,
// an aggregation table, append tables unaware and bucketed; zstd, zlib,
// snappy, lz4 and no compression; many write-only commits), compactd
// compacts them (minor, then full; a deletion-vector table too) and a copy of each primary-key table
// is compacted by Java. After each step Java reads the same rows from
// both (for append tables: the rows before, which compaction keeps), and
// compactd's files are ORC; then Java writers commit on top of compactd's
// files and Java's own compaction rewrites them (append tables with
// buckets; unaware-bucket ones are only written), again giving the copy's
// rows.
func TestORCTablesCompactAgainstJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	orcPK := func(p fixtures.Params, opts map[string]string) orcCase {
		s := fixtures.Generate(p)
		s.Spec.Options["file.format"] = "orc"
		for k, v := range opts {
			s.Spec.Options[k] = v
		}
		return orcCase{name: "orc_" + s.Name, spec: s.Spec, rows: s.RowsJSONL(), model: s, codec: orc.CompressionZstd}
	}
	var cases []orcCase
	cases = append(cases,
		orcPK(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 4, Size: fixtures.Tiny, Seed: 21, Commits: 12}, nil),
		orcPK(fixtures.Params{Engine: "partial-update", Buckets: 2, Size: fixtures.Tiny, Seed: 21, Commits: 12}, map[string]string{"file.compression": "lz4"}),
		orcPK(fixtures.Params{Engine: "aggregation", Buckets: 1, Size: fixtures.Tiny, Seed: 21}, map[string]string{"orc.compress": "zlib", "orc.row.index.stride": "1000"}),
	)
	dv := orcPK(fixtures.Params{Engine: "deduplicate", Buckets: 2, Size: fixtures.Tiny, Seed: 22, Commits: 10}, map[string]string{"deletion-vectors.enabled": "true"})
	dv.name += "_dv"
	cases = append(cases, dv)
	cases[1].codec, cases[2].codec = orc.CompressionLZ4, orc.CompressionZlib
	appendCodecs := []orc.Compression{orc.CompressionSnappy, orc.CompressionNone, orc.CompressionZstd}
	for i, o := range []map[string]string{
		{"file.compression": "snappy"},
		{"orc.compress": "NONE", "orc.dictionary.key.threshold": "0"},
		{"file.compression": "zstd", "file.compression.zstd-level": "9", "orc.stripe.size": "8192", "orc.row.index.stride": "1000"},
	} {
		bucket := -1
		if i == 1 {
			bucket = 3
		}
		name := fmt.Sprintf("orc_append_%d", i)
		spec, rows := orcAppendScenario(name, bucket, o, 15, uint64(i))
		cases = append(cases, orcCase{name: name, spec: spec, rows: rows, codec: appendCodecs[i]})
	}

	// Tables whose metadata is ORC too (manifest.format=orc): compactd
	// writes its manifests, manifest lists and (deletion vectors) index
	// manifests in ORC, and Java reads and writes on top of them.
	orcMeta := orcPK(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 3, Size: fixtures.Tiny, Seed: 23, Commits: 12},
		map[string]string{"manifest.format": "orc", "manifest.compression": "snappy"})
	orcMeta.name += "_orc_manifests"
	orcMetaDV := orcPK(fixtures.Params{Engine: "partial-update", Buckets: 2, Size: fixtures.Tiny, Seed: 24, Commits: 10},
		map[string]string{"manifest.format": "orc", "deletion-vectors.enabled": "true"})
	orcMetaDV.name += "_dv_orc_manifests"
	cases = append(cases, orcMeta, orcMetaDV)
	spec, rows := orcAppendScenario("orc_append_orc_manifests", 2, map[string]string{"manifest.format": "orc", "manifest.compression": "lz4"}, 15, 7)
	cases = append(cases, orcCase{name: "orc_append_orc_manifests", spec: spec, rows: rows, codec: orc.CompressionZstd})

	dir := t.TempDir()
	var reqs []interop.BatchRequest
	whs := make([]string, len(cases))
	refs := make([]string, len(cases))
	for i, c := range cases {
		whs[i] = filepath.Join(dir, c.name, "warehouse")
		refs[i] = filepath.Join(dir, c.name, "ref")
		specPath := filepath.Join(dir, c.name+"-spec.json")
		rowsPath := filepath.Join(dir, c.name+"-rows.jsonl")
		if err := writeFile(specPath, c.spec.JSON()); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(rowsPath, c.rows); err != nil {
			t.Fatal(err)
		}
		for _, wh := range []string{whs[i], refs[i]} {
			f := flags(wh, "db.t")
			f["spec"], f["rows"] = specPath, rowsPath
			reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: f})
		}
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(whs[i], "db.t")},
			interop.BatchRequest{Verb: "files", Flags: flags(whs[i], "db.t")})
	}
	res := batch(t, j, reqs)
	before := make([][]string, len(cases))
	for i, c := range cases {
		r := res[4*i : 4*i+4]
		for _, x := range r {
			if x.Err != nil {
				t.Fatalf("%s: Java set-up: %v", c.name, x.Err)
			}
		}
		before[i] = canon(t, rowsOf(t, r[2]))
		orcFiles := 0
		for _, f := range rowsOf(t, r[3]) {
			if f["file_format"] == "orc" {
				orcFiles++
			}
		}
		if orcFiles < 10 {
			t.Fatalf("%s: Java wrote %d ORC files, want many", c.name, orcFiles)
		}
		// compactd reads Java's ORC files as Java does.
		got, err := scanRows(whs[i], "db.t")
		if err != nil {
			t.Fatalf("%s: compactd scan: %v", c.name, err)
		}
		diffRows(t, c.name+": compactd's scan before compaction", before[i], canon(t, got))
	}

	failed := make([]error, len(cases))
	committed := make([]bool, len(cases))
	for step, full := range []bool{false, true} {
		reqs = reqs[:0]
		at := make([]int, len(cases))
		for i, c := range cases {
			if failed[i] == nil {
				sum, err := compact.Run(ctx, openLocal(t, whs[i], "db.t"), compact.Options{Full: full})
				switch {
				case err != nil:
					failed[i] = err
				default:
					committed[i] = committed[i] || sum.Snapshot != 0
					if full && !committed[i] {
						failed[i] = fmt.Errorf("neither compaction committed")
					}
				}
			}
			at[i] = len(reqs)
			if c.model != nil {
				rf := flags(refs[i], "db.t")
				if !full {
					rf["full"] = "false"
				}
				reqs = append(reqs,
					interop.BatchRequest{Verb: "compact", Flags: rf},
					interop.BatchRequest{Verb: "read", Flags: flags(refs[i], "db.t")})
			}
			reqs = append(reqs,
				interop.BatchRequest{Verb: "read", Flags: flags(whs[i], "db.t")},
				interop.BatchRequest{Verb: "files", Flags: flags(whs[i], "db.t")})
		}
		res := batch(t, j, reqs)
		for i, c := range cases {
			r := res[at[i]:]
			t.Run(fmt.Sprintf("%s/%s", c.name, []string{"minor", "full"}[step]), func(t *testing.T) {
				if failed[i] != nil {
					t.Fatalf("compactd compaction: %v", failed[i])
				}
				want := before[i]
				if c.model != nil {
					if r[0].Err != nil {
						t.Fatalf("Java's compaction of the copy: %v", r[0].Err)
					}
					want = canon(t, rowsOf(t, r[1]))
					// (Readers see level-0 rows of first-row and deletion-vector
					// tables only once they are compacted.)
					if !interop.IsFirstRow(c.model) && c.spec.Options["deletion-vectors.enabled"] != "true" {
						diffRows(t, "Java after its own compaction vs before", before[i], want)
					}
					r = r[2:]
				}
				diffRows(t, "Java after compactd's compaction", want, canon(t, rowsOf(t, r[0])))
				got, err := scanRows(whs[i], "db.t")
				if err != nil {
					t.Fatal(err)
				}
				diffRows(t, "compactd after its compaction", want, canon(t, got))
				files := rowsOf(t, r[1])
				for _, f := range files {
					if f["file_format"] != "orc" {
						t.Errorf("compactd's table has a %v file %v", f["file_format"], f["file_path"])
					}
					if full {
						checkORCCodec(t, fmt.Sprint(f["file_path"]), c.codec)
					}
					if full && c.model != nil && f["level"] == int64(0) {
						t.Errorf("a level-0 file is left after the full compaction: %v", f["file_path"])
					}
				}
				if full && c.model == nil && len(files) > 6 {
					t.Errorf("%d files left after the full compaction of an append table", len(files))
				}
				checkMetadataFormat(t, whs[i], c.spec.Options["manifest.format"] == "orc")
			})
		}
	}

	// pypaimon reads compactd's ORC output as Java does (where it reads
	// the table at all: it reads Avro manifests only).
	var pyReqs []interop.BatchRequest
	var pyCases []int
	for i, c := range cases {
		if c.spec.Options["manifest.format"] == "orc" {
			continue
		}
		pyCases = append(pyCases, i)
		pyReqs = append(pyReqs, interop.BatchRequest{Verb: "read", Flags: flags(whs[i], "db.t")})
	}
	pyRes, err := interop.Python(t).Batch(ctx, pyReqs)
	if err != nil {
		t.Fatal(err)
	}
	reqs = reqs[:0]
	for _, i := range pyCases {
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(whs[i], "db.t")})
	}
	javaNow := batch(t, j, reqs)
	pyRead := 0
	for k, i := range pyCases {
		c := cases[i]
		switch {
		case errors.Is(pyRes[k].Err, interop.ErrUnsupported):
			t.Logf("%s: pypaimon refuses this table: %v", c.name, pyRes[k].Err)
		default:
			diffRows(t, c.name+": pypaimon after compactd's compaction", canon(t, rowsOf(t, javaNow[k])), canon(t, rowsOf(t, pyRes[k])))
			pyRead++
		}
	}
	if pyRead == 0 {
		t.Errorf("pypaimon read none of the compacted ORC tables")
	}

	// Java writes a second round on top of compactd's files and compacts;
	// the copy gets the same.
	reqs = reqs[:0]
	at := make([]int, len(cases))
	for i, c := range cases {
		round2 := secondRound(t, c.rows)
		rows := filepath.Join(dir, c.name+"-rows2.jsonl")
		if err := writeFile(rows, round2); err != nil {
			t.Fatal(err)
		}
		at[i] = len(reqs)
		for _, wh := range []string{whs[i], refs[i]} {
			f := flags(wh, "db.t")
			f["rows"] = rows
			reqs = append(reqs, interop.BatchRequest{Verb: "write", Flags: f})
			if c.javaCompactsOnTop() {
				reqs = append(reqs, interop.BatchRequest{Verb: "compact", Flags: flags(wh, "db.t")})
			}
			reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(wh, "db.t")})
		}
	}
	res = batch(t, j, reqs)
	for i, c := range cases {
		t.Run(c.name+"/java writes and compacts on top", func(t *testing.T) {
			if failed[i] != nil {
				t.Fatalf("compactd compaction: %v", failed[i])
			}
			n := 2
			if c.javaCompactsOnTop() {
				n = 3
			}
			r := res[at[i] : at[i]+2*n]
			for k := range r {
				if r[k].Err != nil {
					t.Fatalf("%s: %v", reqs[at[i]+k].Verb, r[k].Err)
				}
			}
			diffRows(t, "rows after the second round", canon(t, rowsOf(t, r[2*n-1])), canon(t, rowsOf(t, r[n-1])))
			checkMetadataFormat(t, whs[i], c.spec.Options["manifest.format"] == "orc")
		})
	}
}
