package table

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
)

// javaTagJSON is the tag Java's TagTest expects (HEAD, with writerVersion),
// i.e. Jackson's JavaTimeModule encoding of LocalDateTime and Duration.
const javaTagJSON = `{
  "version" : 3,
  "uuid" : "snapshot-uuid",
  "id" : 0,
  "schemaId" : 0,
  "baseManifestList" : "b",
  "deltaManifestList" : "d",
  "commitUser" : "u",
  "writerVersion" : "java-2.1-SNAPSHOT-commit-id",
  "commitIdentifier" : 0,
  "commitKind" : "APPEND",
  "timeMillis" : 1000,
  "totalRecordCount" : 0,
  "deltaRecordCount" : 0,
  "tagCreateTime" : [ 1969, 1, 1, 0, 0, 0, 123456789 ],
  "tagTimeRetained" : 5.000000000
}`

func TestTagRoundTripsJavaEncoding(t *testing.T) {
	tag, err := ParseTag("t1", []byte(javaTagJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(1969, 1, 1, 0, 0, 0, 123456789, time.UTC)
	if tag.CreateTime == nil || !tag.CreateTime.Equal(want) {
		t.Fatalf("create time %v", tag.CreateTime)
	}
	if tag.TimeRetained == nil || *tag.TimeRetained != 5*time.Second {
		t.Fatalf("retained %v", tag.TimeRetained)
	}
	if *tag.WriterVersion != "java-2.1-SNAPSHOT-commit-id" || tag.Name != "t1" {
		t.Fatalf("tag %+v", tag)
	}
	out, err := tag.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json must use the tag's methods, not the embedded
	// snapshot's, for values and pointers alike.
	var viaJSON Tag
	if err := json.Unmarshal([]byte(javaTagJSON), &viaJSON); err != nil || viaJSON.TimeRetained == nil {
		t.Fatalf("json.Unmarshal into Tag: %v %+v", err, viaJSON)
	}
	if b, err := json.Marshal(*tag); err != nil || !strings.Contains(string(b), "tagTimeRetained") {
		t.Fatalf("json.Marshal(Tag) lost the tag fields: %s %v", b, err)
	}
	if string(out) != javaTagJSON {
		t.Fatalf("got\n%s\nwant\n%s", out, javaTagJSON)
	}
}

func TestTagTimeEncodingsDropZeroFields(t *testing.T) {
	ct := time.Date(2024, 3, 5, 10, 30, 0, 0, time.UTC)
	d := 90*time.Minute + 250*time.Millisecond
	tag := &Tag{Snapshot: Snapshot{Version: 3, ID: 2, BaseManifestList: "b", DeltaManifestList: "d", CommitKind: CommitCompact},
		CreateTime: &ct, TimeRetained: &d}
	out, _ := tag.MarshalJSON()
	back, err := ParseTag("x", out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.CreateTime.Equal(ct) || *back.TimeRetained != d {
		t.Fatalf("round trip %v %v", back.CreateTime, back.TimeRetained)
	}
	for _, frag := range []string{`"tagCreateTime" : [ 2024, 3, 5, 10, 30 ]`, `"tagTimeRetained" : 5400.250000000`} {
		if !metaContains(out, frag) {
			t.Errorf("missing %s in\n%s", frag, out)
		}
	}
	// A tag without the optional fields is a plain snapshot.
	plain, err := ParseTag("p", []byte(`{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","tagCreateTime":"2024-01-02T03:04:05"}`))
	if err != nil || plain.TimeRetained != nil || plain.CreateTime.Second() != 5 {
		t.Fatalf("%+v %v", plain, err)
	}
	for _, bad := range []string{
		`{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","tagCreateTime":[2024,13,1,0,0]}`,
		`{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","tagTimeRetained":"soon"}`,
		`{"id":1,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND","tagCreateTime":{}}`,
	} {
		if _, err := ParseTag("bad", []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func metaContains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func TestConsumer(t *testing.T) {
	c, err := ParseConsumer("c1", []byte(`{"nextSnapshot" : 42, "other": 1}`))
	if err != nil || c.NextSnapshot != 42 || c.ID != "c1" {
		t.Fatalf("%+v %v", c, err)
	}
	out, _ := c.MarshalJSON()
	if string(out) != "{\n  \"nextSnapshot\" : 42\n}" {
		t.Fatalf("got %q", out)
	}
	for _, bad := range []string{`[]`, `{"nextSnapshot":"x"}`, `{`} {
		if _, err := ParseConsumer("c", []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestTableTagsAndConsumers(t *testing.T) {
	ctx := context.Background()
	dir := metaCopyTable(t, filepath.Join(metaFixturesRoot, "parquet/pk_09.db/pk_09"))
	snap, err := os.ReadFile(filepath.Join(dir, "snapshot", "snapshot-5"))
	metaMust(t, err)
	metaMust(t, os.MkdirAll(filepath.Join(dir, "tag"), 0o755))
	metaMust(t, os.WriteFile(filepath.Join(dir, "tag", "tag-b"), snap, 0o644))
	metaMust(t, os.WriteFile(filepath.Join(dir, "tag", "tag-a"), []byte(javaTagJSON), 0o644))
	metaMust(t, os.MkdirAll(filepath.Join(dir, "consumer"), 0o755))
	metaMust(t, os.WriteFile(filepath.Join(dir, "consumer", "consumer-job1"), []byte(`{"nextSnapshot":6}`), 0o644))
	metaMust(t, os.WriteFile(filepath.Join(dir, "consumer", "consumer-job0"), []byte(`{"nextSnapshot":3}`), 0o644))

	tb, err := OpenPath(ctx, fileio.NewLocal(), dir)
	metaMust(t, err)
	tags, err := tb.Tags(ctx)
	metaMust(t, err)
	if len(tags) != 2 || tags[0].Name != "a" || tags[1].Name != "b" || tags[1].ID != 5 {
		t.Fatalf("tags %+v", tags)
	}
	cs, err := tb.Consumers(ctx)
	metaMust(t, err)
	if len(cs) != 2 || cs[0].ID != "job0" || cs[0].NextSnapshot != 3 || cs[1].NextSnapshot != 6 {
		t.Fatalf("consumers %+v", cs)
	}
	metaMust(t, os.WriteFile(filepath.Join(dir, "tag", "tag-c"), []byte(`{"id":`), 0o644))
	if _, err := tb.Tags(ctx); err == nil || !metaContains([]byte(err.Error()), filepath.Join(dir, "tag", "tag-c")) {
		t.Fatalf("corrupt tag error %v", err)
	}
}
