package orphan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// RunOptions configure one cleanup.
type RunOptions struct {
	Now       time.Time
	OlderThan time.Duration // 0 means DefaultOlderThan
	Force     bool          // accept OlderThan under MinOlderThan
	DryRun    bool
	// Parallelism bounds concurrent deletions (default 8).
	Parallelism int
	// VanishGrace is how long to wait, when a file a snapshot or tag
	// reaches is missing, for a concurrent expiration to remove that
	// snapshot or tag too (0: reach.DefaultVanishGrace; negative: do not
	// wait).
	VanishGrace time.Duration
}

// Report says what a run deleted (or, in a dry run, would delete).
type Report struct {
	DryRun bool      `json:"dryRun"`
	Cutoff time.Time `json:"cutoff"`
	Files  []File    `json:"files"`
	Bytes  int64     `json:"bytes"`
	// Dirs are the empty partition and bucket directories removed (never in
	// a dry run).
	Dirs []string `json:"dirs"`
	// FileCount is how many files the run deleted (or would): Run returns
	// at most SampleLimit of them in Files, the first in deletion order,
	// so that the report of a large cleanup stays small. Bytes counts all.
	FileCount int `json:"fileCount"`
}

// SampleLimit bounds Report.Files as Run returns it.
const SampleLimit = 1000

// Count is the number of files deleted, whether or not Files was bounded.
func (r *Report) Count() int { return max(r.FileCount, len(r.Files)) }

