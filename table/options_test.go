package table

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOptionDefaultsMatchJava20(t *testing.T) {
	o, err := ParseOptions(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"bucket", o.Bucket, -1},
		{"file.format", o.FileFormat, "parquet"},
		{"manifest.format", o.ManifestFormat, "avro"},
		{"manifest.compression", o.ManifestCompression, "zstd"},
		{"file.compression", o.FileCompression, "zstd"},
		{"zstd level", o.FileCompressionZstdLevel, 1},
		{"target-file-size pk", o.TargetFileSizeFor(true), int64(128 << 20)},
		{"target-file-size append", o.TargetFileSizeFor(false), int64(256 << 20)},
		{"compaction trigger", o.NumSortedRunCompactionTrigger, 5},
		{"stop trigger", o.NumSortedRunStopTrigger, 8},
		{"num-levels", o.NumLevels, 6},
		{"size amplification", o.CompactionMaxSizeAmplification, 200},
		{"size ratio", o.CompactionSizeRatio, 1},
		{"min file num", o.CompactionMinFileNum, 5},
		{"full-compaction.delta-commits", o.FullCompactionDeltaCommits == nil, true},
		{"merge engine", o.MergeEngine, MergeDeduplicate},
		{"sequence field", o.SequenceField == nil, true},
		{"write-only", o.WriteOnly, false},
		{"deletion vectors", o.DeletionVectorsEnabled, false},
		{"changelog producer", o.ChangelogProducer, ChangelogNone},
		{"partition.default-name", o.PartitionDefaultName, "__DEFAULT_PARTITION__"},
		{"partition.legacy-name", o.PartitionLegacyName, true},
		{"snapshot min", o.SnapshotNumRetainedMin, 10},
		{"snapshot max", o.SnapshotNumRetainedMax, math.MaxInt32},
		{"snapshot time", o.SnapshotTimeRetained, time.Hour},
		{"changelog min falls back", o.ChangelogNumRetainedMin, 10},
		{"changelog time falls back", o.ChangelogTimeRetained, time.Hour},
		{"decoupled", o.ChangelogLifecycleDecoupled(), false},
		{"expire limit", o.SnapshotExpireLimit, 50},
		{"manifest target", o.ManifestTargetFileSize, int64(8 << 20)},
		{"manifest merge min count", o.ManifestMergeMinCount, 30},
		{"manifest full compaction", o.ManifestFullCompactionThreshold, int64(16 << 20)},
		{"data prefix", o.DataFilePrefix, "data-"},
		{"changelog prefix", o.ChangelogFilePrefix, "changelog-"},
		{"path directory", o.DataFilePathDirectory, ""},
		{"commit retries", o.CommitMaxRetries, 10},
		{"commit min wait", o.CommitMinRetryWait, 10 * time.Millisecond},
		{"commit max wait", o.CommitMaxRetryWait, 10 * time.Second},
		{"file index in manifest", o.FileIndexInManifestThreshold, int64(500)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v want %v", c.name, c.got, c.want)
		}
	}
}

