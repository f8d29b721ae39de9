package table

import (
	"context"
	"strconv"

	"github.com/compactd/compactd/fileio"
)

// Long-lived changelogs. When a table's changelog retention outlives its
// snapshot retention (changelog.* options above snapshot.*, see
// Options.ChangelogLifecycleDecoupled), snapshot expiration keeps the
// changelog of every snapshot it expires as changelog/changelog-<id>, a
// snapshot-shaped JSON file, and changelog expiration removes those later.
// The changelog directory has its own EARLIEST and LATEST hints.

// ChangelogFilePath is the path of long-lived changelog id under a branch
// metadata root.
func ChangelogFilePath(branchRoot string, id int64) string {
	return fileio.Join(branchRoot, ChangelogDir, ChangelogPrefix+strconv.FormatInt(id, 10))
}

// ChangelogHintPath is the EARLIEST or LATEST hint of a branch's changelog
// directory.
func ChangelogHintPath(branchRoot string, earliest bool) string {
	name := hintLatest
	if earliest {
		name = hintEarliest
	}
	return fileio.Join(branchRoot, ChangelogDir, name)
}

// AsChangelog returns the long-lived changelog Paimon writes for snapshot
// s when expiring it: the same fields, serialised as a new file (Java
// builds a Changelog from the parsed Snapshot and writes it with its own
// serializer, so keys it does not know, explicit nulls and logOffsets,
// which 1.4 and later neither read nor write, are not carried over; the
// order of the properties is, since Jackson keeps it).
func (s Snapshot) AsChangelog() Snapshot {
	c := s
	c.LogOffsets = nil
	c.legacy = snapshotLegacy{propOrder: s.legacy.propOrder}
	return c
}

// TrustedChangelogEarliest reads the EARLIEST hint of a branch's changelog
// directory and reports whether it names an existing long-lived changelog.
// compactd's changelog expiration writes it before deleting anything of
// the changelogs below it, so those are condemned.
func TrustedChangelogEarliest(ctx context.Context, fio fileio.FileIO, branchRoot string) (int64, bool) {
	id, ok, err := ReadHint(ctx, fio, ChangelogHintPath(branchRoot, true))
	if err != nil || !ok || id <= 0 {
		return 0, false
	}
	exists, err := fileio.Exists(ctx, fio, ChangelogFilePath(branchRoot, id))
	return id, err == nil && exists
}