// bound fills FileCount and bounds Files to SampleLimit, copying the kept
// part so that the full list can be collected.
func (r *Report) bound() {
	r.FileCount = r.Count()
	if len(r.Files) > SampleLimit {
		r.Files = slices.Clone(r.Files[:SampleLimit])
	}
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
// Fail closed (stricter than Paimon, which counts a missing manifest as
// empty): every metadata file reachable from every snapshot, tag and
// long-lived changelog of every branch is read, and every consumer file
// decoded, before anything is deleted. A missing file is tolerated only
// when the snapshot or tag that names it disappears too (a concurrent
// expiration, waited for up to VanishGrace) or, for a snapshot, when it lies
// below a trusted EARLIEST hint (condemned by an expiration in progress).
// Anything else missing, unreadable or corrupt returns an
// *table.DamagedError naming the table and the file, and nothing is
// deleted. Any other listing or read error aborts the run too.
// Files under data-file.external-paths are not scanned.
//
// Memory: Run keeps only the candidates of step 1 (old enough, recognised,
// inside the table; past 65,536 in an unlinked temporary file) and a 64-bit
// hash and a bit per candidate name, never the whole listing, and deletes
// in batches of 4096, every batch after step 2 and after the confinement
// check of every file.
func Run(ctx context.Context, src reach.Source, o RunOptions) (Report, error) {
	rep, err := run(ctx, src, o)
	rep.bound()
	return rep, err
}

func run(ctx context.Context, src reach.Source, o RunOptions) (Report, error) {
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
	branches, branchNames, err := table.BranchRoots(ctx, fsys, root)
	if err != nil {
		return rep, fmt.Errorf("orphan %s: %w", root, err)
	}
	branches = append([]string{root}, branches...)
	branchNames = append([]string{""}, branchNames...)

	// 1. List, never following a symbolic link (see table.Confine).
	cf, err := table.NewConfine(ctx, fsys, root)
	if err != nil {
		return rep, fmt.Errorf("orphan %s: %w", root, err)
	}
	for _, d := range append([]string{root, fileio.Join(root, "branch")}, branches[1:]...) {
		if _, err := cf.List(ctx, d); err != nil {
			return rep, fmt.Errorf("orphan %s: %w", root, err)
		}
	}
	dataRoot := root
	if p := schema.Options["data-file.path-directory"]; p != "" {
		dataRoot = fileio.Join(root, p)
	}
	// Only candidates are kept, in a spool that moves to disk past
	// spillAfter: the listing of a large table is never held whole.
	rl := newRule(SelectInput{
		Root: root, Cutoff: cutoff,
		DataFilePrefix: schema.Options["data-file.prefix"], ChangelogFilePrefix: schema.Options["changelog-file.prefix"],
	})
	cands := newSpool()
	defer func() {
		if err := cands.close(); err != nil {
			slog.WarnContext(ctx, "orphan: release the spooled candidates", "table", root, "err", err)
		}
	}()
	var emptyDirs []string
	// A directory is listed one entry at a time (a bucket of an
	// unpartitioned bucket = -1 table holds every data file of the table).
	listDir := func(dir string, kind DirKind) error {
		err := cf.ListEach(ctx, dir, func(e fileio.FileInfo) error {
			if e.IsDir {
				return nil
			}
			f := File{Path: e.Path, Name: e.Name, Size: e.Size, ModTime: e.ModTime}
			if !rl.candidate(kind, f) {
				return nil
			}
			return cands.add(f)
		})
		if err != nil {
			return fmt.Errorf("orphan %s: %w", root, err)
		}
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
	bucketDirs, err := listBucketDirs(ctx, cf, dataRoot, len(schema.PartitionKeys), &emptyDirs, cutoff)
	if err != nil {
		return rep, fmt.Errorf("orphan %s: %w", root, err)
	}
	for _, d := range bucketDirs {
		if err := listDir(d, DirBucket); err != nil {
			return rep, err
		}
	}
	if cands.Len() == 0 {
		return rep, nil
	}

	// 2. Collect references, only of candidate names (bounded memory: a
	// bit per candidate hash).
	used := cands.refs()
	reacher := &reach.Reacher{Src: src, Vanish: reach.Vanish{FS: fsys, Grace: o.VanishGrace}, TagChangelogs: true, Mark: used.mark}
	for i, b := range branches {
		roots, err := reach.KeptRoots(ctx, src, b, branchNames[i], 0)
		if err != nil {
			return rep, fmt.Errorf("orphan %s: %w", root, err)
		}
		for _, rt := range roots {
			if _, err := reacher.Walk(ctx, rt); err != nil {
				return rep, fmt.Errorf("orphan %s: %w", root, err)
			}
		}
	}
	slog.DebugContext(ctx, "orphan: references collected", "table", root, "candidates", cands.Len(),
		"spilled", cands.spilled(), "referenced", used.count())

	// 3. Delete what is not referenced, reading the candidates back in
	// listing order: first the report (count, bytes, the sample), then the
	// confinement of every file, and only then the deletions, a batch at a
	// time.
	unreferenced := func(fn func(File) error) error {
		return cands.each(func(f File) error {
			if used.referenced(f.Name) {
				return nil
			}
			return fn(f)
		})
	}
	if err := unreferenced(func(f File) error {
		rep.FileCount++
		rep.Bytes += f.Size
		if len(rep.Files) < SampleLimit {
			rep.Files = append(rep.Files, f)
		}
		return nil
	}); err != nil {
		return rep, fmt.Errorf("orphan %s: %w", root, err)
	}
	// Each file must still resolve to its own place inside the table: a
	// link that appeared since the listing is not followed out of it. All
	// are checked before the first deletion.
	if err := unreferenced(func(f File) error {
		if err := cf.Check(ctx, f.Path); err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return fmt.Errorf("orphan %s: %w", root, err)
		}
		return nil
	}); err != nil {
		return rep, err
	}
	if o.DryRun {
		return rep, nil
	}
	par := o.Parallelism
	if par <= 0 {
		par = 8
	}
	dirs := map[string]bool{}
	for _, d := range emptyDirs {
		dirs[d] = true
	}
	batch := make([]string, 0, min(deleteBatch, rep.FileCount))
	flush := func() error {
		err := fileio.DeleteConcurrently(ctx, fsys, batch, par)
		batch = batch[:0]
		if err != nil {
			return fmt.Errorf("orphan %s: %w", root, err)
		}
		return nil
	}
	if err := unreferenced(func(f File) error {
		if d := fileio.Dir(f.Path); strings.HasPrefix(fileio.Base(d), "bucket-") {
			dirs[d] = true
		}
		batch = append(batch, f.Path)
		if len(batch) < deleteBatch {
			return nil
		}
		return flush()
	}); err != nil {
		return rep, err
	}
	if err := flush(); err != nil {
		return rep, err
	}
	rep.Dirs, err = removeEmptyDirs(ctx, fsys, dataRoot, root, dirs)
	return rep, err
}

type schemaInfo struct {
	PartitionKeys []string          `json:"partitionKeys"`
	Options       map[string]string `json:"options"`
}

func latestSchema(ctx context.Context, fsys fileio.FileIO, branchRoot string) (schemaInfo, error) {
	ids, err := table.ListIDs(ctx, fsys, fileio.Join(branchRoot, "schema"), "schema-")
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

// listBucketDirs descends exactly levels partition directories (names with
// '=') and returns the bucket-* directories beneath. Partition directories
// without buckets and empty bucket directories older than cutoff are added
// to empty.
func listBucketDirs(ctx context.Context, cf *table.Confine, dir string, levels int, empty *[]string, cutoff time.Time) ([]string, error) {
	ents, err := cf.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir {
			continue
		}
		if levels == 0 {
			if strings.HasPrefix(e.Name, "bucket-") {
				out = append(out, e.Path)
				// Only whether it is empty: the caller lists it whole (and
				// refuses links in it) before anything is deleted.
				some, err := hasEntries(ctx, cf, e.Path)
				if err != nil {
					return nil, err
				}
				if !some && e.ModTime.Before(cutoff) {
					*empty = append(*empty, e.Path)
				}
			}
			continue
		}
		if !strings.Contains(e.Name, "=") {
			continue
		}
		sub, err := listBucketDirs(ctx, cf, e.Path, levels-1, empty, cutoff)
		if err != nil {
			return nil, err
		}
		if len(sub) == 0 {
			if kids, err := cf.FS.List(ctx, e.Path); err == nil && len(kids) == 0 && e.ModTime.Before(cutoff) {
				*empty = append(*empty, e.Path)
			}
		}
		out = append(out, sub...)
	}
	return out, nil
}

// errStop ends a listing early.
var errStop = errors.New("stop listing")

// hasEntries reports whether dir has any entry, listing no further than
// the first.
func hasEntries(ctx context.Context, cf *table.Confine, dir string) (bool, error) {
	err := cf.ListEach(ctx, dir, func(fileio.FileInfo) error { return errStop })
	if errors.Is(err, errStop) {
		return true, nil
	}
	return false, err
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
