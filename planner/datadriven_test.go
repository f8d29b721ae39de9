package planner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// The golden files under testdata/ drive the planner from text. Commands:
//
//	options [pk=true|false] [behavior=2.0|head|1.4|1.3] [strategy=minor|full] <paimon-key>=<value>...
//	define                      one bucket per "bucket <partition>/<n>" line (default "/0"), then
//	  L<level>: <file> [attr...] <file> [attr...]
//	    file  = name:minKey-maxKey@seq  or  name:minKey-maxKey@minSeq-maxSeq
//	    attr  = size=N rows=N dels=N ctime=<unix s> dv dvdels=N dvidx=NAME expired
//	  state last-full=<unix s> gentle=N   (applies to the current bucket)
//	history                     lines "<id> <KIND> [<partition>/<bucket>...]"
//	pick [now=<unix s>]         Universal/ForceUpLevel0 pick on the first bucket
//	sections                    IntervalPartition of all files of the first bucket
//	plan [now=<unix s>]         input lines: in-flight jobs "<partition>/<bucket> [file...]"
//	apply                       applies the last plan and prints the view
//	backlog [now=<unix s>]
//	idle idle=<duration> [now=<unix s>]   IdlePartitions (partition_idle_time)
//
// Times are UTC; off-peak hours are taken from `now` in UTC.
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.dd")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var h ddHarness
			h.opts = DefaultOptions(true)
			datadriven.RunTest(t, path, h.run)
		})
	}
}

type ddHarness struct {
	opts Options
	view View
	last *PlanResult
}

