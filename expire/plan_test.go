package expire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// memMeta is a hand-built Metadata: lists and manifests by name; names in
// gone read as missing.
type memMeta struct {
	lists     map[string][]string
	manifests map[string][]reach.DataEntry
	indexes   map[string][]reach.IndexFile
	gone      map[string]bool
	broken    map[string]bool
}

func (m *memMeta) check(name string) error {
	if m.gone[name] {
		return fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if m.broken[name] {
		return fmt.Errorf("%s: checksum mismatch", name)
	}
	return nil
}

func (m *memMeta) ManifestList(_ context.Context, name string) ([]string, error) {
	return m.lists[name], m.check(name)
}

func (m *memMeta) Manifest(_ context.Context, name string, fn func(reach.DataEntry) error) error {
	if err := m.check(name); err != nil {
		return err
	}
	for _, e := range m.manifests[name] {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *memMeta) IndexManifest(_ context.Context, name string) ([]reach.IndexFile, error) {
	return m.indexes[name], m.check(name)
}

func add(name string, level int32) reach.DataEntry {
	return reach.DataEntry{Kind: reach.Add, Partition: "p", Bucket: 0, Level: level, Name: name, Path: "/t/b/" + name}
}
func del(name string, level int32) reach.DataEntry {
	e := add(name, level)
	e.Kind = reach.Delete
	return e
}

// chain builds snapshots 1..n; delta[i] is snapshot i+1's delta. Every
// snapshot's base lists all earlier delta manifests.
func chain(deltas ...[]reach.DataEntry) (*memMeta, []table.Snapshot) {
	m := &memMeta{lists: map[string][]string{}, manifests: map[string][]reach.DataEntry{}, indexes: map[string][]reach.IndexFile{}, gone: map[string]bool{}, broken: map[string]bool{}}
	var base []string
	var snaps []table.Snapshot
	for i, d := range deltas {
		id := int64(i + 1)
		dm := fmt.Sprintf("manifest-%d", id)
		m.manifests[dm] = d
		bl, dl := fmt.Sprintf("list-base-%d", id), fmt.Sprintf("list-delta-%d", id)
		m.lists[bl] = slices.Clone(base)
		m.lists[dl] = []string{dm}
		base = append(base, dm)
		snaps = append(snaps, table.Snapshot{ID: id, BaseManifestList: bl, DeltaManifestList: dl})
	}
	return m, snaps
}

// str is an optional snapshot field.
func str(v string) *string { return &v }

// everythingMayBeMissing lets every expiring snapshot lose metadata, as
// after a crashed run that condemned them all.
func everythingMayBeMissing(context.Context, table.Snapshot) (bool, error) { return true, nil }

func TestPlanFiles(t *testing.T) {
	ctx := context.Background()
	t.Run("files removed by a delta in the expired range are deleted with their extra files", func(t *testing.T) {
		a := add("a", 0)
		a.ExtraPaths = []string{"/t/b/a.index"}
		da := a
		da.Kind = reach.Delete
		m, s := chain([]reach.DataEntry{a}, []reach.DataEntry{add("b", 0)}, []reach.DataEntry{da, add("c", 1)})
		p, err := PlanFiles(ctx, m, s[:2], &s[2], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dataFiles(t, p), []string{"/t/b/a", "/t/b/a.index"}) {
			t.Fatalf("data files %v", dataFiles(t, p))
		}
		if !slices.Equal(p.ManifestLists, []string{"list-base-1", "list-delta-1", "list-base-2", "list-delta-2"}) {
			t.Fatalf("lists %v", p.ManifestLists)
		}
		if len(p.Manifests) != 0 {
			t.Fatalf("manifests still in the end snapshot's base were planned: %v", p.Manifests)
		}
	})
	t.Run("an upgraded file (delete then add of the same path) is kept", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0), add("a", 3)}, []reach.DataEntry{add("z", 0)})
		p, err := PlanFiles(ctx, m, s[:2], &s[2], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(dataFiles(t, p)) != 0 {
			t.Fatalf("upgraded file planned: %v", dataFiles(t, p))
		}
	})
	t.Run("the delta of the first expired snapshot is not replayed", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0), add("b", 1)}, []reach.DataEntry{add("z", 0)})
		// begin = 2: a was removed by snapshot 2's own delta, which an earlier
		// run (ending at 2) already handled; Java's range is (begin, end].
		p, err := PlanFiles(ctx, m, s[1:2], &s[2], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(dataFiles(t, p)) != 0 {
			t.Fatalf("planned %v", dataFiles(t, p))
		}
	})
	t.Run("a file still held by the nearest earlier tag is kept", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{add("b", 0)}, []reach.DataEntry{del("a", 0), del("b", 0), add("c", 1)}, []reach.DataEntry{add("z", 0)})
		tag := s[1] // holds a and b
		p, err := PlanFiles(ctx, m, s[:3], &s[3], []table.Snapshot{tag}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(dataFiles(t, p)) != 0 {
			t.Fatalf("tagged files planned: %v", dataFiles(t, p))
		}
		if slices.Contains(p.ManifestLists, "list-base-2") || slices.Contains(p.ManifestLists, "list-delta-2") {
			t.Fatalf("tag's manifest lists planned: %v", p.ManifestLists)
		}
	})
	t.Run("a tag whose metadata cannot be read aborts the plan", func(t *testing.T) {
		for _, damage := range []string{"gone", "broken"} {
			m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{add("b", 0)}, []reach.DataEntry{del("a", 0), add("c", 1)}, []reach.DataEntry{add("z", 0)})
			if damage == "gone" {
				m.gone["list-base-2"] = true
			} else {
				m.broken["list-base-2"] = true
			}
			_, err := PlanFiles(ctx, m, s[:3], &s[3], []table.Snapshot{s[1]}, everythingMayBeMissing)
			if err == nil || !strings.Contains(err.Error(), "list-base-2") {
				t.Fatalf("%s: want an error naming list-base-2, got %v", damage, err)
			}
			var d *table.DamagedError
			if damage == "gone" && !errors.As(err, &d) {
				t.Fatalf("a missing file of a tag: want a table.DamagedError, got %v", err)
			}
		}
	})
	t.Run("an unreadable retained manifest list aborts the plan", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)}, []reach.DataEntry{add("z", 0)})
		m.gone["list-base-3"] = true
		var d *table.DamagedError
		if _, err := PlanFiles(ctx, m, s[:2], &s[2], nil, everythingMayBeMissing); !errors.As(err, &d) || d.File != "list-base-3" || d.By != "snapshot 3" {
			t.Fatalf("want a table.DamagedError for list-base-3 of snapshot 3, got %v", err)
		}
	})
	t.Run("a missing delta of the end snapshot aborts the plan", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)}, []reach.DataEntry{add("z", 0)})
		m.gone["list-delta-3"] = true
		var d *table.DamagedError
		if _, err := PlanFiles(ctx, m, s[:2], &s[2], nil, everythingMayBeMissing); !errors.As(err, &d) || d.File != "list-delta-3" {
			t.Fatalf("want a table.DamagedError for list-delta-3, got %v", err)
		}
	})
	t.Run("a missing file of an expiring snapshot aborts the plan unless it may be missing", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)}, []reach.DataEntry{add("z", 0)})
		m.gone["list-delta-2"] = true
		var d *table.DamagedError
		if _, err := PlanFiles(ctx, m, s[:2], &s[2], nil, nil); !errors.As(err, &d) || d.File != "list-delta-2" || d.By != "snapshot 2" {
			t.Fatalf("want a table.DamagedError for list-delta-2 of snapshot 2, got %v", err)
		}
		var asked []int64
		only1 := func(_ context.Context, s table.Snapshot) (bool, error) {
			asked = append(asked, s.ID)
			return s.ID == 1, nil
		}
		if _, err := PlanFiles(ctx, m, s[:2], &s[2], nil, only1); !errors.As(err, &d) || !slices.Equal(asked, []int64{2}) {
			t.Fatalf("want a table.DamagedError after asking about snapshot 2 only, got %v (asked %v)", err, asked)
		}
	})
	t.Run("metadata an earlier crashed run deleted counts as empty", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)}, []reach.DataEntry{add("z", 0)})
		m.gone["list-delta-2"], m.gone["list-base-1"] = true, true
		p, err := PlanFiles(ctx, m, s[:2], &s[2], nil, everythingMayBeMissing)
		if err != nil {
			t.Fatal(err)
		}
		if len(dataFiles(t, p)) != 0 {
			t.Fatalf("planned %v", dataFiles(t, p))
		}
	})
	t.Run("a corrupt manifest of an expiring snapshot aborts the plan", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)}, []reach.DataEntry{add("z", 0)})
		m.broken["manifest-2"] = true
		if _, err := PlanFiles(ctx, m, s[:2], &s[2], nil, nil); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("want a read error, got %v", err)
		}
	})
	t.Run("changelog files of expired snapshots go, those of the end snapshot stay", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{add("b", 0)})
		m.manifests["cl-m-1"], m.manifests["cl-m-2"] = []reach.DataEntry{add("changelog-1", 0)}, []reach.DataEntry{add("changelog-2", 0)}
		m.lists["cl-1"], m.lists["cl-2"] = []string{"cl-m-1"}, []string{"cl-m-2"}
		s[0].ChangelogManifestList, s[1].ChangelogManifestList = str("cl-1"), str("cl-2")
		p, err := PlanFiles(ctx, m, s[:1], &s[1], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dataFiles(t, p), []string{"/t/b/changelog-1"}) || !slices.Contains(p.Manifests, "cl-m-1") || !slices.Contains(p.ManifestLists, "cl-1") {
			t.Fatalf("data %v manifests %v lists %v", dataFiles(t, p), p.Manifests, p.ManifestLists)
		}
	})
	t.Run("index and statistics files go unless the end snapshot still uses them", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{add("b", 0)}, []reach.DataEntry{add("c", 0)})
		m.indexes["im-1"] = []reach.IndexFile{{Name: "index-1", Path: "/t/index/index-1"}, {Name: "index-2", Path: "/t/index/index-2"}}
		m.indexes["im-2"] = []reach.IndexFile{{Name: "index-2", Path: "/t/index/index-2"}}
		s[0].IndexManifest, s[1].IndexManifest, s[2].IndexManifest = str("im-1"), str("im-2"), str("im-2")
		s[0].Statistics, s[1].Statistics, s[2].Statistics = str("stat-1"), str("stat-1"), str("stat-2")
		p, err := PlanFiles(ctx, m, s[:2], &s[2], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.IndexFiles) != 1 || p.IndexFiles[0].Name != "index-1" || !slices.Equal(p.IndexManifests, []string{"im-1"}) || !slices.Equal(p.Statistics, []string{"stat-1"}) {
			t.Fatalf("index %v manifests %v stats %v", p.IndexFiles, p.IndexManifests, p.Statistics)
		}
	})
	t.Run("without the end snapshot only data files are planned", func(t *testing.T) {
		m, s := chain([]reach.DataEntry{add("a", 0)}, []reach.DataEntry{del("a", 0)})
		p, err := PlanFiles(ctx, m, s[:2], nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dataFiles(t, p), []string{"/t/b/a"}) || len(p.ManifestLists) != 0 {
			t.Fatalf("data %v lists %v", dataFiles(t, p), p.ManifestLists)
		}
	})
}

func TestSkippingTags(t *testing.T) {
	tags := []table.Snapshot{{ID: 2}, {ID: 5}, {ID: 9}, {ID: 12}}
	ids := func(s []table.Snapshot) []int64 {
		var out []int64
		for _, x := range s {
			out = append(out, x.ID)
		}
		return out
	}
	for _, tc := range []struct {
		begin, end int64
		want       []int64
	}{
		{6, 10, []int64{5, 9}}, {5, 10, []int64{5, 9}}, {1, 5, []int64{2}}, {1, 2, nil}, {13, 20, []int64{12}}, {3, 4, []int64{2}},
	} {
		if got := ids(skippingTags(tags, tc.begin, tc.end)); !slices.Equal(got, tc.want) {
			t.Errorf("[%d,%d): got %v, want %v", tc.begin, tc.end, got, tc.want)
		}
	}
}

// dataFiles is the plan's list of data files.
func dataFiles(t *testing.T, p Plan) []string {
	t.Helper()
	out, err := p.DataFiles.Strings()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
