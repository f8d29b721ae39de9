package table

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
	"github.com/hamba/avro/v2/ocf"
)

const manifestFixturesRoot = "../../shared/fixtures"

type manifestFixtureKind int

const (
	fixtureManifest manifestFixtureKind = iota
	fixtureManifestList
	fixtureIndexManifest
)

type manifestFixture struct {
	path      string
	kind      manifestFixtureKind
	tableRoot string
	orc       bool // the table sets manifest.format=orc
}

var orcManifestOption = regexp.MustCompile(`"manifest\.format"\s*:\s*"orc"`)

// findManifestFixtures walks the fixture tree for every file in a manifest/
// directory. The test fails (not skips) when the fixtures are missing.
func findManifestFixtures(t *testing.T) []manifestFixture {
	t.Helper()
	if _, err := os.Stat(manifestFixturesRoot); err != nil {
		t.Fatalf("fixtures not found at %s: %v", manifestFixturesRoot, err)
	}
	var out []manifestFixture
	err := filepath.WalkDir(manifestFixturesRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Base(filepath.Dir(p)) != "manifest" {
			return nil
		}
		name := d.Name()
		f := manifestFixture{path: p, tableRoot: filepath.Dir(filepath.Dir(p))}
		switch {
		case strings.HasPrefix(name, "manifest-list-"), strings.HasPrefix(name, "avro_manifest_list_"):
			f.kind = fixtureManifestList
		case strings.HasPrefix(name, "index-manifest-"):
			f.kind = fixtureIndexManifest
		case strings.HasPrefix(name, "manifest-"), strings.HasPrefix(name, "avro_manifest_"), name == "manifest":
			f.kind = fixtureManifest
		default:
			t.Errorf("unclassified file in a manifest directory: %s", p)
			return nil
		}
		schemas, _ := filepath.Glob(filepath.Join(f.tableRoot, "schema", "schema-*"))
		for _, s := range schemas {
			b, err := os.ReadFile(s)
			if err != nil {
				return err
			}
			if orcManifestOption.Match(b) {
				f.orc = true
			}
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 400 {
		t.Fatalf("found only %d manifest fixtures, expected over 400", len(out))
	}
	return out
}

// hambaRecordCount decodes a file with hamba/avro, an independent reader,
// and returns its record count.
func hambaRecordCount(t *testing.T, data []byte) int {
	t.Helper()
	d, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("hamba decoder: %v", err)
	}
	n := 0
	for d.HasNext() {
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("hamba decode record %d: %v", n, err)
		}
		n++
	}
	if err := d.Error(); err != nil {
		t.Fatalf("hamba decode: %v", err)
	}
	return n
}

var roundTripCodecs = []string{"zstd", "snappy", "deflate", "none"}

