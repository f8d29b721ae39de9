// Package doctor is the troubleshooting recipe Paimon operators follow, as
// one report: is there a valid snapshot and do the hints agree, do the
// files the latest snapshot needs exist, are level-0 files piling up
// towards the writers' stall, how small are the files, when did compaction
// last run, which consumers and tags hold snapshots back, how many orphan
// files wait, would compactd refuse the table, does the store make commits
// safe. Every finding says what to do.
//
// It only reads, with one exception: on S3 the conditional-write check
// puts and deletes one probe object in the table directory (not in a table
// compactd does not write, such as one whose manifest codec it has no
// encoder for).
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/human"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// Severities of findings, from harmless to urgent.
const (
	OK    = "ok"
	Info  = "info"
	Warn  = "warn"
	Error = "error"
)

// Finding is one observation about the table.
type Finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	// Subject narrows it down: a partition and bucket, a consumer, a tag.
	Subject string `json:"subject,omitempty"`
	Message string `json:"message"`
	// Action says what to do about it ("" when nothing is needed).
	Action string `json:"action,omitempty"`
}

// Report is the doctor's answer for one table.
type Report struct {
	Table    string    `json:"table"`
	Path     string    `json:"path"`
	Snapshot int64     `json:"snapshot"`
	Findings []Finding `json:"findings"`
}

// Worst is the most severe finding's severity (OK for none).
func (r *Report) Worst() string {
	rank := map[string]int{OK: 0, Info: 1, Warn: 2, Error: 3}
	worst := OK
	for _, f := range r.Findings {
		if rank[f.Severity] > rank[worst] {
			worst = f.Severity
		}
	}
	return worst
}

// Options tune the checks.
type Options struct {
	// Now is the clock (tests); zero means time.Now().
	Now time.Time
	// OrphanOlderThan is the age from which an unreferenced file counts as
	// an orphan orphan cleanup would delete (default orphan.DefaultOlderThan).
	OrphanOlderThan time.Duration
	// SkipOrphans leaves out the orphan scan (it reads every retained
	// snapshot's metadata).
	SkipOrphans bool
}

// Run examines t. An error means the doctor itself could not run (the
// table could not be opened or listed); what is wrong with the table is in
// the findings.
func Run(ctx context.Context, t *table.Table, o Options) (*Report, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.OrphanOlderThan <= 0 {
		o.OrphanOlderThan = orphan.DefaultOlderThan
	}
	r := &Report{Table: t.FullName(), Path: t.Path()}
	add := func(f Finding) { r.Findings = append(r.Findings, f) }

	if err := compact.Supported(t, nil); err != nil {
		add(Finding{Check: "options", Severity: Warn, Message: "compactd refuses to compact this table: " + err.Error(),
			Action: "leave its compaction to Paimon's own job, or change the option named"})
	} else {
		add(Finding{Check: "options", Severity: OK, Message: "compactd understands every option that changes compaction"})
	}

	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", t.FullName(), err)
	}
	if len(ids) == 0 {
		add(Finding{Check: "snapshot", Severity: Info, Message: "no snapshot yet: nothing was committed", Action: "nothing to do until a writer commits"})
		return r, nil
	}
	latest, err := t.Snapshot(ctx, ids[len(ids)-1])
	if err != nil {
		add(Finding{Check: "snapshot", Severity: Error, Subject: fmt.Sprintf("snapshot %d", ids[len(ids)-1]),
			Message: "the newest snapshot file cannot be read: " + err.Error(),
			Action:  "restore the file from a backup or roll back to the previous snapshot (compactd rollback --to-snapshot); do not compact or expire until then"})
		return r, nil
	}
	r.Snapshot = latest.ID
	add(Finding{Check: "snapshot", Severity: OK, Message: fmt.Sprintf("%d snapshots, %d to %d; the latest is %s from %s",
		len(ids), ids[0], ids[len(ids)-1], latest.CommitKind, human.Relative(time.UnixMilli(latest.TimeMillis), o.Now))})
	checkHints(ctx, t, ids, add)

	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		add(Finding{Check: "files", Severity: Error, Subject: fmt.Sprintf("snapshot %d", latest.ID),
			Message: "the latest snapshot's manifests cannot be read: " + err.Error(),
			Action:  "restore the missing manifest or roll back to a snapshot whose manifests are whole; compactd will not compact or expire this table"})
		return r, nil
	}
	checkFiles(ctx, t, fs, add)
	popts, err := compact.PlannerOptions(t, compact.Options{})
	if err == nil {
		checkRuns(fs, popts.NumSortedRunCompactionTrigger, popts.NumSortedRunStopTrigger, popts.NumLevels, add)
		checkFullyCompacted(fs, popts.NumLevels, add)
		checkSmallFiles(fs, popts.TargetFileSize, add)
	}
	if pp := compact.PostponedOf(fs, ""); pp.Files > 0 {
		add(Finding{Check: "postponed", Severity: Warn, Message: fmt.Sprintf("%d rows in %d files wait in bucket-postpone, invisible to batch readers", pp.Rows, pp.Files),
			Action: "compact the table (compactd compact) to assign them to buckets"})
	}
	checkCompactions(ctx, t, ids, o.Now, add)
	checkConsumers(ctx, t, ids, add)
	checkTags(ctx, t, o.Now, add)
	if !o.SkipOrphans {
		checkOrphans(ctx, t, o, add)
	}
	checkConditionalWrites(ctx, t, add)
	return r, nil
}

