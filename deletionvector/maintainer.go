package deletionvector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// ErrCorrupt is wrapped by every error about an index file whose content
// or index-manifest entry compactd cannot trust.
var ErrCorrupt = errors.New("corrupt deletion-vector index")

// Maintainer holds one bucket's deletion vectors while a compaction job of
// that bucket runs: Paimon's BucketedDvMaintainer. It starts from the
// bucket's vectors in the job's snapshot, takes new deletions of rows the
// job's output supersedes (NotifyNewDeletion), drops the vectors of files
// the job rewrites (RemoveDeletionVectorOf) and keeps every other vector,
// upgraded files' included. Write then writes the bucket's complete new
// index file and returns the index-manifest change replacing the old ones.
//
// Its methods may be called from several goroutines.
type Maintainer struct {
	t         *table.Table
	partition []byte
	bucket    int32
	label     string // "table t partition p bucket b" for errors
	bitmap64  bool
	base      []manifest.IndexFileMeta // the bucket's DELETION_VECTORS files in the snapshot

	mu       sync.Mutex
	rows     map[string]int64 // live data file → row count
	removed  map[string]bool  // files the job rewrote
	touched  map[string]bool  // files that got new deletions
	vectors  map[string]*datafile.DeletionVector
	modified bool
}

// Load reads the deletion vectors of bucket b of a snapshot of t (b comes
// from that snapshot's table.FileSet). It fails closed, naming the table
// and the file, on an index file it cannot read or that does not match its
// index-manifest entry, on a vector of a data file that is not live in the
// bucket or that marks a row past the file's end, and on two vectors for
// one data file. Nothing is written.
func Load(ctx context.Context, t *table.Table, b *table.BucketFiles) (*Maintainer, error) {
	m := &Maintainer{
		t: t, partition: b.Partition, bucket: b.Bucket,
		label:    bucketLabel(t, b.Partition, b.Bucket),
		bitmap64: t.Options().DeletionVectorsBitmap64,
		rows:     make(map[string]int64, len(b.Files)),
		removed:  map[string]bool{},
		touched:  map[string]bool{},
		vectors:  map[string]*datafile.DeletionVector{},
	}
	for i := range b.Files {
		m.rows[b.Files[i].File.FileName] = b.Files[i].File.RowCount
	}
	for i := range b.IndexFiles {
		idx := &b.IndexFiles[i]
		if idx.IndexType != manifest.IndexTypeDeletionVectors {
			continue
		}
		m.base = append(m.base, *idx)
		if err := m.loadFile(ctx, idx); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Maintainer) loadFile(ctx context.Context, idx *manifest.IndexFileMeta) error {
	path, err := m.t.Paths().IndexFileOf(m.partition, m.bucket, idx)
	if err != nil {
		return fmt.Errorf("%s: deletion-vector index file %s: %w", m.label, idx.FileName, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: deletion-vector index file %s: %w: %s", m.label, path, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if idx.DeletionVectors == nil {
		return fail("its index-manifest entry has no deletion-vector ranges")
	}
	data, err := fileio.ReadFile(ctx, m.t.FileIO(), path)
	if err != nil {
		return fmt.Errorf("%s: read deletion-vector index file %s: %w", m.label, path, err)
	}
	if len(data) == 0 || data[0] != datafile.DeletionVectorIndexVersion {
		return fail("not a version-%d deletion-vector file", datafile.DeletionVectorIndexVersion)
	}
	if int64(len(data)) != idx.FileSize {
		return fail("%d bytes, the index manifest says %d", len(data), idx.FileSize)
	}
	if idx.RowCount != int64(len(idx.DeletionVectors)) {
		return fail("row count %d in the index manifest for %d vectors", idx.RowCount, len(idx.DeletionVectors))
	}
	for _, r := range idx.DeletionVectors {
		rows, live := m.rows[r.DataFileName]
		if !live {
			return fail("a deletion vector for data file %s, which is not live in the bucket", r.DataFileName)
		}
		if _, dup := m.vectors[r.DataFileName]; dup {
			return fail("a second deletion vector for data file %s", r.DataFileName)
		}
		if r.Offset < 1 || int64(r.Offset) >= int64(len(data)) {
			return fail("vector of %s at offset %d outside the file", r.DataFileName, r.Offset)
		}
		dv, n, err := datafile.DecodeDeletionVector(data[r.Offset:])
		if err != nil {
			return fail("vector of %s at offset %d: %v", r.DataFileName, r.Offset, err)
		}
		want := int64(n - 8) // payload: Java's length for 32-bit vectors
		if dv.Bitmap64 {
			want = int64(n) // with the length and CRC fields, as Java's reader checks
		}
		if int64(r.Length) != want {
			return fail("vector of %s: length %d in the index manifest, %d in the file", r.DataFileName, r.Length, want)
		}
		card := dv.Cardinality()
		if r.Cardinality != nil && *r.Cardinality != card {
			return fail("vector of %s: cardinality %d in the index manifest, %d in the file", r.DataFileName, *r.Cardinality, card)
		}
		if p := dv.MaxPosition(); p >= rows {
			return fail("vector of %s deletes row %d of a file of %d rows", r.DataFileName, p, rows)
		}
		m.vectors[r.DataFileName] = dv
	}
	return nil
}

// NotifyNewDeletion marks row pos of data file file deleted: the row is
// superseded by a record the job writes. file must be live in the bucket
// and not rewritten by the job, and pos a row of it; a 32-bit table takes
// positions up to 2^31-1 only, as Java's BitmapDeletionVector does. A file
// without a vector gets one of the table's kind (deletion-vectors.bitmap64);
// a file that has one keeps its kind.
func (m *Maintainer) NotifyNewDeletion(file string, pos int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rows, live := m.rows[file]
	switch {
	case !live:
		return fmt.Errorf("%s: deletion of row %d of data file %s, which is not live in the bucket", m.label, pos, file)
	case m.removed[file]:
		return fmt.Errorf("%s: deletion of row %d of data file %s, which the compaction rewrites", m.label, pos, file)
	case pos < 0 || pos >= rows:
		return fmt.Errorf("%s: deletion of row %d of data file %s, which has %d rows", m.label, pos, file, rows)
	}
	dv := m.vectors[file]
	if dv == nil {
		dv = &datafile.DeletionVector{Bitmap64: m.bitmap64}
	}
	if !dv.Bitmap64 && pos > math.MaxInt32 {
		return fmt.Errorf("%s: deletion of row %d of data file %s: a 32-bit deletion vector holds rows up to %d (deletion-vectors.bitmap64 is off)", m.label, pos, file, math.MaxInt32)
	}
	if dv.IsDeleted(pos) {
		return nil
	}
	dv.Delete(pos)
	m.vectors[file] = dv
	m.touched[file] = true
	m.modified = true
	return nil
}

// RemoveDeletionVectorOf drops the vector of a file the job rewrites (its
// rows were read with the vector applied, so the new files hold none of
// the deleted rows). Upgraded files are not rewritten and keep theirs. A
// file that got new deletions in this job cannot be rewritten by it (the
// lookup only marks files above the output level, which are no inputs):
// dropping those deletions silently would bring rows back.
func (m *Maintainer) RemoveDeletionVectorOf(file string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, live := m.rows[file]; !live {
		return fmt.Errorf("%s: rewritten data file %s is not live in the bucket", m.label, file)
	}
	if m.touched[file] {
		return fmt.Errorf("%s: data file %s got new deletions in this job and is rewritten by it", m.label, file)
	}
	m.removed[file] = true
	if _, ok := m.vectors[file]; ok {
		delete(m.vectors, file)
		m.modified = true
	}
	return nil
}

// DeletionVectorOf returns a copy of the current vector of file, nil if it
// has none.
func (m *Maintainer) DeletionVectorOf(file string) *datafile.DeletionVector {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dv := m.vectors[file]; dv != nil {
		return dv.Clone()
	}
	return nil
}

// Loaded returns a copy of every vector the maintainer holds, by data
// file name: right after Load, the bucket's vectors as the snapshot has
// them, for the job's readers (the copies do not see later deletions).
func (m *Maintainer) Loaded() map[string]*datafile.DeletionVector {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*datafile.DeletionVector, len(m.vectors))
	for f, dv := range m.vectors {
		out[f] = dv.Clone()
	}
	return out
}

// Cardinalities maps each data file with a vector to its deleted rows.
func (m *Maintainer) Cardinalities() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(m.vectors))
	for f, dv := range m.vectors {
		out[f] = dv.Cardinality()
	}
	return out
}

