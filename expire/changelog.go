package expire

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// ChangelogReport says what changelog expiry expired and deleted (or, in a
// dry run, would).
type ChangelogReport struct {
	// Earliest and Latest are the long-lived changelog ids before the run
	// (0 when there is none); End is the new earliest one.
	Earliest      int64    `json:"earliest"`
	Latest        int64    `json:"latest"`
	End           int64    `json:"end"`
	Changelogs    []int64  `json:"changelogs"`    // expired changelog-<id> files
	DataFiles     []string `json:"dataFiles"`     // changelog files, or (no producer) APPEND data files, with extra files
	Manifests     []string `json:"manifests"`     // paths
	ManifestLists []string `json:"manifestLists"` // paths
	// Protected are planned files something kept still reaches; they stay.
	Protected []string `json:"protected"`
	// Counts are the full lengths of the lists of paths above, which Run
	// bounds to SampleLimit as it does Report's.
	Counts ChangelogCounts `json:"counts"`
}

// ChangelogCounts are the numbers of paths a ChangelogReport's lists held
// before Run bounded them.
type ChangelogCounts struct {
	DataFiles     int `json:"dataFiles"`
	Manifests     int `json:"manifests"`
	ManifestLists int `json:"manifestLists"`
	Protected     int `json:"protected"`
}

// bound fills Counts and bounds every list of paths.
func (r *ChangelogReport) bound() {
	c := &r.Counts
	sample(&r.DataFiles, &c.DataFiles)
	sample(&r.Manifests, &c.Manifests)
	sample(&r.ManifestLists, &c.ManifestLists)
	sample(&r.Protected, &c.Protected)
}

// Files is the number of files the run deleted (or would delete),
// changelog-<id> files included.
func (r *ChangelogReport) Files() int {
	c := r.Counts
	return len(r.Changelogs) + count(r.DataFiles, c.DataFiles) + count(r.Manifests, c.Manifests) + count(r.ManifestLists, c.ManifestLists)
}

// ChangelogSelectInput is everything SelectChangelogs decides on.
type ChangelogSelectInput struct {
	// Changelogs are the long-lived changelog files that exist, any order.
	// TimeMillis may be math.MaxInt64 for ids the window cannot reach.
	Changelogs []SnapshotTime
	// LatestSnapshot is the latest snapshot id; 0 when the table has none
	// (then nothing expires).
	LatestSnapshot int64
	Consumers      []table.Consumer
	Options        Options
	Now            time.Time
}

// ChangelogSelection is SelectChangelogs' decision.
type ChangelogSelection struct {
	Earliest, Latest int64 // smallest and largest long-lived changelog id (0: none)
	// End is the first retained long-lived changelog, the new changelog
	// EARLIEST; it names an existing changelog when there is one.
	End int64
	// Expire lists the existing changelog ids in [Earliest, End), ascending.
	Expire []int64
	// BelowEarliest: the window ends below the earliest changelog (a
	// consumer or changelog.num-retained.min keeps more than there is).
	// Nothing expires; Paimon 1.4 then fails reading that changelog and
	// leaves the EARLIEST hint alone, and so does ExpireChangelogs.
	BelowEarliest bool
}

