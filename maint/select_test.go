package maint

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func wall(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSelectExpiredTags(t *testing.T) {
	daily, err := AutoTagMatcher(map[string]string{"tag.automatic-creation": "process-time"})
	if err != nil {
		t.Fatal(err)
	}
	now := wall("2024-05-10 12:00:00")
	tags := []TagInfo{
		{Name: "2024-05-01", SnapshotID: 1},
		{Name: "2024-05-02", SnapshotID: 3},
		{Name: "2024-05-03", SnapshotID: 5},
		{Name: "manual", SnapshotID: 2},
		{Name: "ttl-expired", SnapshotID: 4, CreateTime: ptr(wall("2024-05-10 10:00:00")), TimeRetained: ptr(time.Hour)},
		{Name: "ttl-live", SnapshotID: 4, CreateTime: ptr(wall("2024-05-10 11:30:00")), TimeRetained: ptr(time.Hour)},
		{Name: "ttl-exactly-now", SnapshotID: 4, CreateTime: ptr(wall("2024-05-10 11:00:00")), TimeRetained: ptr(time.Hour)},
		{Name: "create-time-only", SnapshotID: 4, CreateTime: ptr(wall("2020-01-01 00:00:00"))},
	}
	names := func(es []ExpiredTag) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	tests := []struct {
		name string
		o    TagExpiry
		want []string
	}{
		{"time expiry deletes tags whose create time plus retention is strictly before now", TagExpiry{TimeExpire: true}, []string{"ttl-expired"}},
		{"time expiry disabled keeps every tag", TagExpiry{}, nil},
		{"num-retained-max deletes the oldest automatic tags first, manual tags are not counted",
			TagExpiry{NumRetainedMax: 1, AutoTag: daily}, []string{"2024-05-01", "2024-05-02"}},
		{"num-retained-max then time expiry, in Java's order",
			TagExpiry{TimeExpire: true, NumRetainedMax: 2, AutoTag: daily}, []string{"2024-05-01", "ttl-expired"}},
		{"num-retained-max above the count deletes nothing", TagExpiry{NumRetainedMax: 5, AutoTag: daily}, nil},
		{"older-than expires by creation time, and by file time for tags without one",
			TagExpiry{OlderThan: wall("2024-05-10 11:15:00")}, []string{"2024-05-01", "2024-05-02", "2024-05-03", "create-time-only", "manual", "ttl-exactly-now", "ttl-expired"}},
	}
	for i := range tags {
		if tags[i].CreateTime == nil {
			tags[i].ModTime = wall("2024-05-01 00:00:00")
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(SelectExpiredTags(tags, tc.o, now))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSelectExpiredTagsCountsTaggedSnapshotsNotTags(t *testing.T) {
	daily, _ := AutoTagMatcher(map[string]string{})
	// Two auto tags on one snapshot count once; deleting removes one of them.
	tags := []TagInfo{{Name: "2024-05-01", SnapshotID: 1}, {Name: "2024-05-02", SnapshotID: 1}, {Name: "2024-05-03", SnapshotID: 2}}
	got := SelectExpiredTags(tags, TagExpiry{NumRetainedMax: 1, AutoTag: daily}, time.Now())
	if len(got) != 1 || got[0].Name != "2024-05-01" {
		t.Fatalf("got %v", got)
	}
}

func TestAutoTagMatcher(t *testing.T) {
	tests := []struct {
		opts      map[string]string
		yes, no   []string
		wantError bool
	}{
		{map[string]string{}, []string{"2024-05-01", "2024-02-29"}, []string{"2023-02-29", "2024-5-01", "20240501", "x2024-05-01", "2024-05-01 10", "manual"}, false},
		{map[string]string{"tag.period-formatter": "without_dashes"}, []string{"20240501"}, []string{"2024-05-01"}, false},
		{map[string]string{"tag.creation-period": "hourly"}, []string{"2024-05-01 23"}, []string{"2024-05-01 24", "2024-05-01"}, false},
		{map[string]string{"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"}, []string{"20240501 07"}, []string{"2024050107"}, false},
		{map[string]string{"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"}, []string{"2024050107"}, []string{"20240501 07"}, false},
		{map[string]string{"tag.creation-period": "two-hours", "tag.period-formatter": "without_dashes"}, []string{"2024-05-01 08"}, nil, false},
		{map[string]string{"tag.creation-period-duration": "30 min"}, []string{"202405010730"}, []string{"2024-05-01 07"}, false},
		{map[string]string{"tag.creation-period": "weekly"}, nil, nil, true},
	}
	for _, tc := range tests {
		m, err := AutoTagMatcher(tc.opts)
		if tc.wantError {
			if err == nil {
				t.Errorf("%v: no error", tc.opts)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.opts, err)
		}
		for _, n := range tc.yes {
			if !m(n) {
				t.Errorf("%v: %q is an auto tag", tc.opts, n)
			}
		}
		for _, n := range tc.no {
			if m(n) {
				t.Errorf("%v: %q is not an auto tag", tc.opts, n)
			}
		}
	}
}

func TestTagExpiryFromTable(t *testing.T) {
	o, err := TagExpiryFromTable(map[string]string{"tag.num-retained-max": "3"})
	if err != nil || !o.TimeExpire || o.NumRetainedMax != 0 || o.AutoTag != nil {
		t.Fatalf("without automatic creation num-retained-max must not apply: %+v %v", o, err)
	}
	o, err = TagExpiryFromTable(map[string]string{"tag.automatic-creation": "watermark", "tag.num-retained-max": "3", "tag.time-expire-enabled": "false"})
	if err != nil || o.TimeExpire || o.NumRetainedMax != 3 || o.AutoTag == nil {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := TagExpiryFromTable(map[string]string{"tag.automatic-creation": "batch", "tag.num-retained-max": "x"}); err == nil {
		t.Fatal("bad tag.num-retained-max accepted")
	}
}

// TestTimeExtractor: every expectation here was checked against Java Paimon
// 1.4.2's PartitionTimeExtractor.extract, except "a longer key wins over its
// prefix": that follows apache/paimon#9136 (after 2.0), while releases up to
// 2.0 substitute keys in declaration order, so $dt also matched inside $dt1.
func TestTimeExtractor(t *testing.T) {
	keys := []string{"year", "month", "day", "hour", "dt", "dt1"}
	vals := func(vs ...string) []*string {
		out := make([]*string, len(vs))
		for i := range vs {
			if vs[i] != "<null>" {
				out[i] = &vs[i]
			}
		}
		return out
	}
	tests := []struct {
		name, pattern, formatter string
		values                   []*string
		want                     string // "" = not a time
	}{
		{"default format reads a date as midnight", "", "", vals("2024-01-05"), "2024-01-05 00:00:00"},
		{"default format reads a timestamp", "", "", vals("2024-01-05 13:04:05"), "2024-01-05 13:04:05"},
		{"default format reads a fraction", "", "", vals("2024-01-05 13:04:05.25"), "2024-01-05 13:04:05.25"},
		{"default format takes single digits", "", "", vals("2024-1-5"), "2024-01-05 00:00:00"},
		{"default format is lenient: month 13 rolls into next year", "", "", vals("2024-13-01"), "2025-01-01 00:00:00"},
		{"default format is lenient: Feb 30 rolls into March", "", "", vals("2023-02-30"), "2023-03-02 00:00:00"},
		{"default format rejects a T separator", "", "", vals("2024-01-05T13:04:05"), ""},
		{"default format rejects hours without seconds", "", "", vals("2024-01-05 13:04"), ""},
		{"default format rejects trailing text", "", "", vals("2024-01-05x"), ""},
		{"a value that is not a date never expires", "", "", vals("latest"), ""},
		{"a null first value never expires", "", "", vals("<null>"), ""},
		{"the pattern joins several keys", "$year-$month-$day", "", vals("2024", "01", "05"), "2024-01-05 00:00:00"},
		{"the pattern with hour", "$year-$month-$day $hour:00:00", "", vals("2024", "01", "05", "07"), "2024-01-05 07:00:00"},
		{"a longer key wins over its prefix", "$dt1", "", vals("", "", "", "", "2000-01-01", "2024-02-03"), "2024-02-03 00:00:00"},
		{"an unknown $ is kept literally", "$x$dt", "", vals("", "", "", "", "2024-02-03"), ""},
		{"a null value used by the pattern never expires", "$dt", "", vals("", "", "", "", "<null>"), ""},
		{"formatter yyyyMMdd", "", "yyyyMMdd", vals("20240105"), "2024-01-05 00:00:00"},
		{"formatter yyyyMMddHH", "", "yyyyMMddHH", vals("2024010507"), "2024-01-05 07:00:00"},
		{"formatter with slashes", "", "yyyy/MM/dd", vals("2024/01/05"), "2024-01-05 00:00:00"},
		{"formatter with a quoted literal", "", "yyyy-MM-dd'T'HH:mm", vals("2024-01-05T07:30"), "2024-01-05 07:30:00"},
		{"formatter is smart: Feb 31 becomes the month's last day", "", "yyyyMMdd", vals("20230231"), "2023-02-28 00:00:00"},
		{"formatter rejects month 13", "", "yyyyMMdd", vals("20231301"), ""},
		{"formatter rejects a short value", "", "yyyyMMdd", vals("2024015"), ""},
		{"formatter with the pattern", "$year$month$day", "yyyyMMdd", vals("2024", "01", "05"), "2024-01-05 00:00:00"},
		{"formatter yyyy-MM-dd rejects a value with a time", "", "yyyy-MM-dd", vals("2024-01-05 00:00:00"), ""},
		{"formatter yyyy takes exactly four unsigned digits", "", "yyyyMMdd", vals("020240105"), ""},
		{"formatter with single letters takes one or two digits", "", "yyyy-M-d", vals("2024-1-5"), "2024-01-05 00:00:00"},
		{"default format is lenient: hour 25 rolls into the next day", "", "", vals("2024-01-05 25:00:00"), "2024-01-06 01:00:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewTimeExtractor(tc.pattern, tc.formatter)
			if err != nil {
				t.Fatal(err)
			}
			ks := keys
			if tc.pattern == "" {
				ks = keys[:len(tc.values)]
			}
			got, err := e.Extract(ks, tc.values)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("parsed %v as %s, want an error", tc.values, got)
				}
				if !errors.Is(err, errParse) {
					t.Fatalf("error %v is not a parse error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := time.Parse("2006-01-02 15:04:05.999999999", tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

func TestNewTimeExtractorRefusesFormattersItCannotParse(t *testing.T) {
	for _, f := range []string{"yyyyMM", "yyyy-MMM-dd", "dd.MM.yy", "EEE yyyy-MM-dd", "yyyy-MM-dd'x"} {
		if _, err := NewTimeExtractor("", f); err == nil {
			t.Errorf("formatter %q accepted", f)
		}
	}
}

func TestSelectExpiredPartitions(t *testing.T) {
	s := func(v string) *string { return &v }
	parts := []PartitionInfo{
		{Values: []*string{s("2024-01-03"), s("b")}},
		{Values: []*string{s("2024-01-01"), s("z")}},
		{Values: []*string{s("2024-01-01"), nil}},
		{Values: []*string{s("2024-01-10"), s("a")}},
		{Values: []*string{s("not-a-date"), s("a")}},
		{Values: []*string{nil, s("a")}},
	}
	keys := []string{"dt", "k"}
	now := wall("2024-01-10 00:00:00")
	o := PartitionExpireOptions{ExpirationTime: 5 * 24 * time.Hour, Strategy: StrategyValuesTime, MaxNum: 100}
	got, err := SelectExpiredPartitions(keys, parts, o, "__DEFAULT_PARTITION__", now)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by the joined values, null as the default name ("_" < "z").
	if want := []int{2, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	o.MaxNum = 2
	if got, _ := SelectExpiredPartitions(keys, parts, o, "__DEFAULT_PARTITION__", now); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("max-num 2: got %v", got)
	}
	// A partition exactly at the boundary is not expired (isAfter is strict).
	o.MaxNum, o.ExpirationTime = 100, 7*24*time.Hour
	if got, _ := SelectExpiredPartitions(keys, parts, o, "x", now.Add(time.Nanosecond*0)); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("boundary: got %v", got)
	}
	o.ExpirationTime = 0
	if got, _ := SelectExpiredPartitions(keys, parts, o, "x", now); got != nil {
		t.Fatalf("disabled expiry selected %v", got)
	}

	up := []PartitionInfo{
		{Values: []*string{s("a")}, LastFileCreation: wall("2024-01-01 00:00:00")},
		{Values: []*string{s("b")}, LastFileCreation: wall("2024-01-09 00:00:00")},
		{Values: []*string{s("c")}},
	}
	o = PartitionExpireOptions{ExpirationTime: 2 * 24 * time.Hour, Strategy: StrategyUpdateTime, MaxNum: 100}
	if got, _ := SelectExpiredPartitions([]string{"k"}, up, o, "x", now); !slices.Equal(got, []int{0}) {
		t.Fatalf("update-time: got %v", got)
	}
}

func TestPartitionExpireOptionsFromTable(t *testing.T) {
	o, err := PartitionExpireOptionsFromTable(map[string]string{})
	if err != nil || o.ExpirationTime != 0 || o.CheckInterval != time.Hour || o.Strategy != StrategyValuesTime || o.MaxNum != 100 || o.BatchSize != 0 {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	o, err = PartitionExpireOptionsFromTable(map[string]string{
		"partition.expiration-time": "7 d", "partition.expiration-check-interval": "10 min",
		"partition.expiration-strategy": "update-time", "partition.expiration-max-num": "5",
		"partition.expiration-batch-size": "2", "partition.timestamp-formatter": "yyyyMMdd",
		"partition.timestamp-pattern": "$dt",
	})
	if err != nil || o.ExpirationTime != 7*24*time.Hour || o.CheckInterval != 10*time.Minute || o.Strategy != StrategyUpdateTime ||
		o.MaxNum != 5 || o.BatchSize != 2 || o.TimestampFormatter != "yyyyMMdd" || o.TimestampPattern != "$dt" {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []map[string]string{
		{"partition.expiration-time": "soon"},
		{"partition.expiration-strategy": "values"},
		{"partition.expiration-max-num": "-1"},
	} {
		if _, err := PartitionExpireOptionsFromTable(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestWallClockUsesLocalFieldsWithNanos(t *testing.T) {
	loc := time.FixedZone("X", 3*3600)
	old := time.Local
	time.Local = loc
	defer func() { time.Local = old }()
	in := time.Date(2024, 1, 1, 22, 30, 0, 123456789, time.UTC)
	got := WallClock(in)
	if want := time.Date(2024, 1, 2, 1, 30, 0, 123456789, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("got %s, want %s", got, want)
	}
}
