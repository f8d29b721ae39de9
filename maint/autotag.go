package maint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/compactd/compactd/table"
)

// PeriodHandler is Java's TagPeriodHandler: the period of automatic tags and
// how a period start is named. Times are wall clocks in UTC time.Time.
type PeriodHandler struct {
	Period time.Duration
	layout string // Go layout of the tag name
	daily  bool   // names are dates (tagToTime = start of day)
}

// NewPeriodHandler reads tag.creation-period, tag.period-formatter and
// tag.creation-period-duration as TagPeriodHandler.create does.
func NewPeriodHandler(raw map[string]string) (*PeriodHandler, error) {
	return PeriodHandlerFrom(table.ParseTagOptions(raw))
}

// PeriodHandlerFrom is NewPeriodHandler over typed options.
func PeriodHandlerFrom(o table.TagOptions) (*PeriodHandler, error) {
	if d := o.CreationPeriodDuration; d.Set {
		if d.Err != nil {
			return nil, d.Err
		}
		return &PeriodHandler{Period: d.Value, layout: "200601021504"}, nil
	}
	period, formatter := o.CreationPeriod, o.PeriodFormatter
	if formatter != "with_dashes" && formatter != "without_dashes" && formatter != "without_dashes_and_spaces" {
		return nil, fmt.Errorf("option tag.period-formatter=%q: want with_dashes, without_dashes or without_dashes_and_spaces", formatter)
	}
	switch period {
	case "", "daily":
		h := &PeriodHandler{Period: 24 * time.Hour, layout: "2006-01-02", daily: true}
		if formatter != "with_dashes" {
			h.layout = "20060102"
		}
		return h, nil
	case "hourly":
		h := &PeriodHandler{Period: time.Hour, layout: "2006-01-02 15"}
		switch formatter {
		case "without_dashes":
			h.layout = "20060102 15"
		case "without_dashes_and_spaces":
			h.layout = "2006010215"
		}
		return h, nil
	case "two-hours":
		// Java ignores tag.period-formatter for two-hour periods.
		return &PeriodHandler{Period: 2 * time.Hour, layout: "2006-01-02 15"}, nil
	}
	return nil, fmt.Errorf("option tag.creation-period=%q: want daily, hourly or two-hours", period)
}

// TagToTime parses an automatic tag name strictly (fixed widths, valid
// dates), as tagToTime; ok is false for names that are not auto tags.
func (h *PeriodHandler) TagToTime(name string) (time.Time, bool) {
	if len(name) != len(h.layout) {
		return time.Time{}, false
	}
	for i := 0; i < len(name); i++ {
		if (h.layout[i] >= '0' && h.layout[i] <= '9') != (name[i] >= '0' && name[i] <= '9') {
			return time.Time{}, false
		}
	}
	t, err := time.Parse(h.layout, name)
	return t, err == nil
}

// IsAutoTag is isAutoTag.
func (h *PeriodHandler) IsAutoTag(name string) bool {
	_, ok := h.TagToTime(name)
	return ok
}

// TimeToTag names the period starting at t.
func (h *PeriodHandler) TimeToTag(t time.Time) string { return t.Format(h.layout) }

// NormalizeToPreviousTag is the start of the period before the one holding
// t: floor(t / period) * period − period, computed on the wall clock's
// epoch millis as Java does.
func (h *PeriodHandler) NormalizeToPreviousTag(t time.Time) time.Time {
	ms := t.UnixMilli()
	p := h.Period.Milliseconds()
	return time.UnixMilli(ms / p * p).UTC().Add(-h.Period)
}

// AutoTagConfig is a table's automatic tag creation (TagAutoCreation).
type AutoTagConfig struct {
	// Mode is tag.automatic-creation: "process-time" or "watermark".
	Mode    string
	Handler *PeriodHandler
	// Delay is tag.creation-delay.
	Delay time.Duration
	// NumRetainedMax is tag.num-retained-max (0 = unlimited).
	NumRetainedMax int
	// TimeRetained is tag.default-time-retained (nil = no TTL).
	TimeRetained *time.Duration
	// Completion is tag.automatic-completion.
	Completion bool
	// Zone turns a snapshot's commit time (process-time:
	// sink.process-time-zone, default local) or watermark (watermark:
	// sink.watermark-time-zone, default UTC) into a wall clock.
	Zone *time.Location
}

// AutoTagConfigFromTable reads the options; nil when the table does not
// create tags automatically by time (none, or batch: a batch job tags its
// own end, which compactd is not).
func AutoTagConfigFromTable(raw map[string]string) (*AutoTagConfig, error) {
	return AutoTagConfigFrom(table.ParseTagOptions(raw))
}

