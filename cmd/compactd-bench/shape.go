package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// shaper is a loopback HTTP proxy in front of the S3 server that makes it
// behave like a remote object store: every request waits latency before it
// is forwarded, and response and request bodies share one bandwidth cap (a
// NIC's, not a connection's). It counts requests by kind, so the report can
// say how many requests a compaction makes per file.
//
// The proxy keeps the client's Host header, so SigV4 signatures (computed
// over the proxy's address) still verify at the server.
type shaper struct {
	latency time.Duration
	bytesPS int64 // 0: no cap

	mu   sync.Mutex
	next time.Time // when the pipe is free again (bandwidth cap)

	counts sync.Map // kind -> *atomic.Int64
	srv    *http.Server
	URL    string

	// log, if set, gets one line per request: start and duration in ms
	// since the last Counts, kind, method, path and range (-s3-log).
	logMu sync.Mutex
	log   io.Writer
	epoch time.Time
}

func startShaper(target string, latency time.Duration, bytesPerSecond int64) (*shaper, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("shaping proxy: target %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("shaping proxy: %w", err)
	}
	s := &shaper{latency: latency, bytesPS: bytesPerSecond, URL: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &paced{r: resp.Body, s: s, ctx: resp.Request.Context()}
			return nil
		},
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		s.count(kind)
		if s.log != nil {
			start := time.Now()
			defer s.logRequest(start, kind, r)
		}
		select {
		case <-time.After(s.latency):
		case <-r.Context().Done():
			return
		}
		if r.Body != nil {
			r.Body = &paced{r: r.Body, s: s, ctx: r.Context()}
		}
		rp.ServeHTTP(w, r)
	}), ReadHeaderTimeout: time.Minute}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *shaper) Close() error { return s.srv.Close() }

func (s *shaper) logRequest(start time.Time, kind string, r *http.Request) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "%9.1f %7.1f %-12s %-6s %s %s\n", float64(start.Sub(s.epoch).Microseconds())/1000,
		float64(time.Since(start).Microseconds())/1000, kind, r.Method, r.URL.RequestURI(), r.Header.Get("Range"))
}

// requestKind names an S3 request the way its pricing does.
func requestKind(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && (q.Has("list-type") || strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0):
		return "LIST"
	case r.Method == http.MethodGet && r.Header.Get("Range") != "":
		return "GET (range)"
	default:
		return r.Method
	}
}

func (s *shaper) count(kind string) {
	v, _ := s.counts.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Counts returns the requests seen per kind and resets them (and the
// request log's clock).
func (s *shaper) Counts() map[string]int64 {
	s.logMu.Lock()
	s.epoch = time.Now()
	if s.log != nil {
		fmt.Fprintf(s.log, "-- reset\n")
	}
	s.logMu.Unlock()
	out := map[string]int64{}
	s.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Swap(0)
		return true
	})
	return out
}

func formatCounts(c map[string]int64) string {
	var keys []string
	for k, v := range c {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

func total(c map[string]int64) int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// wait books n bytes on the shared pipe and sleeps until they have passed.
func (s *shaper) wait(ctx context.Context, n int) error {
	if s.bytesPS <= 0 || n <= 0 {
		return nil
	}
	d := time.Duration(float64(n) / float64(s.bytesPS) * float64(time.Second))
	s.mu.Lock()
	now := time.Now()
	if s.next.Before(now) {
		s.next = now
	}
	s.next = s.next.Add(d)
	until := s.next
	s.mu.Unlock()
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// paced passes a body through the bandwidth cap in chunks of at most 64 KiB.
type paced struct {
	r   io.ReadCloser
	s   *shaper
	ctx context.Context
}

func (p *paced) Read(b []byte) (int, error) {
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	n, err := p.r.Read(b)
	if werr := p.s.wait(p.ctx, n); werr != nil && !errors.Is(err, io.EOF) {
		return n, werr
	}
	return n, err
}

func (p *paced) Close() error { return p.r.Close() }
