package scan

import (
	"sync"

	"github.com/compactd/compactd/table/manifest"
)

// prefetchParallelism bounds the files opened at once by a prefetch.
const prefetchParallelism = 8

// prefetcher opens files ahead of their reader, several at a time. On an
// object store every open costs round trips (a small file is fetched
// whole when opened), and a merge needs the first file of every sorted run
// before it yields a row: opened one after the other, a section of 20
// level-0 runs waits 20 round trips; opened together, about one. Those
// files are all opened before the first row anyway, so this adds no
// memory.
type prefetcher struct {
	open func(*manifest.Entry) (batchFile, error)

	mu      sync.Mutex
	pending map[*manifest.Entry]*prefetched
}

type prefetched struct {
	done chan struct{}
	f    batchFile
	err  error
}

// start opens the files on background goroutines.
func (p *prefetcher) start(files []*manifest.Entry) {
	sem := make(chan struct{}, prefetchParallelism)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[*manifest.Entry]*prefetched{}
	}
	for _, e := range files {
		if _, ok := p.pending[e]; ok {
			continue
		}
		pf := &prefetched{done: make(chan struct{})}
		p.pending[e] = pf
		go func() {
			defer close(pf.done)
			sem <- struct{}{}
			defer func() { <-sem }()
			pf.f, pf.err = p.open(e)
		}()
	}
}

// get returns e's file: the prefetched one when start was called for it,
// else opened now.
func (p *prefetcher) get(e *manifest.Entry) (batchFile, error) {
	p.mu.Lock()
	pf := p.pending[e]
	delete(p.pending, e)
	p.mu.Unlock()
	if pf == nil {
		return p.open(e)
	}
	<-pf.done
	return pf.f, pf.err
}

// close waits for the files still being opened and closes every file no
// reader took.
func (p *prefetcher) close() error {
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	var first error
	for _, pf := range pending {
		<-pf.done
		if pf.err == nil {
			if err := pf.f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
