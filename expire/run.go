package expire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// RunOptions configure one expiration run.
type RunOptions struct {
	Options
	Now    time.Time
	DryRun bool // plan and report, delete nothing
	// Parallelism bounds concurrent deletions within one phase (default 8).
	Parallelism int
	// VanishGrace is how long to wait, when a snapshot's metadata file is
	// missing, for a concurrent expiration to delete the snapshot too
	// (0: reach.DefaultVanishGrace; negative: do not wait).
	VanishGrace time.Duration
}

// Report says what a run expired and deleted (or, in a dry run, would).
type Report struct {
	DryRun         bool     `json:"dryRun"`
	Earliest       int64    `json:"earliest"` // before the run
	Latest         int64    `json:"latest"`   // before the run
	End            int64    `json:"end"`      // the new earliest snapshot
	Snapshots      []int64  `json:"snapshots"`
	Consumers      []string `json:"consumers"`      // expired consumer files
	DataFiles      []string `json:"dataFiles"`      // data, extra and changelog file paths
	Manifests      []string `json:"manifests"`      // paths
	ManifestLists  []string `json:"manifestLists"`  // paths
	IndexFiles     []string `json:"indexFiles"`     // paths
	IndexManifests []string `json:"indexManifests"` // paths
	Statistics     []string `json:"statistics"`     // paths
	// Protected are files the expired range alone seemed to use but that a
	// retained snapshot, a tag or a branch still reaches (a branch created
	// from a tag that was deleted since, for instance): they are kept.
	Protected []string `json:"protected"`
	// ChangelogsWritten are the ids of the long-lived changelogs written
	// for expired snapshots (decoupled changelog lifecycle only).
	ChangelogsWritten []int64 `json:"changelogsWritten"`
	// Changelog is what changelog expiry did after snapshot expiry
	// (decoupled changelog lifecycle only).
	Changelog ChangelogReport `json:"changelog"`
	// Counts are the full lengths of the lists of paths above. Run returns
	// at most SampleLimit paths in each list (the first, in deletion
	// order), so that a report of a million deleted files stays small.
	Counts Counts `json:"counts"`
}

// SampleLimit bounds each list of paths of the Report Run returns; the
// counts say how many there were.
const SampleLimit = 1000

// Counts are the numbers of paths a Report's lists held before Run bounded
// them to SampleLimit.
type Counts struct {
	DataFiles      int `json:"dataFiles"`
	Manifests      int `json:"manifests"`
	ManifestLists  int `json:"manifestLists"`
	IndexFiles     int `json:"indexFiles"`
	IndexManifests int `json:"indexManifests"`
	Statistics     int `json:"statistics"`
	Protected      int `json:"protected"`
}

// sample records len(*list) in *count and bounds *list to SampleLimit,
// copying the kept part so that the full list can be collected.
func sample(list *[]string, count *int) {
	*count = max(*count, len(*list))
	if len(*list) > SampleLimit {
		*list = slices.Clone((*list)[:SampleLimit])
	}
}

// bound fills Counts and bounds every list of paths.
func (r *Report) bound() {
	c := &r.Counts
	sample(&r.DataFiles, &c.DataFiles)
	sample(&r.Manifests, &c.Manifests)
	sample(&r.ManifestLists, &c.ManifestLists)
	sample(&r.IndexFiles, &c.IndexFiles)
	sample(&r.IndexManifests, &c.IndexManifests)
	sample(&r.Statistics, &c.Statistics)
	sample(&r.Protected, &c.Protected)
}

// count is the full length of a list that may have been bounded.
func count(list []string, n int) int { return max(len(list), n) }

