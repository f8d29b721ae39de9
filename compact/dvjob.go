package compact

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/table/manifest"
)

// FinishDeletionVectors ends a bucket job's deletion-vector maintenance
// once r.Entries are final: it drops the vectors of the files the job
// rewrote (DELETE entries no ADD of the same file brings back; an upgrade
// is a DELETE and an ADD of one file and keeps its vector), writes the
// bucket's new index file if anything changed (new deletions the lookup
// reported through m.NotifyNewDeletion, dropped vectors) and records it in
// r (AddIndexChange: the change is committed with the entries, the file
// deleted with the job's other outputs if it is not).
//
// m must have been loaded (deletionvector.Load) from the bucket files of
// the snapshot the job was planned on; the job's rewrites must read their
// inputs with m's vectors applied (m.DeletionVectorOf).
func (r *JobResult) FinishDeletionVectors(ctx context.Context, m *deletionvector.Maintainer) error {
	for _, f := range r.Rewritten() {
		if err := m.RemoveDeletionVectorOf(f); err != nil {
			return err
		}
	}
	ch, path, err := m.Write(ctx)
	if err != nil {
		return fmt.Errorf("deletion vectors: %w", err)
	}
	r.AddIndexChange(ch, path)
	return nil
}

// Rewritten names the input files the job rewrote, in entry order: the
// DELETE entries no ADD of the same file brings back (an upgrade is a
// DELETE and an ADD of one file). Their deletion vectors go with them
// (Java's notifyRewriteCompactBefore); upgraded files keep theirs.
func (r *JobResult) Rewritten() []string {
	kept := map[string]bool{}
	for i := range r.Entries {
		if r.Entries[i].Kind == manifest.FileKindAdd {
			kept[r.Entries[i].File.FileName] = true
		}
	}
	var out []string
	for i := range r.Entries {
		if e := &r.Entries[i]; e.Kind == manifest.FileKindDelete && !kept[e.File.FileName] {
			out = append(out, e.File.FileName)
		}
	}
	return out
}
