package expire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/compactd/compactd/fileio"
)

// Source is the table Run and orphan cleanup work on: its store, root path
// and a reader for its Avro metadata. The JSON metadata (snapshots, tags,
// consumers, hints) is read directly by this package.
type Source struct {
	FS   fileio.FileIO
	Root string
	Meta Metadata
}

// snapshotJSON holds the snapshot (and tag, changelog) JSON fields expiry uses.
type snapshotJSON struct {
	ID                    *int64  `json:"id"`
	TimeMillis            int64   `json:"timeMillis"`
	BaseManifestList      string  `json:"baseManifestList"`
	DeltaManifestList     string  `json:"deltaManifestList"`
	ChangelogManifestList *string `json:"changelogManifestList"`
	IndexManifest         *string `json:"indexManifest"`
	Statistics            *string `json:"statistics"`
}

// ParseSnapshot decodes a snapshot, tag or changelog JSON file.
func ParseSnapshot(data []byte) (Snapshot, error) {
	var j snapshotJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Snapshot{}, err
	}
	if j.ID == nil {
		return Snapshot{}, errors.New("snapshot JSON has no id")
	}
	if j.BaseManifestList == "" || j.DeltaManifestList == "" {
		return Snapshot{}, fmt.Errorf("snapshot %d has no base or delta manifest list", *j.ID)
	}
	s := Snapshot{
		ID:                *j.ID,
		TimeMillis:        j.TimeMillis,
		BaseManifestList:  j.BaseManifestList,
		DeltaManifestList: j.DeltaManifestList,
	}
	if j.ChangelogManifestList != nil {
		s.ChangelogManifestList = *j.ChangelogManifestList
	}
	if j.IndexManifest != nil {
		s.IndexManifest = *j.IndexManifest
	}
	if j.Statistics != nil {
		s.Statistics = *j.Statistics
	}
	return s, nil
}

// ReadSnapshotFile reads and decodes one snapshot-shaped JSON file; a
// missing file gives an error wrapping fileio.ErrNotExist.
func ReadSnapshotFile(ctx context.Context, fs fileio.FileIO, path string) (Snapshot, error) {
	data, err := fileio.ReadFile(ctx, fs, path)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := ParseSnapshot(data)
	if err != nil {
		return Snapshot{}, fmt.Errorf("decode %s: %w: %w", path, ErrCorrupt, err)
	}
	return s, nil
}

// ListIDs lists the numbered files "<prefix><id>" of dir (snapshot-,
// changelog-, schema-), ascending. Names with a non-numeric suffix are
// skipped, as Paimon HEAD does. A directory or symbolic link under such a
// name is an error: skipping it would hide a snapshot from everything that
// decides what is still referenced.
func ListIDs(ctx context.Context, fs fileio.FileIO, dir, prefix string) ([]int64, error) {
	ents, err := fs.List(ctx, dir)
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
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// Tag is one tag file.
type Tag struct {
	Name     string
	Snapshot Snapshot
}

// ReadTags reads every tag-<name> of the branch metadata root (the table
// root for main), sorted by snapshot id.
func ReadTags(ctx context.Context, fs fileio.FileIO, branchRoot string) ([]Tag, error) {
	dir := fileio.Join(branchRoot, "tag")
	ents, err := fs.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var tags []Tag
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "tag-") {
			continue
		}
		if err := notAFile(e); err != nil {
			return nil, err
		}
		s, err := ReadSnapshotFile(ctx, fs, e.Path)
		if errors.Is(err, fileio.ErrNotExist) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		tags = append(tags, Tag{Name: strings.TrimPrefix(e.Name, "tag-"), Snapshot: s})
	}
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].Snapshot.ID < tags[j].Snapshot.ID })
	return tags, nil
}

// ReadConsumers reads every consumer-<id> of the branch metadata root.
func ReadConsumers(ctx context.Context, fs fileio.FileIO, branchRoot string) ([]Consumer, error) {
	dir := fileio.Join(branchRoot, "consumer")
	ents, err := fs.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []Consumer
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "consumer-") {
			continue
		}
		if err := notAFile(e); err != nil {
			return nil, err
		}
		data, err := fileio.ReadFile(ctx, fs, e.Path)
		if errors.Is(err, fileio.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
		var j struct {
			NextSnapshot *int64 `json:"nextSnapshot"`
		}
		if err := json.Unmarshal(data, &j); err != nil || j.NextSnapshot == nil {
			return nil, fmt.Errorf("decode consumer %s: %w: invalid JSON %q", e.Path, ErrCorrupt, data)
		}
		out = append(out, Consumer{ID: strings.TrimPrefix(e.Name, "consumer-"), NextSnapshot: *j.NextSnapshot, ModTime: e.ModTime})
	}
	return out, nil
}

// notAFile refuses a listed metadata entry that is a directory or a
// symbolic link: Paimon writes neither.
func notAFile(e fileio.FileInfo) error {
	switch {
	case e.IsSymlink:
		return &DamagedError{File: e.Path, Err: errors.New("a symbolic link where Paimon writes a metadata file")}
	case e.IsDir:
		return &DamagedError{File: e.Path, Err: fmt.Errorf("a directory where Paimon writes a metadata file: %w", syscall.EISDIR)}
	}
	return nil
}

// SnapshotPath is the path of snapshot id under a branch metadata root.
func SnapshotPath(branchRoot string, id int64) string {
	return fileio.Join(branchRoot, "snapshot", "snapshot-"+strconv.FormatInt(id, 10))
}
