// Package expiretest simulates Paimon table histories on a real file store
// for the tests of expire and orphan: commits, compactions (rewrites and
// level upgrades), changelog files, index and statistics files, manifest
// merges, tags and consumers. Every file the metadata names is written as a
// small placeholder, so deletions and crashes act on real files; the Avro
// metadata itself is kept in memory and served through reach.Metadata,
// which reports a metadata file as missing once it is deleted from the store.
package expiretest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// Table is a simulated table.
type Table struct {
	Root string
	FS   fileio.FileIO
	rng  *rand.Rand

	lists     map[string][]string
	manifests map[string][]reach.DataEntry
	indexes   map[string][]reach.IndexFile

	// state after the latest commit
	latest     int64
	timeMillis int64
	base       []string // manifests of the latest snapshot (base + delta)
	live       map[string]reach.DataEntry
	liveIndex  []reach.IndexFile
	indexMan   string
	stats      string
	counter    int
	staged     *table.Snapshot

	// Snapshots holds every snapshot ever committed, by id.
	Snapshots map[int64]table.Snapshot
	// NoChangelog makes commits write no changelog files (a table with
	// changelog-producer none, whose changelog is its APPEND files).
	NoChangelog bool
}

// New creates an empty simulated table under root.
func New(fs fileio.FileIO, root string, seed uint64) *Table {
	return &Table{
		Root: root, FS: fs, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		lists: map[string][]string{}, manifests: map[string][]reach.DataEntry{},
		indexes: map[string][]reach.IndexFile{}, live: map[string]reach.DataEntry{},
		timeMillis: 1_700_000_000_000, Snapshots: map[int64]table.Snapshot{},
	}
}

// Source returns the reach.Source of the table.
func (t *Table) Source() reach.Source { return reach.Source{FS: t.FS, Root: t.Root, Meta: t} }

// Latest returns the latest committed snapshot id.
func (t *Table) Latest() int64 { return t.latest }

// TimeMillis returns the commit time of the latest snapshot.
func (t *Table) TimeMillis() int64 { return t.timeMillis }

func (t *Table) name(prefix string) string {
	t.counter++
	return fmt.Sprintf("%s%08d-%d", prefix, t.counter, t.counter%3)
}

func (t *Table) touch(ctx context.Context, path string) error {
	return fileio.WriteFile(ctx, t.FS, path, []byte("x"))
}

func (t *Table) writeManifest(ctx context.Context, entries []reach.DataEntry) (string, error) {
	n := t.name("manifest-")
	t.manifests[n] = entries
	return n, t.touch(ctx, fileio.Join(t.Root, "manifest", n))
}

func (t *Table) writeList(ctx context.Context, manifests []string) (string, error) {
	n := t.name("manifest-list-")
	t.lists[n] = append([]string(nil), manifests...)
	return n, t.touch(ctx, fileio.Join(t.Root, "manifest", n))
}

func (t *Table) newDataFile(ctx context.Context, prefix string, level int32) (reach.DataEntry, error) {
	part := t.rng.IntN(3)
	bucket := int32(t.rng.IntN(2))
	dir := fileio.Join(t.Root, fmt.Sprintf("p=%d", part), fmt.Sprintf("bucket-%d", bucket))
	n := t.name(prefix) + ".parquet"
	e := reach.DataEntry{Kind: reach.Add, Partition: strconv.Itoa(part), Bucket: bucket, Level: level, Name: n, Path: fileio.Join(dir, n)}
	if prefix == "data-" && t.rng.IntN(4) == 0 {
		e.ExtraPaths = []string{e.Path + ".index"}
		if err := t.touch(ctx, e.ExtraPaths[0]); err != nil {
			return e, err
		}
	}
	return e, t.touch(ctx, e.Path)
}

// Commit commits one random snapshot and returns its id. advance is added
// to the simulated clock before the commit.
func (t *Table) Commit(ctx context.Context, advanceMillis int64) (int64, error) {
	if err := t.Stage(ctx, advanceMillis); err != nil {
		return 0, err
	}
	return t.Publish(ctx)
}