func ddNow(d *datadriven.TestData) time.Time {
	for _, a := range d.CmdArgs {
		if a.Key == "now" {
			n, err := strconv.ParseInt(a.Vals[0], 10, 64)
			if err != nil {
				d.Fatalf(nil, "now: %v", err)
			}
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}

func (h *ddHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "options":
		pk := true
		m := map[string]string{}
		beh, strat := Behavior20, StrategyMinor
		for _, a := range d.CmdArgs {
			v := strings.Join(a.Vals, ",")
			switch a.Key {
			case "pk":
				pk = v == "true"
			case "behavior":
				switch v {
				case "head":
					beh = BehaviorHead
				case "1.4":
					beh = Behavior14
				case "1.3":
					beh = Behavior13
				}
			case "strategy":
				if v == "full" {
					strat = StrategyFull
				}
			default:
				m[a.Key] = v
			}
		}
		o, err := ParseOptions(m, pk)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		o.Behavior, o.Strategy = beh, strat
		h.opts = o
		out := fmt.Sprintf("trigger=%d levels=%d target=%d small=%d lookup=%v",
			o.NumSortedRunCompactionTrigger, o.NumLevels, o.TargetFileSize, o.CompactionFileSize(), o.NeedLookup())
		if o.LookupCompactGentle {
			out += fmt.Sprintf(" gentle-max-interval=%d", o.LookupCompactMaxInterval)
		}
		if o.FullCompactionDeltaCommits > 0 {
			out += fmt.Sprintf(" delta-commits=%d", o.FullCompactionDeltaCommits)
		}
		return out + "\n"
	case "define":
		v, err := parseView(d.Input)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		h.view = v
		h.last = nil
		return formatView(h.view, h.opts)
	case "history":
		h.view.History = History{}
		for _, line := range nonEmptyLines(d.Input) {
			fs := strings.Fields(line)
			id, _ := strconv.ParseInt(fs[0], 10, 64)
			s := SnapshotInfo{ID: id, Kind: CommitKind(fs[1])}
			for _, b := range fs[2:] {
				s.Buckets = append(s.Buckets, parseBucketID(d, b))
			}
			h.view.History.Snapshots = append(h.view.History.Snapshots, s)
		}
		return ""
	case "pick":
		b := &h.view.Buckets[0]
		lv, err := BuildLevels(b.Files, h.opts.NumLevels, h.view.cmp())
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		u, st := PickAt(lv.NumLevels, lv.Runs, h.opts, ddNow(d), b.State)
		b.State = st
		if u == nil {
			return "nil\n"
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "runs=%d output=L%d full=%v files=%s\n", u.RunCount, u.OutputLevel, u.Full, fileNames(u.Files))
		fmt.Fprintf(&sb, "reason: %s\n", u.Reason)
		return sb.String()
	case "sections":
		return formatSections(PartitionSections(h.view.Buckets[0].Files, h.view.cmp())) + "\n"
	case "plan":
		var inflight []Inflight
		for _, line := range nonEmptyLines(d.Input) {
			fs := strings.Fields(line)
			id := parseBucketID(d, fs[0])
			inflight = append(inflight, Inflight{Partition: id.Partition, Bucket: id.Bucket, Files: fs[1:]})
		}
		p := Plan(h.view, inflight, h.opts, ddNow(d))
		h.last = &p
		return formatPlan(p)
	case "apply":
		if h.last == nil {
			d.Fatalf(t, "apply without plan")
		}
		v, err := Apply(h.view, *h.last, h.opts)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.view = v
		h.last = nil
		return formatView(h.view, h.opts)
	case "idle":
		var idle time.Duration
		for _, a := range d.CmdArgs {
			if a.Key == "idle" {
				var err error
				if idle, err = time.ParseDuration(a.Vals[0]); err != nil {
					d.Fatalf(t, "idle: %v", err)
				}
			}
		}
		ps := IdlePartitions(h.view, idle, ddNow(d))
		if len(ps) == 0 {
			return "none\n"
		}
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%q\n", p)
		}
		return b.String()
	case "backlog":
		s := Backlog(h.view, h.opts, ddNow(d))
		return fmt.Sprintf("runs-over-trigger=%d jobs=%d rewrite-bytes=%d rewrite-files=%d upgrades=%d rounds=%d converged=%v\n",
			s.RunsOverTrigger, s.Jobs, s.RewriteBytes, s.RewriteFiles, s.UpgradeFiles, s.Rounds, s.Converged)
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func parseBucketID(d *datadriven.TestData, s string) BucketID {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		d.Fatalf(nil, "bucket %q: want <partition>/<bucket>", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		d.Fatalf(nil, "bucket %q: %v", s, err)
	}
	return BucketID{Partition: s[:i], Bucket: n}
}

// parseView parses the define syntax (also used by the table tests).
func parseView(input string) (View, error) {
	var v View
	cur := -1
	ensure := func() {
		if cur < 0 {
			v.Buckets = append(v.Buckets, Bucket{})
			cur = 0
		}
	}
	for _, line := range nonEmptyLines(input) {
		fs := strings.Fields(line)
		switch {
		case fs[0] == "bucket":
			i := strings.LastIndexByte(fs[1], '/')
			n, err := strconv.Atoi(fs[1][i+1:])
			if i < 0 || err != nil {
				return v, fmt.Errorf("bad bucket %q", fs[1])
			}
			v.Buckets = append(v.Buckets, Bucket{Partition: fs[1][:i], Bucket: n})
			cur = len(v.Buckets) - 1
		case fs[0] == "state":
			ensure()
			for _, kv := range fs[1:] {
				k, val, _ := strings.Cut(kv, "=")
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					return v, fmt.Errorf("state %s: %w", kv, err)
				}
				switch k {
				case "last-full":
					v.Buckets[cur].State.LastFullCompaction = time.Unix(n, 0).UTC()
				case "gentle":
					v.Buckets[cur].State.GentleTriggers = int(n)
				default:
					return v, fmt.Errorf("unknown state %s", k)
				}
			}
		case strings.HasPrefix(fs[0], "L") && strings.HasSuffix(fs[0], ":"):
			ensure()
			lvl, err := strconv.Atoi(strings.TrimSuffix(fs[0][1:], ":"))
			if err != nil {
				return v, fmt.Errorf("bad level %q", fs[0])
			}
			files, err := parseFiles(lvl, fs[1:])
			if err != nil {
				return v, fmt.Errorf("line %q: %w", line, err)
			}
			v.Buckets[cur].Files = append(v.Buckets[cur].Files, files...)
		default:
			return v, fmt.Errorf("cannot parse %q", line)
		}
	}
	return v, nil
}

func parseFiles(level int, toks []string) ([]File, error) {
	var out []File
	for _, tok := range toks {
		if name, rest, ok := strings.Cut(tok, ":"); ok && !strings.Contains(tok, "=") {
			keys, seqs, ok := strings.Cut(rest, "@")
			if !ok {
				return nil, fmt.Errorf("file %q: want name:min-max@seq", tok)
			}
			lo, hi, ok := strings.Cut(keys, "-")
			if !ok {
				return nil, fmt.Errorf("file %q: want min-max keys", tok)
			}
			s1, s2, two := strings.Cut(seqs, "-")
			a, err := strconv.ParseInt(s1, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("file %q: %w", tok, err)
			}
			b := a
			if two {
				if b, err = strconv.ParseInt(s2, 10, 64); err != nil {
					return nil, fmt.Errorf("file %q: %w", tok, err)
				}
			}
			zero := int64(0)
			out = append(out, File{Name: name, Level: level, MinKey: []byte(lo), MaxKey: []byte(hi),
				MinSeq: a, MaxSeq: b, Size: 1, RowCount: b - a + 1, DeleteRowCount: &zero})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("attribute %q before any file", tok)
		}
		f := &out[len(out)-1]
		k, val, _ := strings.Cut(tok, "=")
		var n int64
		if val != "" {
			var err error
			if k != "dvidx" {
				if n, err = strconv.ParseInt(val, 10, 64); err != nil {
					return nil, fmt.Errorf("attribute %q: %w", tok, err)
				}
			}
		}
		switch k {
		case "size":
			f.Size = n
		case "rows":
			f.RowCount = n
		case "dels":
			if val == "" {
				f.DeleteRowCount = nil // unknown
			} else {
				f.DeleteRowCount = &n
			}
		case "ctime":
			f.CreationTime = time.Unix(n, 0).UTC()
		case "dv":
			f.HasDeletionVector = true
		case "dvdels":
			f.HasDeletionVector = true
			f.DeletedRows = &n
		case "dvidx":
			f.HasDeletionVector = true
			f.DVIndexFile = val
		case "expired":
			f.HasExpiredRecords = true
		default:
			return nil, fmt.Errorf("unknown attribute %q", tok)
		}
	}
	return out, nil
}

func fileNames(fs []File) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = fmt.Sprintf("%s@L%d", f.Name, f.Level)
	}
	return "[" + strings.Join(names, " ") + "]"
}