// AutoTagConfigFrom is AutoTagConfigFromTable over typed options.
func AutoTagConfigFrom(o table.TagOptions) (*AutoTagConfig, error) {
	mode := o.AutomaticCreation
	switch mode {
	case "", "none", "batch":
		return nil, nil
	case "process-time", "watermark":
	default:
		return nil, fmt.Errorf("option tag.automatic-creation=%q: want none, process-time, watermark or batch", mode)
	}
	h, err := PeriodHandlerFrom(o)
	if err != nil {
		return nil, err
	}
	c := &AutoTagConfig{Mode: mode, Handler: h}
	if o.CreationDelay.Err != nil {
		return nil, o.CreationDelay.Err
	}
	c.Delay = o.CreationDelay.Value
	if c.Delay >= h.Period {
		return nil, fmt.Errorf("option tag.creation-delay=%s must be shorter than one period (%s)", c.Delay, h.Period)
	}
	if o.NumRetainedMax.Err != nil {
		return nil, o.NumRetainedMax.Err
	}
	c.NumRetainedMax = o.NumRetainedMax.Value
	if d := o.DefaultTimeRetained; d.Set {
		if d.Err != nil {
			return nil, d.Err
		}
		c.TimeRetained = &d.Value
	}
	if o.AutomaticCompletion.Err != nil {
		return nil, o.AutomaticCompletion.Err
	}
	c.Completion = o.AutomaticCompletion.Value
	zoneKey, zoneOpt, zone := "sink.process-time-zone", o.ProcessTimeZone, ""
	if mode == "watermark" {
		zoneKey, zoneOpt, zone = "sink.watermark-time-zone", o.WatermarkTimeZone, "UTC"
	}
	if zoneOpt.Set {
		zone = zoneOpt.Value
	}
	c.Zone = time.Local
	if zone != "" {
		if c.Zone, err = time.LoadLocation(zone); err != nil {
			return nil, fmt.Errorf("option %s=%q: %w", zoneKey, zone, err)
		}
	}
	return c, nil
}

// SnapshotTime is what automatic tagging reads of a snapshot.
type SnapshotTime struct {
	ID         int64
	TimeMillis int64
	Watermark  *int64
}

// NewAutoTag is a tag automatic creation adds.
type NewAutoTag struct {
	Name     string
	Snapshot int64
}

// AutoTagPlan is what one TagAutoCreation.run does: tags to create (in
// order) and automatic tags num-retained-max deletes after each creation.
type AutoTagPlan struct {
	Create []NewAutoTag
	Delete []ExpiredTag
}

// PlanAutoTags replays TagAutoCreation over snaps (the existing snapshots,
// ascending): progress is restored from the newest automatic tag (its
// snapshot + 1, its time + one period); each snapshot whose time − delay
// reaches the end of the pending period gets the tag of the period before
// the one holding it (or, with completion, the pending period), existing
// names are left alone, and after each creation the oldest automatic tags
// beyond num-retained-max are deleted. A snapshot that already carries an
// automatic tag cannot get another one (Java's validateNoAutoTag): that is
// an error, as in Java's committer.
func PlanAutoTags(c *AutoTagConfig, tags []TagInfo, snaps []SnapshotTime) (AutoTagPlan, error) {
	var plan AutoTagPlan
	h := c.Handler
	type auto struct {
		name string
		snap int64
		at   time.Time
	}
	var autos []auto
	names := map[string]bool{}
	for _, tg := range tags {
		names[tg.Name] = true
		if at, ok := h.TagToTime(tg.Name); ok {
			autos = append(autos, auto{tg.Name, tg.SnapshotID, at})
		}
	}
	var next *time.Time
	nextSnap := int64(1)
	if len(snaps) > 0 {
		nextSnap = snaps[0].ID
	}
	if len(autos) > 0 {
		latest := slices.MaxFunc(autos, func(a, b auto) int { return a.at.Compare(b.at) })
		nextSnap = latest.snap + 1
		n := latest.at.Add(h.Period)
		next = &n
	}
	prev := int64(-1)
	for _, s := range snaps {
		if s.ID < nextSnap {
			continue
		}
		if prev >= 0 && s.ID != prev+1 {
			break // Java stops at a missing snapshot
		}
		prev = s.ID
		var at time.Time
		switch c.Mode {
		case "process-time":
			at = wallIn(time.UnixMilli(s.TimeMillis), c.Zone)
		case "watermark":
			if s.Watermark == nil || *s.Watermark == math.MinInt64 {
				continue
			}
			at = wallIn(time.UnixMilli(*s.Watermark), c.Zone)
		}
		if next != nil && at.Add(-c.Delay).Before(next.Add(h.Period)) {
			continue
		}
		this := h.NormalizeToPreviousTag(at)
		if c.Completion && next != nil {
			this = *next
		}
		name := h.TimeToTag(this)
		n := this.Add(h.Period)
		next = &n
		if names[name] {
			continue
		}
		for _, a := range autos {
			if a.snap == s.ID {
				return plan, fmt.Errorf("snapshot %d is already auto-tagged with %s", s.ID, a.name)
			}
		}
		plan.Create = append(plan.Create, NewAutoTag{Name: name, Snapshot: s.ID})
		names[name] = true
		autos = append(autos, auto{name, s.ID, this})
		if c.NumRetainedMax > 0 {
			infos := make([]TagInfo, len(autos))
			for i, a := range autos {
				infos[i] = TagInfo{Name: a.name, SnapshotID: a.snap}
			}
			for _, d := range SelectExpiredTags(infos, TagExpiry{NumRetainedMax: c.NumRetainedMax, AutoTag: h.IsAutoTag}, time.Time{}) {
				plan.Delete = append(plan.Delete, d)
				delete(names, d.Name)
				autos = slices.DeleteFunc(autos, func(a auto) bool { return a.name == d.Name })
			}
		}
	}
	return plan, nil
}

