package table

// The commit protocol, after Java's FileStoreCommitImpl (the steps are those
// of "Commit protocol" in docs/ARCHITECTURE.md): this file has the API
// (Commit, CommitRequest, ConflictError, ErrCommitOutcomeUnknown) and the
// attempt loop (read the latest snapshot, write manifests and manifest
// lists, publish the snapshot by exclusive create, retry or settle an
// unknown outcome); commit_check.go the conflict checks of step 2;
// commit_merge.go the minor manifest merge of the base list in step 3.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/backoff"
	"github.com/compactd/compactd/table/manifest"
)

// ConflictError says a commit cannot apply on top of the latest snapshot:
// a file it deletes is no longer live, a file it adds is already live, or
// the result would break the LSM key-range invariant. Retrying the same
// commit cannot succeed; the caller drops its result and re-plans.
type ConflictError struct {
	Table    string
	Snapshot int64 // the latest snapshot the commit was checked against
	Reason   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("commit to %s conflicts with snapshot %d: %s", e.Table, e.Snapshot, e.Reason)
}

// ErrCommitOutcomeUnknown is wrapped by a failed Commit whose snapshot may
// nevertheless have been published (an interrupted or unverifiable publish).
// The files of such a commit may be referenced: callers must not delete them.
var ErrCommitOutcomeUnknown = errors.New("commit outcome unknown, the snapshot may have been published")

// CommitRequest is one commit: a delta of manifest entries (DELETEs before
// ADDs) published as one snapshot.
type CommitRequest struct {
	Kind             CommitKind
	CommitUser       string // a fresh UUID per compactd process; never a writer's
	CommitIdentifier int64  // BatchCommitIdentifier for one-off commits
	Entries          []manifest.Entry
	// IndexChanges replace index files of fixed buckets (the deletion
	// vectors a compaction changed). A commit with index changes writes a
	// new index manifest (the latest snapshot's entries combined with the
	// changes as Java's BucketedCombiner does) and always runs the
	// conflict checks, including CheckIndexBase and that every vector
	// names a data file live after the commit; without them the snapshot
	// reuses the latest index manifest.
	IndexChanges []IndexChange
	// Changelog are the ADD entries of the changelog files the commit
	// produced (a compaction's, changelog-producer=lookup or
	// full-compaction). They go to a changelog manifest of their own,
	// named by the snapshot's changelogManifestList, and are no part of
	// the table's live files.
	Changelog []manifest.Entry
	// Check runs Java's conflict checks (always done for COMPACT).
	Check bool
	// LastSafeSnapshot, if positive, is Java's
	// commit.strict-mode.last-safe-snapshot: the snapshot the commit was
	// computed from. Every attempt first checks the snapshots committed
	// since by other users, and a change of a data file in a real bucket
	// of a partition the commit touches is a ConflictError (checkStrict in
	// commit_strict.go). An OVERWRITE built from a read of that snapshot
	// (rescale) sets it, so that a concurrent write into the partitions it
	// replaces makes it fail instead of being lost.
	LastSafeSnapshot int64
	// Now is the commit time; zero means time.Now().
	Now time.Time
	// OnAttempt, if set, is called with each attempt's latest snapshot id
	// before anything is written (tests use it to interleave writers).
	OnAttempt func(latest int64)
	// Planned, if set, is the file set the commit was computed from (the
	// planner's read of some snapshot). An attempt whose latest snapshot
	// is that very snapshot (SameFiles: the same id and the same manifest
	// lists and index manifest, which are immutable files with unique
	// names) takes its data manifests, live files and index entries from
	// Planned instead of reading them again; against any other latest
	// snapshot the attempt reads and checks everything as without it.
	// Planned must not be changed while the commit runs.
	Planned *FileSet
	// Verify, if set, checks each attempt's latest snapshot (nil for an
	// empty table) before anything is written; an error ends the commit
	// with nothing published. It is how a commit states a precondition the
	// file-level checks cannot see, such as "no one added records to the
	// buckets I write since I read them" (return a *ConflictError for that).
	Verify func(ctx context.Context, latest *Snapshot) error
}

// CommitResult describes a published snapshot.
type CommitResult struct {
	Snapshot *Snapshot
	Attempts int
}

