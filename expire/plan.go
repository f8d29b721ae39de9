package expire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// Plan is the set of files an expiration deletes, grouped by the phase
// that deletes them. Names in Manifests, IndexManifests and Statistics are
// file names (resolved against manifest/ and statistics/); the rest are paths.
type Plan struct {
	// DataFiles are data files (with their extra files) deleted by the
	// DELETE entries of the expired range, and changelog files of expired
	// snapshots; deduplicated, in discovery order. The list may live on
	// local disk: Close releases it.
	DataFiles *PathList
	// keepData are the names of planned data files a kept root still
	// reaches (set by protectRoots): they stay.
	keepData map[string]bool
	// Manifests are data and changelog manifests; ManifestLists the lists
	// holding them. A list is deleted only after its manifests, so that a
	// rerun after a crash still finds whatever a surviving list names.
	Manifests      []string
	ManifestLists  []string
	IndexFiles     []reach.IndexFile
	IndexManifests []string
	Statistics     []string
}

// Close releases the list of data files.
func (p *Plan) Close() error { return p.DataFiles.Close() }

// eachDataFile calls fn with every planned data file that no kept root
// reaches, in plan order.
func (p *Plan) eachDataFile(fn func(path string) error) error {
	return p.DataFiles.Each(func(path string) error {
		if p.keepData[fileio.Base(path)] {
			return nil
		}
		return fn(path)
	})
}

// MissingOK decides whether a missing metadata file of an expiring snapshot
// may count as empty: an earlier run condemned the snapshot and may have
// deleted part of it, or a concurrent expiration is removing it. Anything
// else that is missing means a damaged table.
type MissingOK func(ctx context.Context, s table.Snapshot) (bool, error)

// PlanFiles decides which files an expiration deletes, following
// ExpireSnapshotsImpl.innerExpireUntil:
//
//   - expiring are the existing snapshots in [begin, end) ascending, end the
//     first retained snapshot (nil when that snapshot file is missing: then
//     only data files are planned, as in Java);
//   - data files: for every snapshot s in (begin, end], the files removed by
//     s's delta (DELETE entries not followed by an ADD of the same path in the
//     same delta: an upgraded file stays) unless the nearest tag before s
//     still holds them;
//   - changelog files: the ADD entries of the changelog manifests of every
//     expiring snapshot;
//   - manifest lists, manifests, index manifests, index files and statistics
//     of the expiring snapshots, except those the end snapshot or a tag in
//     the expired range (or the nearest before it) still uses.
//
// Unlike Java, PlanFiles never degrades: every metadata file of the end
// snapshot and of the tags it consults must be readable (Java then skips
// deleting manifests, or the data files of a snapshot, and goes on), and a
// missing file of an expiring snapshot counts as empty only when missingOK
// says so (nil: never). Any other failure aborts the plan: a *table.DamagedError
// when the file is missing, not a file or undecodable, the store's error
// otherwise.
//
// A file is never planned for deletion when it is referenced by the end
// snapshot or by a tag (and, through Paimon's invariants, by any later
// snapshot: files and manifests are immutable and names are never reused).
// Memory is bounded by one delta, one tag's live set and the skip set.
func PlanFiles(ctx context.Context, md reach.Metadata, expiring []table.Snapshot, end *table.Snapshot, tags []table.Snapshot, missingOK MissingOK) (Plan, error) {
	return PlanFilesFor(ctx, md, Lifecycle{}, expiring, end, tags, missingOK)
}

// Lifecycle says how snapshot expiry treats the changelog (Paimon's
// SnapshotDeletion with changelogDecoupled and produceChangelog).
type Lifecycle struct {
	// Decoupled: the changelog outlives the snapshot as a long-lived
	// changelog, so changelog files, changelog manifests and changelog
	// manifest lists of expired snapshots are kept for changelog expiry.
	Decoupled bool
	// ProduceChangelog is changelog-producer != none. Decoupled without a
	// producer, the changelog is the APPEND data files: those (and files
	// without a recorded source) are kept, and so are the base and delta
	// manifest lists and their manifests.
	ProduceChangelog bool
}

