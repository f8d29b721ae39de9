package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// snapshotRows reads the table's latest snapshot (merged on read) by key.
func snapshotRows(t *testing.T, ctx context.Context, wh, name string) map[int64]string {
	t.Helper()
	tbl, _, err := openLatest(ctx, wh, name)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(ctx, tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	err = sc.Each(ctx, func(r table.Row) error {
		k := r[0].(int64)
		if _, dup := out[k]; dup {
			return fmt.Errorf("key %d read twice", k)
		}
		out[k] = fmt.Sprint(r[1:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The changelog the bench demands (updateShape.ChangelogRows) is the
// difference between the table before and after the update runs: -U/+U for
// every key whose row changed, +I for every new key, no key updated twice.
func TestUpdateShapeIsTheChangelogOfTheUpdateRuns(t *testing.T) {
	ctx := context.Background()
	const rows, baseRuns = 4000, 8
	wh := t.TempDir()
	if _, err := generate(ctx, wh, "bench", "narrow", genSpec{Schema: "narrow", Rows: rows, Runs: baseRuns, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	tbl, err := table.Open(ctx, fileio.NewLocal(), wh, "bench", "narrow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Run(ctx, tbl, compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	before := snapshotRows(t, ctx, wh, clTable)
	shape := newUpdateShape(rows, baseRuns, clUpdateRuns, clNewKeys(rows, baseRuns))
	if int64(len(before)) != shape.BaseKeys {
		t.Fatalf("the base holds %d keys, shape says %d", len(before), shape.BaseKeys)
	}
	for k := range shape.BaseKeys {
		if _, ok := before[k]; !ok {
			t.Fatalf("base key %d missing: the base is not [0, %d)", k, shape.BaseKeys)
		}
	}
	n, err := genUpdates(ctx, wh, "bench", "narrow", rows, baseRuns, clUpdateRuns, shape.Inserts, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != shape.Records() || shape.Inserts == 0 || shape.UpdatedKeys != shape.Updates {
		t.Fatalf("genUpdates wrote %d records; shape %+v", n, shape)
	}
	f, err := facts(ctx, wh, clTable)
	if err != nil {
		t.Fatal(err)
	}
	if f.Files != 1+clUpdateRuns || f.Rows != shape.BaseKeys+n {
		t.Fatalf("table has %d files with %d rows, want %d files with %d", f.Files, f.Rows, 1+clUpdateRuns, shape.BaseKeys+n)
	}
	after := snapshotRows(t, ctx, wh, clTable)
	var changed, inserted int64
	for k, v := range after {
		old, ok := before[k]
		switch {
		case !ok:
			if k < shape.BaseKeys || k >= shape.BaseKeys+shape.Inserts {
				t.Errorf("new key %d outside [%d, %d)", k, shape.BaseKeys, shape.BaseKeys+shape.Inserts)
			}
			inserted++
		case old != v:
			changed++
		}
	}
	if changed != shape.UpdatedKeys || inserted != shape.Inserts {
		t.Errorf("the update runs changed %d keys and added %d, shape says %d and %d", changed, inserted, shape.UpdatedKeys, shape.Inserts)
	}
	if got := 2*changed + inserted; got != shape.ChangelogRows() {
		t.Errorf("changelog of the update runs has %d rows, ChangelogRows = %d", got, shape.ChangelogRows())
	}
}

func TestUpdateShapeCountsKeysUpdatedTwiceOnce(t *testing.T) {
	// 20 runs: runs 16..19 update the keys of runs 0..3 again.
	s := newUpdateShape(8000, 8, 20, 5)
	if s.Updates <= s.UpdatedKeys || s.UpdatedKeys != s.BaseKeys {
		t.Errorf("shape %+v: want every key updated and some twice", s)
	}
	if s.ChangelogRows() != 2*s.BaseKeys+5 {
		t.Errorf("ChangelogRows = %d, want %d", s.ChangelogRows(), 2*s.BaseKeys+5)
	}
}

func TestSetTableOptionsRewritesOnlyTheOptions(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	if _, err := generate(ctx, wh, "bench", "narrow", genSpec{Schema: "narrow", Rows: 500, Runs: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	before, err := facts(ctx, wh, clTable)
	if err != nil {
		t.Fatal(err)
	}
	if err := setTableOptions(ctx, wh, clTable, map[string]string{"changelog-producer": "lookup", "write-only": ""}); err != nil {
		t.Fatal(err)
	}
	tbl, _, err := openLatest(ctx, wh, clTable)
	if err != nil {
		t.Fatal(err)
	}
	o := tbl.Schema().Options
	if o["changelog-producer"] != "lookup" || tbl.Options().ChangelogProducer != table.ChangelogLookup {
		t.Errorf("changelog-producer not set: %v", o)
	}
	if _, ok := o["write-only"]; ok {
		t.Errorf("write-only not removed: %v", o)
	}
	if o["bucket"] != "1" || o["target-file-size"] != "1 gb" || !reflect.DeepEqual(tbl.SchemaIDs(), []int64{0}) {
		t.Errorf("other options or schemas changed: %v, schemas %v", o, tbl.SchemaIDs())
	}
	after, err := facts(ctx, wh, clTable)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("snapshot facts changed: %+v → %+v", before, after)
	}
	if rows := snapshotRows(t, ctx, wh, clTable); len(rows) == 0 {
		t.Error("the table reads no rows after the options were rewritten")
	}
}

func TestCheckClStepFailsLoudly(t *testing.T) {
	shape := updateShape{BaseKeys: 100, UpdatedKeys: 50, Updates: 50, Inserts: 10}
	in := bucketFacts{Snapshot: 17, MaxLevel: 5, Rows: 160}
	top := []string{"data-top.parquet"}
	fullLevels := map[int32][]string{5: {"data-new.parquet"}}
	okFull := clStep{out: bucketFacts{Snapshot: 18, Kind: table.CommitCompact, MaxLevel: 5, Rows: 110}, cl: changelogFacts{Files: 1, Rows: 110, Recorded: 110}}
	lookupLevels := map[int32][]string{5: top, 4: {"data-l4.parquet"}}
	okLookup := clStep{out: bucketFacts{Snapshot: 18, Kind: table.CommitCompact, MaxLevel: 5, Rows: 160}, cl: changelogFacts{Files: 1, Rows: 110, Recorded: 110}}
	noCl := clStep{out: okFull.out}
	cases := []struct {
		name   string
		full   bool
		v      clVariant
		s      clStep
		levels map[int32][]string
		want   string // "" = passes
	}{
		{"full with changelog", true, clFull, okFull, fullLevels, ""},
		{"lookup with changelog", false, clLookup, okLookup, lookupLevels, ""},
		{"none without changelog", true, clNone, noCl, fullLevels, ""},
		{"no changelog written", true, clFull, noCl, fullLevels, "no changelog file"},
		{"changelog missing the -U rows", true, clFull, clStep{out: okFull.out, cl: changelogFacts{Files: 1, Rows: 60, Recorded: 60}}, fullLevels, "want 110"},
		{"changelog record count differs", false, clLookup, clStep{out: okLookup.out, cl: changelogFacts{Files: 1, Rows: 110, Recorded: 0}}, lookupLevels, "changelogRecordCount"},
		{"changelog without producer", false, clForceLookup, okLookup, lookupLevels, "without a changelog producer"},
		{"no new snapshot", true, clNone, clStep{out: bucketFacts{Snapshot: 17, Kind: table.CommitCompact, MaxLevel: 5, Rows: 110}}, fullLevels, "want a COMPACT snapshot"},
		{"level 0 left", true, clFull, okFull, map[int32][]string{5: {"a"}, 0: {"b"}}, "level-0 files left"},
		{"lookup rewrote the top level", false, clLookup, okLookup, map[int32][]string{5: {"data-other.parquet"}, 4: {"x"}}, "untouched"},
		{"full compaction lost rows", true, clFull, clStep{out: bucketFacts{Snapshot: 18, Kind: table.CommitCompact, MaxLevel: 5, Rows: 100}, cl: okFull.cl}, fullLevels, "want 110 rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkClStep("step", c.full, c.v, c.s, shape, in, top, c.levels)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("unexpected failure: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	got, err := parseOptions("changelog-producer=lookup, force-lookup=")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"changelog-producer": "lookup", "force-lookup": ""}) {
		t.Errorf("parseOptions = %v, %v", got, err)
	}
	if _, err := parseOptions("lookup"); err == nil {
		t.Error("an option without = parsed")
	}
}

// The bench's pipeline (a compacted base with update runs, a copy with
// rewritten options, compaction, latestChangelog, checkClStep) accepts what
// compactd's own compactions commit for every variant, in process and at a
// small size.
func TestCompactdPassesTheChangelogChecks(t *testing.T) {
	ctx := context.Background()
	const rows, baseRuns = 4000, 8
	master := t.TempDir() + "/wh"
	if _, err := generate(ctx, master, "bench", "narrow", genSpec{Schema: "narrow", Rows: rows, Runs: baseRuns, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	tbl, err := table.Open(ctx, fileio.NewLocal(), master, "bench", "narrow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Run(ctx, tbl, compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	shape := newUpdateShape(rows, baseRuns, clUpdateRuns, clNewKeys(rows, baseRuns))
	if _, err := genUpdates(ctx, master, "bench", "narrow", rows, baseRuns, clUpdateRuns, shape.Inserts, 2); err != nil {
		t.Fatal(err)
	}
	in, err := facts(ctx, master, clTable)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := liveLevels(ctx, master, clTable)
	if err != nil {
		t.Fatal(err)
	}
	top := levels[in.MaxLevel]
	for _, k := range []clKind{{full: true, variants: clFullVariants}, {full: false, variants: clLookVariants}} {
		for _, v := range k.variants {
			t.Run(fmt.Sprintf("full=%v/%s", k.full, v.label), func(t *testing.T) {
				wh := t.TempDir() + "/wh"
				if err := copyDir(ctx, master, wh); err != nil {
					t.Fatal(err)
				}
				if err := setTableOptions(ctx, wh, clTable, v.options); err != nil {
					t.Fatal(err)
				}
				tbl, err := table.Open(ctx, fileio.NewLocal(), wh, "bench", "narrow")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := compact.Run(ctx, tbl, compact.Options{Full: k.full}); err != nil {
					t.Fatal(err)
				}
				s := clStep{variant: v, tool: "compactd"}
				if s.out, err = facts(ctx, wh, clTable); err != nil {
					t.Fatal(err)
				}
				if s.cl, err = latestChangelog(ctx, wh, clTable); err != nil {
					t.Fatal(err)
				}
				after, err := liveLevels(ctx, wh, clTable)
				if err != nil {
					t.Fatal(err)
				}
				if err := checkClStep("compactd", k.full, v, s, shape, in, top, after); err != nil {
					t.Error(err)
				}
				if v.changelog && s.cl.Rows != shape.ChangelogRows() {
					t.Errorf("changelog rows %d, want %d", s.cl.Rows, shape.ChangelogRows())
				}
			})
		}
	}
}
