package reach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// Root is a snapshot-shaped file a run keeps: a snapshot, tag or long-lived
// changelog of some branch.
type Root struct {
	By         string // "snapshot 8", "tag t1", "branch b snapshot 2", ...
	Path       string // its JSON file
	BranchRoot string // metadata root of its branch
	ID         int64  // snapshot id for files of snapshot/, -1 otherwise (no EARLIEST tolerance)
	// Tag is set for tags: expiration deletes the changelog of a tagged
	// snapshot with the snapshot (as Paimon does), so a tag's changelog
	// manifest list is not kept (see Reacher.TagChangelogs).
	Tag bool
	// Changelog is set for long-lived changelogs (changelog/changelog-<id>,
	// ChangelogID). Paimon's expiration of a decoupled table deletes their
	// base and delta manifest lists (unless changelog-producer is none),
	// index manifests and statistics files before it writes them, so only
	// their changelog manifest list must be readable; the rest is read when
	// it still exists (see Reacher.ChangelogNeeds).
	Changelog   bool
	ChangelogID int64
	// Partial is set for the earliest long-lived changelog of a branch:
	// Paimon's changelog expiry dismantles changelogs one at a time from
	// the earliest and writes no hint before it finishes, so a crash leaves
	// that one changelog with some of its files gone. Whatever of it is
	// missing is no damage (its read was broken by the expiry that was
	// removing it; no other root reaches anything through its files).
	Partial  bool
	Snapshot table.Snapshot
}

// Reacher reads every metadata file the roots it is given reach: manifest
// lists (base, delta, changelog), manifests, the index manifest and the
// index files it lists, and the statistics file. Each file is read once per
// Reacher (names are never reused). A file that cannot be read is a
// *table.DamagedError, unless it is missing and its root itself is going away
// (Vanish.MayBeMissing): then the root is skipped.
type Reacher struct {
	Src    Source
	Vanish Vanish
	// Mark, if set, is called with the name of every file reached: manifest
	// lists, manifests, data, changelog and extra files (base names) of
	// entries of any kind, index manifests, index files and statistics
	// files. This is what orphan cleanup keeps.
	Mark func(name string)
	// Track and MarkLive, if set, compute which data files are live in a
	// root: MarkLive is called with every data file name for which Track
	// is true that the root's base and delta manifests add more often than
	// they delete (a manifest list keeps the ADD of a file after a later
	// manifest deleted it), and with those its changelog manifests add.
	// This is what expiration must not delete.
	Track    func(name string) bool
	MarkLive func(name string)
	// TagChangelogs makes Walk read a tag's changelog manifest list too,
	// for marking, when it still exists (orphan cleanup, like Paimon, keeps
	// what it names); a missing one is not damage. Without it a tag's
	// changelog is ignored.
	TagChangelogs bool
	// ChangelogNeeds restricts a long-lived changelog root to what reading
	// its changelog needs: its changelog manifest list (manifests and the
	// files they add), or, without one (changelog-producer none), its delta
	// manifest list (manifests, and for MarkLive the APPEND files it adds).
	// Snapshot expiration sets it: Paimon's expiration does not keep a
	// long-lived changelog's base files, compacted files, index or
	// statistics alive. Without it a changelog root reaches everything it
	// names that still exists (orphan cleanup keeps all of that, as
	// Paimon's does, and changelog expiration protects it).
	ChangelogNeeds bool

	done    map[string]bool
	lists   map[string][]string
	counts  map[string]map[entryID]int // per manifest: tracked names only
	appends map[string][]string        // per manifest: tracked names of APPEND-source ADDs
}

func (r *Reacher) mark(name string) {
	if r.Mark != nil {
		r.Mark(name)
	}
}

// errRootGone is returned by Walk when the root went away while it was read.
var errRootGone = errors.New("root disappeared")

// Walk reads everything rt reaches. It returns false (and no error) if rt
// disappeared meanwhile, which its caller may treat as expired.
func (r *Reacher) Walk(ctx context.Context, rt Root) (bool, error) {
	if r.done == nil {
		r.done, r.lists, r.counts = map[string]bool{}, map[string][]string{}, map[string]map[entryID]int{}
		r.appends = map[string][]string{}
	}
	err := r.walk(ctx, rt)
	if errors.Is(err, errRootGone) {
		return false, nil
	}
	return err == nil, err
}