// PlanFilesFor is PlanFiles for a table whose changelog lifecycle is lc.
// Index manifests, index files and statistics files are planned in every
// lifecycle, as in Java.
func PlanFilesFor(ctx context.Context, md reach.Metadata, lc Lifecycle, expiring []table.Snapshot, end *table.Snapshot, tags []table.Snapshot, missingOK MissingOK) (Plan, error) {
	p, err := planFiles(ctx, md, lc, expiring, end, tags, missingOK)
	if err != nil {
		_ = p.Close()
		return Plan{}, err
	}
	// Planning is over: the deduplicating hashes are not needed any more.
	p.DataFiles.Seal()
	return p, nil
}

func planFiles(ctx context.Context, md reach.Metadata, lc Lifecycle, expiring []table.Snapshot, end *table.Snapshot, tags []table.Snapshot, missingOK MissingOK) (Plan, error) {
	keepAppend := lc.Decoupled && !lc.ProduceChangelog
	keepDataManifests := lc.Decoupled && !lc.ProduceChangelog
	p := Plan{DataFiles: NewPathList()}
	if len(expiring) == 0 {
		return p, nil
	}
	goneCache := map[int64]bool{}
	// tolerate turns a missing file of expiring snapshot s into "empty"
	// when missingOK allows it, and every other failure into a *table.DamagedError.
	tolerate := func(s table.Snapshot, file string, err error) error {
		if err == nil {
			return nil
		}
		if isMissing(err) && missingOK != nil && (end == nil || s.ID != end.ID) {
			ok, known := goneCache[s.ID]
			if !known {
				var merr error
				ok, merr = missingOK(ctx, s)
				if merr != nil {
					return merr
				}
				goneCache[s.ID] = ok
			}
			if ok {
				return nil
			}
		}
		return table.Damaged("", file, fmt.Sprintf("snapshot %d", s.ID), err)
	}
	tags = slices.Clone(tags)
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].ID < tags[j].ID })
	begin := expiring[0].ID

	// Data files removed in (begin, end].
	rangeSnaps := slices.Clone(expiring[1:])
	if end != nil {
		rangeSnaps = append(rangeSnaps, *end)
	}
	var tagLive *liveSet
	tagLiveID := int64(-1)
	var tagErr error
	for _, s := range rangeSnaps {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		var skip *liveSet
		if ti := lastBefore(tags, s.ID); ti >= 0 {
			if tags[ti].ID != tagLiveID {
				tagLiveID = tags[ti].ID
				tagLive, tagErr = readLiveSet(ctx, md, tags[ti])
			}
			if tagErr != nil {
				return p, table.Damaged("", failedFile(tagErr), fmt.Sprintf("the tag of snapshot %d", tags[ti].ID), tagErr)
			}
			skip = tagLive
		}
		deleted, err := deletedInDelta(ctx, md, s.DeltaManifestList, func(file string, err error) error { return tolerate(s, file, err) })
		if err != nil {
			return p, err
		}
		for _, e := range deleted {
			if skip != nil && skip.contains(e) {
				continue
			}
			if keepAppend && !e.Compacted {
				continue // the changelog: left to changelog expiry
			}
			if err := p.DataFiles.Add(e.Path); err != nil {
				return p, err
			}
			for _, x := range e.ExtraPaths {
				if err := p.DataFiles.Add(x); err != nil {
					return p, err
				}
			}
		}
	}

	// Changelog files of [begin, end), unless they outlive the snapshots.
	for _, s := range expiring {
		if lc.Decoupled {
			break
		}
		cl := reach.Opt(s.ChangelogManifestList)
		if cl == "" {
			continue
		}
		manifests, err := md.ManifestList(ctx, cl)
		if err != nil {
			if err := tolerate(s, cl, err); err != nil {
				return p, err
			}
			manifests = nil
		}
		for _, m := range manifests {
			var spoolErr error
			err := md.Manifest(ctx, m, func(e reach.DataEntry) error {
				if e.Kind == reach.Add {
					spoolErr = p.DataFiles.Add(e.Path)
				}
				return spoolErr
			})
			if spoolErr != nil {
				return p, spoolErr
			}
			if err := tolerate(s, m, err); err != nil {
				return p, err
			}
		}
	}

	if end == nil {
		return p, nil
	}

	// Manifest-level files of [begin, end).
	skipping := skippingTags(tags, begin, end.ID)
	skipping = append(skipping, *end)
	skip := map[string]bool{}
	for i, s := range skipping {
		if err := addManifestSkips(ctx, md, s, skip); err != nil {
			by := fmt.Sprintf("the tag of snapshot %d", s.ID)
			if i == len(skipping)-1 {
				by = fmt.Sprintf("snapshot %d", s.ID)
			}
			return p, table.Damaged("", failedFile(err), by, err)
		}
	}
	for _, s := range expiring {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		var lists []string
		if !keepDataManifests {
			lists = append(lists, s.BaseManifestList, s.DeltaManifestList)
		}
		if !lc.Decoupled {
			lists = append(lists, reach.Opt(s.ChangelogManifestList))
		}
		for _, l := range lists {
			if l == "" {
				continue
			}
			manifests, err := md.ManifestList(ctx, l)
			if err != nil {
				if err := tolerate(s, l, err); err != nil {
					return p, err
				}
				manifests = nil
			}
			for _, m := range manifests {
				if !skip[m] {
					skip[m] = true
					p.Manifests = append(p.Manifests, m)
				}
			}
			if !skip[l] {
				skip[l] = true
				p.ManifestLists = append(p.ManifestLists, l)
			}
		}
		if im := reach.Opt(s.IndexManifest); im != "" {
			files, err := md.IndexManifest(ctx, im)
			if err := tolerate(s, im, err); err != nil {
				return p, err
			}
			if err == nil {
				for _, f := range files {
					if !skip[f.Name] {
						skip[f.Name] = true
						p.IndexFiles = append(p.IndexFiles, f)
					}
				}
				if !skip[im] {
					skip[im] = true
					p.IndexManifests = append(p.IndexManifests, im)
				}
			}
		}
		if st := reach.Opt(s.Statistics); st != "" && !skip[st] {
			skip[st] = true
			p.Statistics = append(p.Statistics, st)
		}
	}
	return p, nil
}

