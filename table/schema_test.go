package table

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestEveryFixtureSchemaRoundTripsByteForByte(t *testing.T) {
	files := fixtureFiles(t, "schema", "schema-")
	if len(files) < 50 {
		t.Fatalf("expected the fixture schemas, found %d", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseTableSchema(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if filepath.Base(f) != SchemaFileName(s.ID) {
			t.Errorf("%s: id %d does not match the file name", f, s.ID)
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if isJacksonPretty(data) && !bytes.Equal(out, data) {
			t.Errorf("%s: re-serialised schema differs\n got: %s\nwant: %s", f, out, data)
		}
		if !reflect.DeepEqual(semanticJSON(t, out), semanticJSON(t, data)) {
			t.Errorf("%s: not semantically equal", f)
		}
	}
}

func TestSchemaDerivedKeysAndCompatibilityDefaults(t *testing.T) {
	in := `{"id":4,"fields":[{"id":0,"name":"k","type":"INT NOT NULL"},{"id":1,"name":"dt","type":"STRING NOT NULL"},
{"id":2,"name":"v","type":{"type":"ROW","fields":[{"id":3,"name":"x","type":"INT"}]}}],
"highestFieldId":3,"partitionKeys":["dt"],"primaryKeys":["dt","k"],"options":{"num-levels":"4"}}`
	s, err := ParseTableSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != SchemaVersionPaimon07 || s.TimeMillis != 0 {
		t.Fatalf("missing version/timeMillis must read as 1/0, got %d/%d", s.Version, s.TimeMillis)
	}
	if got := s.TrimmedPrimaryKeys(); !slices.Equal(got, []string{"k"}) {
		t.Fatalf("trimmed pk %v", got)
	}
	if got := s.BucketKeys(); !slices.Equal(got, []string{"k"}) {
		t.Fatalf("bucket keys %v", got)
	}
	o := s.CoreOptions()
	if o.Bucket != 1 || o.FileFormat != "orc" {
		t.Fatalf("version-1 schema without bucket/file.format must read as bucket=1, orc; got %d %s", o.Bucket, o.FileFormat)
	}
	if _, stored := s.Options[OptBucket]; stored {
		t.Fatal("compatibility default leaked into the stored options")
	}
	if o.NumLevels != 4 || o.MaxLevel() != 3 {
		t.Fatalf("num-levels %d", o.NumLevels)
	}
	if f, ok := s.FieldByID(2); !ok || f.Name != "v" {
		t.Fatalf("FieldByID(2) = %v %v", f, ok)
	}
	if _, ok := s.FieldByID(3); ok {
		t.Fatal("FieldByID finds only top-level fields")
	}
	if pt := s.PartitionType(); len(pt) != 1 || pt[0].Type.Root != TypeVarChar {
		t.Fatalf("partition type %v", pt)
	}
	out, _ := s.MarshalJSON()
	if bytes.Contains(out, []byte(`"version"`)) || bytes.Contains(out, []byte(`"timeMillis"`)) {
		t.Fatalf("round trip invented keys:\n%s", out)
	}
}

func TestSchemaVersion2DefaultsFileFormatOnly(t *testing.T) {
	in := `{"version":2,"id":0,"fields":[{"id":0,"name":"a","type":"INT"}],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`
	s, err := ParseTableSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if o := s.CoreOptions(); o.Bucket != -1 || o.FileFormat != "orc" {
		t.Fatalf("got bucket %d format %s", o.Bucket, o.FileFormat)
	}
	in3 := bytes.Replace([]byte(in), []byte(`"version":2`), []byte(`"version":3`), 1)
	s3, err := ParseTableSchema(in3)
	if err != nil {
		t.Fatal(err)
	}
	if o := s3.CoreOptions(); o.FileFormat != "parquet" {
		t.Fatalf("version 3 default format %s", o.FileFormat)
	}
}

func TestSchemaValidation(t *testing.T) {
	base := func(pk, part, opts string) string {
		return `{"version":3,"id":0,"fields":[{"id":0,"name":"a","type":"INT NOT NULL"},{"id":1,"name":"b","type":"INT NOT NULL"}],"highestFieldId":1,` +
			`"partitionKeys":` + part + `,"primaryKeys":` + pk + `,"options":` + opts + `}`
	}
	bad := map[string]string{
		"primary key equal to partition keys": base(`["a"]`, `["a"]`, `{}`),
		"unknown primary key":                 base(`["z"]`, `[]`, `{}`),
		"unknown partition key":               base(`[]`, `["z"]`, `{}`),
		"bucket key not in primary key":       base(`["a"]`, `[]`, `{"bucket-key":"b"}`),
		"bucket key is a partition key":       base(`["a","b"]`, `["b"]`, `{"bucket-key":"b"}`),
		"malformed bucket":                    base(`[]`, `[]`, `{"bucket":"two"}`),
		"missing fields":                      `{"id":0,"highestFieldId":1,"partitionKeys":[],"primaryKeys":[],"options":{}}`,
		"field without type":                  `{"id":0,"fields":[{"id":0,"name":"a"}],"highestFieldId":1,"partitionKeys":[],"primaryKeys":[],"options":{}}`,
		"unknown type":                        `{"id":0,"fields":[{"id":0,"name":"a","type":"WHATEVER"}],"highestFieldId":1,"partitionKeys":[],"primaryKeys":[],"options":{}}`,
	}
	for name, in := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseTableSchema([]byte(in)); err == nil {
				t.Fatalf("accepted %s", in)
			}
		})
	}
	s, err := ParseTableSchema([]byte(base(`["a","b"]`, `[]`, `{"bucket-key":"b","bucket":"3"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.BucketKeys(), []string{"b"}) || s.CoreOptions().Bucket != 3 {
		t.Fatalf("bucket keys %v bucket %d", s.BucketKeys(), s.CoreOptions().Bucket)
	}
}

func TestNewTableSchemaWritesJavaLayout(t *testing.T) {
	fields := RowType{
		{ID: 0, Name: "k", Type: DataType{Root: TypeInt}},
		{ID: 1, Name: "v", Type: DataType{Root: TypeVarChar, Nullable: true, Length: MaxLength}},
		{ID: 2, Name: "dt", Type: DataType{Root: TypeVarChar, Length: MaxLength}},
	}
	s, err := NewTableSchema(0, fields, 2, []string{"dt"}, []string{"dt", "k"}, map[string]string{"bucket": "4"}, nil, 1720496663041)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := s.MarshalJSON()
	want := `{
  "version" : 3,
  "id" : 0,
  "fields" : [ {
    "id" : 0,
    "name" : "k",
    "type" : "INT NOT NULL"
  }, {
    "id" : 1,
    "name" : "v",
    "type" : "STRING"
  }, {
    "id" : 2,
    "name" : "dt",
    "type" : "STRING NOT NULL"
  } ],
  "highestFieldId" : 2,
  "partitionKeys" : [ "dt" ],
  "primaryKeys" : [ "dt", "k" ],
  "options" : {
    "bucket" : "4"
  },
  "timeMillis" : 1720496663041
}`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func FuzzParseTableSchema(f *testing.F) {
	f.Add([]byte(`{"version":3,"id":0,"fields":[{"id":0,"name":"a","type":"INT NOT NULL"},{"id":1,"name":"m","type":{"type":"MAP","key":"STRING","value":"INT"}}],"highestFieldId":1,"partitionKeys":[],"primaryKeys":["a"],"options":{"bucket":"2"},"comment":"c","timeMillis":1}`))
	f.Add([]byte(`{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseTableSchema(data)
		if err != nil {
			return
		}
		out, err := s.MarshalJSON()
		if err != nil {
			return // types.go may refuse to write a type it parsed leniently
		}
		s2, err := ParseTableSchema(out)
		if err != nil {
			t.Fatalf("re-parse of own output failed: %v\n%s", err, out)
		}
		out2, _ := s2.MarshalJSON()
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
