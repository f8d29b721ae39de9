package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/human"
)

// progressEvery is how often a compaction writes a progress line when
// stderr is not a terminal (logs, CI): often enough to see it move, rarely
// enough not to flood.
const progressEvery = 10 * time.Second

// jobProgress reports a compaction's progress on w (stderr): a bar with the
// buckets done, rows and bytes read and an estimate of the time left on a
// terminal (schollz/progressbar: width, redraw throttling and the ETA are
// its job); a plain line every progressEvery and at the end otherwise.
type jobProgress struct {
	w      io.Writer
	tty    bool
	table  string
	now    func() time.Time
	bar    *progressbar.ProgressBar
	last   time.Time
	rows   int64
	bytes  int64
	output int64
}

func newJobProgress(w io.Writer, tty bool, table string) *jobProgress {
	return &jobProgress{w: w, tty: tty, table: table, now: time.Now}
}

// update is compact.Options.Progress: called once per finished bucket job.
func (p *jobProgress) update(done, total int, r *compact.JobResult) {
	p.rows += r.RowsIn
	p.bytes += r.BytesIn
	p.output += r.BytesOut
	what := fmt.Sprintf("%s rows, %s in", human.Count(p.rows), human.Bytes(p.bytes))
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription("compacting "+p.table),
				progressbar.OptionShowCount(),
				progressbar.OptionSetItsString("buckets"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionShowDescriptionAtLineEnd(),
				progressbar.OptionSetRenderBlankState(true),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
			)
		}
		p.bar.Describe("compacting " + p.table + ": " + what)
		_ = p.bar.Set(done)
		return
	}
	now := p.now()
	if done == total || p.last.IsZero() || now.Sub(p.last) >= progressEvery {
		p.last = now
		fmt.Fprintf(p.w, "compact %s: %d/%d buckets, %s, %s out\n", p.table, done, total, what, human.Bytes(p.output))
	}
}

// deleteProgress counts the files a maintenance run deletes, from the
// storage operations of its table (openTableObserved): a counter with the
// rate on a terminal (the total is not known before the run), a plain line
// every progressEvery otherwise. Deletions come from several goroutines.
type deleteProgress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	what    string
	now     func() time.Time
	bar     *progressbar.ProgressBar
	last    time.Time
	deleted int64
}

func newDeleteProgress(w io.Writer, tty bool, what string) *deleteProgress {
	return &deleteProgress{w: w, tty: tty, what: what, now: time.Now}
}

// observe is the fileio.Observe callback.
func (p *deleteProgress) observe(op string, err error) {
	if op != fileio.OpDelete || err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted++
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(p.what),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("files"))
		}
		_ = p.bar.Add(1)
		return
	}
	if now := p.now(); p.last.IsZero() || now.Sub(p.last) >= progressEvery {
		p.last = now
		fmt.Fprintf(p.w, "%s: %s deleted so far\n", p.what, plural(int(p.deleted), "file"))
	}
}

// done ends the display (the report follows on stdout).
func (p *deleteProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
