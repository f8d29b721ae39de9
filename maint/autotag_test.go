package maint

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func snapAt(id int64, wallUTC string) SnapshotTime {
	return SnapshotTime{ID: id, TimeMillis: wall(wallUTC).UnixMilli()}
}

func autoCfg(t *testing.T, raw map[string]string) *AutoTagConfig {
	t.Helper()
	full := map[string]string{"tag.automatic-creation": "process-time", "sink.process-time-zone": "UTC"}
	for k, v := range raw {
		full[k] = v
	}
	c, err := AutoTagConfigFromTable(full)
	if err != nil || c == nil {
		t.Fatalf("config %v: %v", full, err)
	}
	return c
}

func TestPlanAutoTags(t *testing.T) {
	snaps := []SnapshotTime{
		snapAt(1, "2024-05-01 10:00:00"),
		snapAt(2, "2024-05-01 23:00:00"),
		snapAt(3, "2024-05-02 00:00:00"),
		snapAt(4, "2024-05-05 01:00:00"),
	}
	tests := []struct {
		name    string
		raw     map[string]string
		tags    []TagInfo
		snaps   []SnapshotTime
		create  []string // name@snapshot
		deleted []string
	}{
		{"the first snapshot is tagged at once with the previous period, then one tag per completed period",
			nil, nil, snaps, []string{"2024-04-30@1", "2024-05-01@3", "2024-05-04@4"}, nil},
		{"a delay postpones the tag to the first snapshot past period end plus delay",
			map[string]string{"tag.creation-delay": "1 h"}, nil, snaps, []string{"2024-04-30@1", "2024-05-04@4"}, nil},
		{"automatic completion names the pending period instead of skipping to the latest",
			map[string]string{"tag.automatic-completion": "true"}, nil, snaps, []string{"2024-04-30@1", "2024-05-01@3", "2024-05-02@4"}, nil},
		{"progress resumes after the newest automatic tag",
			nil, []TagInfo{{Name: "2024-05-01", SnapshotID: 3}, {Name: "manual", SnapshotID: 4}}, snaps, []string{"2024-05-04@4"}, nil},
		{"num-retained-max deletes the oldest automatic tag after each creation",
			map[string]string{"tag.num-retained-max": "2"}, nil, snaps, []string{"2024-04-30@1", "2024-05-01@3", "2024-05-04@4"}, []string{"2024-04-30"}},
		{"hourly periods",
			map[string]string{"tag.creation-period": "hourly"}, nil, snaps[:2], []string{"2024-05-01 09@1", "2024-05-01 22@2"}, nil},
		{"an existing tag of the same name is left alone",
			nil, []TagInfo{{Name: "2024-04-30", SnapshotID: 0}}, snaps[:1], nil, nil},
		{"a gap in the snapshot ids stops the walk, as in Java",
			nil, nil, []SnapshotTime{snapAt(1, "2024-05-01 10:00:00"), snapAt(3, "2024-05-03 10:00:00")}, []string{"2024-04-30@1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanAutoTags(autoCfg(t, tc.raw), tc.tags, tc.snaps)
			if err != nil {
				t.Fatal(err)
			}
			var got, del []string
			for _, c := range plan.Create {
				got = append(got, c.Name+"@"+itoa(c.Snapshot))
			}
			for _, d := range plan.Delete {
				del = append(del, d.Name)
			}
			if !slices.Equal(got, tc.create) || !slices.Equal(del, tc.deleted) {
				t.Fatalf("created %v deleted %v, want %v and %v", got, del, tc.create, tc.deleted)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestPlanAutoTagsWatermarkAndZone(t *testing.T) {
	wm := func(id int64, s string) SnapshotTime {
		ms := wall(s).UnixMilli()
		return SnapshotTime{ID: id, TimeMillis: 0, Watermark: &ms}
	}
	c, err := AutoTagConfigFromTable(map[string]string{"tag.automatic-creation": "watermark", "sink.watermark-time-zone": "Asia/Shanghai"})
	if err != nil {
		t.Fatal(err)
	}
	// 2024-05-01 20:00 UTC is 2024-05-02 04:00 in Shanghai.
	plan, err := PlanAutoTags(c, nil, []SnapshotTime{{ID: 1, TimeMillis: 1}, wm(2, "2024-05-01 20:00:00")})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Create) != 1 || plan.Create[0] != (NewAutoTag{Name: "2024-05-01", Snapshot: 2}) {
		t.Fatalf("%+v", plan)
	}
}

func TestPlanAutoTagsRefusesASecondAutoTagOnOneSnapshot(t *testing.T) {
	tags := []TagInfo{{Name: "2024-05-10", SnapshotID: 2}, {Name: "2024-04-01", SnapshotID: 4}}
	_, err := PlanAutoTags(autoCfg(t, nil), tags, []SnapshotTime{snapAt(3, "2024-05-10 10:00:00"), snapAt(4, "2024-05-20 10:00:00")})
	if err == nil || !strings.Contains(err.Error(), "already auto-tagged") {
		t.Fatalf("err %v", err)
	}
}

func TestAutoTagConfigFromTable(t *testing.T) {
	for _, raw := range []map[string]string{{}, {"tag.automatic-creation": "none"}, {"tag.automatic-creation": "batch"}} {
		if c, err := AutoTagConfigFromTable(raw); c != nil || err != nil {
			t.Errorf("%v: %+v %v", raw, c, err)
		}
	}
	for _, raw := range []map[string]string{
		{"tag.automatic-creation": "sometimes"},
		{"tag.automatic-creation": "process-time", "tag.creation-delay": "1 d"},
		{"tag.automatic-creation": "process-time", "sink.process-time-zone": "Mars/Olympus"},
		{"tag.automatic-creation": "process-time", "tag.period-formatter": "dashes"},
	} {
		if _, err := AutoTagConfigFromTable(raw); err == nil {
			t.Errorf("%v accepted", raw)
		}
	}
}

func TestRunTagAutoManagerOnJavaTable(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable) // snapshots 1-5 committed within a second on 2025-08-27 03:55 UTC
	raw := tb.Options().Raw
	raw["tag.automatic-creation"] = "process-time"
	raw["tag.creation-period"] = "hourly"
	raw["sink.process-time-zone"] = "UTC"
	raw["tag.default-time-retained"] = "1 h"
	now := time.Now()
	dry, err := RunTagAutoManager(ctx, tb, now, true)
	if err != nil || len(dry.Created) != 1 || dry.Created[0] != (NewAutoTag{Name: "2025-08-27 02", Snapshot: 1}) {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if names, _ := tb.TagNames(ctx); len(names) != 0 {
		t.Fatalf("the dry run created %v", names)
	}
	if _, err := RunTagAutoManager(ctx, tb, now, false); err != nil {
		t.Fatal(err)
	}
	tag, err := tb.Tag(ctx, "2025-08-27 02")
	if err != nil || tag.ID != 1 || tag.TimeRetained == nil || *tag.TimeRetained != time.Hour {
		t.Fatalf("auto tag %+v %v", tag, err)
	}
	again, err := RunTagAutoManager(ctx, tb, now, false)
	if err != nil || len(again.Created)+len(again.Expired) != 0 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	// A manual tag of the automatic form on an auto-tagged snapshot is refused.
	if _, err := CreateTag(ctx, tb, "2025-08-27 05", CreateTagOptions{Snapshot: 1}); err == nil {
		t.Fatal("a second auto-form tag on snapshot 1 was accepted")
	}
	late, err := RunTagAutoManager(ctx, tb, now.Add(2*time.Hour), false)
	if err != nil || len(late.Expired) != 1 || late.Expired[0].Name != "2025-08-27 02" {
		t.Fatalf("time expiry: %+v %v", late, err)
	}
	if names, _ := tb.TagNames(ctx); len(names) != 0 {
		t.Fatalf("tags left %v", names)
	}
}

// TestRunTagAutoManagerMatchesJava replays two runs whose result was taken
// from Java Paimon 1.4.2's TagAutoManager.run on a copy of the same fixture
// (table.copy with the same dynamic options): hourly in UTC gives
// "2025-08-27 02" on snapshot 1; then two-hours in Asia/Shanghai (the
// formatter option is ignored for two-hour periods) resumes after that tag
// and gives "2025-08-27 08" on snapshot 2.
func TestRunTagAutoManagerMatchesJava(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	raw := tb.Options().Raw
	raw["tag.automatic-creation"] = "process-time"
	raw["tag.creation-period"] = "hourly"
	raw["sink.process-time-zone"] = "UTC"
	first, err := RunTagAutoManager(ctx, tb, time.Now(), false)
	if err != nil || !slices.Equal(first.Created, []NewAutoTag{{"2025-08-27 02", 1}}) {
		t.Fatalf("first run: %+v %v", first, err)
	}
	raw["tag.creation-period"] = "two-hours"
	raw["tag.period-formatter"] = "without_dashes"
	raw["sink.process-time-zone"] = "Asia/Shanghai"
	second, err := RunTagAutoManager(ctx, tb, time.Now(), false)
	if err != nil || !slices.Equal(second.Created, []NewAutoTag{{"2025-08-27 08", 2}}) {
		t.Fatalf("second run: %+v %v", second, err)
	}
}
