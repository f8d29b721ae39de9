package orphan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
)

// RunOptions configure one cleanup.
type RunOptions struct {
	Now       time.Time
	OlderThan time.Duration // 0 means DefaultOlderThan
	Force     bool          // accept OlderThan under MinOlderThan
	DryRun    bool
	// Parallelism bounds concurrent deletions (default 8).
	Parallelism int
}

// Report says what a run deleted (or, in a dry run, would delete).
type Report struct {
	DryRun bool
	Cutoff time.Time
	Files  []File
	Bytes  int64
	// Dirs are the empty partition and bucket directories removed (never in
	// a dry run).
	Dirs []string
}

// Run removes orphan files of the table at src (all branches):
//
//  1. the table's file directories are LISTED FIRST: manifest/, index/,
//     statistics/, every bucket directory (partition-key levels of k=v
//     directories, then bucket-*), and each branch's snapshot/ and
//     changelog/ (for temporary files only);
//  2. THEN every file name used by any snapshot, tag or long-lived
//     changelog of any branch is collected. A file committed between the
//     two steps was written before the listing, is younger than the cutoff
//     or is found referenced: it is never deleted;
//  3. unreferenced, recognised, old-enough files are deleted, then empty
//     bucket and partition directories.
//
// Any listing or metadata read error other than a file that disappeared
// (an expiration running concurrently) aborts the run before deleting.
// Files under data-file.external-paths are not scanned.
func Run(ctx context.Context, src expire.Source, o RunOptions) (Report, error) {
	rep := Report{DryRun: o.DryRun}
	if o.Now.IsZero() {
		return rep, errors.New("orphan: RunOptions.Now is required")
	}
	olderThan := o.OlderThan
	if olderThan == 0 {
		olderThan = DefaultOlderThan
	}
	cutoff, err := Cutoff(o.Now, olderThan, o.Force)
	if err != nil {
		return rep, err
	}
	rep.Cutoff = cutoff
	root := strings.TrimRight(src.Root, "/")
	fsys := src.FS

	schema, err := latestSchema(ctx, fsys, root)
	if err != nil {
		return rep, err
	}
	branches, err := branchRoots(ctx, fsys, root)
	if err != nil {
		return rep, err
	}

	// 1. List.
	var listings []Listing
	var emptyDirs []string
	listDir := func(dir string, kind DirKind) error {
		ents, err := fsys.List(ctx, dir)
		if err != nil {
			return fmt.Errorf("orphan %s: list %s: %w", root, dir, err)
		}
		l := Listing{Dir: dir, Kind: kind}
		for _, e := range ents {
			if !e.IsDir {
				l.Files = append(l.Files, File{Path: e.Path, Name: e.Name, Size: e.Size, ModTime: e.ModTime})
			}
		}
		listings = append(listings, l)
		return nil
	}
	for _, d := range []struct {
		name string
		kind DirKind
	}{{"manifest", DirManifest}, {"index", DirIndex}, {"statistics", DirStatistics}} {
		if err := listDir(fileio.Join(root, d.name), d.kind); err != nil {
			return rep, err
		}
	}
	for _, b := range branches {
		for _, d := range []string{"snapshot", "changelog"} {
			if err := listDir(fileio.Join(b, d), DirSnapshot); err != nil {
				return rep, err
			}
		}
	}
	dataRoot := root
	if p := schema.Options["data-file.path-directory"]; p != "" {
		dataRoot = fileio.Join(root, p)
	}
	bucketDirs, err := listBucketDirs(ctx, fsys, dataRoot, len(schema.PartitionKeys), &emptyDirs, cutoff)
	if err != nil {
		return rep, fmt.Errorf("orphan %s: %w", root, err)
	}
	for _, d := range bucketDirs {
		if err := listDir(d, DirBucket); err != nil {
			return rep, err
		}
	}
	in := SelectInput{
		Root: root, Listings: listings, Cutoff: cutoff,
		DataFilePrefix: schema.Options["data-file.prefix"], ChangelogFilePrefix: schema.Options["changelog-file.prefix"],
	}
	candidates := Select(in)
	if len(candidates) == 0 {
		return rep, nil
	}
	names := make(map[string]bool, len(candidates))
	for _, f := range candidates {
		names[f.Name] = true
	}

	// 2. Collect references, only of candidate names (bounded memory).
	used := map[string]bool{}
	for _, b := range branches {
		if err := collectUsed(ctx, src, b, names, used); err != nil {
			return rep, fmt.Errorf("orphan %s: %w", root, err)
		}
	}

	// 3. Delete.
	in.Referenced = used
	rep.Files = Select(in)
	for _, f := range rep.Files {
		rep.Bytes += f.Size
	}
	if o.DryRun {
		return rep, nil
	}
	par := o.Parallelism
	if par <= 0 {
		par = 8
	}
	p := pool.New().WithContext(ctx).WithMaxGoroutines(par).WithCancelOnError().WithFirstError()
	for _, f := range rep.Files {
		p.Go(func(ctx context.Context) error {
			if err := fsys.Delete(ctx, f.Path); err != nil {
				return fmt.Errorf("orphan %s: delete %s: %w", root, f.Path, err)
			}
			return nil
		})
	}
	if err := p.Wait(); err != nil {
		return rep, err
	}
	dirs := map[string]bool{}
	for _, d := range emptyDirs {
		dirs[d] = true
	}
	for _, f := range rep.Files {
		if d := fileio.Dir(f.Path); strings.HasPrefix(fileio.Base(d), "bucket-") {
			dirs[d] = true
		}
	}
	rep.Dirs, err = removeEmptyDirs(ctx, fsys, dataRoot, root, dirs)
	return rep, err
}