// Files is the number of files the run deleted (or would delete), snapshot,
// consumer and changelog expiry files included.
func (r *Report) Files() int {
	c := r.Counts
	return len(r.Snapshots) + len(r.Consumers) + count(r.DataFiles, c.DataFiles) + count(r.Manifests, c.Manifests) +
		count(r.ManifestLists, c.ManifestLists) + count(r.IndexFiles, c.IndexFiles) +
		count(r.IndexManifests, c.IndexManifests) + count(r.Statistics, c.Statistics) +
		r.Changelog.Files()
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
// Fail closed: before deleting anything (consumer files included), Run
// reads every metadata file reachable from what it keeps — the retained
// snapshots, every tag, every long-lived changelog and every snapshot and
// tag of every branch (branches share manifest/ and the data directories)
// — and checks that each consumer file decodes. A missing file is
// tolerated only for an expiring snapshot below a trusted EARLIEST hint
// (condemned by an earlier run) or a snapshot or tag that disappears
// meanwhile (a concurrent expiration, see RunOptions.VanishGrace); anything
// else missing, unreadable or corrupt returns a *table.DamagedError naming the
// table and the file, and nothing is deleted or written. A planned file
// that anything kept still reaches is kept and reported in Protected.
//
// With a decoupled changelog lifecycle (Options.ChangelogDecoupled), the
// changelog of every expired snapshot is kept: its changelog files,
// changelog manifests and list, and without a changelog producer its
// APPEND data files and data manifests. Before snapshot-<id> is deleted,
// changelog/changelog-<id> is written and the changelog LATEST hint set,
// as Paimon does; then, once snapshot expiry is done, ExpireChangelogs
// runs (as Paimon's committer runs ExpireChangelogImpl after
// ExpireSnapshotsImpl) and its report is Report.Changelog.
func Run(ctx context.Context, src reach.Source, o RunOptions) (Report, error) {
	if err := o.Options.Validate(); err != nil {
		return Report{DryRun: o.DryRun}, err
	}
	if o.Now.IsZero() {
		return Report{DryRun: o.DryRun}, errors.New("expire: RunOptions.Now is required")
	}
	rep, err := expireSnapshots(ctx, src, o)
	rep.bound()
	if err != nil || !o.ChangelogDecoupled {
		return rep, err
	}
	rep.Changelog, err = ExpireChangelogs(ctx, src, o)
	rep.Changelog.bound()
	return rep, err
}

func expireSnapshots(ctx context.Context, src reach.Source, o RunOptions) (Report, error) {
	rep := Report{DryRun: o.DryRun}
	if o.Now.IsZero() {
		return rep, errors.New("expire: RunOptions.Now is required")
	}
	fs := src.FS
	snapDir := fileio.Join(src.Root, "snapshot")

	ids, err := table.ListIDs(ctx, fs, snapDir, "snapshot-")
	if err != nil {
		return rep, table.WithTable(err, src.Root)
	}
	if len(ids) == 0 {
		return rep, nil
	}
	// Select consults commit times only up to earliest+limit; later
	// snapshots are passed as "young" without reading them. A hint left by
	// a crashed run may lie further; everything below it is needed too.
	window := satAdd(ids[0], int64(o.Limit))
	hint, hintOK := table.EarliestHint(ctx, fs, src.Root)
	if hintOK {
		window = max(window, hint)
	}
	in := SelectInput{Options: o.Options, Now: o.Now}
	snaps, times, err := readWindow(ctx, fs, src.Root, ids, window, "snapshot", func(id int64) string { return table.SnapshotPath(src.Root, id) })
	if err != nil {
		return rep, err
	}
	in.Snapshots = times
	if in.Consumers, err = readConsumers(ctx, fs, src.Root); err != nil {
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
	earliestPath := fileio.Join(snapDir, "EARLIEST")
	// With nothing to expire, a missing EARLIEST hint is still written.
	hintIfMissing := func() error {
		ok, err := fileio.Exists(ctx, fs, earliestPath)
		if err != nil || ok {
			return err
		}
		return table.WriteHint(ctx, fs, earliestPath, sel.End)
	}
	if len(sel.Expire) == 0 && len(sel.ExpiredConsumers) == 0 {
		if !o.DryRun {
			if err := hintIfMissing(); err != nil {
				return rep, err
			}
		}
		return rep, nil
	}

	var expiring []table.Snapshot
	for _, id := range sel.Expire {
		if s, ok := snaps[id]; ok {
			expiring = append(expiring, s)
		}
	}
	var end *table.Snapshot
	if s, ok := snaps[sel.End]; ok {
		end = &s
	} else {
		s, err := table.ReadSnapshotFile(ctx, fs, table.SnapshotPath(src.Root, sel.End))
		if err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return rep, table.Damaged(src.Root, table.SnapshotPath(src.Root, sel.End), "", err)
		}
		if err == nil {
			end = s
		}
	}
	if end == nil {
		return rep, fmt.Errorf("expire %s: retained snapshot %d vanished during the run", src.Root, sel.End)
	}
	tagList, err := table.ReadTags(ctx, fs, src.Root)
	if err != nil {
		return rep, table.Damaged(src.Root, fileio.Join(src.Root, "tag"), "", err)
	}
	tags := make([]table.Snapshot, len(tagList))
	for i, t := range tagList {
		tags[i] = t.Snapshot
	}
	vanish := reach.Vanish{FS: fs, Grace: o.VanishGrace}
	condemned := int64(0)
	if _, exists := snaps[hint]; hintOK && exists {
		condemned = hint
	}
	missingOK := func(ctx context.Context, s table.Snapshot) (bool, error) {
		if s.ID < condemned {
			return true, nil
		}
		return vanish.MayBeMissing(ctx, table.SnapshotPath(src.Root, s.ID), src.Root, s.ID)
	}
	lc := Lifecycle{Decoupled: o.ChangelogDecoupled, ProduceChangelog: o.ProduceChangelog}
	plan, err := PlanFilesFor(ctx, src.Meta, lc, expiring, end, tags, missingOK)
	if err != nil {
		return rep, fmt.Errorf("expire %s: %w", src.Root, table.WithTable(err, src.Root))
	}
	defer func() { _ = plan.Close() }()
	if err := protectKept(ctx, src, vanish, sel.End, &plan, &rep); err != nil {
		return rep, err
	}
	manifestDir := fileio.Join(src.Root, "manifest")
	inDir := func(dir string, names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = fileio.Join(dir, n)
		}
		return out
	}
	rep.Manifests = inDir(manifestDir, plan.Manifests)
	rep.ManifestLists = inDir(manifestDir, plan.ManifestLists)
	for _, f := range plan.IndexFiles {
		rep.IndexFiles = append(rep.IndexFiles, f.Path)
	}
	rep.IndexManifests = inDir(manifestDir, plan.IndexManifests)
	rep.Statistics = inDir(fileio.Join(src.Root, "statistics"), plan.Statistics)
	for _, s := range expiring {
		rep.Snapshots = append(rep.Snapshots, s.ID)
		if o.ChangelogDecoupled {
			rep.ChangelogsWritten = append(rep.ChangelogsWritten, s.ID)
		}
	}
	if err := confined(ctx, src, &rep, &plan); err != nil {
		return rep, err
	}
	if o.DryRun {
		return rep, nil
	}

	// Everything was read: from here on, delete.
	for _, c := range sel.ExpiredConsumers {
		p := fileio.Join(src.Root, "consumer", "consumer-"+c)
		if err := fs.Delete(ctx, p); err != nil {
			return rep, fmt.Errorf("delete expired consumer %s: %w", p, err)
		}
	}
	if len(sel.Expire) == 0 {
		return rep, hintIfMissing()
	}
	if err := table.WriteHint(ctx, fs, earliestPath, sel.End); err != nil {
		return rep, err
	}
	par := o.Parallelism
	if par <= 0 {
		par = 8
	}
	dirs, err := deleteDataFiles(ctx, fs, &plan, par)
	if err != nil {
		return rep, fmt.Errorf("expire %s: %w", src.Root, err)
	}
	if o.CleanEmptyDirectories {
		cleanEmptyDirs(ctx, fs, src.Root, dirs)
	}
	for _, phase := range [][]string{rep.Manifests, rep.ManifestLists, rep.IndexFiles, rep.IndexManifests, rep.Statistics} {
		if err := fileio.DeleteConcurrently(ctx, fs, phase, par); err != nil {
			return rep, fmt.Errorf("expire %s: %w", src.Root, err)
		}
	}
	for _, s := range expiring {
		if o.ChangelogDecoupled {
			// The changelog outlives the snapshot: write it (atomically,
			// replacing what a crashed run may have written) before the
			// snapshot file goes, then move the LATEST hint, as Paimon's
			// ExpireSnapshotsImpl does.
			if err := writeChangelog(ctx, fs, src.Root, s); err != nil {
				return rep, fmt.Errorf("expire %s: %w", src.Root, err)
			}
		}
		p := table.SnapshotPath(src.Root, s.ID)
		if err := fs.Delete(ctx, p); err != nil {
			return rep, fmt.Errorf("expire %s: delete %s: %w", src.Root, p, err)
		}
	}
	if err := table.WriteHint(ctx, fs, earliestPath, sel.End); err != nil {
		return rep, err
	}
	return rep, nil
}

