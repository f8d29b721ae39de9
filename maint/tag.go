package maint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// ErrTagExists and ErrTagNotFound are wrapped by CreateTag and DeleteTag.
var (
	ErrTagExists   = errors.New("tag already exists")
	ErrTagNotFound = errors.New("tag does not exist")
)

// CreateTagOptions configure CreateTag.
type CreateTagOptions struct {
	// Snapshot is the snapshot to tag; 0 means the latest. A snapshot that
	// expired but is still held by another tag is taken from that tag (as
	// Java's findSnapshot does).
	Snapshot int64
	// TimeRetained is the tag's TTL. nil means the table's
	// tag.default-time-retained, and no TTL when that is unset too.
	TimeRetained *time.Duration
	// Now is the creation time (wall clock is taken from it); zero means
	// time.Now().
	Now time.Time
}

// CreateTag writes tag/tag-<name> as Java's TagManager.createTag does: the
// snapshot's JSON as current Java writes it (Snapshot.WithoutLegacy), plus tagCreateTime and tagTimeRetained only when the tag
// has a TTL (older readers cannot parse tag files with those fields, so Java
// leaves them out otherwise). The file is created exclusively: an existing
// tag is never replaced (ErrTagExists).
func CreateTag(ctx context.Context, t *table.Table, name string, o CreateTagOptions) (*table.Tag, error) {
	if err := validTagName(name); err != nil {
		return nil, fmt.Errorf("create tag in %s: %w", t.FullName(), err)
	}
	var snap *table.Snapshot
	var err error
	if o.Snapshot == 0 {
		snap, err = t.LatestSnapshot(ctx)
		if err != nil {
			return nil, fmt.Errorf("create tag %s in %s: cannot tag the latest snapshot: %w", name, t.FullName(), err)
		}
	} else if snap, err = findSnapshot(ctx, t, o.Snapshot); err != nil {
		return nil, fmt.Errorf("create tag %s in %s: %w", name, t.FullName(), err)
	}
	retained := o.TimeRetained
	if retained == nil {
		if d := table.ParseTagOptions(t.Options().Raw).DefaultTimeRetained; d.Set {
			if d.Err != nil {
				return nil, fmt.Errorf("create tag %s in %s: %w", name, t.FullName(), d.Err)
			}
			retained = &d.Value
		}
	}
	// Java serialises the snapshot with its own Snapshot class: fields older
	// releases wrote (explicit nulls, logOffsets) are gone.
	if err := validateNoAutoTag(ctx, t, name, snap.ID); err != nil {
		return nil, fmt.Errorf("create tag %s in %s: %w", name, t.FullName(), err)
	}
	tag := &table.Tag{Name: name, Snapshot: snap.WithoutLegacy()}
	if retained != nil {
		now := o.Now
		if now.IsZero() {
			now = time.Now()
		}
		ct := WallClock(now)
		d := *retained
		tag.CreateTime, tag.TimeRetained = &ct, &d
	}
	data, err := tag.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("create tag %s in %s: %w", name, t.FullName(), err)
	}
	path := t.Paths().TagPath(name)
	if err := t.FileIO().WriteExclusive(ctx, path, data); err != nil {
		if errors.Is(err, fileio.ErrExist) {
			return nil, fmt.Errorf("create tag %s in %s: %w", name, t.FullName(), ErrTagExists)
		}
		return nil, fmt.Errorf("create tag %s in %s: write %s: %w", name, t.FullName(), path, err)
	}
	return tag, nil
}

// validateNoAutoTag is TagManager.validateNoAutoTag: with automatic tag
// creation on, a name of the automatic form may not tag a snapshot that
// already has an automatic tag.
func validateNoAutoTag(ctx context.Context, t *table.Table, name string, snapshot int64) error {
	cfg, err := AutoTagConfigFrom(table.ParseTagOptions(t.Options().Raw))
	if err != nil || cfg == nil || !cfg.Handler.IsAutoTag(name) {
		return nil
	}
	tags, err := t.Tags(ctx)
	if err != nil {
		return err
	}
	for _, tg := range tags {
		if tg.ID == snapshot && cfg.Handler.IsAutoTag(tg.Name) {
			return fmt.Errorf("snapshot %d is already auto-tagged with %s", snapshot, tg.Name)
		}
	}
	return nil
}

// findSnapshot reads snapshot id, or, when it has expired, the snapshot of
// a tag that holds it.
func findSnapshot(ctx context.Context, t *table.Table, id int64) (*table.Snapshot, error) {
	s, err := t.Snapshot(ctx, id)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, fileio.ErrNotExist) {
		return nil, err
	}
	tags, terr := t.Tags(ctx)
	if terr != nil {
		return nil, terr
	}
	for _, tag := range tags {
		if tag.ID == id {
			snap := tag.Snapshot
			return &snap, nil
		}
	}
	return nil, fmt.Errorf("neither snapshot %d nor a tag of it exists: %w", id, fileio.ErrNotExist)
}