// missing handles a missing file of rt: errRootGone if rt may lose it, a
// *table.DamagedError otherwise.
func (r *Reacher) missing(ctx context.Context, rt Root, file string, err error) error {
	if rt.Changelog {
		// compactd's changelog expiration writes the changelog EARLIEST
		// hint before deleting anything below it.
		if hint, trusted := table.TrustedChangelogEarliest(ctx, r.Src.FS, rt.BranchRoot); trusted && rt.ChangelogID < hint {
			return errRootGone
		}
	}
	ok, verr := r.Vanish.MayBeMissing(ctx, rt.Path, rt.BranchRoot, rt.ID)
	if verr != nil {
		return fmt.Errorf("%s: %w", rt.By, verr)
	}
	if ok {
		return errRootGone
	}
	return table.Damaged(r.Src.Root, file, rt.By, err)
}

func (r *Reacher) fail(ctx context.Context, rt Root, file string, err error) error {
	if isMissing(err) {
		return r.missing(ctx, rt, file, err)
	}
	return table.Damaged(r.Src.Root, file, rt.By, err)
}

func (r *Reacher) walk(ctx context.Context, rt Root) error {
	s := rt.Snapshot
	md := r.Src.Meta
	changelogList := Opt(s.ChangelogManifestList)
	lists := []string{s.BaseManifestList, s.DeltaManifestList, changelogList}
	needsOnly := rt.Changelog && r.ChangelogNeeds
	if needsOnly {
		if changelogList != "" {
			lists = []string{changelogList}
		} else {
			lists = []string{s.DeltaManifestList}
		}
	}
	live := map[entryID]int{}
	for _, l := range lists {
		if l == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		changelog := l == changelogList
		// optional: a missing file is no damage, the root does not need it.
		optional := (changelog && rt.Tag) || (rt.Changelog && !changelog) || rt.Partial
		if changelog && rt.Tag && !r.TagChangelogs {
			continue
		}
		r.mark(l)
		manifests, ok := r.lists[l]
		if !ok {
			var err error
			manifests, err = md.ManifestList(ctx, l)
			if optional && isMissing(err) {
				continue
			}
			if err != nil {
				return r.fail(ctx, rt, l, err)
			}
			r.lists[l] = manifests
		}
		for _, m := range manifests {
			r.mark(m)
			if !r.done["manifest:"+m] {
				counts := map[entryID]int{}
				var appends []string
				err := md.Manifest(ctx, m, func(e DataEntry) error {
					r.mark(e.Name)
					for _, x := range e.ExtraPaths {
						r.mark(fileio.Base(x))
					}
					if r.Track != nil && r.Track(e.Name) {
						id := entryID{fileKey{e.Partition, e.Bucket, e.Name}, e.Level, e.Path}
						if e.Kind == Add {
							counts[id]++
							if !e.Compacted {
								appends = append(appends, e.Name)
							}
						} else {
							counts[id]--
						}
					}
					return nil
				})
				if optional && isMissing(err) {
					continue
				}
				if err != nil {
					return r.fail(ctx, rt, m, err)
				}
				r.done["manifest:"+m] = true
				if len(counts) > 0 {
					r.counts[m] = counts
				}
				if len(appends) > 0 {
					r.appends[m] = appends
				}
			}
			if r.MarkLive == nil {
				continue
			}
			switch {
			case changelog:
				for id, n := range r.counts[m] {
					if n > 0 {
						r.MarkLive(id.name)
					}
				}
			case needsOnly:
				// A changelog-producer none changelog is read from the
				// APPEND files its delta adds.
				for _, name := range r.appends[m] {
					r.MarkLive(name)
				}
			default:
				for id, n := range r.counts[m] {
					live[id] += n
				}
			}
		}
	}
	if r.MarkLive != nil {
		for id, n := range live {
			if n > 0 {
				r.MarkLive(id.name)
			}
		}
	}
	if needsOnly {
		return nil
	}
	if im := Opt(s.IndexManifest); im != "" {
		r.mark(im)
		if !r.done["index:"+im] {
			files, err := md.IndexManifest(ctx, im)
			if rt.Changelog && isMissing(err) {
				// Java's snapshot expiry deleted the long-lived
				// changelog's index manifest: nothing of it is needed.
				files = nil
			} else if err != nil {
				return r.fail(ctx, rt, im, err)
			}
			for _, f := range files {
				r.mark(f.Name)
				if r.done["indexfile:"+f.Path] {
					continue
				}
				// Index files (deletion vectors, hash and global indexes)
				// are not decoded here; they must exist as files.
				st, err := r.Src.FS.Stat(ctx, f.Path)
				if err == nil && st.IsDir {
					err = fmt.Errorf("index file %s: %w", f.Path, syscall.EISDIR)
				}
				if rt.Changelog && isMissing(err) {
					continue
				}
				if err != nil {
					return r.fail(ctx, rt, f.Path, err)
				}
				r.done["indexfile:"+f.Path] = true
			}
			if files != nil || !rt.Changelog {
				r.done["index:"+im] = true
			}
		}
	}
	if st := Opt(s.Statistics); st != "" {
		r.mark(st)
		if !r.done["stat:"+st] {
			p := fileio.Join(r.Src.Root, "statistics", st)
			data, err := fileio.ReadFile(ctx, r.Src.FS, p)
			if err == nil && !json.Valid(data) {
				err = fmt.Errorf("statistics file %s: %w: not valid JSON", p, table.ErrCorrupt)
			}
			if rt.Changelog && isMissing(err) {
				return nil
			}
			if err != nil {
				return r.fail(ctx, rt, p, err)
			}
			r.done["stat:"+st] = true
		}
	}
	return nil
}

