package compact_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// tableState maps each live key (k, p) to its row's JSON.
func tableState(t *testing.T, tb *table.Table) map[string]string {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	sc, err := scan.New(ctx, tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = sc.Each(ctx, func(r table.Row) error {
		b, err := scan.AppendJSON(nil, sc.ReadType(), r)
		out[fmt.Sprint(r[0], "/", r[1])] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changelogRecords reads the changelog files snapshot id added, in order.
func changelogRecords(t *testing.T, tb *table.Table, id int64) ([]manifest.Entry, []table.KeyValue) {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	s, err := tb.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.ChangelogManifestList == nil {
		return nil, nil
	}
	lists, err := tb.ChangelogManifests(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tb.ReadManifests(ctx, lists)
	if err != nil {
		t.Fatal(err)
	}
	sch := tb.Schema()
	schema := datafile.Schema{Fields: sch.Fields, KeyNames: sch.TrimmedPrimaryKeys()}
	var recs []table.KeyValue
	var rows int64
	for i := range entries {
		path, err := tb.DataFilePath(&entries[i])
		if err != nil {
			t.Fatal(err)
		}
		r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), path, schema, schema)
		if err != nil {
			t.Fatal(err)
		}
		kvs, err := merge.Collect(r)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, kvs...)
		rows += entries[i].File.RowCount
	}
	if s.ChangelogRecordCount == nil || *s.ChangelogRecordCount != rows || int64(len(recs)) != rows {
		t.Fatalf("snapshot %d: changelogRecordCount %v, files' row count %d, records read %d", id, s.ChangelogRecordCount, rows, len(recs))
	}
	return entries, recs
}

// TestFullCompactionChangelogTakesTheTableFromOneResultToTheNext: with
// changelog-producer=full-compaction each full compaction commits, in its
// COMPACT snapshot, changelog files of the top level (file source APPEND,
// named changelog-*) whose records turn the previous full compaction's
// result into the new one: -U and -D carry exactly the old rows, +I and +U
// the new ones, nothing for unchanged keys.
func TestFullCompactionChangelogTakesTheTableFromOneResultToTheNext(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	tb := newTable(t, map[string]string{"bucket": "2", "changelog-producer": "full-compaction"})
	state := map[string]string{}
	readType := tb.Schema().Fields
	for round := range 3 {
		writeRandom(t, tb, rng, "writer", 3, 60, 150, round > 0)
		sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Snapshot == 0 {
			t.Fatalf("round %d: nothing compacted", round)
		}
		entries, recs := changelogRecords(t, tb, sum.Snapshot)
		if len(recs) == 0 {
			t.Fatalf("round %d: no changelog", round)
		}
		if sum.ChangelogRows != int64(len(recs)) || sum.ChangelogFiles != len(entries) {
			t.Fatalf("round %d: summary counts %d rows in %d files, the snapshot %d in %d", round, sum.ChangelogRows, sum.ChangelogFiles, len(recs), len(entries))
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.File.FileName, "changelog-") || e.File.Level != 5 || e.File.FileSource == nil || *e.File.FileSource != manifest.FileSourceAppend {
				t.Fatalf("round %d: changelog file %s: level %d, source %v", round, e.File.FileName, e.File.Level, e.File.FileSource)
			}
		}
		for _, kv := range recs {
			key := fmt.Sprint(kv.Value[0], "/", kv.Value[1])
			b, err := scan.AppendJSON(nil, readType, kv.Value)
			if err != nil {
				t.Fatal(err)
			}
			row := string(b)
			switch kv.Kind {
			case table.RowKindInsert:
				if _, ok := state[key]; ok {
					t.Fatalf("round %d: +I of key %s, which the previous result holds", round, key)
				}
				state[key] = row
			case table.RowKindUpdateBefore, table.RowKindDelete:
				if state[key] != row {
					t.Fatalf("round %d: %s %s does not retract the previous row %s", round, kv.Kind.ShortString(), row, state[key])
				}
				delete(state, key)
			case table.RowKindUpdateAfter:
				if _, ok := state[key]; ok {
					t.Fatalf("round %d: +U of key %s without its -U", round, key)
				}
				state[key] = row
			}
		}
		if got := tableState(t, tb); !mapsEqual(got, state) {
			t.Fatalf("round %d: the changelog applied to the previous result gives %d keys, the table holds %d", round, len(state), len(got))
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestAFailedChangelogCommitLeavesNoChangelogFilesBehind: when the commit
// of a changelog-producing compaction fails before the publish, its
// changelog files go with its data files.
func TestAFailedChangelogCommitLeavesNoChangelogFilesBehind(t *testing.T) {
	for _, producer := range []string{"full-compaction", "lookup"} {
		t.Run(producer, func(t *testing.T) {
			ctx := context.Background()
			tb := newTable(t, map[string]string{"bucket": "2", "changelog-producer": producer})
			writeRandom(t, tb, rand.New(rand.NewPCG(1, 2)), "writer", 6, 50, 100, false)
			var before []string
			_ = filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					before = append(before, p)
				}
				return err
			})
			disk := &changelogCounting{fullDisk: fullDisk{FileIO: tb.FileIO()}}
			faulty, err := table.OpenPath(ctx, disk, tb.Path())
			if err != nil {
				t.Fatal(err)
			}
			_, err = compact.Run(ctx, faulty, compact.Options{Full: producer == "full-compaction"})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("want the manifest write's ENOSPC, got %v", err)
			}
			if disk.changelogs.Load() == 0 {
				t.Fatal("the compaction wrote no changelog file before its commit failed: nothing was tested")
			}
			var after []string
			_ = filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					after = append(after, p)
				}
				return err
			})
			slices.Sort(before)
			slices.Sort(after)
			if !slices.Equal(before, after) {
				t.Fatalf("files left behind:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// changelogCounting is fullDisk counting the changelog files created.
type changelogCounting struct {
	fullDisk
	changelogs atomic.Int64
}

func (f *changelogCounting) Create(ctx context.Context, path string) (fileio.Writer, error) {
	if strings.Contains(path, "/changelog-") {
		f.changelogs.Add(1)
	}
	return f.fullDisk.Create(ctx, path)
}