func validTagName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("tag name must not be blank")
	}
	if strings.ContainsAny(name, "/\\") {
		return fmt.Errorf("tag name %q must not contain a path separator", name)
	}
	return nil
}

// DeleteTag removes tag/tag-<name>; a tag that does not exist is an error
// wrapping ErrTagNotFound (Java only logs a warning; a CLI user wants to
// know).
//
// Java also deletes, when the tagged snapshot has expired and no other tag
// points at it, the data files and manifests only that tag kept alive.
// compactd deletes only the tag file: those files become unreferenced and
// orphan cleanup (which never deletes anything a snapshot or tag uses)
// removes them once they are older than its safety margin.
func DeleteTag(ctx context.Context, t *table.Table, name string) error {
	if err := validTagName(name); err != nil {
		return fmt.Errorf("delete tag in %s: %w", t.FullName(), err)
	}
	path := t.Paths().TagPath(name)
	ok, err := fileio.Exists(ctx, t.FileIO(), path)
	if err != nil {
		return fmt.Errorf("delete tag %s in %s: %w", name, t.FullName(), err)
	}
	if !ok {
		return fmt.Errorf("delete tag %s in %s: %w", name, t.FullName(), ErrTagNotFound)
	}
	if err := t.FileIO().Delete(ctx, path); err != nil && !errors.Is(err, fileio.ErrNotExist) {
		return fmt.Errorf("delete tag %s in %s: %w", name, t.FullName(), err)
	}
	return nil
}

