package table

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/compactd/compactd/fileio"
)

// The readers of this file work on a branch metadata root (the table root
// for main, branch/branch-<name> otherwise) rather than on an open Table:
// expiration and orphan cleanup read every branch, and they read it fail
// closed. Unlike the Table methods (which read as Java does, skipping what
// Java skips), they refuse a directory or symbolic link under a metadata
// file's name (*DamagedError) and wrap decode failures in ErrCorrupt, so
// that nothing deciding what is still referenced overlooks a snapshot, tag
// or consumer. Files deleted between listing and reading are skipped.

// SnapshotPath is the path of snapshot id under a branch metadata root.
func SnapshotPath(branchRoot string, id int64) string {
	return fileio.Join(branchRoot, SnapshotDir, SnapshotFileName(id))
}

// ListIDs lists the numbered files "<prefix><id>" of dir (snapshot-,
// changelog-, schema-), ascending. Names with a non-numeric suffix are
// skipped, as Paimon HEAD does. A directory or symbolic link under such a
// name is a *DamagedError: skipping it would hide a snapshot from
// everything that decides what is still referenced.
func ListIDs(ctx context.Context, fio fileio.FileIO, dir, prefix string) ([]int64, error) {
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var ids []int64
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, prefix) {
			continue
		}
		id, err := strconv.ParseInt(e.Name[len(prefix):], 10, 64)
		if err != nil {
			continue
		}
		if err := notAFile(e); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sortInt64s(ids)
	return ids, nil
}

// listVersioned lists dir and returns the suffixes of the file names that
// start with prefix (e.g. tag names, consumer ids). Unlike ListIDs it reads
// as Java does, skipping directories: the Table methods use it.
func listVersioned(ctx context.Context, fio fileio.FileIO, dir, prefix string) ([]string, error) {
	infos, err := fio.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, fi := range infos {
		if fi.IsDir || !strings.HasPrefix(fi.Name, prefix) {
			continue
		}
		out = append(out, strings.TrimPrefix(fi.Name, prefix))
	}
	return out, nil
}

// listIDs lists dir and returns the numeric ids of files named
// <prefix><id>, ascending. Names whose suffix is not a number are skipped
// (Java ≤2.0 would throw on them; HEAD skips them).
func listIDs(ctx context.Context, fio fileio.FileIO, dir, prefix string) ([]int64, error) {
	names, err := listVersioned(ctx, fio, dir, prefix)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		id, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	sortInt64s(ids)
	return ids, nil
}

// ReadSnapshotFile reads and decodes one snapshot-shaped JSON file
// (snapshot, tag or long-lived changelog) with ParseSnapshot. A missing
// file gives an error wrapping fileio.ErrNotExist, an undecodable one an
// error wrapping ErrCorrupt.
func ReadSnapshotFile(ctx context.Context, fio fileio.FileIO, path string) (*Snapshot, error) {
	data, err := fileio.ReadFile(ctx, fio, path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := ParseSnapshot(data)
	if err == nil {
		err = namesLists(s)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w: %w", path, ErrCorrupt, err)
	}
	return s, nil
}

// namesLists refuses a snapshot-shaped file with an empty base or delta
// manifest list name: ParseSnapshot accepts "", but a walk would read
// such a snapshot as referencing nothing.
func namesLists(s *Snapshot) error {
	if s.BaseManifestList == "" || s.DeltaManifestList == "" {
		return fmt.Errorf("snapshot %d has no base or delta manifest list", s.ID)
	}
	return nil
}

// ReadTags reads every tag-<name> of the branch metadata root, sorted by
// snapshot id (tags of one snapshot in listing order).
func ReadTags(ctx context.Context, fio fileio.FileIO, branchRoot string) ([]*Tag, error) {
	dir := fileio.Join(branchRoot, TagDir)
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var tags []*Tag
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, TagPrefix) {
			continue
		}
		if err := notAFile(e); err != nil {
			return nil, err
		}
		data, err := fileio.ReadFile(ctx, fio, e.Path)
		if errors.Is(err, fileio.ErrNotExist) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
		t, err := ParseTag(strings.TrimPrefix(e.Name, TagPrefix), data)
		if err == nil {
			err = namesLists(&t.Snapshot)
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w: %w", e.Path, ErrCorrupt, err)
		}
		tags = append(tags, t)
	}
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].ID < tags[j].ID })
	return tags, nil
}