// Publish writes the snapshot file of the staged commit, making it visible.
func (t *Table) Publish(ctx context.Context) (int64, error) {
	s := *t.staged
	if err := t.FS.WriteExclusive(ctx, table.SnapshotPath(t.Root, s.ID), snapshotJSON(s)); err != nil {
		return 0, err
	}
	t.staged = nil
	t.latest = s.ID
	t.Snapshots[s.ID] = s
	return s.ID, fileio.WriteFile(ctx, t.FS, fileio.Join(t.Root, "snapshot", "LATEST"), []byte(strconv.FormatInt(s.ID, 10)))
}

// Stage writes every file of one random commit except the snapshot file,
// as a writer does before the commit point. Publish completes it.
func (t *Table) Stage(ctx context.Context, advanceMillis int64) error {
	t.timeMillis += advanceMillis
	var delta, changelog []reach.DataEntry
	liveNames := make([]string, 0, len(t.live))
	for p := range t.live {
		liveNames = append(liveNames, p)
	}
	sort.Strings(liveNames)
	switch op := t.rng.IntN(10); {
	case op < 5 || len(liveNames) < 2: // append
		for range 1 + t.rng.IntN(3) {
			e, err := t.newDataFile(ctx, "data-", 0)
			if err != nil {
				return err
			}
			delta = append(delta, e)
		}
		if t.rng.IntN(3) == 0 && !t.NoChangelog {
			e, err := t.newDataFile(ctx, "changelog-", 0)
			if err != nil {
				return err
			}
			changelog = append(changelog, e)
		}
	case op < 8: // rewrite compaction
		t.rng.Shuffle(len(liveNames), func(i, j int) { liveNames[i], liveNames[j] = liveNames[j], liveNames[i] })
		for _, p := range liveNames[:1+t.rng.IntN(len(liveNames)-1)] {
			d := t.live[p]
			d.Kind = reach.Delete
			delta = append(delta, d)
		}
		e, err := t.newDataFile(ctx, "data-", 1+int32(t.rng.IntN(4)))
		if err != nil {
			return err
		}
		e.Compacted = true
		delta = append(delta, e)
	default: // upgrade: same file, higher level
		d := t.live[liveNames[t.rng.IntN(len(liveNames))]]
		d.Kind = reach.Delete
		a := d
		a.Kind = reach.Add
		a.Level = d.Level + 1
		delta = append(delta, d, a)
	}
	// Manifest merge happens in the commit, on the previous snapshot's
	// manifests: the next base holds one manifest of the live ADDs.
	if len(t.base) > 4 && t.rng.IntN(2) == 0 {
		var adds []reach.DataEntry
		paths := make([]string, 0, len(t.live))
		for p := range t.live {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			adds = append(adds, t.live[p])
		}
		m, err := t.writeManifest(ctx, adds)
		if err != nil {
			return err
		}
		t.base = []string{m}
	}
	for _, e := range delta {
		if e.Kind == reach.Add {
			t.live[e.Path] = e
		} else {
			delete(t.live, e.Path)
		}
	}

	baseList, err := t.writeList(ctx, t.base)
	if err != nil {
		return err
	}
	dm, err := t.writeManifest(ctx, delta)
	if err != nil {
		return err
	}
	deltaList, err := t.writeList(ctx, []string{dm})
	if err != nil {
		return err
	}
	t.base = append(t.base, dm)
	s := table.Snapshot{ID: t.latest + 1, TimeMillis: t.timeMillis, BaseManifestList: baseList, DeltaManifestList: deltaList}
	if len(changelog) > 0 {
		cm, err := t.writeManifest(ctx, changelog)
		if err != nil {
			return err
		}
		cl, err := t.writeList(ctx, []string{cm})
		if err != nil {
			return err
		}
		s.ChangelogManifestList = &cl
	}
	if t.rng.IntN(4) == 0 { // a new index file, sometimes replacing one
		if len(t.liveIndex) > 0 && t.rng.IntN(2) == 0 {
			t.liveIndex = t.liveIndex[1:]
		}
		n := t.name("index-")
		f := reach.IndexFile{Name: n, Path: fileio.Join(t.Root, "index", n)}
		if err := t.touch(ctx, f.Path); err != nil {
			return err
		}
		t.liveIndex = append(append([]reach.IndexFile(nil), t.liveIndex...), f)
		t.indexMan = t.name("index-manifest-")
		t.indexes[t.indexMan] = t.liveIndex
		if err := t.touch(ctx, fileio.Join(t.Root, "manifest", t.indexMan)); err != nil {
			return err
		}
	}
	if t.rng.IntN(6) == 0 {
		t.stats = t.name("stat-")
		// Paimon's statistics files are JSON; expiry and orphan cleanup
		// check that those they keep decode.
		if err := fileio.WriteFile(ctx, t.FS, fileio.Join(t.Root, "statistics", t.stats), []byte(`{"snapshotId":0}`)); err != nil {
			return err
		}
	}
	s.IndexManifest, s.Statistics = opt(t.indexMan), opt(t.stats)
	t.staged = &s
	return nil
}