type schemaInfo struct {
	PartitionKeys []string          `json:"partitionKeys"`
	Options       map[string]string `json:"options"`
}

func latestSchema(ctx context.Context, fsys fileio.FileIO, branchRoot string) (schemaInfo, error) {
	ids, err := expire.ListIDs(ctx, fsys, fileio.Join(branchRoot, "schema"), "schema-")
	if err != nil {
		return schemaInfo{}, err
	}
	if len(ids) == 0 {
		return schemaInfo{}, fmt.Errorf("orphan: %s has no schema; refusing to clean", branchRoot)
	}
	p := fileio.Join(branchRoot, "schema", fmt.Sprintf("schema-%d", ids[len(ids)-1]))
	data, err := fileio.ReadFile(ctx, fsys, p)
	if err != nil {
		return schemaInfo{}, fmt.Errorf("orphan: read %s: %w", p, err)
	}
	var s schemaInfo
	if err := json.Unmarshal(data, &s); err != nil {
		return schemaInfo{}, fmt.Errorf("orphan: decode %s: %w", p, err)
	}
	return s, nil
}

// branchRoots returns the metadata roots of main and every branch; like
// Paimon it refuses to run when a branch has no schema, since its files
// could not be told apart from orphans.
func branchRoots(ctx context.Context, fsys fileio.FileIO, root string) ([]string, error) {
	out := []string{root}
	ents, err := fsys.List(ctx, fileio.Join(root, "branch"))
	if err != nil {
		return nil, fmt.Errorf("orphan %s: list branches: %w", root, err)
	}
	for _, e := range ents {
		if !e.IsDir || !strings.HasPrefix(e.Name, "branch-") {
			continue
		}
		if _, err := latestSchema(ctx, fsys, e.Path); err != nil {
			return nil, fmt.Errorf("orphan %s: branch %s: %w", root, e.Name, err)
		}
		out = append(out, e.Path)
	}
	return out, nil
}

// listBucketDirs descends exactly levels partition directories (names with
// '=') and returns the bucket-* directories beneath. Partition directories
// without buckets and empty bucket directories older than cutoff are added
// to empty.
func listBucketDirs(ctx context.Context, fsys fileio.FileIO, dir string, levels int, empty *[]string, cutoff time.Time) ([]string, error) {
	ents, err := fsys.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir {
			continue
		}
		if levels == 0 {
			if strings.HasPrefix(e.Name, "bucket-") {
				out = append(out, e.Path)
				sub, err := fsys.List(ctx, e.Path)
				if err != nil {
					return nil, fmt.Errorf("list %s: %w", e.Path, err)
				}
				if len(sub) == 0 && e.ModTime.Before(cutoff) {
					*empty = append(*empty, e.Path)
				}
			}
			continue
		}
		if !strings.Contains(e.Name, "=") {
			continue
		}
		sub, err := listBucketDirs(ctx, fsys, e.Path, levels-1, empty, cutoff)
		if err != nil {
			return nil, err
		}
		if len(sub) == 0 {
			if kids, err := fsys.List(ctx, e.Path); err == nil && len(kids) == 0 && e.ModTime.Before(cutoff) {
				*empty = append(*empty, e.Path)
			}
		}
		out = append(out, sub...)
	}
	return out, nil
}

