package table

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

func metaSchema(t *testing.T, fields RowType, part, pk []string, opts map[string]string) *TableSchema {
	t.Helper()
	s, err := NewTableSchema(0, fields, len(fields)-1, part, pk, opts, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPartitionPathsAsJava(t *testing.T) {
	str := DataType{Root: TypeVarChar, Nullable: true, Length: MaxLength}
	fields := RowType{
		{ID: 0, Name: "dt", Type: str},
		{ID: 1, Name: "hr", Type: DataType{Root: TypeInt, Nullable: true}},
		{ID: 2, Name: "v", Type: str},
	}
	pf := NewPathFactory("/wh/db.db/t", metaSchema(t, fields, []string{"dt", "hr"}, nil, nil))
	cases := []struct {
		name string
		row  Row
		want string
	}{
		{"plain values", Row{"2024-01-01", int32(10)}, "dt=2024-01-01/hr=10"},
		{"null is the default partition", Row{nil, int32(-3)}, "dt=__DEFAULT_PARTITION__/hr=-3"},
		{"empty string is the default partition", Row{"", nil}, "dt=__DEFAULT_PARTITION__/hr=__DEFAULT_PARTITION__"},
		{"whitespace-only string is the default partition", Row{" \t", int32(1)}, "dt=__DEFAULT_PARTITION__/hr=1"},
		{"no-break space is not whitespace for Java", Row{"\u00a0", int32(1)}, "dt=\u00a0/hr=1"},
		{"special characters are escaped upper-case", Row{"a/b:c=d%e#f?g*h'i\"j\\k{l}m[n]o^p\x01q\x7fr", int32(1)},
			"dt=a%2Fb%3Ac%3Dd%25e%23f%3Fg%2Ah%27i%22j%5Ck%7Bl%7Dm%5Bn%5Do%5Ep%01q%7Fr/hr=1"},
		{"non-ASCII and spaces are kept", Row{"çé 日本", int32(1)}, "dt=çé 日本/hr=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := pf.PartitionPathOfRow(c.row)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
			enc, err := EncodeBinaryRow(typesOf(RowType{fields[0], fields[1]}), c.row)
			if err != nil {
				t.Fatal(err)
			}
			got2, err := pf.PartitionPath(enc)
			if err != nil || got2 != c.want {
				t.Fatalf("from bytes: %q %v", got2, err)
			}
			b, _ := pf.BucketPath(enc, 3)
			if b != "/wh/db.db/t/"+c.want+"/bucket-3" {
				t.Fatalf("bucket path %s", b)
			}
		})
	}
	if got := UnescapePathName(EscapePathName("a/b:c%d")); got != "a/b:c%d" {
		t.Fatalf("unescape %q", got)
	}
}

// The directories of these ORC-manifest fixtures show Java's names for
// null and empty partition values (e2e scans them against Java's read).
func TestDefaultPartitionDirectoriesOfFixtures(t *testing.T) {
	for _, c := range []struct{ table, dir string }{
		{"append_with_empty_partition", "f0=__DEFAULT_PARTITION__"},
		{"append_with_empty_partition_with_empty_value", "f0=__DEFAULT_PARTITION__"},
		{"append_with_empty_partition_with_specific_name", "f0=__HIVE_DEFAULT_PARTITION__"},
	} {
		dir := filepath.Join(metaFixturesRoot, "parquet", c.table+".db", c.table)
		data, err := os.ReadFile(filepath.Join(dir, "schema", "schema-0"))
		metaMust(t, err)
		s, err := ParseTableSchema(data)
		metaMust(t, err)
		pf := NewPathFactory(dir, s)
		for _, v := range []any{nil, ""} {
			got, err := pf.PartitionPathOfRow(Row{v})
			metaMust(t, err)
			if got != c.dir {
				t.Errorf("%s: partition %#v → %q, want %q", c.table, v, got, c.dir)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, c.dir)); err != nil {
			t.Errorf("%s: %v", c.table, err)
		}
	}
}

func TestNewFileNames(t *testing.T) {
	fields := RowType{{ID: 0, Name: "a", Type: DataType{Root: TypeInt}}}
	pf := NewPathFactory("s3://b/wh/db.db/t", metaSchema(t, fields, nil, nil, nil))
	u := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	for _, c := range []struct {
		got, re string
	}{
		{pf.NewDataFileName(), `^data-` + u + `-0\.parquet$`},
		{pf.NewDataFileName(), `^data-` + u + `-1\.parquet$`},
		{pf.NewChangelogFileName(), `^changelog-` + u + `-2\.parquet$`},
		{pf.NewManifestFileName(), `^manifest-` + u + `-0$`},
		{pf.NewManifestFileName(), `^manifest-` + u + `-1$`},
		{pf.NewManifestListName(), `^manifest-list-` + u + `-0$`},
		{pf.NewIndexManifestName(), `^index-manifest-` + u + `-0$`},
		{pf.NewIndexFileName(), `^index-` + u + `-0$`},
	} {
		if !regexp.MustCompile(c.re).MatchString(c.got) {
			t.Errorf("%q does not match %s", c.got, c.re)
		}
		if !strings.Contains(c.got, pf.UUID()) {
			t.Errorf("%q lacks the factory uuid", c.got)
		}
	}
	if got := pf.ManifestPath("m"); got != "s3://b/wh/db.db/t/manifest/m" {
		t.Errorf("manifest path %s", got)
	}
	if got := pf.SnapshotPath(7); got != "s3://b/wh/db.db/t/snapshot/snapshot-7" {
		t.Errorf("snapshot path %s", got)
	}
	p, _ := pf.BucketPath(EmptyBinaryRow(), BucketPostpone)
	if p != "s3://b/wh/db.db/t/bucket-postpone" {
		t.Errorf("postpone bucket path %s", p)
	}
	ext := "s3://other/x/data-1.parquet"
	if got, _ := pf.DataFilePath(EmptyBinaryRow(), 0, &manifest.DataFileMeta{FileName: "data-1.parquet", ExternalPath: &ext}); got != ext {
		t.Errorf("external path ignored: %s", got)
	}
	if got, _ := pf.ExtraFilePath(EmptyBinaryRow(), 0, &manifest.DataFileMeta{FileName: "data-1.parquet", ExternalPath: &ext}, "data-1.parquet.index"); got != "s3://other/x/data-1.parquet.index" {
		t.Errorf("extra file path %s", got)
	}
	if TablePath("/wh", "db", "t") != fileio.Join("/wh", "db.db", "t") {
		t.Error("table path")
	}
}

func TestDataFileExtensionsAndFormats(t *testing.T) {
	cases := []struct {
		format, compression string
		include             bool
		ext                 string
	}{
		{"parquet", "zstd", false, ".parquet"},
		{"parquet", "zstd", true, ".zst.parquet"},
		{"orc", "lz4", true, ".lz4.orc"},
		{"parquet", "none", true, ".parquet"},
		{"json", "gzip", false, ".json.gz"},
		{"csv", "", false, ".csv"},
		{"avro", "brotli", true, ".brotli.avro"},
	}
	for _, c := range cases {
		if got := dataFileExtension(c.format, c.compression, c.include); got != c.ext {
			t.Errorf("%s/%s/%v: %q want %q", c.format, c.compression, c.include, got, c.ext)
		}
	}
	for name, want := range map[string]string{
		"data-x-0.parquet": "parquet", "data-x-0.zst.parquet": "parquet", "data-x-0.json.gz": "json", "data-x-0.orc": "orc",
	} {
		if got, err := FileFormatOf(name); err != nil || got != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if _, err := FileFormatOf("data"); err == nil {
		t.Error("name without extension accepted")
	}
}
