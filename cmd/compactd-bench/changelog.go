package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// The changelog benchmark (issue #15): what producing a changelog costs a
// compaction, in compactd and in Java Paimon. The table is the one a
// dedicated compaction job sees beside write-only writers: a narrow
// deduplicate table whose base is one fully compacted sorted run at the top
// level, then clUpdateRuns level-0 runs that each update one key in sixteen
// of the base and insert new keys above it. Every copy of it is given one
// set of options (setTableOptions) and compacted by one tool:
//
//   - full compaction (compactd `compact --full`, Java `compact`) with
//     changelog-producer=full-compaction, against the same table with
//     changelog-producer=none;
//   - the minor compaction (compactd `compact`, Java `compact --full false`)
//     that merges the level-0 runs into the level below the top and looks
//     their keys up in the top level, with changelog-producer=lookup, against
//     the same table with force-lookup=true (the same lookups, no changelog)
//     and with neither (the same pick, without lookups).
//
// Either changelog holds -U and +U for every updated key and +I for every
// new key; the bench fails unless each tool's changelog files hold exactly
// that many rows (updateShape.ChangelogRows) and the snapshot records them.

// clUpdateRuns is the number of level-0 update runs on top of the base.
const clUpdateRuns = 8

// updateShape is what genUpdates writes on a base of rows records in
// baseRuns runs, and so what a compaction of it must do.
type updateShape struct {
	BaseKeys    int64 // the base holds every key of [0, BaseKeys)
	UpdatedKeys int64 // base keys the update runs rewrite
	Updates     int64 // update records (UpdatedKeys when runs ≤ 16)
	Inserts     int64 // new keys [BaseKeys, BaseKeys+Inserts)
}

// newUpdateShape is the shape of genUpdates(rows, baseRuns, runs, newKeys).
func newUpdateShape(rows int64, baseRuns, runs int, newKeys int64) updateShape {
	s := updateShape{BaseKeys: keysPerRun(rows, baseRuns) * int64(baseRuns), Inserts: newKeys}
	keysOf := func(r int) int64 { // keys k < BaseKeys with k%16 == r%16
		if first := int64(r % 16); first < s.BaseKeys {
			return (s.BaseKeys - first + 15) / 16
		}
		return 0
	}
	for r := 0; r < runs; r++ {
		s.Updates += keysOf(r)
		if r < 16 {
			s.UpdatedKeys += keysOf(r)
		}
	}
	return s
}

// clNewKeys is the number of new keys the changelog table's update runs
// insert: one for every eight base keys (a quarter of the updates).
func clNewKeys(rows int64, baseRuns int) int64 {
	return newUpdateShape(rows, baseRuns, 0, 0).BaseKeys / 8
}

// Records is the number of records in the update runs.
func (s updateShape) Records() int64 { return s.Updates + s.Inserts }

// ChangelogRows is the changelog of merging the update runs into the base
// on a deduplicate table (without changelog-producer.row-deduplicate): -U
// and +U per updated key, +I per new key.
func (s updateShape) ChangelogRows() int64 { return 2*s.UpdatedKeys + s.Inserts }

// setTableOptions rewrites the only schema file of a benchmark table copy
// with options set (an empty value removes the option): the copy is then the
// table as if it had been created with them, every data file and snapshot
// unchanged. Its writers were write-only, and write-only writers write no
// changelog for the lookup and full-compaction producers, so only the base
// compaction's snapshot lacks the changelog it would have had; no later
// compaction reads that changelog. Rewriting in place (rather than adding
// schema-1 as ALTER TABLE would) keeps every file of the current schema, so
// both tools read the files exactly as they read the table before.
func setTableOptions(ctx context.Context, warehouse, name string, set map[string]string) error {
	t, _, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return err
	}
	if ids := t.SchemaIDs(); len(ids) != 1 || ids[0] != 0 {
		return fmt.Errorf("table %s has schemas %v, want schema 0 alone", t.FullName(), ids)
	}
	s := t.Schema()
	opts := maps.Clone(s.Options)
	for k, v := range set {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	ns, err := table.NewTableSchema(s.ID, s.Fields, s.HighestFieldID, s.PartitionKeys, s.PrimaryKeys, opts, s.Comment, s.TimeMillis)
	if err != nil {
		return fmt.Errorf("table %s with options %v: %w", t.FullName(), set, err)
	}
	data, err := ns.MarshalJSON()
	if err != nil {
		return fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	return fileio.WriteFile(ctx, t.FileIO(), t.Paths().SchemaPath(s.ID), data)
}

// parseOptions reads "k=v,k2=v2" (an empty value removes the option).
func parseOptions(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("option %q: want k=v", p)
		}
		out[k] = v
	}
	return out, nil
}