// SelectChangelogs decides which long-lived changelogs expire, as
// ExpireChangelogImpl.expire does. The window is counted in snapshot ids
// from the latest snapshot, with the changelog retention:
//
//   - everything below latestSnapshot-changelogMax+1 must go;
//   - ids from latestSnapshot-changelogMin+1 on stay;
//   - no changelog at or after a consumer's nextSnapshot goes, whatever
//     consumer.changelog-only says (consumers expired by
//     consumer.expiration-time do not count);
//   - at most Limit (snapshot.expire.limit) past the earliest go per run;
//   - the latest long-lived changelog always stays;
//   - the first changelog in the window younger than changelog.time-retained
//     stays, and with it everything after it.
//
// As in Select, when Java's end falls into a gap of the ids (Java would
// fail reading that changelog), End is lowered onto the nearest existing
// changelog below it.
func SelectChangelogs(in ChangelogSelectInput) (ChangelogSelection, error) {
	o := in.Options
	var sel ChangelogSelection
	if o.ChangelogRetainMax < o.ChangelogRetainMin {
		return sel, fmt.Errorf("changelog retainMax (%d) must not be less than retainMin (%d)", o.ChangelogRetainMax, o.ChangelogRetainMin)
	}
	if len(in.Changelogs) == 0 {
		return sel, nil
	}
	byID, ids, err := byID("changelog", in.Changelogs)
	if err != nil {
		return ChangelogSelection{}, err
	}
	earliest, latest := ids[0], ids[len(ids)-1]
	sel.Earliest, sel.Latest, sel.End = earliest, latest, earliest
	if in.LatestSnapshot <= 0 {
		return sel, nil
	}
	minConsumer := int64(math.MaxInt64)
	for _, c := range in.Consumers {
		if o.ConsumerExpiration > 0 && c.ModTime.Before(in.Now.Add(-o.ConsumerExpiration)) {
			continue // expired: deleted by snapshot expiry before this runs
		}
		minConsumer = min(minConsumer, c.NextSnapshot)
	}
	minID := max(in.LatestSnapshot-int64(o.ChangelogRetainMax)+1, earliest)
	maxExclusive := in.LatestSnapshot - int64(o.ChangelogRetainMin) + 1
	maxExclusive = min(maxExclusive, minConsumer)
	maxExclusive = min(maxExclusive, satAdd(earliest, int64(o.Limit)))
	maxExclusive = min(maxExclusive, latest)

	olderThan := in.Now.UnixMilli() - o.ChangelogTimeRetained.Milliseconds()
	end := maxExclusive
	for id := minID; id <= maxExclusive; id++ {
		if t, ok := byID[id]; ok && olderThan <= t {
			end = id
			break
		}
	}
	if end <= earliest {
		sel.BelowEarliest = end < earliest
		return sel, nil
	}
	i, found := slices.BinarySearch(ids, end)
	if !found {
		i--
		end = ids[i]
	}
	sel.End = end
	sel.Expire = slices.Clone(ids[:i])
	return sel, nil
}

// PlanChangelogs decides which files expiring long-lived changelogs take
// with them, following ExpireChangelogImpl.expireUntil and
// ChangelogDeletion:
//
//   - a changelog with a changelog manifest list: every file its changelog
//     manifests add, those manifests and the list;
//   - one without (changelog-producer none: the changelog is the APPEND
//     files): the data files its delta removes (as snapshot expiry plans
//     them: an upgraded file stays, and so does a file the nearest tag
//     before the changelog holds), and its delta and base manifest lists
//     with their manifests;
//   - never a manifest or list that end (the first retained changelog),
//     earliest (the earliest snapshot) or a tag from the nearest one at or
//     before the range up to the last one before end uses.
//
// Index and statistics files are left to snapshot expiry, as in Java.
//
// Stricter than Java, which skips what it cannot read and deletes on: the
// tags' and the earliest snapshot's metadata must be readable, and so must
// everything the expiring changelogs name, except what missingOK excuses
// (a condemned or vanishing changelog) and, with a changelog producer, the
// data manifest lists that Paimon's snapshot expiry deleted before writing
// the changelog (end's too). Anything else aborts the plan with a
// *table.DamagedError.
func PlanChangelogs(ctx context.Context, md reach.Metadata, produceChangelog bool, expiring []table.Snapshot, end, earliest table.Snapshot, tags []table.Snapshot, missingOK MissingOK) (Plan, error) {
	p, err := planChangelogs(ctx, md, produceChangelog, expiring, end, earliest, tags, missingOK)
	if err != nil {
		_ = p.Close()
		return Plan{}, err
	}
	// Planning is over: the deduplicating hashes are not needed any more.
	p.DataFiles.Seal()
	return p, nil
}

