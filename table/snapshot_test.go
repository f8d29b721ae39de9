package table

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// metaFixturesRoot is the shared fixture tree, read in place.
const metaFixturesRoot = "../../shared/fixtures/paimon-cpp"

// fixtureFiles returns every file under the fixtures whose path matches
// dir/<prefix>N (e.g. snapshot/snapshot-3), including branch metadata.
func fixtureFiles(t *testing.T, dir, prefix string) []string {
	t.Helper()
	if _, err := os.Stat(metaFixturesRoot); err != nil {
		t.Fatalf("fixtures not found at %s: %v", metaFixturesRoot, err)
	}
	var out []string
	err := filepath.WalkDir(metaFixturesRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if filepath.Base(filepath.Dir(path)) == dir && strings.HasPrefix(d.Name(), prefix) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// semanticJSON decodes JSON with numbers kept exact and null-valued keys
// dropped (Java treats a missing nullable key and an explicit null alike).
func semanticJSON(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return dropNulls(v)
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

func TestEveryFixtureSnapshotRoundTripsByteForByte(t *testing.T) {
	files := fixtureFiles(t, "snapshot", "snapshot-")
	if len(files) < 50 {
		t.Fatalf("expected the fixture snapshots, found %d", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseSnapshot(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want := "snapshot-" + itoa(s.ID); filepath.Base(f) != want {
			t.Errorf("%s: id %d does not match the file name", f, s.ID)
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if isJacksonPretty(data) && !bytes.Equal(out, data) {
			t.Errorf("%s: re-serialised snapshot differs\n got: %s\nwant: %s", f, out, data)
		}
		// Java 2.0 form: semantically equal modulo explicit nulls.
		modern, _ := s.WithoutLegacy().MarshalJSON()
		got, want := semanticJSON(t, modern), semanticJSON(t, data)
		delete(want.(map[string]any), "logOffsets")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Java-2.0 form is not semantically equal\n got: %v\nwant: %v", f, got, want)
		}
	}
}

func itoa(n int64) string { return string(jInt(n).str) }

func TestSnapshotParseKeepsInt64AndOptionalFields(t *testing.T) {
	in := []byte(`{"version":3,"uuid":"u-1","id":7,"schemaId":2,"baseManifestList":"b","baseManifestListSize":11,
"deltaManifestList":"d","deltaManifestListSize":12,"changelogManifestList":"c","changelogManifestListSize":13,
"indexManifest":"i","commitUser":"me","commitIdentifier":9223372036854775807,"commitKind":"COMPACT",
"timeMillis":1724300000000,"totalRecordCount":300,"deltaRecordCount":-100,"changelogRecordCount":5,
"watermark":-9223372036854775808,"statistics":"s","properties":{"b":"2","a":"1"},"nextRowId":42,"operation":"WRITE"}`)
	s, err := ParseSnapshot(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitIdentifier != BatchCommitIdentifier || *s.Watermark != -9223372036854775808 {
		t.Fatalf("int64 extremes lost: %d %d", s.CommitIdentifier, *s.Watermark)
	}
	if s.CommitKind != CommitCompact || *s.NextRowID != 42 || *s.Operation != "WRITE" || s.DeltaRecordCount != -100 {
		t.Fatalf("fields not parsed: %+v", s)
	}
	out, _ := s.MarshalJSON()
	want := `{
  "version" : 3,
  "uuid" : "u-1",
  "id" : 7,
  "schemaId" : 2,
  "baseManifestList" : "b",
  "baseManifestListSize" : 11,
  "deltaManifestList" : "d",
  "deltaManifestListSize" : 12,
  "changelogManifestList" : "c",
  "changelogManifestListSize" : 13,
  "indexManifest" : "i",
  "commitUser" : "me",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "COMPACT",
  "timeMillis" : 1724300000000,
  "totalRecordCount" : 300,
  "deltaRecordCount" : -100,
  "changelogRecordCount" : 5,
  "watermark" : -9223372036854775808,
  "statistics" : "s",
  "properties" : {
    "b" : "2",
    "a" : "1"
  },
  "nextRowId" : 42,
  "operation" : "WRITE"
}`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestNewSnapshotOmitsNullFieldsAsJava20(t *testing.T) {
	s := Snapshot{Version: SnapshotVersion, ID: 1, BaseManifestList: "b", DeltaManifestList: "d",
		CommitUser: "u", CommitIdentifier: BatchCommitIdentifier, CommitKind: CommitAppend, TimeMillis: 5,
		TotalRecordCount: 1, DeltaRecordCount: 1}
	out, _ := s.MarshalJSON()
	for _, k := range []string{"uuid", "changelogManifestList", "indexManifest", "watermark", "logOffsets", "properties", "null"} {
		if bytes.Contains(out, []byte(k)) {
			t.Errorf("new snapshot JSON contains %q:\n%s", k, out)
		}
	}
	back, err := ParseSnapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, s) {
		t.Fatalf("round trip changed the snapshot:\n%+v\n%+v", *back, s)
	}
}

func TestSnapshotParseErrors(t *testing.T) {
	cases := map[string]string{
		"not JSON":                 `{"version":3`,
		"an array":                 `[1]`,
		"missing id":               `{"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"}`,
		"unknown commit kind":      `{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"MERGE"}`,
		"id is a string":           `{"id":"1","baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"}`,
		"id overflows":             `{"id":92233720368547758070,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"}`,
		"duplicate key":            `{"id":1,"id":2,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"}`,
		"trailing garbage":         `{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"} x`,
		"logOffsets with bad keys": `{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","logOffsets":{"x":1}}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseSnapshot([]byte(in)); err == nil {
				t.Fatalf("no error for %s", in)
			}
		})
	}
}

func TestJacksonStringEscaping(t *testing.T) {
	var b bytes.Buffer
	writeJacksonString(&b, "a\"b\\c\n\t\x01<>&é/")
	if got, want := b.String(), `"a\"b\\c\n\t\u0001<>&é/"`; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func FuzzParseSnapshot(f *testing.F) {
	for _, p := range []string{
		`{"version":3,"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":1,"totalRecordCount":1,"deltaRecordCount":1}`,
		`{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","logOffsets":{"1":2},"properties":{"a":"b"},"changelogManifestList":null}`,
	} {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSnapshot(data)
		if err != nil {
			return
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := ParseSnapshot(out)
		if err != nil {
			t.Fatalf("re-parse of own output failed: %v\n%s", err, out)
		}
		out2, _ := s2.MarshalJSON()
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

// isJacksonPretty reports whether data is exactly what Jackson's pretty
// printer produces for its own content. Files in that form (all files Java
// wrote) must be reproduced byte for byte; the few fixtures written by
// other tools are only compared semantically.
func isJacksonPretty(data []byte) bool {
	n, err := parseOrdered(data)
	return err == nil && bytes.Equal(renderJackson(n), data)
}

func TestFixtureMetadataIsMostlyJacksonPretty(t *testing.T) {
	var pretty, other []string
	for _, f := range append(fixtureFiles(t, "schema", "schema-"), fixtureFiles(t, "snapshot", "snapshot-")...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if isJacksonPretty(data) {
			pretty = append(pretty, f)
		} else {
			other = append(other, f)
		}
	}
	t.Logf("%d metadata files in Jackson form (byte-exact round trip), %d not: %v", len(pretty), len(other), other)
	if len(other) > 5 {
		t.Fatalf("too many fixture files not in Jackson form; the pretty printer is probably wrong: %v", other)
	}
}
