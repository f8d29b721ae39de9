package scan

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

type fakeFile struct{ closed *atomic.Int64 }

func (fakeFile) Next(*datafile.Batch, int) error { return nil }
func (f fakeFile) Close() error                  { f.closed.Add(1); return nil }

// The heads of a section's runs are opened together: every open below
// waits until all three are in flight, which only parallel opens reach.
// Files no reader took are closed by close.
func TestPrefetcherOpensTogetherAndClosesWhatNobodyTook(t *testing.T) {
	t.Parallel()
	var closed atomic.Int64
	var inFlight sync.WaitGroup
	inFlight.Add(3)
	all := make(chan struct{})
	go func() { inFlight.Wait(); close(all) }()
	p := &prefetcher{open: func(e *manifest.Entry) (batchFile, error) {
		inFlight.Done()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return nil, errors.New("opens did not run in parallel")
		}
		if e.File.FileName == "bad" {
			return nil, errors.New("unreadable")
		}
		return fakeFile{&closed}, nil
	}}
	files := []*manifest.Entry{{File: manifest.DataFileMeta{FileName: "a"}}, {File: manifest.DataFileMeta{FileName: "b"}}, {File: manifest.DataFileMeta{FileName: "bad"}}}
	p.start(files)
	if _, err := p.get(files[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.get(files[2]); err == nil || err.Error() != "unreadable" {
		t.Fatalf("get(bad) = %v, want the open's error", err)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if n := closed.Load(); n != 1 {
		t.Fatalf("close closed %d files, want 1 (b, which nobody took)", n)
	}
}
