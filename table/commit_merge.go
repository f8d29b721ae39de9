package table

// Step 3 of the commit protocol (commit.go): Java's minor manifest merge of
// the base manifest list.

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/table/manifest"
)

// mergeManifests is Java's minor manifest merge (§8.6 step 2 of the format
// spec): walking the manifests in order, a group that reaches
// manifest.target-file-size is folded into one new manifest (an ADD and the
// DELETE of the same file cancel out; unmatched DELETEs are kept), and the
// trailing group is folded only once it has manifest.merge-min-count
// manifests. Without it the base list would grow by one manifest per
// commit. Input manifests are never deleted: older snapshots use them.
//
// Java's full-compaction attempt (step 1, once 16 MiB of small or
// DELETE-carrying manifests accumulate) is not done; the minor merge
// already bounds the list, and the result is equivalent for readers.
//
// The merged manifests are encoded into pending, not written: the caller
// writes them with the attempt's other files.
func (t *Table) mergeManifests(ctx context.Context, metas []manifest.ListEntry, partTypes []DataType, schemaID int64, format manifest.Format, pending *[]pendingFile) ([]manifest.ListEntry, error) {
	opts := t.Options()
	target := opts.ManifestTargetFileSize
	if target <= 0 {
		target = 8 << 20
	}
	minCount := opts.ManifestMergeMinCount
	if minCount <= 0 {
		minCount = 30
	}
	var out []manifest.ListEntry
	var group []manifest.ListEntry
	var groupSize int64
	flush := func() error {
		if len(group) == 1 {
			out = append(out, group[0])
			group, groupSize = nil, 0
			return nil
		}
		entries, err := t.ReadManifests(ctx, group)
		if err != nil {
			return err
		}
		folded := foldKeepingDeletes(entries)
		group, groupSize = nil, 0
		if len(folded) == 0 {
			return nil
		}
		meta, err := t.encodeManifest(folded, partTypes, schemaID, format, pending)
		if err != nil {
			return err
		}
		out = append(out, meta)
		return nil
	}
	for _, m := range metas {
		group = append(group, m)
		groupSize += m.FileSize
		if groupSize >= target {
			if err := flush(); err != nil {
				return nil, fmt.Errorf("merge manifests of %s: %w", t.FullName(), err)
			}
		}
	}
	if len(group) >= minCount {
		if err := flush(); err != nil {
			return nil, fmt.Errorf("merge manifests of %s: %w", t.FullName(), err)
		}
	} else {
		out = append(out, group...)
	}
	return out, nil
}

// foldKeepingDeletes cancels ADD/DELETE pairs of the same file and keeps
// the rest in order, DELETEs whose ADD lies in an earlier manifest included.
func foldKeepingDeletes(entries []manifest.Entry) []manifest.Entry {
	pos := map[manifest.FileIdentifier]int{}
	keep := make([]bool, len(entries))
	for i := range entries {
		id := entries[i].Identifier()
		switch entries[i].Kind {
		case manifest.FileKindAdd:
			pos[id] = i
			keep[i] = true
		case manifest.FileKindDelete:
			if j, ok := pos[id]; ok && keep[j] {
				keep[j] = false
				delete(pos, id)
			} else {
				keep[i] = true
			}
		}
	}
	out := make([]manifest.Entry, 0, len(entries))
	for i := range entries {
		if keep[i] {
			out = append(out, entries[i])
		}
	}
	return out
}