// Commit publishes req as the next snapshot, following Java's protocol:
// write the delta manifest and both manifest lists, then create
// snapshot-<latest+1> exclusively, then update the LATEST hint. Losing the
// race for an id rebases onto the new latest snapshot and tries again, so a
// concurrent writer's commit is never lost and never made to fail. Files
// written by a failed attempt are referenced by nothing and are removed.
//
// Only losing the race (and an unknown publish outcome, which is settled by
// looking for our snapshot first) is retried. A failure before the publish
// returns at once, without ErrCommitOutcomeUnknown: an error that does not
// wrap it means nothing was published, so the caller may delete its files.
func (t *Table) Commit(ctx context.Context, req CommitRequest) (*CommitResult, error) {
	opts := t.Options()
	if req.CommitUser == "" {
		return nil, fmt.Errorf("commit to %s: empty commit user", t.FullName())
	}
	if req.Kind == "" {
		req.Kind = CommitAppend
	}
	check := req.Check || req.Kind == CommitCompact || req.Kind == CommitOverwrite || len(req.IndexChanges) > 0
	if err := t.validateIndexChanges(req.IndexChanges); err != nil {
		return nil, err
	}
	for i := range req.Changelog {
		if req.Changelog[i].Kind != manifest.FileKindAdd {
			return nil, fmt.Errorf("commit to %s: changelog file %s is not an ADD entry", t.FullName(), req.Changelog[i].File.FileName)
		}
	}
	maxRetries := opts.CommitMaxRetries
	if maxRetries <= 0 {
		maxRetries = 10
	}
	minWait, maxWait := opts.CommitMinRetryWait, opts.CommitMaxRetryWait
	if minWait <= 0 {
		minWait = 10 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 10 * time.Second
	}
	// The store's probe (S3) overlaps reading the latest snapshot and
	// writing the manifests.
	t.PrepareCommit(ctx)
	// As Java's commit waits: min(minWait·2ⁿ, maxWait) plus up to 20% more.
	wait := backoff.Policy{Base: minWait, Max: maxWait, Above: 0.2}
	var uncertainSince int64 = -1
	// unknown marks an error returned while an earlier attempt may have
	// published our snapshot, so the caller keeps the files it references.
	unknown := func(err error) error {
		if uncertainSince >= 0 && !errors.Is(err, ErrCommitOutcomeUnknown) {
			return fmt.Errorf("%w (%w)", err, ErrCommitOutcomeUnknown)
		}
		return err
	}
	for attempt := 1; ; attempt++ {
		// The newest schema is listed while the latest snapshot is read
		// (two round trips on an object store, not three).
		var ls *TableSchema
		var lsErr error
		listed := make(chan struct{})
		go func() {
			defer close(listed)
			ls, lsErr = t.LatestSchema(ctx)
		}()
		latest, err := t.LatestSnapshot(ctx)
		<-listed
		if err != nil && !errors.Is(err, ErrNoSnapshot) {
			return nil, unknown(fmt.Errorf("commit to %s: %w", t.FullName(), err))
		}
		if uncertainSince >= 0 {
			// The previous attempt may have published: look for it before
			// committing twice.
			if s, err := t.findCommitted(ctx, uncertainSince, req); err != nil {
				return nil, unknown(err)
			} else if s != nil {
				return &CommitResult{Snapshot: s, Attempts: attempt - 1}, nil
			}
		}
		latestID := int64(0)
		if latest != nil {
			latestID = latest.ID
		}
		if req.OnAttempt != nil {
			req.OnAttempt(latestID)
		}
		if req.Verify != nil {
			if err := req.Verify(ctx, latest); err != nil {
				return nil, unknown(err)
			}
		}
		s, written, err := t.tryCommit(ctx, latest, ls, lsErr, req, check)
		if err == nil {
			return &CommitResult{Snapshot: s, Attempts: attempt}, nil
		}
		var conflict *ConflictError
		exists := errors.Is(err, fileio.ErrExist)
		if errors.Is(err, ErrCommitOutcomeUnknown) {
			// The publish may have landed: its files may be referenced.
			written = nil
			exists = false
		}
		if exists || errors.As(err, &conflict) || ctx.Err() != nil {
			t.DeleteUnreferenced(written)
		}
		switch {
		case errors.As(err, &conflict):
			return nil, err
		case ctx.Err() != nil:
			if errors.Is(err, ErrCommitOutcomeUnknown) {
				return nil, err
			}
			return nil, unknown(fmt.Errorf("commit to %s: %w", t.FullName(), ctx.Err()))
		case exists:
			// Keep looking for an earlier attempt of unknown outcome: the
			// snapshot that took this id may be that attempt, landed late.
		case errors.Is(err, ErrCommitOutcomeUnknown):
			// The publish may have landed: keep the files, they may now be
			// referenced, and look for the snapshot before trying again.
			slog.Warn("commit attempt failed, retrying", "table", t.FullName(), "snapshot", latestID+1, "err", err)
			if uncertainSince < 0 {
				uncertainSince = latestID
			}
		default:
			// A failure before the publish (a full disk, a denied write, a
			// manifest that cannot be read) is definite: nothing of this
			// attempt is referenced, so its files go, and retrying here
			// would only fail the same way and leave more metadata behind.
			// The caller (the scheduler's backoff) decides about trying
			// again later.
			t.DeleteUnreferenced(written)
			return nil, unknown(err)
		}
		if attempt > maxRetries {
			return nil, unknown(fmt.Errorf("commit to %s: gave up after %d attempts: %w", t.FullName(), attempt, err))
		}
		select {
		case <-ctx.Done():
			return nil, unknown(fmt.Errorf("commit to %s: %w", t.FullName(), ctx.Err()))
		case <-time.After(wait.Delay(attempt - 1)):
		}
	}
}

