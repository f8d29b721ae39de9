package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// inspectReport is what `inspect --json` prints; the human form shows the
// same information.
type inspectReport struct {
	Table      string            `json:"table"`
	Path       string            `json:"path"`
	SchemaID   int64             `json:"schemaId"`
	Fields     []inspectField    `json:"fields"`
	Partition  []string          `json:"partitionKeys"`
	PrimaryKey []string          `json:"primaryKeys"`
	Options    map[string]string `json:"options"`
	Snapshots  []inspectSnapshot `json:"snapshots"`
	Tags       []string          `json:"tags"`
	Buckets    []inspectBucket   `json:"buckets"`
}

type inspectField struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type inspectSnapshot struct {
	ID               int64  `json:"id"`
	SchemaID         int64  `json:"schemaId"`
	Kind             string `json:"commitKind"`
	Time             string `json:"commitTime"`
	CommitUser       string `json:"commitUser"`
	CommitIdentifier int64  `json:"commitIdentifier"`
	TotalRecordCount int64  `json:"totalRecordCount"`
	DeltaRecordCount int64  `json:"deltaRecordCount"`
}

type inspectBucket struct {
	Partition string        `json:"partition"`
	Bucket    int32         `json:"bucket"`
	Runs      []inspectRun  `json:"sortedRuns"`
	Files     int           `json:"fileCount"`
	Bytes     int64         `json:"bytes"`
	Index     []string      `json:"indexFiles,omitempty"`
	levels    map[int32]int // files per level
}

type inspectRun struct {
	Level int32         `json:"level"`
	Files []inspectFile `json:"files"`
}

type inspectFile struct {
	Name      string `json:"fileName"`
	Level     int32  `json:"level"`
	Size      int64  `json:"fileSize"`
	Rows      int64  `json:"rowCount"`
	MinSeq    int64  `json:"minSequenceNumber"`
	MaxSeq    int64  `json:"maxSequenceNumber"`
	MinKey    string `json:"minKey,omitempty"`
	MaxKey    string `json:"maxKey,omitempty"`
	SchemaID  int64  `json:"schemaId"`
	Source    string `json:"fileSource,omitempty"`
	DeleteRow *int64 `json:"deleteRowCount,omitempty"`
	// DVDeleted is the cardinality of the file's deletion vector (rows a
	// deletion vector marks deleted), nil when it has none; DVFile is the
	// index file holding it. DVError says why the cardinality could not be
	// read (0.9 index manifests do not record it, so it is read from the
	// vector).
	DVDeleted *int64 `json:"deletionVectorCardinality,omitempty"`
	DVFile    string `json:"deletionVectorIndexFile,omitempty"`
	DVError   string `json:"deletionVectorError,omitempty"`
}

func newInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect <warehouse> <db.table>",
		Short: "Show a table's options, schema, snapshots and, per bucket, its levels and sorted runs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			rep, err := buildInspect(ctx, t)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, rep, true)
			}
			printInspect(os.Stdout, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	return cmd
}

func buildInspect(ctx context.Context, t *table.Table) (*inspectReport, error) {
	s := t.Schema()
	rep := &inspectReport{
		Table: t.FullName(), Path: t.Path(), SchemaID: s.ID,
		Partition: s.PartitionKeys, PrimaryKey: s.PrimaryKeys, Options: s.Options,
	}
	for _, f := range s.Fields {
		rep.Fields = append(rep.Fields, inspectField{ID: f.ID, Name: f.Name, Type: f.Type.String()})
	}
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return nil, err
	}
	var latest *table.Snapshot
	for _, id := range ids {
		sn, err := t.Snapshot(ctx, id)
		if err != nil {
			return nil, err
		}
		rep.Snapshots = append(rep.Snapshots, inspectSnapshot{
			ID: sn.ID, SchemaID: sn.SchemaID, Kind: string(sn.CommitKind),
			Time:       time.UnixMilli(sn.TimeMillis).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
			CommitUser: sn.CommitUser, CommitIdentifier: sn.CommitIdentifier,
			TotalRecordCount: sn.TotalRecordCount, DeltaRecordCount: sn.DeltaRecordCount,
		})
		latest = sn
	}
	if rep.Tags, err = t.TagNames(ctx); err != nil {
		return nil, err
	}
	if latest == nil {
		return rep, nil
	}
	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		return nil, err
	}
	keyTypes := typesOf(s.TrimmedPrimaryKeyType())
	for _, p := range fs.Partitions {
		for _, b := range p.Buckets {
			ib := inspectBucket{Partition: p.Path, Bucket: b.Bucket, levels: map[int32]int{}}
			dvs := deletionVectorsOf(ctx, t, b)
			for _, run := range b.Runs {
				ir := inspectRun{Level: run.Level}
				for _, e := range run.Files {
					f := inspectFile{
						Name: e.File.FileName, Level: e.File.Level, Size: e.File.FileSize, Rows: e.File.RowCount,
						MinSeq: e.File.MinSequenceNumber, MaxSeq: e.File.MaxSequenceNumber, SchemaID: e.File.SchemaID,
						DeleteRow: e.File.DeleteRowCount,
					}
					if e.File.FileSource != nil {
						f.Source = e.File.FileSource.String()
					}
					if dv, ok := dvs[e.File.FileName]; ok {
						f.DVDeleted, f.DVFile, f.DVError = dv.card, dv.file, dv.err
					}
					if len(keyTypes) > 0 {
						f.MinKey = keyString(keyTypes, e.File.MinKey)
						f.MaxKey = keyString(keyTypes, e.File.MaxKey)
					}
					ir.Files = append(ir.Files, f)
					ib.Files++
					ib.Bytes += e.File.FileSize
					ib.levels[e.File.Level]++
				}
				ib.Runs = append(ib.Runs, ir)
			}
			for _, idx := range b.IndexFiles {
				ib.Index = append(ib.Index, idx.IndexType+":"+idx.FileName)
			}
			rep.Buckets = append(rep.Buckets, ib)
		}
	}
	return rep, nil
}