// changelogFacts describes the changelog of the table's latest snapshot.
type changelogFacts struct {
	Files int
	Rows  int64 // rows of its changelog files (manifest row counts)
	// Recorded is the snapshot's changelogRecordCount (0 when absent).
	Recorded int64
}

func latestChangelog(ctx context.Context, warehouse, name string) (changelogFacts, error) {
	var f changelogFacts
	t, s, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return f, err
	}
	metas, err := t.ChangelogManifests(ctx, s)
	if err != nil {
		return f, err
	}
	entries, err := t.ReadManifests(ctx, metas)
	if err != nil {
		return f, err
	}
	for _, e := range entries {
		if e.Kind != manifest.FileKindAdd {
			return f, fmt.Errorf("table %s snapshot %d: changelog manifest entry %s of %s", t.FullName(), s.ID, e.Kind, e.File.FileName)
		}
		f.Files++
		f.Rows += e.File.RowCount
	}
	if s.ChangelogRecordCount != nil {
		f.Recorded = *s.ChangelogRecordCount
	}
	return f, nil
}

// liveLevels returns the names of the latest snapshot's live data files by
// level.
func liveLevels(ctx context.Context, warehouse, name string) (map[int32][]string, error) {
	t, s, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return nil, err
	}
	fs, err := t.FileSet(ctx, s)
	if err != nil {
		return nil, err
	}
	out := map[int32][]string{}
	for _, b := range fs.Buckets() {
		for _, e := range b.Files {
			out[e.File.Level] = append(out[e.File.Level], e.File.FileName)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out, nil
}

// clMaster returns the cached changelog table (table bench.narrow) of rows
// base records: the narrow benchmark table, fully compacted by compactd
// into one top-level file, then clUpdateRuns update runs with new keys.
func (r *runner) clMaster(ctx context.Context, rows int64) (string, updateShape, error) {
	shape := newUpdateShape(rows, r.c.Runs, clUpdateRuns, clNewKeys(rows, r.c.Runs))
	wh := filepath.Join(r.c.Work, fmt.Sprintf("narrowcl-%d-r%d", rows, r.c.Runs), "wh")
	done := filepath.Join(filepath.Dir(wh), "done")
	if _, err := os.Stat(done); err == nil {
		return wh, shape, nil
	}
	if err := os.RemoveAll(filepath.Dir(wh)); err != nil {
		return "", shape, err
	}
	narrow, _, err := r.master(ctx, "narrow", rows)
	if err != nil {
		return "", shape, err
	}
	if err := copyDir(ctx, narrow, wh); err != nil {
		return "", shape, err
	}
	slog.Info("generating", "schema", "narrowcl", "rows", rows)
	if _, err := measure(ctx, nil, r.c.Compactd, "compact", wh, clTable, "--full"); err != nil {
		return "", shape, fmt.Errorf("base compaction: %w", err)
	}
	m, err := measure(ctx, nil, r.self, "genupdates", "-warehouse", wh, "-table", clTable,
		"-rows", fmt.Sprint(rows), "-base-runs", fmt.Sprint(r.c.Runs), "-runs", fmt.Sprint(clUpdateRuns),
		"-new-keys", fmt.Sprint(shape.Inserts))
	if err != nil {
		return "", shape, err
	}
	if want := fmt.Sprintf(`{"rows":%d}`, shape.Records()); strings.TrimSpace(m.Stdout) != want {
		return "", shape, fmt.Errorf("genupdates wrote %s, want %s", strings.TrimSpace(m.Stdout), want)
	}
	return wh, shape, os.WriteFile(done, nil, 0o644)
}

const clTable = "bench.narrow"

// clVariant is one set of table options of the changelog benchmark.
type clVariant struct {
	label     string            // as printed
	options   map[string]string // set on the copy (setTableOptions)
	changelog bool              // the compaction must write the changelog
}

var (
	clNone         = clVariant{label: "none"}
	clFull         = clVariant{label: "full-compaction", options: map[string]string{"changelog-producer": "full-compaction"}, changelog: true}
	clForceLookup  = clVariant{label: "none, force-lookup=true", options: map[string]string{"force-lookup": "true"}}
	clLookup       = clVariant{label: "lookup", options: map[string]string{"changelog-producer": "lookup"}, changelog: true}
	clFullVariants = []clVariant{clNone, clFull}
	clLookVariants = []clVariant{clNone, clForceLookup, clLookup}
)

// clStep is one tool's compaction of one variant.
type clStep struct {
	variant clVariant
	tool    string
	m       measurement
	cl      changelogFacts
	out     bucketFacts
}

// clKind is one of the two compactions the changelog benchmark measures.
type clKind struct {
	full     bool
	variants []clVariant
}

// changelogs measures both compactions of the changelog table, each
// variant by each tool on a fresh copy.
func (r *runner) changelogs(ctx context.Context) error {
	if r.c.ChangelogRows <= 0 {
		return nil
	}
	master, shape, err := r.clMaster(ctx, r.c.ChangelogRows)
	if err != nil {
		return err
	}
	in, err := facts(ctx, master, clTable)
	if err != nil {
		return err
	}
	before, err := liveLevels(ctx, master, clTable)
	if err != nil {
		return err
	}
	top := before[in.MaxLevel]
	if len(top) == 0 || len(before[0]) != clUpdateRuns || len(before) != 2 {
		return fmt.Errorf("changelog table %s: want %d level-0 files and one top level, have %v", master, clUpdateRuns, before)
	}
	wh := filepath.Join(r.c.Work, "scratch-changelog", "wh")
	defer os.RemoveAll(filepath.Dir(wh))

	r.printf("\n## Changelog producers: full and lookup compaction with changelog\n\n")
	r.printf("narrow deduplicate table: a compacted top level of %d keys + %d level-0 runs with %d updates (1 key in 16 each) and %d new keys: %d records in %d files. ",
		shape.BaseKeys, clUpdateRuns, shape.Updates, shape.Inserts, in.Rows, in.Files)
	r.printf("Each row is one tool compacting a fresh copy of it with the options shown. A changelog must hold -U/+U per updated key and +I per new key: %d rows.\n\n", shape.ChangelogRows())
	var errs []error
	for _, k := range []clKind{{full: true, variants: clFullVariants}, {full: false, variants: clLookVariants}} {
		var steps []clStep
		for _, v := range k.variants {
			for _, tool := range r.clTools() {
				s, err := r.runClStep(ctx, master, wh, k.full, v, tool, shape, in, top)
				if err != nil {
					// Measure the rest: a refusal of one tool is reported,
					// and fails the run, but does not hide the other rows.
					errs = append(errs, err)
					r.printf("**FAILED:** %s with changelog-producer %s (the error is below)\n\n", tool, v.label)
					continue
				}
				steps = append(steps, s)
			}
		}
		r.clReport(k, steps, shape, in)
	}
	return errors.Join(errs...)
}

func (r *runner) clTools() []string {
	if r.c.Java {
		return []string{"compactd", "Java"}
	}
	return []string{"compactd"}
}

// runClStep copies the master, sets the variant's options and runs one
// tool's compaction, then checks what it committed.
func (r *runner) runClStep(ctx context.Context, master, wh string, full bool, v clVariant, tool string,
	shape updateShape, in bucketFacts, top []string) (clStep, error) {
	s := clStep{variant: v, tool: tool}
	what := fmt.Sprintf("changelog bench, %s compaction, changelog-producer %s, %s", map[bool]string{true: "full", false: "lookup"}[full], v.label, tool)
	var argv []string
	switch tool {
	case "compactd":
		argv = []string{r.c.Compactd, "compact", wh, clTable}
		if full {
			argv = append(argv, "--full")
		}
	case "Java":
		var err error
		if argv, err = r.javaArgv(ctx, "compact", "--warehouse", wh, "--table", clTable, "--full", fmt.Sprint(full)); err != nil {
			return s, err
		}
	}
	if err := copyDir(ctx, master, wh); err != nil {
		return s, err
	}
	if err := setTableOptions(ctx, wh, clTable, v.options); err != nil {
		return s, err
	}
	slog.Info("changelog bench", "full", full, "variant", v.label, "tool", tool, "rows", in.Rows)
	var err error
	if s.m, err = measure(ctx, nil, argv...); err != nil {
		return s, fmt.Errorf("%s: %w", what, err)
	}
	if s.out, err = facts(ctx, wh, clTable); err != nil {
		return s, err
	}
	if s.cl, err = latestChangelog(ctx, wh, clTable); err != nil {
		return s, err
	}
	levels, err := liveLevels(ctx, wh, clTable)
	if err != nil {
		return s, err
	}
	return s, checkClStep(what, full, v, s, shape, in, top, levels)
}

// checkClStep fails unless the step committed a COMPACT snapshot with the
// changelog (or none) the variant must have and the files the pick must
// leave: for the full compaction every key at the top level; for the
// lookup compaction the top level untouched and the level-0 runs merged
// into a level below it.
func checkClStep(what string, full bool, v clVariant, s clStep, shape updateShape, in bucketFacts, top []string, levels map[int32][]string) error {
	var errs []error
	if s.out.Snapshot <= in.Snapshot || s.out.Kind != table.CommitCompact {
		errs = append(errs, fmt.Errorf("latest snapshot is %d (%s), want a COMPACT snapshot after %d", s.out.Snapshot, s.out.Kind, in.Snapshot))
	}
	switch {
	case v.changelog && s.cl.Files == 0:
		errs = append(errs, errors.New("no changelog file was written"))
	case v.changelog && s.cl.Rows != shape.ChangelogRows():
		errs = append(errs, fmt.Errorf("the changelog files hold %d rows, want %d (-U/+U for %d updated keys, +I for %d new keys)",
			s.cl.Rows, shape.ChangelogRows(), shape.UpdatedKeys, shape.Inserts))
	case !v.changelog && s.cl.Files != 0:
		errs = append(errs, fmt.Errorf("%d changelog files were written without a changelog producer", s.cl.Files))
	}
	if s.cl.Recorded != s.cl.Rows {
		errs = append(errs, fmt.Errorf("the snapshot's changelogRecordCount is %d, its changelog files hold %d rows", s.cl.Recorded, s.cl.Rows))
	}
	if len(levels[0]) != 0 {
		errs = append(errs, fmt.Errorf("%d level-0 files left", len(levels[0])))
	}
	if full {
		if want := shape.BaseKeys + shape.Inserts; s.out.Rows != want || len(levels) != 1 || s.out.MaxLevel != in.MaxLevel {
			errs = append(errs, fmt.Errorf("full compaction left %d rows in levels %v, want %d rows at level %d", s.out.Rows, levelNames(levels), want, in.MaxLevel))
		}
	} else {
		if !slices.Equal(levels[in.MaxLevel], top) || len(levels) != 2 {
			errs = append(errs, fmt.Errorf("lookup compaction left levels %v, want the top level %v untouched and one level below it", levelNames(levels), top))
		}
		if want := shape.BaseKeys + shape.Records(); s.out.Rows != want {
			errs = append(errs, fmt.Errorf("lookup compaction left %d rows, want %d", s.out.Rows, want))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func levelNames(levels map[int32][]string) map[int32]int {
	out := map[int32]int{}
	for l, n := range levels {
		out[l] = len(n)
	}
	return out
}

// clReport prints one compaction's steps, the compactd/Java ratios and
// what the changelog costs each tool over the variants without it.
func (r *runner) clReport(k clKind, steps []clStep, shape updateShape, in bucketFacts) {
	rows := in.Rows // a full compaction reads every record
	if k.full {
		r.printf("### Full compaction (compactd `compact --full`, Java `compact`): changelog-producer=full-compaction against none\n\n")
		r.printf("rows/s = all %d input records / CPU s.\n\n", rows)
	} else {
		rows = shape.Records() // the lookup compaction merges level 0 and looks keys up in the top level
		r.printf("### Lookup compaction (compactd `compact`, Java `compact --full false`): the level-0 runs into level %d, keys looked up in level %d\n\n", in.MaxLevel-1, in.MaxLevel)
		r.printf("changelog-producer=lookup against the same table with force-lookup=true (the same lookups, no changelog) and with neither (the same pick, no lookups). rows/s = the %d level-0 records / CPU s.\n\n", rows)
	}
	r.printf("| changelog-producer | tool | wall s | CPU s | rows/s (CPU) | peak RSS MiB | changelog files | changelog rows |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range steps {
		r.printf("| %s | %s | %.1f | %.1f | %s | %s | %d | %d |\n", s.variant.label, s.tool, s.m.Wall.Seconds(), s.m.CPU.Seconds(),
			rate(rows, s.m.CPU), mib(s.m.MaxRSS), s.cl.Files, s.cl.Rows)
	}
	find := func(v clVariant, tool string) (clStep, bool) {
		for _, s := range steps {
			if s.variant.label == v.label && s.tool == tool {
				return s, true
			}
		}
		return clStep{}, false
	}
	var ratios []string
	for _, v := range k.variants {
		g, ok1 := find(v, "compactd")
		j, ok2 := find(v, "Java")
		if ok1 && ok2 {
			ratios = append(ratios, fmt.Sprintf("| %s | %s | %s |\n", v.label, ratio(j.m.CPU.Seconds(), g.m.CPU.Seconds()),
				ratio(float64(g.m.MaxRSS), float64(j.m.MaxRSS))))
		}
	}
	if len(ratios) > 0 {
		r.printf("\n| changelog-producer | compactd/Java throughput (CPU) | compactd/Java peak RSS |\n|---|---|---|\n%s", strings.Join(ratios, ""))
	}
	var cost []string
	// The last variant of a kind is the one with the changelog; the others
	// are its baselines.
	with := k.variants[len(k.variants)-1]
	for _, base := range k.variants[:len(k.variants)-1] {
		for _, tool := range r.clTools() {
			b, ok1 := find(base, tool)
			w, ok2 := find(with, tool)
			if !ok1 || !ok2 {
				continue
			}
			cost = append(cost, fmt.Sprintf("| %s | %s | %.1f → %.1f | %+.1f s (%s×) | %s → %s |\n", tool, base.label,
				b.m.CPU.Seconds(), w.m.CPU.Seconds(), w.m.CPU.Seconds()-b.m.CPU.Seconds(), ratio(w.m.CPU.Seconds(), b.m.CPU.Seconds()),
				mib(b.m.MaxRSS), mib(w.m.MaxRSS)))
		}
	}
	if len(cost) > 0 {
		r.printf("\nCost of changelog-producer=%s over:\n\n| tool | baseline | CPU s baseline → %s | changelog cost (CPU) | peak RSS MiB baseline → %s |\n|---|---|---|---|---|\n%s",
			with.label, with.label, with.label, strings.Join(cost, ""))
	}
	r.printf("\n")
}