func planChangelogs(ctx context.Context, md reach.Metadata, produceChangelog bool, expiring []table.Snapshot, end, earliest table.Snapshot, tags []table.Snapshot, missingOK MissingOK) (Plan, error) {
	p := Plan{DataFiles: NewPathList()}
	if len(expiring) == 0 {
		return p, nil
	}
	goneCache := map[int64]bool{}
	excused := func(c table.Snapshot, err error) (bool, error) {
		if !isMissing(err) || missingOK == nil {
			return false, nil
		}
		ok, known := goneCache[c.ID]
		if !known {
			var merr error
			if ok, merr = missingOK(ctx, c); merr != nil {
				return false, merr
			}
			goneCache[c.ID] = ok
		}
		return ok, nil
	}
	// tolerate: nil when err is nil or excused, else a *table.DamagedError.
	tolerate := func(c table.Snapshot, file string, err error) error {
		if err == nil {
			return nil
		}
		ok, merr := excused(c, err)
		if merr != nil {
			return merr
		}
		if ok {
			return nil
		}
		return table.Damaged("", file, fmt.Sprintf("changelog %d", c.ID), err)
	}
	tags = slices.Clone(tags)
	slices.SortStableFunc(tags, func(a, b table.Snapshot) int { return compareInt(a.ID, b.ID) })
	begin := expiring[0].ID

	skip := map[string]bool{}
	for _, t := range skippingTags(tags, begin, end.ID) {
		if err := addManifestSkips(ctx, md, t, skip); err != nil {
			return p, table.Damaged("", failedFile(err), fmt.Sprintf("the tag of snapshot %d", t.ID), err)
		}
	}
	if err := addManifestSkips(ctx, md, earliest, skip); err != nil {
		return p, table.Damaged("", failedFile(err), fmt.Sprintf("snapshot %d", earliest.ID), err)
	}
	// The first retained changelog: its data manifest lists are gone when
	// the table has a changelog producer (snapshot expiry deleted them), its
	// index manifest always may be.
	for _, l := range []string{end.BaseManifestList, end.DeltaManifestList} {
		manifests, err := md.ManifestList(ctx, l)
		if err != nil {
			if isMissing(err) && (produceChangelog || end.ChangelogManifestList != nil) {
				continue
			}
			return p, table.Damaged("", l, fmt.Sprintf("changelog %d", end.ID), err)
		}
		skip[l] = true
		for _, m := range manifests {
			skip[m] = true
		}
	}

	planList := func(l string, manifests []string) {
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
	var tagLive *liveSet
	tagLiveID := int64(-1)
	for _, c := range expiring {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		if cl := reach.Opt(c.ChangelogManifestList); cl != "" {
			manifests, err := md.ManifestList(ctx, cl)
			if err != nil {
				if err := tolerate(c, cl, err); err != nil {
					return p, err
				}
				continue // condemned and already gone
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
				if err := tolerate(c, m, err); err != nil {
					return p, err
				}
			}
			planList(cl, manifests)
			continue
		}
		// No changelog manifest list: with changelog-producer none the
		// changelog is the delta's APPEND files. With a producer, snapshot
		// expiry deleted the data manifest lists already (a snapshot that
		// produced no changelog): whatever is left of them goes.
		dataListMissing := func(file string, err error) error {
			if isMissing(err) && produceChangelog {
				return nil
			}
			return tolerate(c, file, err)
		}
		var skipLive *liveSet
		if ti := lastBefore(tags, c.ID); ti >= 0 {
			if tags[ti].ID != tagLiveID {
				var err error
				if tagLive, err = readLiveSet(ctx, md, tags[ti]); err != nil {
					return p, table.Damaged("", failedFile(err), fmt.Sprintf("the tag of snapshot %d", tags[ti].ID), err)
				}
				tagLiveID = tags[ti].ID
			}
			skipLive = tagLive
		}
		deleted, err := deletedInDelta(ctx, md, c.DeltaManifestList, dataListMissing)
		if err != nil {
			return p, err
		}
		for _, e := range deleted {
			if skipLive != nil && skipLive.contains(e) {
				continue
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
		for _, l := range []string{c.DeltaManifestList, c.BaseManifestList} {
			manifests, err := md.ManifestList(ctx, l)
			if err != nil {
				if err := dataListMissing(l, err); err != nil {
					return p, err
				}
				continue
			}
			planList(l, manifests)
		}
	}
	return p, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ExpireChangelogs expires the long-lived changelogs of the main branch of
// src that SelectChangelogs chooses and deletes the files PlanChangelogs
// plans. Run calls it after snapshot expiry on tables whose changelog
// lifecycle is decoupled; it does nothing on others.
//
// Order, chosen so that a crash at any point leaves a readable table and a
// rerun converges: the changelog EARLIEST hint is set to End first (a
// reader starting from it never walks into the range being dismantled, and
// a rerun knows the range below it is condemned and may have lost files);
// then data files, manifests, manifest lists, the changelog-<id> files
// oldest first, and the hint again.
//
// Fail closed: everything the plan and every kept root (all snapshots, tags
// and retained changelogs of main, everything of every branch) reach is
// read first; anything missing that neither a condemned range nor a
// concurrent expiration explains, unreadable or corrupt is a
// *table.DamagedError naming the table and file, and nothing is written or
// deleted. Planned files a kept root still reaches are kept (Protected).
// In a dry run the decision is made on the table as it is (the changelogs
// snapshot expiry would write are not there yet).
func ExpireChangelogs(ctx context.Context, src reach.Source, o RunOptions) (ChangelogReport, error) {
	var rep ChangelogReport
	if !o.ChangelogDecoupled {
		return rep, nil
	}
	if err := o.Options.Validate(); err != nil {
		return rep, err
	}
	fs := src.FS
	snapIDs, err := table.ListIDs(ctx, fs, fileio.Join(src.Root, table.SnapshotDir), "snapshot-")
	if err != nil {
		return rep, table.WithTable(err, src.Root)
	}
	clDir := fileio.Join(src.Root, table.ChangelogDir)
	ids, err := table.ListIDs(ctx, fs, clDir, table.ChangelogPrefix)
	if err != nil {
		return rep, table.WithTable(err, src.Root)
	}
	if len(snapIDs) == 0 || len(ids) == 0 {
		return rep, nil
	}
	earliestPath := table.ChangelogHintPath(src.Root, true)
	hint, hintOK := table.TrustedChangelogEarliest(ctx, fs, src.Root)
	window := satAdd(ids[0], int64(o.Limit))
	if hintOK {
		window = max(window, hint)
	}
	in := ChangelogSelectInput{Options: o.Options, Now: o.Now, LatestSnapshot: snapIDs[len(snapIDs)-1]}
	changelogs, times, err := readWindow(ctx, fs, src.Root, ids, window, "changelog", func(id int64) string { return table.ChangelogFilePath(src.Root, id) })
	if err != nil {
		return rep, err
	}
	in.Changelogs = times
	if in.Consumers, err = readConsumers(ctx, fs, src.Root); err != nil {
		return rep, err
	}
	sel, err := SelectChangelogs(in)
	if err != nil {
		return rep, fmt.Errorf("expire changelogs of %s: %w", src.Root, err)
	}
	if hintOK && hint > sel.End {
		// A previous run condemned everything below the hint: finish it.
		sel.End = hint
		sel.Expire = sel.Expire[:0]
		for _, id := range ids {
			if _, ok := changelogs[id]; ok && id < hint {
				sel.Expire = append(sel.Expire, id)
			}
		}
	}
	rep.Earliest, rep.Latest, rep.End = sel.Earliest, sel.Latest, sel.End
	if len(sel.Expire) == 0 {
		if o.DryRun || sel.BelowEarliest {
			return rep, nil
		}
		// Java's expireUntil writes the hint even when nothing expires.
		return rep, table.WriteHint(ctx, fs, earliestPath, sel.End)
	}
	var expiring []table.Snapshot
	for _, id := range sel.Expire {
		expiring = append(expiring, changelogs[id])
	}
	end, ok := changelogs[sel.End]
	if !ok {
		p := table.ChangelogFilePath(src.Root, sel.End)
		c, err := table.ReadSnapshotFile(ctx, fs, p)
		if err != nil {
			return rep, table.Damaged(src.Root, p, "the first retained changelog", err)
		}
		end = *c
	}
	earliestSnap, err := table.ReadSnapshotFile(ctx, fs, table.SnapshotPath(src.Root, snapIDs[0]))
	if err != nil {
		return rep, table.Damaged(src.Root, table.SnapshotPath(src.Root, snapIDs[0]), "the earliest snapshot", err)
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
	if hintOK {
		condemned = hint
	}
	missingOK := func(ctx context.Context, c table.Snapshot) (bool, error) {
		// Below the hint: condemned by a crashed compactd run. The earliest
		// changelog: Paimon's changelog expiry dismantles one changelog at a
		// time from the earliest and writes the hint only at the end, so a
		// crash of it leaves the earliest one partly deleted.
		if c.ID < condemned || c.ID == ids[0] {
			return true, nil
		}
		return vanish.MayBeMissing(ctx, table.ChangelogFilePath(src.Root, c.ID), src.Root, -1)
	}
	plan, err := PlanChangelogs(ctx, src.Meta, o.ProduceChangelog, expiring, end, *earliestSnap, tags, missingOK)
	if err != nil {
		return rep, fmt.Errorf("expire changelogs of %s: %w", src.Root, table.WithTable(err, src.Root))
	}
	defer func() { _ = plan.Close() }()
	kept := func(rt reach.Root) bool { return !rt.Changelog || rt.ChangelogID >= sel.End }
	protected, err := protectRoots(ctx, src, vanish, 0, kept, false, &plan)
	if err != nil {
		return rep, err
	}
	rep.Protected = protected
	manifestDir := fileio.Join(src.Root, "manifest")
	for _, n := range plan.Manifests {
		rep.Manifests = append(rep.Manifests, fileio.Join(manifestDir, n))
	}
	for _, n := range plan.ManifestLists {
		rep.ManifestLists = append(rep.ManifestLists, fileio.Join(manifestDir, n))
	}
	rep.Changelogs = slices.Clone(sel.Expire)
	if err := confinedPaths(ctx, src, &plan, &rep.DataFiles, &rep.Counts.DataFiles, rep.Manifests, rep.ManifestLists, changelogPaths(src.Root, rep.Changelogs), []string{earliestPath}); err != nil {
		return rep, err
	}
	if o.DryRun {
		return rep, nil
	}

	// Everything was read: from here on, write the hint and delete.
	if err := table.WriteHint(ctx, fs, earliestPath, sel.End); err != nil {
		return rep, err
	}
	par := o.Parallelism
	if par <= 0 {
		par = 8
	}
	dirs, err := deleteDataFiles(ctx, fs, &plan, par)
	if err != nil {
		return rep, fmt.Errorf("expire changelogs of %s: %w", src.Root, err)
	}
	for _, phase := range [][]string{rep.Manifests, rep.ManifestLists} {
		if err := fileio.DeleteConcurrently(ctx, fs, phase, par); err != nil {
			return rep, fmt.Errorf("expire changelogs of %s: %w", src.Root, err)
		}
	}
	if o.CleanEmptyDirectories {
		cleanEmptyDirs(ctx, fs, src.Root, dirs)
	}
	for _, p := range changelogPaths(src.Root, rep.Changelogs) {
		if err := fs.Delete(ctx, p); err != nil {
			return rep, fmt.Errorf("expire changelogs of %s: delete %s: %w", src.Root, p, err)
		}
	}
	return rep, table.WriteHint(ctx, fs, earliestPath, sel.End)
}

func changelogPaths(root string, ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = table.ChangelogFilePath(root, id)
	}
	return out
}
