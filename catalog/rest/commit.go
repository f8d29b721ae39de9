package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// snapshotCommit is a table's commit point through the catalog: POST
// .../databases/<db>/tables/<t>/commit (table.SnapshotCommit).
type snapshotCommit struct {
	cat            *Catalog
	database, name string
	tableID        string // the catalog's id of the table it was opened as
}

// commitRequest is Paimon's CommitTableRequest.
type commitRequest struct {
	TableID    string                `json:"tableId"`
	Snapshot   json.RawMessage       `json:"snapshot"`
	Statistics []partitionStatistics `json:"statistics"`
}

// partitionStatistics is Paimon's PartitionStatistics: what a commit's
// delta changes in one partition (DELETEs count negative), which the
// catalog adds to the partition's totals.
type partitionStatistics struct {
	Spec                 orderedSpec `json:"spec"`
	RecordCount          int64       `json:"recordCount"`
	FileSizeInBytes      int64       `json:"fileSizeInBytes"`
	FileCount            int64       `json:"fileCount"`
	LastFileCreationTime int64       `json:"lastFileCreationTime"`
	TotalBuckets         int32       `json:"totalBuckets"`
}

// orderedSpec is a partition spec as a JSON object in partition-key order.
type orderedSpec [][2]string

func (o orderedSpec) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv[0])
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// deltaStatistics computes the statistics Java's commit sends with a
// snapshot (FileStoreCommitImpl: PartitionEntry.merge of the delta files,
// toPartitionStatistics): per partition of the commit's delta entries,
// the signed sums of row counts, file sizes and files, the newest file
// creation time (DataFileMeta.creationTimeEpochMillis: the writer's local
// wall clock read in this machine's zone), and the last entry's total
// buckets.
func deltaStatistics(t *table.Table, entries []manifest.Entry) ([]partitionStatistics, error) {
	schema := t.Schema()
	partTypes := make([]table.DataType, 0, len(schema.PartitionKeys))
	for _, f := range schema.PartitionType() {
		partTypes = append(partTypes, f.Type)
	}
	out := []partitionStatistics{}
	index := map[string]int{}
	for i := range entries {
		e := &entries[i]
		sign := int64(1)
		if e.Kind == manifest.FileKindDelete {
			sign = -1
		}
		created := int64(0)
		if e.File.CreationTime != nil {
			wall := time.UnixMilli(*e.File.CreationTime).UTC()
			created = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.Local).UnixMilli()
		}
		k := string(e.Partition)
		at, ok := index[k]
		if !ok {
			var spec [][2]string
			if len(partTypes) > 0 {
				row, err := table.DecodeBinaryRow(partTypes, e.Partition)
				if err != nil {
					return nil, fmt.Errorf("partition of %s: %w", e.File.FileName, err)
				}
				if spec, err = t.Paths().PartitionSpec(row); err != nil {
					return nil, fmt.Errorf("partition of %s: %w", e.File.FileName, err)
				}
			}
			at = len(out)
			index[k] = at
			out = append(out, partitionStatistics{Spec: spec, LastFileCreationTime: created})
		}
		p := &out[at]
		p.RecordCount += sign * e.File.RowCount
		p.FileSizeInBytes += sign * e.File.FileSize
		p.FileCount += sign
		p.LastFileCreationTime = max(p.LastFileCreationTime, created)
		p.TotalBuckets = e.TotalBuckets
	}
	return out, nil
}

// CommitSnapshot asks the catalog to publish data as snapshot s.ID (see
// table.SnapshotCommit for the error contract).
func (sc *snapshotCommit) CommitSnapshot(ctx context.Context, t *table.Table, s *table.Snapshot, data []byte, delta []manifest.Entry) error {
	full := sc.database + "." + sc.name
	if err := sc.cat.checkOpen(); err != nil {
		return fmt.Errorf("commit to %s: %w", full, err)
	}
	if !json.Valid(data) {
		return fmt.Errorf("commit to %s: snapshot %d is not valid JSON", full, s.ID)
	}
	// The delta as Table.Commit wrote it to the snapshot's delta manifest:
	// no need to read that back.
	stats, err := deltaStatistics(t, delta)
	if err != nil {
		return fmt.Errorf("commit to %s: snapshot %d: partition statistics of the delta: %w", full, s.ID, err)
	}
	body, err := bodyJSON(commitRequest{TableID: sc.tableID, Snapshot: data, Statistics: stats})
	if err != nil {
		return fmt.Errorf("commit to %s: encode request: %w", full, err)
	}
	// Nothing is sent on a context already done: nothing was published.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit to %s: snapshot %d: %w", full, s.ID, err)
	}
	r := request{
		method: http.MethodPost,
		path:   sc.cat.path("databases", segment(sc.database), "tables", segment(sc.name), "commit"),
		body:   body,
		commit: true,
	}
	status, answer, err := sc.cat.c.do(ctx, r)
	if err != nil {
		var te *transportError
		if errors.As(err, &te) && isDialError(te.err) {
			// The connection was never made (after the dial retries):
			// the server saw nothing.
			return fmt.Errorf("commit to %s via %s: snapshot %d: %w", full, sc.cat.name, s.ID, err)
		}
		return fmt.Errorf("commit to %s via %s: snapshot %d: %w: %w", full, sc.cat.name, s.ID, err, table.ErrCommitOutcomeUnknown)
	}
	switch {
	case status == http.StatusOK:
	case status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
		// The server's refusal: nothing was published (404: the table, or
		// the id it was opened as, is gone; 409; 403; 400).
		return fmt.Errorf("commit to %s via %s: snapshot %d refused: %w", full, sc.cat.name, s.ID, sc.cat.c.statusError(r, status, answer))
	default:
		// 5xx, 408, 429, or an answer the protocol does not have (another
		// 2xx, a redirect): the server, or a proxy in front of it, may
		// have processed the commit.
		return fmt.Errorf("commit to %s via %s: snapshot %d: %w: %w", full, sc.cat.name, s.ID, sc.cat.c.statusError(r, status, answer), table.ErrCommitOutcomeUnknown)
	}
	var res struct {
		Success *bool `json:"success"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || res.Success == nil {
		return fmt.Errorf("commit to %s via %s: snapshot %d: unreadable answer %q: %w", full, sc.cat.name, s.ID, sc.cat.c.redact(string(answer)), table.ErrCommitOutcomeUnknown)
	}
	if !*res.Success {
		slog.Debug("REST catalog commit lost the race for the snapshot id", "table", full, "catalog", sc.cat.name, "snapshot", s.ID)
		return fmt.Errorf("commit to %s via %s: snapshot %d already exists: %w", full, sc.cat.name, s.ID, fileio.ErrExist)
	}
	slog.Debug("committed through REST catalog", "table", full, "catalog", sc.cat.name, "snapshot", s.ID, "kind", s.CommitKind)
	return nil
}