// ListTags returns the table's tags ordered by snapshot id, then name (the
// order of Java's $tags).
func ListTags(ctx context.Context, t *table.Table) ([]*table.Tag, error) {
	tags, err := t.Tags(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(tags, func(a, b *table.Tag) int {
		if a.ID != b.ID {
			return cmpInt64(a.ID, b.ID)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return tags, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TagInfo is what tag expiry looks at.
type TagInfo struct {
	Name       string
	SnapshotID int64
	// CreateTime is the tag's tagCreateTime (a wall clock); nil when absent.
	CreateTime   *time.Time
	TimeRetained *time.Duration
	// ModTime is the tag file's modification time, used by OlderThan for
	// tags without a creation time.
	ModTime time.Time
}

// TagExpiry are the tag retention rules of a table.
type TagExpiry struct {
	// TimeExpire is tag.time-expire-enabled (default true): tags whose
	// createTime + timeRetained is before now are deleted.
	TimeExpire bool
	// NumRetainedMax is tag.num-retained-max (0 = unset): only the newest
	// that many automatically created tags are kept. It applies only when
	// tag.automatic-creation is not none, to names AutoTag accepts.
	NumRetainedMax int
	// AutoTag reports whether a tag name is an automatically created tag
	// (it parses with the table's tag period format). nil: no auto tags.
	AutoTag func(name string) bool
	// OlderThan, if not zero, also expires tags created before it (a wall
	// clock), using the file's modification time for tags without a
	// creation time: the expire_tags procedure's older_than.
	OlderThan time.Time
}

// ExpiredTag is one tag selected for deletion and why.
type ExpiredTag struct {
	Name   string
	Reason string
}

// SelectExpiredTags decides which tags expire at now (a wall clock, see
// WallClock), in Java's order: first the oldest automatic tags beyond
// tag.num-retained-max (TagAutoCreation: one tag per tagged snapshot,
// oldest snapshot first), then tags past their retention time
// (TagTimeExpire: createTime + timeRetained strictly before now).
func SelectExpiredTags(tags []TagInfo, o TagExpiry, now time.Time) []ExpiredTag {
	var out []ExpiredTag
	gone := map[string]bool{}
	if o.NumRetainedMax > 0 && o.AutoTag != nil {
		// Java keys auto tags by snapshot: the count is of tagged snapshots,
		// and each deletion removes one tag of the oldest snapshot.
		bySnap := map[int64][]string{}
		var ids []int64
		for _, tg := range tags {
			if !o.AutoTag(tg.Name) {
				continue
			}
			if _, ok := bySnap[tg.SnapshotID]; !ok {
				ids = append(ids, tg.SnapshotID)
			}
			bySnap[tg.SnapshotID] = append(bySnap[tg.SnapshotID], tg.Name)
		}
		slices.Sort(ids)
		for i := 0; i < len(ids)-o.NumRetainedMax; i++ {
			names := bySnap[ids[i]]
			slices.Sort(names)
			out = append(out, ExpiredTag{Name: names[0], Reason: fmt.Sprintf("more than tag.num-retained-max=%d automatic tags", o.NumRetainedMax)})
			gone[names[0]] = true
		}
	}
	if !o.TimeExpire && o.OlderThan.IsZero() {
		return out
	}
	sorted := slices.Clone(tags)
	slices.SortStableFunc(sorted, func(a, b TagInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, tg := range sorted {
		if gone[tg.Name] {
			continue
		}
		var created time.Time
		switch {
		case tg.CreateTime != nil && tg.TimeRetained != nil:
			created = *tg.CreateTime
		case !o.OlderThan.IsZero():
			created = WallClock(tg.ModTime)
		default:
			continue
		}
		if o.TimeExpire && tg.TimeRetained != nil && now.After(created.Add(*tg.TimeRetained)) {
			out = append(out, ExpiredTag{Name: tg.Name, Reason: fmt.Sprintf("created %s, retained for %s", created.Format("2006-01-02T15:04:05"), *tg.TimeRetained)})
			continue
		}
		if !o.OlderThan.IsZero() && o.OlderThan.After(created) {
			out = append(out, ExpiredTag{Name: tg.Name, Reason: fmt.Sprintf("created %s, before %s", created.Format("2006-01-02T15:04:05"), o.OlderThan.Format("2006-01-02T15:04:05"))})
		}
	}
	return out
}

// TagExpiryFromTable reads a table's tag retention options.
func TagExpiryFromTable(raw map[string]string) (TagExpiry, error) {
	return TagExpiryFrom(table.ParseTagOptions(raw))
}

// TagExpiryFrom is TagExpiryFromTable over typed options.
func TagExpiryFrom(to table.TagOptions) (TagExpiry, error) {
	o := TagExpiry{TimeExpire: true}
	if to.TimeExpireEnabled.Err != nil {
		return o, to.TimeExpireEnabled.Err
	}
	o.TimeExpire = to.TimeExpireEnabled.Value
	if mode := to.AutomaticCreation; mode == "" || mode == "none" {
		return o, nil
	}
	if to.NumRetainedMax.Err != nil {
		return o, to.NumRetainedMax.Err
	}
	o.NumRetainedMax = to.NumRetainedMax.Value
	h, err := PeriodHandlerFrom(to)
	if err != nil {
		return o, err
	}
	o.AutoTag = h.IsAutoTag
	return o, nil
}

// AutoTagMatcher returns Java's TagPeriodHandler.isAutoTag for the table's
// tag.creation-period, tag.period-formatter and
// tag.creation-period-duration: a name is an auto tag iff it parses,
// strictly, with the period's formatter.
func AutoTagMatcher(raw map[string]string) (func(string) bool, error) {
	h, err := NewPeriodHandler(raw)
	if err != nil {
		return nil, err
	}
	return h.IsAutoTag, nil
}

// TagExpireReport lists what ExpireTags deleted (or would delete).
type TagExpireReport struct {
	DryRun  bool
	Expired []ExpiredTag
}

// ExpireTags applies the table's tag retention (TagExpiryFromTable) at now
// and deletes the expired tag files, as Paimon's committer does after each
// commit. Like DeleteTag it leaves the files only those tags kept alive to
// orphan cleanup.
func ExpireTags(ctx context.Context, t *table.Table, now time.Time, dryRun bool) (TagExpireReport, error) {
	rep := TagExpireReport{DryRun: dryRun}
	o, err := TagExpiryFrom(table.ParseTagOptions(t.Options().Raw))
	if err != nil {
		return rep, fmt.Errorf("expire tags of %s: %w", t.FullName(), err)
	}
	infos, err := tagInfos(ctx, t, !o.OlderThan.IsZero())
	if err != nil {
		return rep, fmt.Errorf("expire tags of %s: %w", t.FullName(), err)
	}
	rep.Expired = SelectExpiredTags(infos, o, WallClock(now))
	if dryRun {
		return rep, nil
	}
	for _, e := range rep.Expired {
		err := t.FileIO().Delete(ctx, t.Paths().TagPath(e.Name))
		if err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return rep, fmt.Errorf("expire tags of %s: delete tag %s: %w", t.FullName(), e.Name, err)
		}
	}
	return rep, nil
}

func tagInfos(ctx context.Context, t *table.Table, withModTime bool) ([]TagInfo, error) {
	tags, err := t.Tags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]TagInfo, 0, len(tags))
	for _, tg := range tags {
		ti := TagInfo{Name: tg.Name, SnapshotID: tg.ID, CreateTime: tg.CreateTime, TimeRetained: tg.TimeRetained}
		if withModTime {
			fi, err := t.FileIO().Stat(ctx, t.Paths().TagPath(tg.Name))
			if err != nil {
				return nil, err
			}
			ti.ModTime = fi.ModTime
		}
		out = append(out, ti)
	}
	return out, nil
}