func TestManifestFixturesDecodeAndRoundTrip(t *testing.T) {
	fixtures := findManifestFixtures(t)
	counts := map[manifestFixtureKind]int{}
	orcDecoded := 0
	for i, fx := range fixtures {
		data, err := os.ReadFile(fx.path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(manifestFixturesRoot, fx.path)
		codec := roundTripCodecs[i%len(roundTripCodecs)]
		if fx.orc {
			// ORC manifests (manifest.format=orc) are decoded, not
			// written: compactd writes Avro only, so no round trip.
			var err error
			var n int
			switch fx.kind {
			case fixtureManifest:
				var es []manifest.Entry
				es, err = manifest.Decode(data)
				n = len(es)
			case fixtureManifestList:
				var ls []manifest.ListEntry
				ls, err = manifest.DecodeList(data)
				n = len(ls)
			case fixtureIndexManifest:
				var is []manifest.IndexEntry
				is, err = manifest.DecodeIndex(data)
				n = len(is)
			}
			if err != nil {
				t.Errorf("%s: ORC manifest: %v", rel, err)
			} else if n == 0 && fx.kind == fixtureManifest { // lists may be empty (a first base list)
				t.Errorf("%s: ORC manifest decoded to no entries", rel)
			}
			orcDecoded++
			continue
		}
		counts[fx.kind]++
		var n int
		var again any
		var orig any
		switch fx.kind {
		case fixtureManifest:
			entries, err := manifest.Decode(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			n = len(entries)
			enc, err := manifest.Encode(entries, manifest.Avro(codec))
			if err != nil {
				t.Errorf("%s: encode: %v", rel, err)
				continue
			}
			if got := hambaRecordCount(t, enc); got != n {
				t.Errorf("%s: hamba reads %d records from our %s re-encoding, want %d", rel, got, codec, n)
			}
			orig = entries
			again, err = manifest.Decode(enc)
			if err != nil {
				t.Errorf("%s: decode re-encoded: %v", rel, err)
				continue
			}
		case fixtureManifestList:
			metas, err := manifest.DecodeList(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			n = len(metas)
			enc, err := manifest.EncodeList(metas, manifest.Avro(codec))
			if err != nil {
				t.Errorf("%s: encode: %v", rel, err)
				continue
			}
			if got := hambaRecordCount(t, enc); got != n {
				t.Errorf("%s: hamba reads %d records from our re-encoding, want %d", rel, got, n)
			}
			orig = metas
			again, err = manifest.DecodeList(enc)
			if err != nil {
				t.Errorf("%s: decode re-encoded: %v", rel, err)
				continue
			}
		case fixtureIndexManifest:
			entries, err := manifest.DecodeIndex(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			n = len(entries)
			enc, err := manifest.EncodeIndex(entries, manifest.Avro(codec))
			if err != nil {
				t.Errorf("%s: encode: %v", rel, err)
				continue
			}
			if got := hambaRecordCount(t, enc); got != n {
				t.Errorf("%s: hamba reads %d records from our re-encoding, want %d", rel, got, n)
			}
			orig = entries
			again, err = manifest.DecodeIndex(enc)
			if err != nil {
				t.Errorf("%s: decode re-encoded: %v", rel, err)
				continue
			}
		}
		if want := hambaRecordCount(t, data); n != want {
			t.Errorf("%s: decoded %d records, hamba reads %d", rel, n, want)
		}
		if !reflect.DeepEqual(orig, again) {
			t.Errorf("%s: records differ after re-encoding with %s", rel, codec)
		}
	}
	if orcDecoded == 0 {
		t.Errorf("no ORC manifest fixture was checked")
	}
	for k, min := range map[manifestFixtureKind]int{fixtureManifest: 100, fixtureManifestList: 200, fixtureIndexManifest: 10} {
		if counts[k] < min {
			t.Errorf("only %d fixtures of kind %d decoded, expected at least %d", counts[k], k, min)
		}
	}
	t.Logf("decoded %d manifests, %d manifest lists, %d index manifests; %d ORC files decoded",
		counts[fixtureManifest], counts[fixtureManifestList], counts[fixtureIndexManifest], orcDecoded)
}

// fixtureSchema is the part of a schema file these tests need.
type fixtureSchema struct {
	ID            int64       `json:"id"`
	Fields        []DataField `json:"fields"`
	PartitionKeys []string    `json:"partitionKeys"`
	PrimaryKeys   []string    `json:"primaryKeys"`
}

func latestFixtureSchema(t *testing.T, tableRoot string) fixtureSchema {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(tableRoot, "schema", "schema-*"))
	var best fixtureSchema
	bestID := int64(-1)
	for _, f := range files {
		id, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(f), "schema-"), 10, 64)
		if err != nil || id < bestID {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s fixtureSchema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		best, bestID = s, id
	}
	if bestID < 0 {
		t.Fatalf("%s: no schema", tableRoot)
	}
	return best
}

func (s fixtureSchema) partitionTypes(t *testing.T) []DataType {
	var out []DataType
	for _, k := range s.PartitionKeys {
		i := RowType(s.Fields).Index(k)
		if i < 0 {
			t.Fatalf("partition key %s not in schema", k)
		}
		out = append(out, s.Fields[i].Type)
	}
	return out
}

// TestManifestListRowsMatchTheirManifests checks every manifest-list row of
// the Java-written fixtures against the manifest it points to: exact file
// size, ADD/DELETE counts, and the summary NewManifestListEntry recomputes
// (partition stats bytes, schema id, bucket/level/row-id ranges) must equal
// what Java stored.
func TestManifestListRowsMatchTheirManifests(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	checked := 0
	for _, fx := range findManifestFixtures(t) {
		if fx.orc || fx.kind != fixtureManifestList || !strings.HasPrefix(filepath.Base(fx.path), "manifest-list-") {
			continue
		}
		metas, err := manifest.ReadList(ctx, fio, fx.path)
		if err != nil {
			t.Fatal(err)
		}
		schema := latestFixtureSchema(t, fx.tableRoot)
		ptypes := schema.partitionTypes(t)
		for _, m := range metas {
			mp := filepath.Join(filepath.Dir(fx.path), m.FileName)
			st, err := os.Stat(mp)
			if err != nil {
				continue // expired by the writer
			}
			if st.Size() != m.FileSize {
				t.Errorf("%s: size %d, list says %d", mp, st.Size(), m.FileSize)
			}
			entries, err := manifest.Read(ctx, fio, mp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewManifestListEntry(m.FileName, st.Size(), entries, ptypes, schema.ID)
			if err != nil {
				t.Fatalf("%s: %v", mp, err)
			}
			// Ranges absent from older list layouts are not compared.
			if m.MinBucket == nil {
				got.MinBucket, got.MaxBucket, got.MinLevel, got.MaxLevel = nil, nil, nil, nil
			}
			if m.MinRowID == nil && m.MaxRowID == nil {
				got.MinRowID, got.MaxRowID = nil, nil
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("%s: recomputed list row differs\n got %+v\nwant %+v", mp, got, m)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d manifest-list rows", checked)
	}
	t.Logf("checked %d manifest-list rows", checked)
}

func TestReadManifestErrorsNameTheFile(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	p := filepath.Join(t.TempDir(), "manifest-broken-0")
	if err := os.WriteFile(p, []byte("Obj\x01\x04garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() error{
		"manifest":       func() error { _, err := manifest.Read(ctx, fio, p); return err },
		"manifest list":  func() error { _, err := manifest.ReadList(ctx, fio, p); return err },
		"index manifest": func() error { _, err := manifest.ReadIndex(ctx, fio, p); return err },
	} {
		err := read()
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	_, err := manifest.Read(ctx, fio, filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, fileio.ErrNotExist) {
		t.Errorf("missing manifest: want ErrNotExist, got %v", err)
	}
}

// fixtureSchemaByID loads schema-<id> of a fixture table.
func fixtureSchemaByID(t *testing.T, tableRoot string, id int64) (fixtureSchema, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tableRoot, "schema", "schema-"+strconv.FormatInt(id, 10)))
	if err != nil {
		return fixtureSchema{}, false
	}
	var s fixtureSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s schema %d: %v", tableRoot, id, err)
	}
	return s, true
}

func (s fixtureSchema) types(t *testing.T, names []string) ([]DataType, bool) {
	var out []DataType
	for _, n := range names {
		i := RowType(s.Fields).Index(n)
		if i < 0 {
			return nil, false
		}
		out = append(out, s.Fields[i].Type)
	}
	return out, true
}

// TestFixtureBinaryRowsReencodeByteForByte decodes every partition, min/max
// key and stats row of the Java-written fixture manifests with the types of
// the file's schema and re-encodes it: the bytes must be identical, which is
// what Java's partition and file-identifier comparisons require.
func TestFixtureBinaryRowsReencodeByteForByte(t *testing.T) {
	checked := map[string]int{}
	covered := map[string]bool{} // non-null values seen, by type
	for _, fx := range findManifestFixtures(t) {
		if fx.orc || fx.kind != fixtureManifest || !strings.HasPrefix(filepath.Base(fx.path), "manifest-") {
			continue
		}
		data, err := os.ReadFile(fx.path)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := manifest.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(manifestFixturesRoot, fx.path)
		check := func(what string, types []DataType, row []byte) {
			t.Helper()
			vals, err := DecodeBinaryRow(types, row)
			if err != nil {
				if strings.Contains(err.Error(), "not supported") {
					return // nested types in value stats
				}
				if n, aerr := BinaryRowArity(row); aerr == nil && n != len(types) && strings.HasPrefix(what, "value stats") {
					// A branch that evolved its schema: the main schema of
					// that id does not describe the file.
					checked["skipped "+what]++
					return
				}
				t.Errorf("%s %s: %v", rel, what, err)
				return
			}
			enc, err := EncodeBinaryRow(types, vals)
			if err != nil {
				t.Errorf("%s %s: re-encode: %v", rel, what, err)
				return
			}
			if !bytes.Equal(enc, row) {
				t.Errorf("%s %s: re-encoded bytes differ\n got %x\nwant %x", rel, what, enc, row)
				return
			}
			checked[what]++
			for i, dt := range types {
				if vals[i] != nil {
					covered[dt.WithNullable(true).String()] = true
				}
			}
		}
		for _, e := range entries {
			s, ok := fixtureSchemaByID(t, fx.tableRoot, e.File.SchemaID)
			if !ok {
				continue
			}
			pt, _ := s.types(t, s.PartitionKeys)
			check("partition", pt, e.Partition)
			var keys []string
			for _, k := range s.PrimaryKeys {
				if !slicesContains(s.PartitionKeys, k) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				keys = s.PrimaryKeys
			}
			if kt, ok := s.types(t, keys); ok && len(s.PrimaryKeys) > 0 {
				check("min key", kt, e.File.MinKey)
				check("max key", kt, e.File.MaxKey)
				check("key stats min", StatsTypes(kt), e.File.KeyStats.MinValues)
				check("key stats max", StatsTypes(kt), e.File.KeyStats.MaxValues)
			}
			cols := e.File.ValueStatsCols
			if cols == nil {
				if e.File.WriteCols != nil {
					continue
				}
				for _, f := range s.Fields {
					cols = append(cols, f.Name)
				}
			}
			if vt, ok := s.types(t, cols); ok {
				check("value stats min", StatsTypes(vt), e.File.ValueStats.MinValues)
				check("value stats max", StatsTypes(vt), e.File.ValueStats.MaxValues)
			}
		}
	}
	for _, what := range []string{"partition", "min key", "key stats min", "value stats min"} {
		if checked[what] < 20 {
			t.Errorf("only %d %s rows checked", checked[what], what)
		}
	}
	// The Java-written rows must exercise the layouts with a variable part.
	for _, typ := range []string{"STRING", "DECIMAL(23, 5)", "TIMESTAMP(6)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "DECIMAL(18, 6)", "TIMESTAMP(3)"} {
		if !covered[typ] {
			t.Errorf("no non-null %s value among the fixture rows", typ)
		}
	}
	t.Logf("byte-exact rows: %v", checked)
	t.Logf("types with non-null values: %v", covered)
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// liveFixtureFiles folds the base and delta manifest lists of a snapshot
// the way Java does (ADD inserts, DELETE removes by identifier).
func liveFixtureFiles(t *testing.T, tableRoot string, snapshot int) (live []manifest.Entry, delta []manifest.Entry) {
	t.Helper()
	ctx := context.Background()
	fio := fileio.NewLocal()
	b, err := os.ReadFile(filepath.Join(tableRoot, "snapshot", "snapshot-"+strconv.Itoa(snapshot)))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Base  string `json:"baseManifestList"`
		Delta string `json:"deltaManifestList"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	read := func(list string) []manifest.Entry {
		metas, err := manifest.ReadList(ctx, fio, filepath.Join(tableRoot, "manifest", list))
		if err != nil {
			t.Fatal(err)
		}
		var out []manifest.Entry
		for _, m := range metas {
			es, err := manifest.Read(ctx, fio, filepath.Join(tableRoot, "manifest", m.FileName))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, es...)
		}
		return out
	}
	delta = read(s.Delta)
	all := append(read(s.Base), delta...)
	byID := map[manifest.FileIdentifier]int{}
	for i, e := range all {
		id := e.Identifier()
		switch e.Kind {
		case manifest.FileKindAdd:
			if _, dup := byID[id]; dup {
				t.Fatalf("snapshot %d: %s added twice", snapshot, id)
			}
			byID[id] = i
		case manifest.FileKindDelete:
			if _, ok := byID[id]; !ok {
				t.Fatalf("snapshot %d: DELETE of %s before its ADD", snapshot, id)
			}
			delete(byID, id)
		}
	}
	for _, i := range byID {
		live = append(live, all[i])
	}
	return live, delta
}

var readmeDataFiles = regexp.MustCompile(`(?m)^snapshot-(\d+) \((\d+) data files\)`)
var readmeRows = regexp.MustCompile(`(?m)^snapshot-(\d+) COMPACT: full compaction.*; (\d+) rows\.`)

// The fixture READMEs state how many data files some commits wrote and how
// many rows a full compaction left; the decoded manifests must agree.
func TestFixtureManifestsAgreeWithReadmeCounts(t *testing.T) {
	readmes, _ := filepath.Glob(filepath.Join(manifestFixturesRoot, "paimon-cpp", "*", "*.db", "*", "README"))
	checked := 0
	for _, readme := range readmes {
		text, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Dir(readme)
		for _, m := range readmeDataFiles.FindAllStringSubmatch(string(text), -1) {
			snap, _ := strconv.Atoi(m[1])
			want, _ := strconv.Atoi(m[2])
			_, delta := liveFixtureFiles(t, root, snap)
			adds := 0
			for _, e := range delta {
				if e.Kind == manifest.FileKindAdd {
					adds++
				}
			}
			if adds != want {
				t.Errorf("%s snapshot-%d: %d files added, README says %d", root, snap, adds, want)
			}
			checked++
		}
		for _, m := range readmeRows.FindAllStringSubmatch(string(text), -1) {
			snap, _ := strconv.Atoi(m[1])
			want, _ := strconv.ParseInt(m[2], 10, 64)
			live, _ := liveFixtureFiles(t, root, snap)
			var rows int64
			for _, e := range live {
				rows += e.File.RowCount
			}
			if rows != want {
				t.Errorf("%s snapshot-%d: live files hold %d rows, README says %d", root, snap, rows, want)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Fatalf("only %d README statements checked", checked)
	}
	t.Logf("%d README statements checked", checked)
}