// removeEmptyDirs removes the given bucket/partition directories if empty,
// then their partition parents upwards, never dataRoot or the table root.
func removeEmptyDirs(ctx context.Context, fsys fileio.FileIO, dataRoot, root string, dirs map[string]bool) ([]string, error) {
	var removed []string
	for len(dirs) > 0 {
		next := map[string]bool{}
		for d := range dirs {
			if d == dataRoot || d == root || !strings.HasPrefix(d, dataRoot+"/") {
				continue
			}
			name := fileio.Base(d)
			if !strings.HasPrefix(name, "bucket-") && !strings.Contains(name, "=") {
				continue
			}
			kids, err := fsys.List(ctx, d)
			if err != nil || len(kids) > 0 {
				continue
			}
			if err := fsys.DeleteDir(ctx, d); err != nil {
				return removed, fmt.Errorf("orphan %s: remove empty directory %s: %w", root, d, err)
			}
			if ok, _ := fileio.Exists(ctx, fsys, d); ok {
				continue // refilled meanwhile, or a store without directories
			}
			removed = append(removed, d)
			next[fileio.Dir(d)] = true
		}
		dirs = next
	}
	return removed, nil
}

// collectUsed adds to used every candidate name referenced by a snapshot,
// tag or long-lived changelog of the branch.
func collectUsed(ctx context.Context, src expire.Source, branchRoot string, candidates, used map[string]bool) error {
	fsys := src.FS
	mark := func(name string) {
		if candidates[name] {
			used[name] = true
		}
	}
	var snaps []expire.Snapshot
	for _, d := range []struct{ dir, prefix string }{{"snapshot", "snapshot-"}, {"changelog", "changelog-"}} {
		ids, err := expire.ListIDs(ctx, fsys, fileio.Join(branchRoot, d.dir), d.prefix)
		if err != nil {
			return err
		}
		for _, id := range ids {
			p := fileio.Join(branchRoot, d.dir, fmt.Sprintf("%s%d", d.prefix, id))
			s, err := expire.ReadSnapshotFile(ctx, fsys, p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // expired since the listing
			}
			if err != nil {
				return err
			}
			snaps = append(snaps, s)
		}
	}
	tags, err := expire.ReadTags(ctx, fsys, branchRoot)
	if err != nil {
		return err
	}
	for _, t := range tags {
		snaps = append(snaps, t.Snapshot)
	}
	seenManifest := map[string]bool{}
	for _, s := range snaps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, l := range []string{s.ChangelogManifestList, s.DeltaManifestList, s.BaseManifestList} {
			if l == "" {
				continue
			}
			mark(l)
			manifests, err := src.Meta.ManifestList(ctx, l)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("snapshot %d: read manifest list %s: %w", s.ID, l, err)
			}
			for _, m := range manifests {
				mark(m)
				if seenManifest[m] {
					continue
				}
				seenManifest[m] = true
				err := src.Meta.Manifest(ctx, m, func(e expire.DataEntry) error {
					mark(e.Name)
					for _, x := range e.ExtraPaths {
						mark(fileio.Base(x))
					}
					return nil
				})
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("snapshot %d: read manifest %s: %w", s.ID, m, err)
				}
			}
		}
		if s.IndexManifest != "" {
			mark(s.IndexManifest)
			files, err := src.Meta.IndexManifest(ctx, s.IndexManifest)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("snapshot %d: read index manifest %s: %w", s.ID, s.IndexManifest, err)
			}
			for _, f := range files {
				mark(f.Name)
			}
		}
		if s.Statistics != "" {
			mark(s.Statistics)
		}
	}
	return nil
}