func TestOptionValuesParsedAsJava(t *testing.T) {
	o, err := ParseOptions(map[string]string{
		"bucket":                            "4",
		"bucket-key":                        "a,b,", // Java's split drops the trailing empty part
		"file.format":                       "PARQUET",
		"target-file-size":                  "64 mb",
		"num-sorted-run.compaction-trigger": "3",
		"num-sorted-run.stop-trigger":       "2", // below the trigger: the trigger wins
		"full-compaction.delta-commits":     "7",
		"merge-engine":                      "PARTIAL-UPDATE",
		"sequence.field":                    "ts, seq",
		"write.compaction-skip":             "TRUE", // fallback key of write-only
		"changelog-producer":                "Lookup",
		"snapshot.time-retained":            "30 min",
		"changelog.time-retained":           "2 d",
		"changelog.num-retained.max":        "100",
		"manifest.target-file-size":         "2m",
		"partial-update.ignore-delete":      "true", // fallback of ignore-delete
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Bucket != 4 || !slices.Equal(o.BucketKey, []string{"a", "b"}) || o.FileFormat != "parquet" {
		t.Errorf("bucket %d %v %s", o.Bucket, o.BucketKey, o.FileFormat)
	}
	if o.TargetFileSizeFor(true) != 64<<20 || o.TargetFileSizeFor(false) != 64<<20 {
		t.Errorf("target %d", o.TargetFileSizeFor(true))
	}
	if o.NumSortedRunStopTrigger != 3 || o.NumLevels != 4 {
		t.Errorf("stop %d levels %d", o.NumSortedRunStopTrigger, o.NumLevels)
	}
	if *o.FullCompactionDeltaCommits != 7 || o.MergeEngine != MergePartialUpdate || o.ChangelogProducer != ChangelogLookup {
		t.Errorf("delta commits %d engine %s producer %s", *o.FullCompactionDeltaCommits, o.MergeEngine, o.ChangelogProducer)
	}
	if !slices.Equal(o.SequenceField, []string{"ts", "seq"}) || !o.WriteOnly || !o.IgnoreDelete {
		t.Errorf("seq %v write-only %v ignore-delete %v", o.SequenceField, o.WriteOnly, o.IgnoreDelete)
	}
	if o.SnapshotTimeRetained != 30*time.Minute || o.ChangelogTimeRetained != 48*time.Hour || !o.ChangelogLifecycleDecoupled() {
		t.Errorf("retention %v %v", o.SnapshotTimeRetained, o.ChangelogTimeRetained)
	}
	if o.ManifestTargetFileSize != 2<<20 {
		t.Errorf("manifest target %d", o.ManifestTargetFileSize)
	}
}

func TestOptionErrorsNameTheKey(t *testing.T) {
	for key, v := range map[string]string{
		"bucket":                   "two",
		"merge-engine":             "partial_update",
		"write-only":               "yes",
		"target-file-size":         "12 parsecs",
		"snapshot.time-retained":   "1 fortnight",
		"num-levels":               "99999999999",
		"compaction.size-ratio":    " 1",
		"deletion-vectors.enabled": "",
	} {
		_, err := ParseOptions(map[string]string{key: v})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: got %v", key, v, err)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "128": 128, "128 b": 128, "128bytes": 128, "1k": 1024, "1 kb": 1024, "1 KiBiBytes": 1024,
		"128 mb": 128 << 20, "128MB": 128 << 20, " 2 m ": 2 << 20, "1 g": 1 << 30, "1 gb": 1 << 30,
		"1 tb": 1 << 40, "8 mebibytes": 8 << 20,
	} {
		got, err := ParseMemorySize(in)
		if err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "mb", "-1 mb", "1.5 mb", "1 kib", "99999999999 tb", "1 m b"} {
		if _, err := ParseMemorySize(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"100": 100 * time.Millisecond, "1 h": time.Hour, "1h": time.Hour, "2 hours": 2 * time.Hour,
		"30 min": 30 * time.Minute, "30 m": 30 * time.Minute, "5 minutes": 5 * time.Minute,
		"10 s": 10 * time.Second, "10 secs": 10 * time.Second, "1 second": time.Second,
		"7 d": 7 * 24 * time.Hour, "1 day": 24 * time.Hour, "3 ms": 3 * time.Millisecond,
		"3 millis": 3 * time.Millisecond, "4 µs": 4 * time.Microsecond, "5 ns": 5, "5 NANOS": 5,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "h", "1 week", "-1 s", "1.5 h", "1 hr"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestEveryMalformedOptionIsReportedAtOnce(t *testing.T) {
	_, err := ParseOptions(map[string]string{"bucket": "two", "target-file-size": "12 parsecs", "snapshot.expire.limit": "x"})
	for _, key := range []string{"bucket", "target-file-size", "snapshot.expire.limit"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("error does not name %s: %v", key, err)
		}
	}
}

func TestJobOnlyOptionsDoNotFailParsingButTheirJob(t *testing.T) {
	// A table whose compaction-only options are wrong stays readable and
	// expirable; compaction reports them (and its invariants) at once.
	o, err := ParseOptions(map[string]string{
		"lookup-compact": "lazy", "compaction.force-up-level-0": "yes", "num-sorted-run.compaction-trigger": "0",
		"consumer.changelog-only": "maybe", "partition.expiration-strategy": "never",
	})
	if err != nil {
		t.Fatal(err)
	}
	ce := o.CompactionErr()
	for _, want := range []string{"lookup-compact", "compaction.force-up-level-0", "num-sorted-run.compaction-trigger must be >= 1"} {
		if ce == nil || !strings.Contains(ce.Error(), want) {
			t.Errorf("CompactionErr does not name %s: %v", want, ce)
		}
	}
	if ee := o.ExpirationErr(); ee == nil || !strings.Contains(ee.Error(), "consumer.changelog-only") {
		t.Errorf("ExpirationErr = %v", ee)
	}
	if _, pe := o.PartitionExpiration(); pe == nil || !strings.Contains(pe.Error(), "partition.expiration-strategy") {
		t.Errorf("PartitionExpiration error = %v", pe)
	}
	o, _ = ParseOptions(map[string]string{"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "4"})
	if ee := o.ExpirationErr(); ee == nil || !strings.Contains(ee.Error(), "retainMax") {
		t.Errorf("ExpirationErr = %v", ee)
	}
}

func TestCompactionFileSizeDiffersBetweenReleases(t *testing.T) {
	// 1.x: target/10*7 in integers; 2.0.0: target × small-file-ratio.
	if got := CompactionFileSize(128<<20, 0.7, true); got != 93952404 {
		t.Errorf("1.x: %d", got)
	}
	if got := CompactionFileSize(128<<20, 0.7, false); got != 93952409 {
		t.Errorf("2.x: %d", got)
	}
}

func TestSplitIsJavas(t *testing.T) {
	for in, want := range map[string][]string{"": {""}, "a": {"a"}, "a,b,": {"a", "b"}, "a,,b": {"a", "", "b"}, ",": {}} {
		if got := javaSplit(in, ","); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestFileFormatPerLevel(t *testing.T) {
	o, err := ParseOptions(map[string]string{"file.format.per.level": " 0:AVRO, 5:parquet "})
	if err != nil || o.CompactionErr() != nil {
		t.Fatal(err, o.CompactionErr())
	}
	for l, want := range map[int]string{0: "avro", 1: "parquet", 5: "parquet"} {
		if got := o.FileFormatOfLevel(l); got != want {
			t.Errorf("level %d: %q, want %q", l, got, want)
		}
	}
	o, _ = ParseOptions(map[string]string{"file.format.per.level": "0=avro"})
	if err := o.CompactionErr(); err == nil || !strings.Contains(err.Error(), "file.format.per.level") {
		t.Fatalf("malformed file.format.per.level: CompactionErr = %v", err)
	}
}