// Modified reports whether a vector was added, grown or dropped since Load.
func (m *Maintainer) Modified() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.modified
}

// Base are the bucket's DELETION_VECTORS index files in the snapshot Load
// read: the entries Write's change replaces.
func (m *Maintainer) Base() []manifest.IndexFileMeta { return slices.Clone(m.base) }

// Write writes the bucket's new deletion-vector index file if anything
// changed (nil change, "" path otherwise), as Java's
// BucketedDvMaintainer.writeDeletionVectorsIndex does: one file holding
// every vector of the bucket (Java does not roll bucketed DV files;
// deletion-vector.index-file.target-size applies to unaware-bucket tables
// only), named index-<uuid>-<n> in index/ (or the bucket directory with
// index-file-in-data-file-dir), even when no vector is left (an empty file
// then replaces the old ones, as Java writes it). Vectors are written in
// data-file name order.
//
// The returned path is the file written: the caller must delete it if the
// change is not committed. On error nothing is left behind. Write may be
// called again after more changes; each call writes a new file.
func (m *Maintainer) Write(ctx context.Context) (*table.IndexChange, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.modified {
		return nil, "", nil
	}
	o := m.t.Options()
	switch {
	case o.IndexFileInDataFileDir && o.DataFileExternalPaths != "":
		return nil, "", fmt.Errorf("%s: not supported yet: writing deletion vectors with index-file-in-data-file-dir and data-file.external-paths (Java writes them to an external data path)", m.label)
	case !o.IndexFileInDataFileDir && o.GlobalIndexExternalPath != "":
		return nil, "", fmt.Errorf("%s: not supported yet: writing deletion vectors with %s (Java writes them to the external index path)", m.label, table.OptGlobalIndexExternalPath)
	}
	names := make([]string, 0, len(m.vectors))
	for n, dv := range m.vectors {
		if dv.Cardinality() > 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	data, ranges, err := datafile.EncodeDeletionVectorsIndex(names, m.vectors)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", m.label, err)
	}
	meta := manifest.IndexFileMeta{
		IndexType:       manifest.IndexTypeDeletionVectors,
		FileName:        m.t.Paths().NewIndexFileName(),
		FileSize:        int64(len(data)),
		RowCount:        int64(len(ranges)),
		DeletionVectors: make([]manifest.DeletionVectorMeta, len(ranges)),
	}
	for i, r := range ranges {
		card := r.Cardinality
		meta.DeletionVectors[i] = manifest.DeletionVectorMeta{DataFileName: r.DataFile, Offset: r.Offset, Length: r.Length, Cardinality: &card}
	}
	path, err := m.t.Paths().IndexFileOf(m.partition, m.bucket, &meta)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", m.label, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: write deletion-vector index file %s: %w", m.label, path, err)
	}
	// WriteFile publishes on Close only: a failed or cancelled write leaves
	// no file.
	if err := fileio.WriteFile(ctx, m.t.FileIO(), path, data); err != nil {
		return nil, "", fmt.Errorf("%s: write deletion-vector index file %s: %w", m.label, path, err)
	}
	return &table.IndexChange{
		Partition: m.partition, Bucket: m.bucket, IndexType: manifest.IndexTypeDeletionVectors,
		Base: slices.Clone(m.base), Files: []manifest.IndexFileMeta{meta},
	}, path, nil
}

func bucketLabel(t *table.Table, partition []byte, bucket int32) string {
	if p, err := t.Paths().PartitionPath(partition); err == nil && p != "" {
		return fmt.Sprintf("table %s partition %s bucket %d", t.FullName(), p, bucket)
	}
	return fmt.Sprintf("table %s bucket %d", t.FullName(), bucket)
}
