package expire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/fileio"
)

// RunOptions configure one expiration run.
type RunOptions struct {
	Options
	Now    time.Time
	DryRun bool // plan and report, delete nothing
	// Parallelism bounds concurrent deletions within one phase (default 8).
	Parallelism int
}

// Report says what a run expired and deleted (or, in a dry run, would).
type Report struct {
	DryRun           bool
	Earliest, Latest int64 // before the run
	End              int64 // the new earliest snapshot
	Snapshots        []int64
	Consumers        []string // expired consumer files
	DataFiles        []string // data, extra and changelog file paths
	Manifests        []string // paths
	ManifestLists    []string // paths
	IndexFiles       []string // paths
	IndexManifests   []string // paths
	Statistics       []string // paths
	// ManifestsKept explains why no manifest-level file was deleted, if so.
	ManifestsKept string
	// SkippedDataOf are expired snapshots whose data files were kept because
	// the tag protecting them could not be read.
	SkippedDataOf []int64
}

// Files is the number of files the run deleted (or would delete), snapshot
// and consumer files included.
func (r *Report) Files() int {
	return len(r.Snapshots) + len(r.Consumers) + len(r.DataFiles) + len(r.Manifests) +
		len(r.ManifestLists) + len(r.IndexFiles) + len(r.IndexManifests) + len(r.Statistics)
}

// Run expires the snapshots Select chooses on the main branch of src and
// deletes the files only they referenced.
//
// Order, chosen so that a crash at any point leaves a readable table and a
// rerun converges:
//
//  1. expired consumer files are deleted (as Paimon's committer does first);
//  2. EARLIEST is set to the new earliest snapshot before anything is
//     deleted, so a reader that starts from EARLIEST never walks into the
//     range being dismantled, and a rerun knows the range was condemned;
//  3. data, extra and changelog files of the expired range;
//  4. manifests, then manifest lists, then index files, index manifests and
//     statistics files: a container goes only after what it names, so a
//     rerun still finds everything not yet deleted;
//  5. snapshot files, oldest first;
//  6. EARLIEST again (idempotent).
//
// Nothing the retained snapshots or any tag reference is ever deleted. A
// rerun lists the snapshot directory (it does not trust EARLIEST for the
// lower bound), treats metadata deleted by a crashed run as empty, and
// never retains less than the EARLIEST hint already condemned.
//
// Tables with a decoupled changelog lifecycle are refused.
func Run(ctx context.Context, src Source, o RunOptions) (Report, error) {
	rep := Report{DryRun: o.DryRun}
	if err := o.Options.Validate(); err != nil {
		return rep, err
	}
	if o.ChangelogDecoupled {
		return rep, fmt.Errorf("expire %s: decoupled changelog lifecycle (changelog.* retention above snapshot.*) is not supported", src.Root)
	}
	if o.Now.IsZero() {
		return rep, errors.New("expire: RunOptions.Now is required")
	}
	fs := src.FS
	snapDir := fileio.Join(src.Root, "snapshot")

	ids, err := ListIDs(ctx, fs, snapDir, "snapshot-")
	if err != nil {
		return rep, err
	}
	if len(ids) == 0 {
		return rep, nil
	}
	// Select consults commit times only up to earliest+limit; later
	// snapshots are passed as "young" without reading them. A hint left by
	// a crashed run may lie further; everything below it is needed too.
	window := satAdd(ids[0], int64(o.Limit))
	hint, hintOK := readHint(ctx, fs, fileio.Join(snapDir, "EARLIEST"))
	if hintOK {
		window = max(window, hint)
	}
	snaps := map[int64]Snapshot{}
	in := SelectInput{Options: o.Options, Now: o.Now}
	for _, id := range ids {
		t := int64(math.MaxInt64)
		if id <= window {
			s, err := ReadSnapshotFile(ctx, fs, SnapshotPath(src.Root, id))
			if errors.Is(err, fileio.ErrNotExist) {
				continue // expired concurrently
			}
			if err != nil {
				return rep, err
			}
			if s.ID != id {
				return rep, fmt.Errorf("snapshot file %d holds id %d", id, s.ID)
			}
			snaps[id] = s
			t = s.TimeMillis
		}
		in.Snapshots = append(in.Snapshots, SnapshotTime{ID: id, TimeMillis: t})
	}
	if in.Consumers, err = ReadConsumers(ctx, fs, src.Root); err != nil {
		return rep, err
	}
	sel, err := Select(in)
	if err != nil {
		return rep, fmt.Errorf("expire %s: %w", src.Root, err)
	}
	if hintOK && hint > sel.End {
		// A previous run condemned everything below the hint and may have
		// deleted part of it: finish that work rather than keep a snapshot
		// whose files may be gone.
		if _, exists := snaps[hint]; exists {
			sel.End = hint
			sel.Expire = sel.Expire[:0]
			for _, id := range ids {
				if _, ok := snaps[id]; ok && id < hint {
					sel.Expire = append(sel.Expire, id)
				}
			}
		}
	}
	rep.Earliest, rep.Latest, rep.End = sel.Earliest, sel.Latest, sel.End
	rep.Consumers = sel.ExpiredConsumers

	if !o.DryRun {
		for _, c := range sel.ExpiredConsumers {
			p := fileio.Join(src.Root, "consumer", "consumer-"+c)
			if err := fs.Delete(ctx, p); err != nil {
				return rep, fmt.Errorf("delete expired consumer %s: %w", p, err)
			}
		}
	}
	earliestPath := fileio.Join(snapDir, "EARLIEST")
	if len(sel.Expire) == 0 {
		if !o.DryRun {
			if ok, err := fileio.Exists(ctx, fs, earliestPath); err != nil {
				return rep, err
			} else if !ok {
				if err := writeHint(ctx, fs, earliestPath, sel.End); err != nil {
					return rep, err
				}
			}
		}
		return rep, nil
	}

	var expiring []Snapshot
	for _, id := range sel.Expire {
		if s, ok := snaps[id]; ok {
			expiring = append(expiring, s)
		}
	}
	var end *Snapshot
	if s, ok := snaps[sel.End]; ok {
		end = &s
	} else {
		s, err := ReadSnapshotFile(ctx, fs, SnapshotPath(src.Root, sel.End))
		if err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return rep, err
		}
		if err == nil {
			end = &s
		}
	}
	if end == nil {
		return rep, fmt.Errorf("expire %s: retained snapshot %d vanished during the run", src.Root, sel.End)
	}
	tagList, err := ReadTags(ctx, fs, src.Root)
	if err != nil {
		return rep, err
	}
	tags := make([]Snapshot, len(tagList))
	for i, t := range tagList {
		tags[i] = t.Snapshot
	}
	plan, err := PlanFiles(ctx, src.Meta, expiring, end, tags)
	if err != nil {
		return rep, fmt.Errorf("expire %s: %w", src.Root, err)
	}
	manifestDir := fileio.Join(src.Root, "manifest")
	inDir := func(dir string, names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = fileio.Join(dir, n)
		}
		return out
	}
	rep.DataFiles = plan.DataFiles
	rep.Manifests = inDir(manifestDir, plan.Manifests)
	rep.ManifestLists = inDir(manifestDir, plan.ManifestLists)
	for _, f := range plan.IndexFiles {
		rep.IndexFiles = append(rep.IndexFiles, f.Path)
	}
	rep.IndexManifests = inDir(manifestDir, plan.IndexManifests)
	rep.Statistics = inDir(fileio.Join(src.Root, "statistics"), plan.Statistics)
	if plan.ManifestsKept != nil {
		rep.ManifestsKept = plan.ManifestsKept.Error()
	}
	rep.SkippedDataOf = plan.SkippedDataOf
	for _, s := range expiring {
		rep.Snapshots = append(rep.Snapshots, s.ID)
	}
	if o.DryRun {
		return rep, nil
	}

	if err := writeHint(ctx, fs, earliestPath, sel.End); err != nil {
		return rep, err
	}
	par := o.Parallelism
	if par <= 0 {
		par = 8
	}
	if err := deleteAll(ctx, fs, rep.DataFiles, par); err != nil {
		return rep, fmt.Errorf("expire %s: %w", src.Root, err)
	}
	if o.CleanEmptyDirectories {
		cleanEmptyDirs(ctx, fs, src.Root, rep.DataFiles)
	}
	for _, phase := range [][]string{rep.Manifests, rep.ManifestLists, rep.IndexFiles, rep.IndexManifests, rep.Statistics} {
		if err := deleteAll(ctx, fs, phase, par); err != nil {
			return rep, fmt.Errorf("expire %s: %w", src.Root, err)
		}
	}
	for _, s := range expiring {
		p := SnapshotPath(src.Root, s.ID)
		if err := fs.Delete(ctx, p); err != nil {
			return rep, fmt.Errorf("expire %s: delete %s: %w", src.Root, p, err)
		}
	}
	if err := writeHint(ctx, fs, earliestPath, sel.End); err != nil {
		return rep, err
	}
	return rep, nil
}