func checkHints(ctx context.Context, t *table.Table, ids []int64, add func(Finding)) {
	first, last := ids[0], ids[len(ids)-1]
	for _, h := range []struct {
		name string
		read func(context.Context) (int64, bool, error)
		want int64
	}{{"LATEST", t.ReadLatestHint, last}, {"EARLIEST", t.ReadEarliestHint, first}} {
		id, ok, err := h.read(ctx)
		switch {
		case err != nil:
			add(Finding{Check: "hints", Severity: Warn, Subject: h.name, Message: "the hint cannot be read: " + err.Error(),
				Action: "readers fall back to listing snapshot/; check the store's permissions"})
		case !ok:
			add(Finding{Check: "hints", Severity: Info, Subject: h.name, Message: "no hint: readers list snapshot/ instead",
				Action: "none needed; the next commit (or expiration) writes it"})
		case id != h.want:
			add(Finding{Check: "hints", Severity: Info, Subject: h.name, Message: fmt.Sprintf("the hint says %d, the snapshot files say %d", id, h.want),
				Action: "none needed (readers check the hint against the files); it is rewritten at the next commit or expiration"})
		}
	}
}

// checkFiles lists each directory the latest snapshot's data files live in
// once, and reports the files that are not there.
func checkFiles(ctx context.Context, t *table.Table, fs *table.FileSet, add func(Finding)) {
	byDir := map[string][]string{}
	n := 0
	for _, b := range fs.Buckets() {
		for i := range b.Files {
			p, err := t.DataFilePath(&b.Files[i])
			if err != nil {
				add(Finding{Check: "files", Severity: Error, Subject: b.Files[i].File.FileName, Message: err.Error(),
					Action: "the manifest names a file outside the table; investigate before anything deletes files"})
				continue
			}
			byDir[fileio.Dir(p)] = append(byDir[fileio.Dir(p)], p)
			n++
		}
	}
	var missing []string
	for dir, paths := range byDir {
		infos, err := t.FileIO().List(ctx, dir)
		if err != nil {
			add(Finding{Check: "files", Severity: Error, Subject: dir, Message: "cannot list: " + err.Error(), Action: "check the store's permissions"})
			continue
		}
		have := make(map[string]bool, len(infos))
		for _, fi := range infos {
			have[fi.Path] = true
			have[fileio.Join(dir, fi.Name)] = true
		}
		for _, p := range paths {
			if !have[p] {
				missing = append(missing, p)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		add(Finding{Check: "files", Severity: Error, Message: fmt.Sprintf("%d of the %d data files the latest snapshot needs are missing, e.g. %s", len(missing), n, strings.Join(head(missing, 3), ", ")),
			Action: "readers of these buckets fail: restore the files from a backup or roll back (compactd rollback) to a snapshot that does not need them; compactd refuses to compact them"})
		return
	}
	add(Finding{Check: "files", Severity: OK, Message: fmt.Sprintf("all %d data files of the latest snapshot exist", n)})
}

// checkRuns compares each bucket's sorted runs with the triggers: Java's
// writers that compact stall at the stop trigger; write-only writers do not
// stall but readers merge every run.
func checkRuns(fs *table.FileSet, trigger, stop, numLevels int, add func(Finding)) {
	worst, over := 0, 0
	for _, p := range fs.Partitions {
		for _, b := range p.Buckets {
			if b.Bucket == table.BucketPostpone {
				continue
			}
			runs := sortedRuns(b)
			worst = max(worst, runs)
			subject := bucketName(p.Path, b.Bucket)
			switch {
			case stop > 0 && runs >= stop:
				add(Finding{Check: "sorted-runs", Severity: Error, Subject: subject,
					Message: fmt.Sprintf("%d sorted runs, at num-sorted-run.stop-trigger %d: writers that compact stall here, readers merge %d runs", runs, stop, runs),
					Action:  "compact now (compactd compact), and compact this table more often (the daemon's compact.schedule)"})
				over++
			case trigger > 0 && runs > trigger:
				over++
			}
		}
	}
	switch {
	case over > 0:
		add(Finding{Check: "sorted-runs", Severity: Warn, Message: fmt.Sprintf("%d buckets have more than num-sorted-run.compaction-trigger %d sorted runs (the most: %d)", over, trigger, worst),
			Action: "compact the table (compactd compact); the daemon does it on schedule"})
	default:
		add(Finding{Check: "sorted-runs", Severity: OK, Message: fmt.Sprintf("no bucket is over num-sorted-run.compaction-trigger %d (the most sorted runs: %d)", trigger, worst)})
	}
}

// checkFullyCompacted says how many buckets a full compaction left as one
// sorted run at the top level and nothing else (snapshots do not record
// which COMPACT was a full one; the layout does).
func checkFullyCompacted(fs *table.FileSet, numLevels int, add func(Finding)) {
	full, total := 0, 0
	for _, b := range fs.Buckets() {
		if b.Bucket == table.BucketPostpone || len(b.Files) == 0 {
			continue
		}
		total++
		top := true
		for i := range b.Files {
			if int(b.Files[i].File.Level) != numLevels-1 {
				top = false
				break
			}
		}
		if top {
			full++
		}
	}
	if total > 0 {
		add(Finding{Check: "full-compaction", Severity: Info, Message: fmt.Sprintf("%d of %d buckets are fully compacted (all their files at the top level %d)", full, total, numLevels-1)})
	}
}

func sortedRuns(b *table.BucketFiles) int {
	level0 := 0
	levels := map[int32]bool{}
	for i := range b.Files {
		if l := b.Files[i].File.Level; l == 0 {
			level0++
		} else {
			levels[l] = true
		}
	}
	return level0 + len(levels)
}

// checkSmallFiles reports per partition the files under a tenth of
// target-file-size and the size distribution.
func checkSmallFiles(fs *table.FileSet, target int64, add func(Finding)) {
	if target <= 0 {
		return
	}
	small := target / 10
	for _, p := range fs.Partitions {
		var sizes []int64
		for _, b := range p.Buckets {
			for i := range b.Files {
				sizes = append(sizes, b.Files[i].File.FileSize)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		slices.Sort(sizes)
		n := 0
		for _, s := range sizes {
			if s < small {
				n++
			}
		}
		name := p.Path
		if name == "" {
			name = "(unpartitioned)"
		}
		msg := fmt.Sprintf("%d files, %d under %s; sizes p50 %s, p90 %s, max %s", len(sizes), n, human.Bytes(small),
			human.Bytes(sizes[len(sizes)/2]), human.Bytes(sizes[len(sizes)*9/10]), human.Bytes(sizes[len(sizes)-1]))
		if n >= 50 && n*2 >= len(sizes) {
			add(Finding{Check: "small-files", Severity: Warn, Subject: name, Message: msg,
				Action: fmt.Sprintf("a full compaction merges them (compactd compact --full --partition %s)", strings.ReplaceAll(p.Path, "/", ","))})
		} else {
			add(Finding{Check: "small-files", Severity: Info, Subject: name, Message: msg})
		}
	}
}

// compactionLookBack bounds how many of the newest snapshots
// checkCompactions reads (one request each on an object store).
const compactionLookBack = 500

// checkCompactions finds the newest COMPACT snapshot among the latest
// compactionLookBack retained ones; a snapshot it cannot read is a finding
// of its own, not skipped.
func checkCompactions(ctx context.Context, t *table.Table, ids []int64, now time.Time, add func(Finding)) {
	looked := 0
	for i := len(ids) - 1; i >= 0 && looked < compactionLookBack; i-- {
		looked++
		s, err := t.Snapshot(ctx, ids[i])
		if err != nil {
			add(Finding{Check: "compaction", Severity: Error, Subject: fmt.Sprintf("snapshot %d", ids[i]), Message: "cannot read the snapshot: " + err.Error(),
				Action: "restore it or roll back past it; compactd's expiration stops on it too"})
			return
		}
		if s.CommitKind == table.CommitCompact {
			add(Finding{Check: "compaction", Severity: Info, Message: fmt.Sprintf("the last COMPACT snapshot is %d, %s (%d snapshots since)",
				s.ID, human.Relative(time.UnixMilli(s.TimeMillis), now), ids[len(ids)-1]-s.ID)})
			return
		}
	}
	add(Finding{Check: "compaction", Severity: Warn, Message: fmt.Sprintf("none of the latest %d retained snapshots is a COMPACT: nothing compacted this table lately", looked),
		Action: "if its writers are write-only, something must compact it: compactd compact, or the daemon"})
}

func checkConsumers(ctx context.Context, t *table.Table, ids []int64, add func(Finding)) {
	consumers, err := t.Consumers(ctx)
	if err != nil {
		add(Finding{Check: "consumers", Severity: Error, Message: "cannot read the consumers: " + err.Error(),
			Action: "compactd's expiration stops on this too; fix or remove the damaged consumer file"})
		return
	}
	first, last := ids[0], ids[len(ids)-1]
	for _, c := range consumers {
		switch {
		case c.NextSnapshot < first:
			add(Finding{Check: "consumers", Severity: Warn, Subject: c.ID,
				Message: fmt.Sprintf("reads from snapshot %d, which is expired (the earliest is %d): the streaming job has fallen behind expiration", c.NextSnapshot, first),
				Action:  "restart that job from a retained snapshot, or delete consumer/consumer-" + c.ID + " if the job is gone"})
		case last-c.NextSnapshot > 100:
			add(Finding{Check: "consumers", Severity: Warn, Subject: c.ID,
				Message: fmt.Sprintf("reads from snapshot %d, %d behind the latest: it keeps those snapshots from expiring", c.NextSnapshot, last-c.NextSnapshot),
				Action:  "check that job; set consumer.expiration-time so that abandoned consumers expire"})
		default:
			add(Finding{Check: "consumers", Severity: OK, Subject: c.ID, Message: fmt.Sprintf("reads from snapshot %d", c.NextSnapshot)})
		}
	}
}

func checkTags(ctx context.Context, t *table.Table, now time.Time, add func(Finding)) {
	tags, err := t.Tags(ctx)
	if err != nil {
		add(Finding{Check: "tags", Severity: Error, Message: "cannot read the tags: " + err.Error(), Action: "fix or remove the damaged tag file"})
		return
	}
	if len(tags) == 0 {
		return
	}
	expired := 0
	for _, tg := range tags {
		if tg.TimeRetained != nil && tg.CreateTime != nil && now.Sub(*tg.CreateTime) > *tg.TimeRetained {
			expired++
		}
	}
	f := Finding{Check: "tags", Severity: Info, Message: fmt.Sprintf("%d tags keep their snapshots' files", len(tags))}
	if expired > 0 {
		f.Severity = Warn
		f.Message += fmt.Sprintf("; %d are past their time-retained", expired)
		f.Action = "compactd tag expire deletes them"
	}
	add(f)
}

func checkOrphans(ctx context.Context, t *table.Table, o Options, add func(Finding)) {
	rep, err := orphan.Run(ctx, reach.TableSource(t), orphan.RunOptions{Now: o.Now, OlderThan: o.OrphanOlderThan, DryRun: true, Force: true})
	if err != nil {
		var damaged *table.DamagedError
		sev := Error
		if !errors.As(err, &damaged) {
			sev = Warn
		}
		add(Finding{Check: "orphans", Severity: sev, Message: "the orphan scan stopped: " + err.Error(),
			Action: "compactd's orphan cleanup and expiration stop on this too; fix what it names"})
		return
	}
	if len(rep.Files) == 0 {
		add(Finding{Check: "orphans", Severity: OK, Message: fmt.Sprintf("no unreferenced file older than %s", o.OrphanOlderThan)})
		return
	}
	// Files holds the first orphan.SampleLimit files; Count() all of them.
	oldest := rep.Files[0].ModTime
	for _, f := range rep.Files {
		if f.ModTime.Before(oldest) {
			oldest = f.ModTime
		}
	}
	of := ""
	if rep.Count() > len(rep.Files) {
		of = fmt.Sprintf(" of the first %d", len(rep.Files))
	}
	add(Finding{Check: "orphans", Severity: Info, Message: fmt.Sprintf("%d unreferenced files (%s) older than %s, the oldest%s %s",
		rep.Count(), human.Bytes(rep.Bytes), o.OrphanOlderThan, of, human.Relative(oldest, o.Now)),
		Action: "compactd orphan deletes them (the daemon does it on schedule)"})
}

func checkConditionalWrites(ctx context.Context, t *table.Table, add func(Finding)) {
	s3, ok := fileio.Unwrap(t.FileIO()).(*fileio.S3)
	if !ok {
		return
	}
	if err := t.Writable(); err != nil {
		// The check puts a probe object in the table directory; a table
		// compactd will not write (a manifest codec it has no encoder for)
		// is not written to for it, and its commits never race.
		add(Finding{Check: "conditional-writes", Severity: Info, Message: "not checked: compactd does not write this table (" + err.Error() + ")"})
		return
	}
	if err := s3.CheckConditionalWrites(ctx, t.Path()); err != nil {
		add(Finding{Check: "conditional-writes", Severity: Error, Message: "the store does not refuse a second create of the same object: " + err.Error(),
			Action: "two committers could overwrite each other's snapshot: use a store with conditional writes (If-None-Match), or commit through a catalog lock (--catalog)"})
		return
	}
	add(Finding{Check: "conditional-writes", Severity: OK, Message: "the store refuses a second create of the same object, so concurrent commits cannot overwrite each other"})
}

func bucketName(partition string, bucket int32) string {
	if partition == "" {
		return fmt.Sprintf("bucket %d", bucket)
	}
	return fmt.Sprintf("%s bucket %d", partition, bucket)
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
