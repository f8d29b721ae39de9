package merge

import (
	"errors"

	"github.com/compactd/compactd/table"
)

// deduplicate is DeduplicateMergeFunction: keep the newest record, kind included.
type deduplicate struct {
	ignoreDelete bool
	latest       table.KeyValue
	has          bool
}

func (d *deduplicate) Reset() { d.has = false; d.latest = table.KeyValue{} }

func (d *deduplicate) Add(kv table.KeyValue) error {
	// Files written by Paimon <= 0.7 may hold retractions despite ignore-delete,
	// so the merge re-checks it.
	if d.ignoreDelete && !kv.Kind.IsAdd() {
		return nil
	}
	d.latest, d.has = kv, true
	return nil
}

func (d *deduplicate) Result() (table.KeyValue, bool, error) { return d.latest, d.has, nil }

// ErrFirstRowRetract is returned when a first-row table without ignore-delete
// meets a -U/-D record; Java fails the same way.
var ErrFirstRowRetract = errors.New("by default, first row merge engine can not accept DELETE/UPDATE_BEFORE records; you can config 'ignore-delete' to ignore the DELETE/UPDATE_BEFORE records")

// firstRow is FirstRowMergeFunction: keep the oldest addition.
type firstRow struct {
	ignoreDelete bool
	first        table.KeyValue
	has          bool
}

func (f *firstRow) Reset() { f.has = false; f.first = table.KeyValue{} }

func (f *firstRow) Add(kv table.KeyValue) error {
	if !kv.Kind.IsAdd() {
		if f.ignoreDelete {
			return nil
		}
		return ErrFirstRowRetract
	}
	if !f.has {
		f.first, f.has = kv, true
	}
	return nil
}

func (f *firstRow) Result() (table.KeyValue, bool, error) { return f.first, f.has, nil }
