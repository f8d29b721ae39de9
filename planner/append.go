package planner

import (
	"cmp"
	"fmt"
	"slices"
)

// fullCompactMinFiles is BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE.
const fullCompactMinFiles = 3

// appendQueue orders a bucket's files oldest first (by min sequence number,
// as the Java PriorityQueue does; ties, which Java leaves to heap order, by
// name so plans are deterministic).
func appendQueue(files []File) []File {
	q := slices.Clone(files)
	slices.SortFunc(q, func(a, b File) int {
		if c := cmp.Compare(a.MinSeq, b.MinSeq); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return q
}

// PickAppend is BucketedAppendCompactManager.pickCompactBefore: slide a
// window over the files, oldest first, and return the first window that
// reaches compaction.min.file-num files; the window's oldest file is dropped
// whenever the window's total size reaches 2 × target-file-size (1 × before
// release 1.4.1, Behavior13). Nil if none.
func PickAppend(files []File, opts Options) []File {
	minFileNum := opts.MinFileNum
	limit := 2 * opts.TargetFileSize
	if opts.Behavior == Behavior13 {
		limit = opts.TargetFileSize
	}
	q := appendQueue(files)
	start := 0
	var total int64
	for i, f := range q {
		total += f.Size
		if i-start+1 >= minFileNum {
			return q[start : i+1]
		}
		if total >= limit {
			total -= q[start].Size
			start++
		}
	}
	return nil
}

func appendJob(b *Bucket, files []File, full bool, reason string) *Job {
	return &Job{
		Partition: b.Partition,
		Bucket:    b.Bucket,
		Inputs:    files,
		Full:      full,
		Reason:    reason,
		Steps:     []Step{{Kind: StepRewrite, Sections: []Section{{files}}}},
	}
}

// planBucketedAppend plans one bucket of a bucketed append table.
func planBucketedAppend(b *Bucket, opts Options) *Job {
	if opts.Strategy == StrategyFull {
		return fullAppend(b, opts)
	}
	picked := PickAppend(b.Files, opts)
	if picked == nil {
		return nil
	}
	var total int64
	for _, f := range picked {
		total += f.Size
	}
	return appendJob(b, picked, false, fmt.Sprintf("%d files (compaction.min.file-num=%d) totalling %d bytes", len(picked), opts.MinFileNum, total))
}

// fullAppend is BucketedAppendCompactManager.triggerFullCompaction plus the
// decisions of its FullCompactTask.
func fullAppend(b *Bucket, opts Options) *Job {
	q := appendQueue(b.Files)
	dv := opts.DeletionVectors
	if !opts.ForceRewriteAllFiles && (len(q) == 0 || (!dv && len(q) < fullCompactMinFiles)) {
		return nil
	}
	small := opts.CompactionFileSize()
	if opts.Behavior == Behavior13 {
		small = opts.TargetFileSize
	}
	if !opts.ForceRewriteAllFiles {
		// Leading large files stay, unless a deletion vector forces a rewrite.
		for len(q) > 0 && q[0].Size >= small && !(dv && q[0].HasDeletionVector) {
			q = q[1:]
		}
	}
	if len(q) == 0 {
		return nil
	}
	if dv {
		return appendJob(b, q, true, fmt.Sprintf("full compaction requested (deletion vectors): %d files", len(q)))
	}
	var nBig, nSmall int
	for _, f := range q {
		if f.Size >= small {
			nBig++
		} else {
			nSmall++
		}
	}
	if opts.ForceRewriteAllFiles || (nSmall > nBig && len(q) >= fullCompactMinFiles) {
		return appendJob(b, q, true, fmt.Sprintf("full compaction requested: %d small and %d large files", nSmall, nBig))
	}
	return nil
}

// planUnaware is AppendCompactCoordinator's batch planning for one
// partition (bucket = -1): pick small files (and, with deletion vectors,
// files with many deleted rows), then bin-pack them. busy reports files of
// running jobs, which are left out.
//
// The coordinator's ageing (compact leftovers after 5 idle rounds) is a
// streaming-mode feature and is not reproduced: like Paimon's batch runs,
// small leftovers below compaction.min.file-num stay until more arrive.
func planUnaware(b *Bucket, opts Options, busy func(string) bool) []Job {
	small := opts.CompactionFileSize()
	var cand []File
	for _, f := range b.Files {
		if busy(f.Name) {
			continue
		}
		if f.Size < small || tooHighDeleteRatio(f, opts) {
			cand = append(cand, f)
		}
	}
	var bins [][]File
	if opts.DeletionVectors {
		bins = packDV(cand, opts)
	} else {
		bins = packFiles(cand, opts)
	}
	jobs := make([]Job, 0, len(bins))
	for _, bin := range bins {
		var total int64
		for _, f := range bin {
			total += f.Size
		}
		jobs = append(jobs, *appendJob(b, bin, false, fmt.Sprintf("bucket-unaware: %d small files totalling %d bytes", len(bin), total)))
	}
	return jobs
}

func tooHighDeleteRatio(f File, opts Options) bool {
	if !opts.DeletionVectors || !f.HasDeletionVector {
		return false
	}
	return f.DeletedRows == nil || float64(*f.DeletedRows) > float64(f.RowCount)*opts.DeleteRatioThreshold
}

type fileBin struct {
	files []File
	cost  int64
	opts  *Options
}

func (b *fileBin) add(f File) {
	b.files = append(b.files, f)
	b.cost += f.Size + b.opts.OpenFileCost
}
func (b *fileBin) enoughContent() bool {
	return len(b.files) > 1 && b.cost >= 2*b.opts.TargetFileSize
}
func (b *fileBin) drain() []File {
	out := b.files
	b.files, b.cost = nil, 0
	return out
}

func sortBySize(files []File) {
	slices.SortFunc(files, func(a, b File) int {
		if c := cmp.Compare(a.Size, b.Size); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// packFiles is SubCoordinator.pack.
func packFiles(files []File, opts Options) [][]File {
	files = slices.Clone(files)
	sortBySize(files)
	var out [][]File
	bin := fileBin{opts: &opts}
	for _, f := range files {
		bin.add(f)
		if bin.enoughContent() {
			out = append(out, bin.drain())
		}
	}
	if len(bin.files) >= opts.MinFileNum {
		out = append(out, bin.drain())
	}
	return out
}

// packDV is SubCoordinator.packInDeletionVectorVMode: files sharing a
// deletion-vector index file stay together and are always compacted.
func packDV(files []File, opts Options) [][]File {
	groups := map[string][]File{}
	var keys []string
	var rest []File
	for _, f := range files {
		if !f.HasDeletionVector {
			rest = append(rest, f)
			continue
		}
		k := f.DVIndexFile
		if k == "" {
			k = "\x00" + f.Name
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	size := func(fs []File) (n int64) {
		for _, f := range fs {
			n += f.Size
		}
		return n
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(size(groups[a]), size(groups[b])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var out [][]File
	bin := fileBin{opts: &opts}
	for _, k := range keys {
		for _, f := range groups[k] {
			bin.add(f)
		}
		if bin.enoughContent() {
			out = append(out, bin.drain())
		}
	}
	if len(bin.files) > 0 {
		out = append(out, bin.drain())
	}
	if len(rest) > 1 {
		out = append(out, packFiles(rest, opts)...)
	}
	return out
}