func snapshotJSON(s table.Snapshot) []byte {
	m := map[string]any{
		"version": 3, "id": s.ID, "schemaId": 0, "timeMillis": s.TimeMillis,
		"baseManifestList": s.BaseManifestList, "deltaManifestList": s.DeltaManifestList,
		"commitUser": "sim", "commitIdentifier": s.ID, "commitKind": "APPEND",
		"totalRecordCount": 0, "deltaRecordCount": 0,
	}
	if s.ChangelogManifestList != nil {
		m["changelogManifestList"] = *s.ChangelogManifestList
	}
	if s.IndexManifest != nil {
		m["indexManifest"] = *s.IndexManifest
	}
	if s.Statistics != nil {
		m["statistics"] = *s.Statistics
	}
	b, _ := json.Marshal(m)
	return b
}

// Tag writes tag-<name> pointing at snapshot id (which must have been committed).
func (t *Table) Tag(ctx context.Context, name string, id int64) error {
	s, ok := t.Snapshots[id]
	if !ok {
		return fmt.Errorf("no snapshot %d", id)
	}
	return fileio.WriteFile(ctx, t.FS, fileio.Join(t.Root, "tag", "tag-"+name), snapshotJSON(s))
}

// Consumer writes consumer-<id> with nextSnapshot.
func (t *Table) Consumer(ctx context.Context, id string, next int64) error {
	return fileio.WriteFile(ctx, t.FS, fileio.Join(t.Root, "consumer", "consumer-"+id), fmt.Appendf(nil, `{"nextSnapshot":%d}`, next))
}

func (t *Table) exists(ctx context.Context, name string) error {
	ok, err := fileio.Exists(ctx, t.FS, fileio.Join(t.Root, "manifest", name))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("manifest file %s: %w", name, fileio.ErrNotExist)
	}
	return nil
}

// ManifestList implements reach.Metadata.
func (t *Table) ManifestList(ctx context.Context, name string) ([]string, error) {
	if err := t.exists(ctx, name); err != nil {
		return nil, err
	}
	l, ok := t.lists[name]
	if !ok {
		return nil, fmt.Errorf("%s is not a manifest list", name)
	}
	return l, nil
}