func wallIn(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// TagAutoReport says what RunTagAutoManager did (or would do).
type TagAutoReport struct {
	DryRun  bool
	Created []NewAutoTag
	Expired []ExpiredTag
}

// RunTagAutoManager does what Paimon's committer does after each commit
// through TagAutoManager, which Java skips for write-only tables (the case
// compactd exists for): automatic tag creation with num-retained-max, then
// tag time expiry (tag.time-expire-enabled). Deleted tags' files are left
// to orphan cleanup (see DeleteTag).
func RunTagAutoManager(ctx context.Context, t *table.Table, now time.Time, dryRun bool) (TagAutoReport, error) {
	rep := TagAutoReport{DryRun: dryRun}
	fail := func(err error) (TagAutoReport, error) {
		return rep, fmt.Errorf("automatic tags of %s: %w", t.FullName(), err)
	}
	tagOpts := table.ParseTagOptions(t.Options().Raw)
	cfg, err := AutoTagConfigFrom(tagOpts)
	if err != nil {
		return fail(err)
	}
	infos, err := tagInfos(ctx, t, false)
	if err != nil {
		return fail(err)
	}
	if cfg != nil {
		ids, err := t.SnapshotIDs(ctx)
		if err != nil {
			return fail(err)
		}
		// Only snapshots after the newest automatic tag are read.
		from := int64(0)
		for _, tg := range infos {
			if cfg.Handler.IsAutoTag(tg.Name) {
				from = max(from, tg.SnapshotID+1)
			}
		}
		var snaps []SnapshotTime
		for _, id := range ids {
			if id < from {
				continue
			}
			s, err := t.Snapshot(ctx, id)
			if err != nil {
				return fail(err)
			}
			snaps = append(snaps, SnapshotTime{ID: s.ID, TimeMillis: s.TimeMillis, Watermark: s.Watermark})
		}
		plan, err := PlanAutoTags(cfg, infos, snaps)
		if err != nil {
			return fail(err)
		}
		rep.Created, rep.Expired = plan.Create, plan.Delete
		if !dryRun {
			gone := map[string]bool{}
			for _, d := range plan.Delete {
				gone[d.Name] = true
			}
			for _, c := range plan.Create {
				if gone[c.Name] {
					continue // created and retired in the same run
				}
				_, err := CreateTag(ctx, t, c.Name, CreateTagOptions{Snapshot: c.Snapshot, TimeRetained: cfg.TimeRetained, Now: now})
				if err != nil && !errors.Is(err, ErrTagExists) {
					return fail(err)
				}
			}
			for _, d := range plan.Delete {
				if err := DeleteTag(ctx, t, d.Name); err != nil && !errors.Is(err, ErrTagNotFound) {
					return fail(err)
				}
			}
		}
		// Time expiry sees the tags as they are after creation.
		for _, c := range plan.Create {
			infos = append(infos, TagInfo{Name: c.Name, SnapshotID: c.Snapshot})
		}
		infos = slices.DeleteFunc(infos, func(ti TagInfo) bool {
			return slices.ContainsFunc(plan.Delete, func(d ExpiredTag) bool { return d.Name == ti.Name })
		})
	}
	o, err := TagExpiryFrom(tagOpts)
	if err != nil {
		return fail(err)
	}
	if !o.TimeExpire {
		return rep, nil
	}
	for _, e := range SelectExpiredTags(infos, TagExpiry{TimeExpire: true}, WallClock(now)) {
		rep.Expired = append(rep.Expired, e)
		if !dryRun {
			if err := DeleteTag(ctx, t, e.Name); err != nil && !errors.Is(err, ErrTagNotFound) {
				return fail(err)
			}
		}
	}
	return rep, nil
}