func deleteAll(ctx context.Context, fs fileio.FileIO, paths []string, par int) error {
	if len(paths) == 0 {
		return nil
	}
	p := pool.New().WithContext(ctx).WithMaxGoroutines(par).WithCancelOnError().WithFirstError()
	for _, path := range paths {
		p.Go(func(ctx context.Context) error {
			if err := fs.Delete(ctx, path); err != nil {
				return fmt.Errorf("delete %s: %w", path, err)
			}
			return nil
		})
	}
	return p.Wait()
}

// cleanEmptyDirs tries to remove the bucket directories of deleted files and
// then their partition directories bottom-up, never leaving the table root.
// DeleteDir leaves non-empty directories alone; failures are not fatal.
func cleanEmptyDirs(ctx context.Context, fs fileio.FileIO, root string, files []string) {
	root = strings.TrimRight(root, "/")
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[fileio.Dir(f)] = true
	}
	for len(dirs) > 0 {
		next := map[string]bool{}
		for d := range dirs {
			if !strings.HasPrefix(d, root+"/") {
				continue
			}
			name := fileio.Base(d)
			if !strings.HasPrefix(name, "bucket-") && !strings.Contains(name, "=") {
				continue
			}
			if err := fs.DeleteDir(ctx, d); err == nil {
				next[fileio.Dir(d)] = true
			}
		}
		dirs = next
	}
}

func readHint(ctx context.Context, fs fileio.FileIO, path string) (int64, bool) {
	data, err := fileio.ReadFile(ctx, fs, path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// writeHint overwrites a hint file with a decimal id and no newline, as
// Paimon writes it.
func writeHint(ctx context.Context, fs fileio.FileIO, path string, id int64) error {
	if err := fileio.WriteFile(ctx, fs, path, []byte(strconv.FormatInt(id, 10))); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
