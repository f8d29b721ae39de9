package reach

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// tableMeta reads Avro metadata through the table package and resolves
// data, extra and index file paths with the table's path factory.
type tableMeta struct{ t *table.Table }

// TableMetadata adapts an open table to Metadata.
func TableMetadata(t *table.Table) Metadata { return tableMeta{t} }

// TableSource is the Source of an open table's main branch.
func TableSource(t *table.Table) Source {
	return Source{FS: t.FileIO(), Root: t.Path(), Meta: TableMetadata(t)}
}

// read reads one metadata file and decodes it, wrapping decode errors in
// table.ErrCorrupt so that a damaged file is told apart from a store that
// failed to deliver it.
func read[T any](ctx context.Context, m tableMeta, what, name string, decode func([]byte) ([]T, error)) ([]T, error) {
	path := m.t.Paths().ManifestPath(name)
	data, err := fileio.ReadFile(ctx, m.t.FileIO(), path)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	out, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w: %w", what, path, table.ErrCorrupt, err)
	}
	return out, nil
}

func (m tableMeta) ManifestList(ctx context.Context, name string) ([]string, error) {
	metas, err := read(ctx, m, "manifest list", name, manifest.DecodeList)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(metas))
	for i, mf := range metas {
		out[i] = mf.FileName
	}
	return out, nil
}

func (m tableMeta) Manifest(ctx context.Context, name string, fn func(DataEntry) error) error {
	entries, err := read(ctx, m, "manifest", name, manifest.Decode)
	if err != nil {
		return err
	}
	paths := m.t.Paths()
	for i := range entries {
		e := &entries[i]
		path, err := paths.DataFilePath(e.Partition, e.Bucket, &e.File)
		if err != nil {
			return fmt.Errorf("manifest %s: path of %s: %w", name, e.File.FileName, err)
		}
		de := DataEntry{
			Kind: Kind(e.Kind), Partition: string(e.Partition), Bucket: e.Bucket,
			Level: e.File.Level, Name: e.File.FileName, Path: path,
			Compacted: e.File.FileSource != nil && *e.File.FileSource == manifest.FileSourceCompact,
		}
		for _, x := range e.File.ExtraFiles {
			xp, err := paths.ExtraFilePath(e.Partition, e.Bucket, &e.File, x)
			if err != nil {
				return fmt.Errorf("manifest %s: path of %s: %w", name, x, err)
			}
			de.ExtraPaths = append(de.ExtraPaths, xp)
		}
		if err := fn(de); err != nil {
			return err
		}
	}
	return nil
}

func (m tableMeta) IndexManifest(ctx context.Context, name string) ([]IndexFile, error) {
	entries, err := read(ctx, m, "index manifest", name, manifest.DecodeIndex)
	if err != nil {
		return nil, err
	}
	out := make([]IndexFile, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		p, err := m.t.Paths().IndexFileOf(e.Partition, e.Bucket, &e.IndexFile)
		if err != nil {
			return nil, fmt.Errorf("index manifest %s: path of %s: %w", name, e.IndexFile.FileName, err)
		}
		out = append(out, IndexFile{Name: e.IndexFile.FileName, Path: p})
	}
	return out, nil
}