// Manifest implements reach.Metadata.
func (t *Table) Manifest(ctx context.Context, name string, fn func(reach.DataEntry) error) error {
	if err := t.exists(ctx, name); err != nil {
		return err
	}
	es, ok := t.manifests[name]
	if !ok {
		return fmt.Errorf("%s is not a manifest", name)
	}
	for _, e := range es {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// IndexManifest implements reach.Metadata.
func (t *Table) IndexManifest(ctx context.Context, name string) ([]reach.IndexFile, error) {
	if err := t.exists(ctx, name); err != nil {
		return nil, err
	}
	l, ok := t.indexes[name]
	if !ok {
		return nil, fmt.Errorf("%s is not an index manifest", name)
	}
	return l, nil
}

// Files returns every path a snapshot references: its manifest lists,
// manifests, index manifest and files, statistics file, live data files
// with extra files, and (withChangelog) its own changelog files. Tags need
// no changelog: Paimon does not keep a tag's changelog alive.
func (t *Table) Files(s table.Snapshot, withChangelog bool) []string {
	man := func(n string) string { return fileio.Join(t.Root, "manifest", n) }
	var out []string
	count := map[string]int{}
	var extra = map[string][]string{}
	for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
		out = append(out, man(l))
		for _, m := range t.lists[l] {
			out = append(out, man(m))
			for _, e := range t.manifests[m] {
				if e.Kind == reach.Add {
					count[e.Path]++
					extra[e.Path] = e.ExtraPaths
				} else {
					count[e.Path]--
				}
			}
		}
	}
	for p, n := range count {
		if n > 0 {
			out = append(out, p)
			out = append(out, extra[p]...)
		}
	}
	if cl := reach.Opt(s.ChangelogManifestList); withChangelog && cl != "" {
		out = append(out, man(cl))
		for _, m := range t.lists[cl] {
			out = append(out, man(m))
			for _, e := range t.manifests[m] {
				out = append(out, e.Path)
			}
		}
	}
	if im := reach.Opt(s.IndexManifest); im != "" {
		out = append(out, man(im))
		for _, f := range t.indexes[im] {
			out = append(out, f.Path)
		}
	}
	if st := reach.Opt(s.Statistics); st != "" {
		out = append(out, fileio.Join(t.Root, "statistics", st))
	}
	return out
}

// ChangelogFiles returns every path reading the changelog of s needs: its
// changelog manifest list, manifests and files, or without one its delta
// manifest list, manifests and the APPEND files it adds; with a changelog
// producer (NoChangelog false), a snapshot that wrote no changelog has none.
func (t *Table) ChangelogFiles(s table.Snapshot) []string {
	man := func(n string) string { return fileio.Join(t.Root, "manifest", n) }
	l := reach.Opt(s.ChangelogManifestList)
	appendOnly := l == ""
	if appendOnly && !t.NoChangelog {
		return nil
	}
	if appendOnly {
		l = s.DeltaManifestList
	}
	out := []string{man(l)}
	for _, m := range t.lists[l] {
		out = append(out, man(m))
		for _, e := range t.manifests[m] {
			if e.Kind == reach.Add && !(appendOnly && e.Compacted) {
				out = append(out, e.Path)
			}
		}
	}
	return out
}

// CheckReadable verifies that every snapshot from the earliest a Paimon
// reader would pick (EARLIEST if that snapshot exists, else the smallest
// listed) and every tag has all its files. It returns the first problem.
func (t *Table) CheckReadable(ctx context.Context) error {
	ids, err := table.ListIDs(ctx, t.FS, fileio.Join(t.Root, "snapshot"), "snapshot-")
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	earliest := ids[0]
	if b, err := fileio.ReadFile(ctx, t.FS, fileio.Join(t.Root, "snapshot", "EARLIEST")); err == nil {
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			if ok, _ := fileio.Exists(ctx, t.FS, table.SnapshotPath(t.Root, n)); ok {
				earliest = n
			}
		}
	}
	var check []table.Snapshot
	for _, id := range ids {
		if id >= earliest {
			s, err := table.ReadSnapshotFile(ctx, t.FS, table.SnapshotPath(t.Root, id))
			if err != nil {
				return err
			}
			check = append(check, *s)
		}
	}
	tags, err := table.ReadTags(ctx, t.FS, t.Root)
	if err != nil {
		return err
	}
	nsnap := len(check)
	for _, tg := range tags {
		check = append(check, tg.Snapshot)
	}
	for i, s := range check {
		for _, p := range t.Files(s, i < nsnap) {
			ok, err := fileio.Exists(ctx, t.FS, p)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("snapshot %d references missing %s", s.ID, p)
			}
		}
	}
	return nil
}

// AllFiles lists every file under the table root (recursively), sorted.
func AllFiles(ctx context.Context, fs fileio.FileIO, root string) ([]string, error) {
	var out []string
	var walk func(string) error
	walk = func(dir string) error {
		ents, err := fs.List(ctx, dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.IsDir {
				if err := walk(e.Path); err != nil {
					return err
				}
				continue
			}
			out = append(out, e.Path)
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// ErrInjected is returned by FailingFS at the failing operation.
var ErrInjected = errors.New("injected failure")

// opt is the optional snapshot field of a name, nil for "".
func opt(name string) *string {
	if name == "" {
		return nil
	}
	return &name
}