// findCommitted looks for a snapshot after `after` carrying req's user,
// identifier and kind.
func (t *Table) findCommitted(ctx context.Context, after int64, req CommitRequest) (*Snapshot, error) {
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit to %s: %w", t.FullName(), err)
	}
	for _, id := range ids {
		if id <= after {
			continue
		}
		s, err := t.Snapshot(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("commit to %s: %w", t.FullName(), err)
		}
		if s.CommitUser == req.CommitUser && s.CommitIdentifier == req.CommitIdentifier && s.CommitKind == req.Kind {
			return s, nil
		}
	}
	return nil, nil
}

// DeleteUnreferenced removes files this process wrote that no snapshot
// references (outputs of an abandoned job, metadata of a failed commit
// attempt). It runs on its own context so that cleanup still happens when
// the caller's was cancelled; failures are logged, orphan cleanup gets the
// rest.
func (t *Table) DeleteUnreferenced(paths []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range paths {
		if err := t.fio.Delete(ctx, p); err != nil {
			slog.Warn("delete unreferenced file", "table", t.FullName(), "file", p, "err", err)
		}
	}
}

// tryCommit makes one attempt on top of latest (nil for an empty table). It
// returns the paths of the metadata files it wrote.
//
// ls is the newest schema (lsErr why it could not be read), listed while
// latest was read.
func (t *Table) tryCommit(ctx context.Context, latest *Snapshot, ls *TableSchema, lsErr error, req CommitRequest, check bool) (*Snapshot, []string, error) {
	var written []string
	var base []manifest.ListEntry
	// planned is req.Planned when it is the latest snapshot's file set:
	// then nothing of the snapshot is read again.
	var planned *FileSet
	if latest != nil && req.Planned != nil && req.Planned.Snapshot.SameFiles(latest) {
		planned = req.Planned
		base = slices.Clone(planned.Manifests)
	} else if latest != nil {
		var err error
		if base, err = t.DataManifests(ctx, latest); err != nil {
			return nil, nil, fmt.Errorf("commit to %s: %w", t.FullName(), err)
		}
	}
	// The index manifest the changes combine with; they must still apply
	// to it (CheckIndexBase).
	var index []manifest.IndexEntry
	if len(req.IndexChanges) > 0 {
		latestID := int64(0)
		if latest != nil {
			latestID = latest.ID
			if planned != nil {
				index = planned.Index
			} else {
				var err error
				if index, err = t.IndexEntries(ctx, latest); err != nil {
					return nil, nil, fmt.Errorf("commit to %s: %w", t.FullName(), err)
				}
			}
			for i := range index {
				if index[i].Kind != manifest.FileKindAdd {
					return nil, nil, fmt.Errorf("commit to %s: index manifest %s of snapshot %d holds a DELETE entry (%s); Java stores only ADD entries", t.FullName(), *latest.IndexManifest, latest.ID, index[i].IndexFile.FileName)
				}
			}
		}
		for i := range req.IndexChanges {
			if err := CheckIndexBase(index, &req.IndexChanges[i]); err != nil {
				return nil, nil, &ConflictError{Table: t.FullName(), Snapshot: latestID, Reason: err.Error()}
			}
		}
	}
	if err := t.checkStrict(ctx, latest, &req); err != nil {
		return nil, nil, err
	}
	if check {
		if err := t.checkConflicts(ctx, latest, base, planned, req.Kind, req.Entries, req.IndexChanges); err != nil {
			return nil, nil, err
		}
	}
	// A table altered since Open to manifests compactd cannot write
	// (writable.go) is refused before anything is written.
	if lsErr == nil && latest != nil && latest.SchemaID > ls.ID {
		// A schema added after the listing and already used by the
		// latest snapshot: list again, so that the metadata is written
		// in the format of the schema the snapshot names, as when the
		// schemas were listed after the snapshot was read.
		ls, lsErr = t.LatestSchema(ctx)
	}
	if lsErr != nil {
		return nil, written, fmt.Errorf("commit to %s: %w", t.FullName(), lsErr)
	}
	// Metadata is written in the latest schema's manifest.format: Java
	// reads all of a table's metadata files with that format's reader.
	codec, r := metadataFormat(ls, t.schemaPath(ls.ID))
	if r != "" {
		return nil, written, &WriteRefusedError{Table: t.FullName(), Reason: r}
	}
	schema := t.Schema()
	partTypes := typesOfRow(schema.PartitionType())

	// Every metadata file of the attempt is encoded first, then all are
	// written side by side (commit_write.go); the snapshot naming them is
	// published only once every one is written.
	var pending []pendingFile
	merged, err := t.mergeManifests(ctx, base, partTypes, schema.ID, codec, &pending)
	if err != nil {
		return nil, written, err
	}
	baseName, baseSize, err := t.encodeList(merged, codec, &pending)
	if err != nil {
		return nil, written, err
	}

	var delta []manifest.ListEntry
	if len(req.Entries) > 0 {
		meta, err := t.encodeManifest(req.Entries, partTypes, schema.ID, codec, &pending)
		if err != nil {
			return nil, written, err
		}
		delta = append(delta, meta)
	}
	var indexName *string
	if latest != nil {
		indexName = latest.IndexManifest
	}
	if len(req.IndexChanges) > 0 {
		name := t.paths.NewIndexManifestName()
		path := t.paths.ManifestPath(name)
		data, err := manifest.EncodeIndex(CombineIndexEntries(index, req.IndexChanges), codec)
		if err != nil {
			return nil, written, fmt.Errorf("commit to %s: encode index manifest %s: %w", t.FullName(), path, err)
		}
		pending = append(pending, pendingFile{path: path, what: "index manifest", data: data})
		indexName = &name
	}

	var changelogName *string
	var changelogSize, changelogRecords *int64
	if len(req.Changelog) > 0 {
		meta, err := t.encodeManifest(req.Changelog, partTypes, schema.ID, codec, &pending)
		if err != nil {
			return nil, written, fmt.Errorf("commit to %s: changelog manifest: %w", t.FullName(), err)
		}
		name, size, err := t.encodeList([]manifest.ListEntry{meta}, codec, &pending)
		if err != nil {
			return nil, written, fmt.Errorf("commit to %s: changelog manifest list: %w", t.FullName(), err)
		}
		var rows int64
		for i := range req.Changelog {
			rows += req.Changelog[i].File.RowCount
		}
		changelogName, changelogSize, changelogRecords = &name, &size, &rows
	}

	deltaName, deltaSize, err := t.encodeList(delta, codec, &pending)
	if err != nil {
		return nil, written, err
	}
	for _, f := range pending {
		written = append(written, f.path)
	}
	if err := t.writePending(ctx, pending); err != nil {
		return nil, written, err
	}

	var deltaRecords int64
	for i := range req.Entries {
		e := &req.Entries[i]
		if e.Kind == manifest.FileKindAdd {
			deltaRecords += e.File.RowCount
		} else {
			deltaRecords -= e.File.RowCount
		}
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	// The snapshot names the newest schema, as Java's commit does: a table
	// altered since it was opened must not get a snapshot whose schema id
	// goes backwards. The data files keep the schema they were written with.
	schemaID := schema.ID
	if latest != nil {
		schemaID = max(schemaID, latest.SchemaID)
	}
	if ls.ID > schemaID {
		schemaID = ls.ID
	}
	props, err := t.commitProperties(ctx, latest, base, req.Entries)
	if err != nil {
		return nil, written, err
	}
	id := uuid.NewString()
	s := &Snapshot{
		Version:               SnapshotVersion,
		UUID:                  &id,
		ID:                    1,
		SchemaID:              schemaID,
		BaseManifestList:      baseName,
		BaseManifestListSize:  &baseSize,
		DeltaManifestList:     deltaName,
		DeltaManifestListSize: &deltaSize,
		CommitUser:            req.CommitUser,
		CommitIdentifier:      req.CommitIdentifier,
		CommitKind:            req.Kind,
		TimeMillis:            now.UnixMilli(),
		TotalRecordCount:      deltaRecords,
		DeltaRecordCount:      deltaRecords,
		IndexManifest:         indexName,

		ChangelogManifestList:     changelogName,
		ChangelogManifestListSize: changelogSize,
		ChangelogRecordCount:      changelogRecords,
		Properties:                props,
	}
	if latest != nil {
		s.ID = latest.ID + 1
		s.TotalRecordCount = latest.TotalRecordCount + deltaRecords
		// Watermark, statistics and row ids are untouched by the delta, so
		// they carry over as Java carries them; so does the index manifest
		// unless the commit changes index files.
		s.Watermark = latest.Watermark
		s.Statistics = latest.Statistics
		s.NextRowID = latest.NextRowID
	}
	data, err := s.MarshalJSON()
	if err != nil {
		return nil, written, fmt.Errorf("commit to %s: encode snapshot %d: %w", t.FullName(), s.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, written, err
	}
	if err := t.publish(ctx, s, data, req.Entries); err != nil {
		if errors.Is(err, ErrCommitOutcomeUnknown) {
			// The snapshot may name these files now: keep them.
			return nil, nil, err
		}
		return nil, written, err
	}
	return s, nil, nil
}