type dvInfo struct {
	card *int64
	file string
	err  string
}

// deletionVectorsOf maps each data file of the bucket with a deletion
// vector to its cardinality: from the index manifest, or (0.9 tables)
// read from the vector; a vector that cannot be read is reported, not
// fatal, so one odd file does not hide the rest.
func deletionVectorsOf(ctx context.Context, t *table.Table, b *table.BucketFiles) map[string]dvInfo {
	out := map[string]dvInfo{}
	for i := range b.IndexFiles {
		idx := &b.IndexFiles[i]
		if idx.IndexType != manifest.IndexTypeDeletionVectors {
			continue
		}
		for _, r := range idx.DeletionVectors {
			d := dvInfo{card: r.Cardinality, file: idx.FileName}
			if d.card == nil {
				path, err := t.Paths().IndexFileOf(b.Partition, b.Bucket, idx)
				if err == nil {
					var dv *datafile.DeletionVector
					if dv, err = datafile.ReadDeletionVector(ctx, t.FileIO(), path, int64(r.Offset), int64(r.Length)); err == nil {
						n := dv.Cardinality()
						d.card = &n
					}
				}
				if err != nil {
					d.err = err.Error()
				}
			}
			out[r.DataFileName] = d
		}
	}
	return out
}

func typesOf(rt table.RowType) []table.DataType {
	out := make([]table.DataType, len(rt))
	for i, f := range rt {
		out[i] = f.Type
	}
	return out
}

// keyString renders a serialized key row as a JSON array, or the decode
// error in brackets so that one odd file does not hide the rest.
func keyString(types []table.DataType, data []byte) string {
	row, err := table.DecodeBinaryRow(types, data)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	buf := []byte{'['}
	for i, v := range row {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = scan.AppendValue(buf, types[i], v); err != nil {
			return "<" + err.Error() + ">"
		}
	}
	return string(append(buf, ']'))
}

func printInspect(w io.Writer, rep *inspectReport) {
	fmt.Fprintf(w, "Table %s\n  path: %s\n", rep.Table, rep.Path)
	cols := make([]string, len(rep.Fields))
	for i, f := range rep.Fields {
		cols[i] = f.Name + " " + f.Type
	}
	fmt.Fprintf(w, "  schema %d: %s\n", rep.SchemaID, strings.Join(cols, ", "))
	if len(rep.PrimaryKey) > 0 {
		fmt.Fprintf(w, "  primary key: %s\n", strings.Join(rep.PrimaryKey, ", "))
	}
	if len(rep.Partition) > 0 {
		fmt.Fprintf(w, "  partitioned by: %s\n", strings.Join(rep.Partition, ", "))
	}
	keys := make([]string, 0, len(rep.Options))
	for k := range rep.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "  options:")
	for _, k := range keys {
		fmt.Fprintf(w, "    %s = %s\n", k, rep.Options[k])
	}
	if len(rep.Tags) > 0 {
		fmt.Fprintf(w, "  tags: %s\n", strings.Join(rep.Tags, ", "))
	}

	fmt.Fprintf(w, "\nSnapshots (%d)\n", len(rep.Snapshots))
	if len(rep.Snapshots) == 0 {
		fmt.Fprintln(w, "  (none: nothing was committed yet)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rep.Snapshots) > 0 {
		fmt.Fprintln(tw, "  ID\tKIND\tTIME\tCOMMIT USER\tTOTAL ROWS\tDELTA ROWS")
	}
	for _, s := range rep.Snapshots {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%+d\n", s.ID, s.Kind, s.Time, s.CommitUser, s.TotalRecordCount, s.DeltaRecordCount)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nBuckets (%d)\n", len(rep.Buckets))
	for _, b := range rep.Buckets {
		part := b.Partition
		if part == "" {
			part = "(unpartitioned)"
		}
		bucket := fmt.Sprintf("bucket %d", b.Bucket)
		if b.Bucket == table.BucketPostpone {
			bucket = "bucket-postpone (rows not yet visible to readers)"
		}
		fmt.Fprintf(w, "  %s %s: %s, %d bytes, %s", part, bucket, plural(b.Files, "file"), b.Bytes, plural(len(b.Runs), "sorted run"))
		if n := b.levels[0]; n > 0 {
			fmt.Fprintf(w, " (%d at level 0)", n)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    RUN\tLEVEL\tFILE\tSIZE\tROWS\tDV DELETED\tSEQ\tKEYS")
		for i, r := range b.Runs {
			for _, f := range r.Files {
				keys := ""
				if f.MinKey != "" {
					keys = f.MinKey + " .. " + f.MaxKey
				}
				dv := "-"
				switch {
				case f.DVDeleted != nil:
					dv = fmt.Sprint(*f.DVDeleted)
				case f.DVError != "":
					dv = "<" + f.DVError + ">"
				}
				fmt.Fprintf(tw, "    %d\t%d\t%s\t%d\t%d\t%s\t%d..%d\t%s\n", i, f.Level, f.Name, f.Size, f.Rows, dv, f.MinSeq, f.MaxSeq, keys)
			}
		}
		tw.Flush()
		for _, idx := range b.Index {
			fmt.Fprintf(w, "    index: %s\n", idx)
		}
	}
}

// plural is "1 file", "2 files".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