// deletedInDelta returns the entries a delta manifest list removes: a DELETE
// marks the path, a later ADD of the same path (an upgrade to another level)
// unmarks it. Order is the order of first marking. A read error goes
// through tolerate, which either returns it (abort) or nil (a missing file
// that counts as empty).
func deletedInDelta(ctx context.Context, md reach.Metadata, deltaList string, tolerate func(file string, err error) error) ([]reach.DataEntry, error) {
	manifests, err := md.ManifestList(ctx, deltaList)
	if err != nil {
		// Missing and tolerated: nothing to plan from this delta.
		return nil, tolerate(deltaList, err)
	}
	marked := map[string]int{}
	var out []reach.DataEntry
	for _, m := range manifests {
		err := md.Manifest(ctx, m, func(e reach.DataEntry) error {
			switch e.Kind {
			case reach.Delete:
				if i, ok := marked[e.Path]; ok && i >= 0 {
					out[i] = e
				} else {
					marked[e.Path] = len(out)
					out = append(out, e)
				}
			case reach.Add:
				if i, ok := marked[e.Path]; ok && i >= 0 {
					out[i].Path = "" // unmarked
					marked[e.Path] = -1
				}
			default:
				return fmt.Errorf("manifest entry %s: unknown kind %d", e.Name, e.Kind)
			}
			return nil
		})
		if err != nil {
			if isMissing(err) {
				if err := tolerate(m, err); err != nil {
					return nil, err
				}
				// A condemned snapshot lost this manifest: its files are
				// planned from what remains, the rest is left to orphan
				// cleanup.
				continue
			}
			return nil, tolerate(m, err)
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e.Path != "" {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

type fileKey struct {
	partition string
	bucket    int32
	name      string
}

// liveSet is the set of live data files of one snapshot, keyed like Java's
// tag skipper by (partition, bucket, file name).
type liveSet struct {
	files map[fileKey]struct{}
}

func (l *liveSet) contains(e reach.DataEntry) bool {
	_, ok := l.files[fileKey{e.Partition, e.Bucket, e.Name}]
	return ok
}

type entryID struct {
	fileKey
	level int32
	path  string
}

// readLiveSet merges base then delta manifests of s. Every read error is
// returned: a live set that might be incomplete must not protect less.
func readLiveSet(ctx context.Context, md reach.Metadata, s table.Snapshot) (*liveSet, error) {
	count := map[entryID]int{}
	for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
		manifests, err := md.ManifestList(ctx, l)
		if err != nil {
			return nil, &fileError{"manifest list", l, err}
		}
		for _, m := range manifests {
			err := md.Manifest(ctx, m, func(e reach.DataEntry) error {
				id := entryID{fileKey{e.Partition, e.Bucket, e.Name}, e.Level, e.Path}
				if e.Kind == reach.Add {
					count[id]++
				} else {
					count[id]--
				}
				return nil
			})
			if err != nil {
				return nil, &fileError{"manifest", m, err}
			}
		}
	}
	ls := &liveSet{files: make(map[fileKey]struct{}, len(count))}
	for id, n := range count {
		if n > 0 {
			ls.files[id.fileKey] = struct{}{}
		}
	}
	return ls, nil
}

// addManifestSkips adds every manifest-level name s uses. Any read error,
// missing files included, is returned: the skip set protects retained data.
func addManifestSkips(ctx context.Context, md reach.Metadata, s table.Snapshot, skip map[string]bool) error {
	for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
		skip[l] = true
		manifests, err := md.ManifestList(ctx, l)
		if err != nil {
			return &fileError{"manifest list", l, err}
		}
		for _, m := range manifests {
			skip[m] = true
		}
	}
	if im := reach.Opt(s.IndexManifest); im != "" {
		skip[im] = true
		files, err := md.IndexManifest(ctx, im)
		if err != nil {
			return &fileError{"index manifest", im, err}
		}
		for _, f := range files {
			skip[f.Name] = true
		}
	}
	if st := reach.Opt(s.Statistics); st != "" {
		skip[st] = true
	}
	return nil
}

// lastBefore returns the index of the last tag with ID < id, or -1.
func lastBefore(tags []table.Snapshot, id int64) int {
	return sort.Search(len(tags), func(i int) bool { return tags[i].ID >= id }) - 1
}

// skippingTags mirrors ExpireSnapshotsImpl.findSkippingTags: the tags from
// the last one at or before begin (or the first tag) up to the last one
// before end.
func skippingTags(tags []table.Snapshot, begin, end int64) []table.Snapshot {
	right := lastBefore(tags, end)
	if right < 0 {
		return nil
	}
	left := sort.Search(len(tags), func(i int) bool { return tags[i].ID > begin }) - 1
	left = max(left, 0)
	if left > right {
		return nil
	}
	return slices.Clone(tags[left : right+1])
}

// failedFile extracts the name of the file readLiveSet or addManifestSkips
// failed on, for the *table.DamagedError.
func failedFile(err error) string {
	var f *fileError
	if errors.As(err, &f) {
		return f.file
	}
	return "metadata"
}

// fileError names the metadata file a read failed on.
type fileError struct {
	what, file string
	err        error
}

func (e *fileError) Error() string { return fmt.Sprintf("read %s %s: %v", e.what, e.file, e.err) }
func (e *fileError) Unwrap() error { return e.err }

func isMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