// KeptRoots reads the roots of one branch: every snapshot with id >= from
// (all when from <= 0), every tag, every long-lived changelog and, for
// validation, every consumer. A snapshot, tag or changelog file that
// disappears after the listing is skipped (expired meanwhile); one that
// cannot be read or decoded is a *table.DamagedError. name is "" for main.
func KeptRoots(ctx context.Context, src Source, branchRoot, name string, from int64) ([]Root, error) {
	fsys := src.FS
	prefix := ""
	if name != "" {
		prefix = "branch " + name + " "
	}
	var roots []Root
	for _, d := range []struct{ dir, prefix, what string }{{"snapshot", "snapshot-", "snapshot"}, {"changelog", "changelog-", "changelog"}} {
		ids, err := table.ListIDs(ctx, fsys, fileio.Join(branchRoot, d.dir), d.prefix)
		if err != nil {
			return nil, table.Damaged(src.Root, fileio.Join(branchRoot, d.dir), "", err)
		}
		for _, id := range ids {
			if d.dir == "snapshot" && id < from {
				continue
			}
			p := fileio.Join(branchRoot, d.dir, fmt.Sprintf("%s%d", d.prefix, id))
			s, err := table.ReadSnapshotFile(ctx, fsys, p)
			if isMissing(err) {
				continue
			}
			if err != nil {
				return nil, table.Damaged(src.Root, p, "", err)
			}
			rt := Root{By: fmt.Sprintf("%s%s %d", prefix, d.what, id), Path: p, BranchRoot: branchRoot, ID: -1, Snapshot: *s}
			if d.dir == "snapshot" {
				rt.ID = id
			} else {
				rt.Changelog, rt.ChangelogID = true, id
				rt.Partial = id == ids[0]
			}
			roots = append(roots, rt)
		}
	}
	tags, err := table.ReadTags(ctx, fsys, branchRoot)
	if err != nil {
		return nil, table.Damaged(src.Root, fileio.Join(branchRoot, "tag"), "", err)
	}
	for _, t := range tags {
		roots = append(roots, Root{By: prefix + "tag " + t.Name, Path: fileio.Join(branchRoot, "tag", "tag-"+t.Name), BranchRoot: branchRoot, ID: -1, Tag: true, Snapshot: t.Snapshot})
	}
	if _, err := table.ReadConsumers(ctx, fsys, branchRoot); err != nil {
		return nil, table.Damaged(src.Root, fileio.Join(branchRoot, "consumer"), "", err)
	}
	return roots, nil
}

type fileKey struct {
	partition string
	bucket    int32
	name      string
}

type entryID struct {
	fileKey
	level int32
	path  string
}

func isMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