func runNames(run []File) string {
	names := make([]string, len(run))
	for i, f := range run {
		names[i] = f.Name
	}
	return strings.Join(names, ",")
}

// formatSections prints sections separated by " | "; inside a section the
// runs are sorted (their order carries no meaning) and separated by "; ".
func formatSections(secs []Section) string {
	parts := make([]string, len(secs))
	for i, s := range secs {
		runs := make([]string, len(s))
		for k, r := range s {
			runs[k] = runNames(r)
		}
		slices.Sort(runs)
		parts[i] = "[" + strings.Join(runs, "; ") + "]"
	}
	return strings.Join(parts, " | ")
}

func formatPlan(p PlanResult) string {
	var sb strings.Builder
	if len(p.Jobs) == 0 && len(p.Errors) == 0 {
		sb.WriteString("no jobs\n")
	}
	for _, e := range p.Errors {
		fmt.Fprintf(&sb, "error %s\n", e.Error())
	}
	for _, j := range p.Jobs {
		flags := ""
		if j.DropDelete {
			flags += " drop-delete"
		}
		if j.Full {
			flags += " full"
		}
		if j.FileRewrite {
			flags += " file-rewrite"
		}
		fmt.Fprintf(&sb, "job %s -> L%d%s\n", j.ID(), j.OutputLevel, flags)
		fmt.Fprintf(&sb, "  reason: %s\n", j.Reason)
		fmt.Fprintf(&sb, "  inputs: %s\n", fileNames(j.Inputs))
		if j.Sections != nil {
			fmt.Fprintf(&sb, "  sections: %s\n", formatSections(j.Sections))
		}
		for _, s := range j.Steps {
			if s.Kind == StepUpgrade {
				fmt.Fprintf(&sb, "  upgrade %s L%d->L%d\n", s.File.Name, s.File.Level, j.OutputLevel)
			} else {
				fmt.Fprintf(&sb, "  rewrite %s\n", formatSections(s.Sections))
			}
		}
	}
	ids := make([]BucketID, 0, len(p.States))
	for id := range p.States {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b BucketID) int { return strings.Compare(a.String(), b.String()) })
	for _, id := range ids {
		st := p.States[id]
		lf := "unknown"
		if !st.LastFullCompaction.IsZero() {
			lf = strconv.FormatInt(st.LastFullCompaction.Unix(), 10)
		}
		fmt.Fprintf(&sb, "state %s last-full=%s gentle=%d\n", id, lf, st.GentleTriggers)
	}
	return sb.String()
}

func formatView(v View, opts Options) string {
	var sb strings.Builder
	for _, b := range v.Buckets {
		fmt.Fprintf(&sb, "%s:\n", b.ID())
		if opts.PrimaryKey {
			lv, err := BuildLevels(b.Files, opts.NumLevels, v.cmp())
			if err != nil {
				fmt.Fprintf(&sb, "  error: %v\n", err)
				continue
			}
			for _, r := range lv.Runs {
				fmt.Fprintf(&sb, "  L%d:", r.Level)
				for _, f := range r.Files {
					fmt.Fprintf(&sb, " %s", formatFile(f))
				}
				sb.WriteString("\n")
			}
			continue
		}
		for _, f := range appendQueue(b.Files) {
			fmt.Fprintf(&sb, "  %s\n", formatFile(f))
		}
	}
	return sb.String()
}

func formatFile(f File) string {
	s := fmt.Sprintf("%s:%s-%s@%d-%d size=%d", f.Name, f.MinKey, f.MaxKey, f.MinSeq, f.MaxSeq, f.Size)
	if f.DeleteRowCount == nil {
		s += " dels=?"
	} else if *f.DeleteRowCount > 0 {
		s += fmt.Sprintf(" dels=%d", *f.DeleteRowCount)
	}
	return s
}
