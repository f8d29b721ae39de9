package table

// Step 3 of the commit protocol (commit.go), the writing half: an attempt
// encodes every metadata file it needs (merged manifests, the delta and
// changelog manifests, the manifest lists naming them, the index
// manifest) in memory first, which gives each its size for the lists, and
// then writes them side by side. On an object store that is one round
// trip for all of them instead of one each. The snapshot, which makes
// them visible, is published only after every one of them is written.

import (
	"context"
	"fmt"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// commitWriteParallelism bounds the metadata files a commit attempt writes
// at once.
const commitWriteParallelism = 4

// pendingFile is a metadata file a commit attempt encoded and has yet to
// write.
type pendingFile struct {
	path string
	what string // "manifest", "manifest list", "index manifest", for errors
	data []byte
}

// encodeManifest encodes entries as a new manifest file, adding it to
// pending, and returns its manifest-list entry.
func (t *Table) encodeManifest(entries []manifest.Entry, partTypes []DataType, schemaID int64, codec manifest.Format, pending *[]pendingFile) (manifest.ListEntry, error) {
	name := t.paths.NewManifestFileName()
	path := t.paths.ManifestPath(name)
	data, err := manifest.Encode(entries, codec)
	if err != nil {
		return manifest.ListEntry{}, fmt.Errorf("commit to %s: encode manifest %s: %w", t.FullName(), path, err)
	}
	*pending = append(*pending, pendingFile{path: path, what: "manifest", data: data})
	return NewManifestListEntry(name, int64(len(data)), entries, partTypes, schemaID)
}

// encodeList encodes metas as a new manifest list, adding it to pending,
// and returns its name and size.
func (t *Table) encodeList(metas []manifest.ListEntry, codec manifest.Format, pending *[]pendingFile) (string, int64, error) {
	name := t.paths.NewManifestListName()
	path := t.paths.ManifestPath(name)
	data, err := manifest.EncodeList(metas, codec)
	if err != nil {
		return "", 0, fmt.Errorf("commit to %s: encode manifest list %s: %w", t.FullName(), path, err)
	}
	*pending = append(*pending, pendingFile{path: path, what: "manifest list", data: data})
	return name, int64(len(data)), nil
}

// writePending writes the files side by side, at most
// commitWriteParallelism at once; the first failure cancels the writes
// not yet done. When it fails the caller deletes every pending path: a
// write that failed may still have landed (a lost response), one never
// started is missing, and deleting a missing file is no error.
func (t *Table) writePending(ctx context.Context, files []pendingFile) error {
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError().WithMaxGoroutines(commitWriteParallelism)
	for _, f := range files {
		p.Go(func(ctx context.Context) error {
			if err := fileio.WriteFile(ctx, t.fio, f.path, f.data); err != nil {
				return fmt.Errorf("commit to %s: write %s %s: %w", t.FullName(), f.what, f.path, err)
			}
			return nil
		})
	}
	return p.Wait()
}