// ReadConsumers reads every consumer-<id> of the branch metadata root, in
// listing order, with ModTime from the listing. A consumer file without
// nextSnapshot is refused (ErrCorrupt) rather than read as 0.
func ReadConsumers(ctx context.Context, fio fileio.FileIO, branchRoot string) ([]*Consumer, error) {
	dir := fileio.Join(branchRoot, ConsumerDir)
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []*Consumer
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, ConsumerPrefix) {
			continue
		}
		if err := notAFile(e); err != nil {
			return nil, err
		}
		data, err := fileio.ReadFile(ctx, fio, e.Path)
		if errors.Is(err, fileio.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
		c, present, err := parseConsumer(strings.TrimPrefix(e.Name, ConsumerPrefix), data)
		if err == nil && !present {
			err = errors.New("no nextSnapshot")
		}
		if err != nil {
			return nil, fmt.Errorf("decode consumer %s: %w: invalid JSON %q: %w", e.Path, ErrCorrupt, data, err)
		}
		c.ModTime = e.ModTime
		out = append(out, c)
	}
	return out, nil
}

// EarliestHint reads the EARLIEST hint of a branch. ok is false when the
// hint is missing, unreadable, unparsable or not positive: callers use it
// only to tolerate more, never to keep less, and only after checking that
// it names an existing snapshot (TrustedEarliest).
func EarliestHint(ctx context.Context, fio fileio.FileIO, branchRoot string) (int64, bool) {
	id, ok, err := ReadHint(ctx, fio, fileio.Join(branchRoot, SnapshotDir, hintEarliest))
	if err != nil || !ok || id <= 0 {
		return 0, false
	}
	return id, true
}

// TrustedEarliest reads the EARLIEST hint of a branch and reports whether
// it names an existing snapshot. compactd writes it before deleting any
// part of the range below it, so everything below a trusted hint is
// condemned.
func TrustedEarliest(ctx context.Context, fio fileio.FileIO, branchRoot string) (int64, bool) {
	hint, ok := EarliestHint(ctx, fio, branchRoot)
	if !ok {
		return 0, false
	}
	exists, err := fileio.Exists(ctx, fio, SnapshotPath(branchRoot, hint))
	return hint, err == nil && exists
}

// ReadHint reads a hint file (LATEST, EARLIEST). ok is false when the hint
// is missing or unparsable (Java treats both as "no hint"); other read
// errors are returned.
func ReadHint(ctx context.Context, fio fileio.FileIO, path string) (id int64, ok bool, err error) {
	data, err := fileio.ReadFile(ctx, fio, path)
	if errors.Is(err, fileio.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read hint %s: %w", path, err)
	}
	id, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if perr != nil {
		return 0, false, nil
	}
	return id, true, nil
}

// WriteHint overwrites a hint file with a decimal id and no newline, as
// Paimon writes it.
func WriteHint(ctx context.Context, fio fileio.FileIO, path string, id int64) error {
	if err := fileio.WriteFile(ctx, fio, path, []byte(strconv.FormatInt(id, 10))); err != nil {
		return fmt.Errorf("write hint %s: %w", path, err)
	}
	return nil
}

// BranchRoots returns the metadata roots of every branch other than main
// with their names. Like Paimon it refuses a branch without a schema (its
// files could not be told apart from anything else); anything in branch/
// that is not a directory named branch-* is refused too, since Paimon
// never writes one (a link there could point anywhere). Refusals are
// *DamagedError.
func BranchRoots(ctx context.Context, fio fileio.FileIO, root string) (roots, names []string, err error) {
	dir := fileio.Join(root, BranchDir)
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, BranchPrefix) {
			continue
		}
		if e.IsSymlink || !e.IsDir {
			return nil, nil, &DamagedError{Table: root, File: e.Path, Err: fmt.Errorf("%w: a branch must be a directory (Paimon never writes a file or symbolic link there)", ErrCorrupt)}
		}
		ids, err := ListIDs(ctx, fio, fileio.Join(e.Path, SchemaDir), schemaPrefix)
		if err != nil {
			return nil, nil, Damaged(root, fileio.Join(e.Path, SchemaDir), "", err)
		}
		if len(ids) == 0 {
			return nil, nil, &DamagedError{Table: root, File: e.Path, Err: fmt.Errorf("%w: branch has no schema", ErrCorrupt)}
		}
		roots = append(roots, e.Path)
		names = append(names, strings.TrimPrefix(e.Name, BranchPrefix))
	}
	return roots, names, nil
}