// deleteBatch is how many data files a run deletes per round: the paths
// are read back from the plan's list a batch at a time, so memory stays
// flat however many files an expiration deletes.
const deleteBatch = 4096

// deleteDataFiles deletes the planned data files no kept root reaches, in
// batches of deleteBatch, par at once, and returns the directories they
// were in.
func deleteDataFiles(ctx context.Context, fs fileio.FileIO, plan *Plan, par int) (map[string]bool, error) {
	dirs := map[string]bool{}
	batch := make([]string, 0, deleteBatch)
	flush := func() error {
		err := fileio.DeleteConcurrently(ctx, fs, batch, par)
		batch = batch[:0]
		return err
	}
	err := plan.eachDataFile(func(p string) error {
		dirs[fileio.Dir(p)] = true
		batch = append(batch, p)
		if len(batch) == deleteBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return dirs, err
}

// cleanEmptyDirs tries to remove the given bucket directories of deleted
// files and then their partition directories bottom-up, never leaving the
// table root. DeleteDir leaves non-empty directories alone; failures are
// not fatal.
func cleanEmptyDirs(ctx context.Context, fs fileio.FileIO, root string, dirs map[string]bool) {
	root = strings.TrimRight(root, "/")
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

// protectKept reads every metadata file reachable from what the run keeps
// (main's snapshots from end on, its tags and long-lived changelogs, every
// branch's snapshots and tags) and removes from the plan any file one of
// them reaches, reporting it in rep.Protected. Any unreadable file is a
// *table.DamagedError.
func protectKept(ctx context.Context, src reach.Source, vanish reach.Vanish, end int64, plan *Plan, rep *Report) error {
	kept := func(rt reach.Root) bool { return true }
	protected, err := protectRoots(ctx, src, vanish, end, kept, true, plan)
	rep.Protected = append(rep.Protected, protected...)
	return err
}

// protectRoots is protectKept for any run: roots are main's snapshots from
// end on (all when end <= 0) and every tag and long-lived changelog of
// main for which kept is true, and every branch's snapshots, tags and
// changelogs. changelogNeeds is reach.Reacher.ChangelogNeeds. It returns
// the paths it removed from the plan.
func protectRoots(ctx context.Context, src reach.Source, vanish reach.Vanish, end int64, kept func(reach.Root) bool, changelogNeeds bool, plan *Plan) ([]string, error) {
	rep := &Report{}
	// Data files are protected when live in a kept root; manifest-level
	// files, index and statistics files when merely named by one. Planned
	// data names are kept as hashes (a million of them would otherwise
	// double the plan's memory): a collision only makes the walk track a
	// name it need not, and reached holds exact names.
	plannedData, planned := newNameSet(), map[string]bool{}
	if err := plan.DataFiles.Each(func(p string) error {
		plannedData.add(fileio.Base(p))
		return nil
	}); err != nil {
		return nil, err
	}
	for _, names := range [][]string{plan.Manifests, plan.ManifestLists, plan.IndexManifests, plan.Statistics} {
		for _, n := range names {
			planned[n] = true
		}
	}
	for _, f := range plan.IndexFiles {
		planned[f.Name] = true
	}
	reached := map[string]bool{}
	r := &reach.Reacher{Src: src, Vanish: vanish,
		Mark: func(name string) {
			if planned[name] {
				reached[name] = true
			}
		},
		Track:          plannedData.mayContain,
		MarkLive:       func(name string) { reached[name] = true },
		ChangelogNeeds: changelogNeeds,
	}
	all, err := reach.KeptRoots(ctx, src, src.Root, "", end)
	if err != nil {
		return nil, err
	}
	var roots []reach.Root
	for _, rt := range all {
		if kept(rt) {
			roots = append(roots, rt)
		}
	}
	branchRoots, names, err := table.BranchRoots(ctx, src.FS, src.Root)
	if err != nil {
		return nil, table.WithTable(err, src.Root)
	}
	for i, b := range branchRoots {
		more, err := reach.KeptRoots(ctx, src, b, names[i], 0)
		if err != nil {
			return nil, err
		}
		roots = append(roots, more...)
	}
	for _, rt := range roots {
		ok, err := r.Walk(ctx, rt)
		if err != nil {
			return nil, err
		}
		if !ok && rt.BranchRoot == src.Root && end > 0 && rt.ID == end {
			return nil, fmt.Errorf("expire %s: retained snapshot %d vanished during the run", src.Root, end)
		}
	}
	if len(reached) == 0 {
		return nil, nil
	}
	keepNames := func(dir string, names []string) []string {
		out := names[:0:0]
		for _, n := range names {
			if reached[n] {
				rep.Protected = append(rep.Protected, fileio.Join(dir, n))
				continue
			}
			out = append(out, n)
		}
		return out
	}
	md := fileio.Join(src.Root, "manifest")
	plan.keepData = reached
	if err := plan.DataFiles.Each(func(p string) error {
		if reached[fileio.Base(p)] {
			rep.Protected = append(rep.Protected, p)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	plan.Manifests = keepNames(md, plan.Manifests)
	plan.ManifestLists = keepNames(md, plan.ManifestLists)
	plan.IndexManifests = keepNames(md, plan.IndexManifests)
	plan.Statistics = keepNames(fileio.Join(src.Root, "statistics"), plan.Statistics)
	idx := plan.IndexFiles[:0:0]
	for _, f := range plan.IndexFiles {
		if reached[f.Name] {
			rep.Protected = append(rep.Protected, f.Path)
			continue
		}
		idx = append(idx, f)
	}
	plan.IndexFiles = idx
	slog.Warn("expire: files of the expired range are still reached from a kept snapshot, tag, changelog or branch; keeping them",
		"table", src.Root, "files", len(rep.Protected))
	return rep.Protected, nil
}

// confined checks, before the first deletion, that every file the run is
// about to delete under the table root resolves to its own place there: a
// symbolic link inside the table (Paimon never creates one) must not lead a
// deletion out of it. Files outside the root (data-file.external-paths) are
// where the table's metadata puts them and are not checked.
//
// It also fills rep.DataFiles with the first SampleLimit data files to
// delete and Counts.DataFiles with their number, as it reads them.
func confined(ctx context.Context, src reach.Source, rep *Report, plan *Plan) error {
	var snapFiles, consumers []string
	for _, id := range rep.Snapshots {
		snapFiles = append(snapFiles, table.SnapshotPath(src.Root, id))
	}
	for _, id := range rep.ChangelogsWritten {
		snapFiles = append(snapFiles, table.ChangelogFilePath(src.Root, id))
	}
	if len(rep.ChangelogsWritten) > 0 {
		// The directory too: a link there would lead the writes out.
		snapFiles = append(snapFiles, fileio.Join(src.Root, table.ChangelogDir), table.ChangelogHintPath(src.Root, false))
	}
	for _, c := range rep.Consumers {
		consumers = append(consumers, fileio.Join(src.Root, "consumer", "consumer-"+c))
	}
	return confinedPaths(ctx, src, plan, &rep.DataFiles, &rep.Counts.DataFiles, rep.Manifests, rep.ManifestLists, rep.IndexFiles, rep.IndexManifests, rep.Statistics, snapFiles, consumers)
}

// confinedPaths is the check of confined for any lists of paths: files a
// run deletes or (changelog files, hints) writes, and the data files of
// plan, of which it puts the first SampleLimit in *sample and the number
// in *n.
func confinedPaths(ctx context.Context, src reach.Source, plan *Plan, sample *[]string, n *int, lists ...[]string) error {
	cf, err := table.NewConfine(ctx, src.FS, src.Root)
	if err != nil {
		return fmt.Errorf("expire %s: %w", src.Root, err)
	}
	check := func(p string) error {
		if !strings.HasPrefix(p, cf.Root+"/") {
			return nil
		}
		if err := cf.Check(ctx, p); err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return fmt.Errorf("expire %s: %w", src.Root, err)
		}
		return nil
	}
	*sample, *n = nil, 0
	if err := plan.eachDataFile(func(p string) error {
		if *n < SampleLimit {
			*sample = append(*sample, p)
		}
		*n++
		return check(p)
	}); err != nil {
		return err
	}
	for _, paths := range lists {
		for _, p := range paths {
			if err := check(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeChangelog writes changelog/changelog-<id> for snapshot s and sets
// the changelog LATEST hint to its id. Both writes replace atomically.
func writeChangelog(ctx context.Context, fs fileio.FileIO, root string, s table.Snapshot) error {
	data, err := s.AsChangelog().MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode changelog %d: %w", s.ID, err)
	}
	p := table.ChangelogFilePath(root, s.ID)
	if err := fileio.WriteFile(ctx, fs, p, data); err != nil {
		return fmt.Errorf("write changelog %s: %w", p, err)
	}
	return table.WriteHint(ctx, fs, table.ChangelogHintPath(root, false), s.ID)
}

// readConsumers reads every consumer file of the table at root; a file it
// cannot read or decode is damage.
func readConsumers(ctx context.Context, fs fileio.FileIO, root string) ([]table.Consumer, error) {
	consumers, err := table.ReadConsumers(ctx, fs, root)
	if err != nil {
		return nil, table.Damaged(root, fileio.Join(root, "consumer"), "", err)
	}
	out := make([]table.Consumer, 0, len(consumers))
	for _, c := range consumers {
		out = append(out, *c)
	}
	return out, nil
}

// readWindow reads the snapshot (or long-lived changelog: what) files of
// ids up to window, at path(id), and returns them by id with every id's
// commit time (math.MaxInt64 beyond the window: too young to matter). A
// file gone meanwhile was expired concurrently and is left out; one that
// cannot be read or names another id is damage.
func readWindow(ctx context.Context, fs fileio.FileIO, root string, ids []int64, window int64, what string, path func(int64) string) (map[int64]table.Snapshot, []SnapshotTime, error) {
	files := map[int64]table.Snapshot{}
	var times []SnapshotTime
	for _, id := range ids {
		t := int64(math.MaxInt64)
		if id <= window {
			p := path(id)
			s, err := table.ReadSnapshotFile(ctx, fs, p)
			if errors.Is(err, fileio.ErrNotExist) {
				continue // expired concurrently
			}
			if err != nil {
				return nil, nil, table.Damaged(root, p, "", err)
			}
			if s.ID != id {
				return nil, nil, table.Damaged(root, p, "", fmt.Errorf("%s file %d holds id %d: %w", what, id, s.ID, table.ErrCorrupt))
			}
			files[id] = *s
			t = s.TimeMillis
		}
		times = append(times, SnapshotTime{ID: id, TimeMillis: t})
	}
	return files, times, nil
}
