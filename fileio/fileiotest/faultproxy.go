package fileiotest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// FaultKind is what the proxy does to a request a fault hits.
type FaultKind int

const (
	// SlowDown answers 503 SlowDown without forwarding: S3 throttling.
	SlowDown FaultKind = iota + 1
	// DropBeforeForward reads part of the request body, then resets the
	// connection: an upload cut off mid-way that the server never completes.
	DropBeforeForward
	// DropAfterForward lets the server complete the request, then resets the
	// connection instead of answering: the client cannot know it succeeded.
	DropAfterForward
	// ErrorAfterForward lets the server complete the request, then answers
	// 500 InternalError: also ambiguous for the client.
	ErrorAfterForward
	// CutResponseBody forwards, sends the response headers and half of the
	// body, then resets the connection.
	CutResponseBody
	// Delay waits Fault.Delay, then forwards.
	Delay
	// IgnoreConditional forwards, and turns a 412 Precondition Failed into a
	// 200: what a store that ignores If-None-Match reports.
	IgnoreConditional
	// RespondError answers Fault.Status with S3 error Fault.Code without
	// forwarding.
	RespondError
)

func (k FaultKind) String() string {
	switch k {
	case SlowDown:
		return "SlowDown"
	case DropBeforeForward:
		return "DropBeforeForward"
	case DropAfterForward:
		return "DropAfterForward"
	case ErrorAfterForward:
		return "ErrorAfterForward"
	case CutResponseBody:
		return "CutResponseBody"
	case Delay:
		return "Delay"
	case IgnoreConditional:
		return "IgnoreConditional"
	case RespondError:
		return "RespondError"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault selects requests and says what to do to them.
type Fault struct {
	Kind FaultKind
	// Match selects the requests the fault counts; nil matches all.
	Match func(*http.Request) bool
	// After skips this many matching requests before the fault fires, so
	// After: k-1 hits the k-th matching request.
	After int
	// Times is how many matching requests are hit (0 means 1, -1 means all).
	Times int
	// Delay is the wait of a Delay fault.
	Delay time.Duration
	// Status and Code are the answer of a RespondError fault, and override
	// the defaults of SlowDown (503 SlowDown) and ErrorAfterForward (500
	// InternalError).
	Status int
	Code   string
	// OnHit, if set, runs when the fault fires, before it acts (to make
	// another client act "while" this request is in flight).
	OnHit func()
}

type faultState struct {
	Fault
	seen, hits int
}

// FaultProxy is an HTTP reverse proxy in front of an S3-compatible server
// that injects faults. It forwards the Host header unchanged, so SigV4
// signatures made for the proxy's address stay valid.
type FaultProxy struct {
	URL string

	target    *url.URL
	srv       *httptest.Server
	transport *http.Transport

	mu       sync.Mutex
	faults   []*faultState
	requests int
	injected map[FaultKind]int
}

// NewFaultProxy starts a proxy to target (e.g. "http://127.0.0.1:7070"),
// closed when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("fault proxy target %q: %v", target, err)
	}
	p := &FaultProxy{
		target:    u,
		transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 32, ExpectContinueTimeout: time.Second},
		injected:  map[FaultKind]int{},
	}
	p.srv = httptest.NewServer(p)
	p.URL = p.srv.URL
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		p.transport.CloseIdleConnections()
	})
	return p
}

// Inject adds a fault. Faults are checked in the order added; the first that
// fires on a request acts on it.
func (p *FaultProxy) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &faultState{Fault: f})
}

// Clear removes all faults.
func (p *FaultProxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Injected returns how many requests a fault of this kind acted on.
func (p *FaultProxy) Injected(kind FaultKind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected[kind]
}

// Requests returns how many requests the proxy received.
func (p *FaultProxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

func (p *FaultProxy) pick(r *http.Request) *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	// Every fault counts every request it matches, whether or not an
	// earlier fault fires on it, so After means "the (After+1)-th matching
	// request" regardless of the other faults.
	var fired *Fault
	for _, f := range p.faults {
		if f.Match != nil && !f.Match(r) {
			continue
		}
		f.seen++
		if fired != nil || f.seen <= f.After {
			continue
		}
		times := f.Times
		if times == 0 {
			times = 1
		}
		if times > 0 && f.hits >= times {
			continue
		}
		f.hits++
		p.injected[f.Kind]++
		ff := f.Fault
		fired = &ff
	}
	return fired
}

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := p.pick(r)
	if f == nil {
		p.forwardAndCopy(w, r)
		return
	}
	if f.OnHit != nil {
		f.OnHit()
	}
	switch f.Kind {
	case SlowDown:
		_, _ = io.Copy(io.Discard, r.Body)
		writeS3Error(w, or(f.Status, http.StatusServiceUnavailable), orStr(f.Code, "SlowDown"), "Please reduce your request rate.")
	case DropBeforeForward:
		_, _ = io.CopyN(io.Discard, r.Body, 64<<10)
		resetConn(w)
	case DropAfterForward:
		resp, err := p.forward(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		resetConn(w)
	case ErrorAfterForward:
		resp, err := p.forward(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		writeS3Error(w, or(f.Status, http.StatusInternalServerError), orStr(f.Code, "InternalError"), "We encountered an internal error. Please try again.")
	case RespondError:
		_, _ = io.Copy(io.Discard, r.Body)
		writeS3Error(w, or(f.Status, http.StatusInternalServerError), orStr(f.Code, "InternalError"), "injected by the fault proxy")
	case CutResponseBody:
		resp, err := p.forward(r)
		if err != nil {
			resetConn(w)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		copyHeader(w.Header(), resp.Header)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body[:len(body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		resetConn(w)
	case Delay:
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
		p.forwardAndCopy(w, r)
	case IgnoreConditional:
		conditional := r.Header.Get("If-None-Match") != ""
		resp, err := p.forward(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if conditional && resp.StatusCode == http.StatusPreconditionFailed {
			_, _ = io.Copy(io.Discard, resp.Body)
			w.Header().Set("ETag", `"ignored-condition"`)
			w.WriteHeader(http.StatusOK)
			return
		}
		copyResponse(w, resp)
	default:
		http.Error(w, "unknown fault "+f.Kind.String(), http.StatusInternalServerError)
	}
}

func or(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}

func orStr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func (p *FaultProxy) forward(r *http.Request) (*http.Response, error) {
	out := r.Clone(context.WithoutCancel(r.Context()))
	out.RequestURI = ""
	out.URL.Scheme = p.target.Scheme
	out.URL.Host = p.target.Host
	out.Host = r.Host // signed by the client
	out.Body = r.Body
	if r.ContentLength == 0 {
		out.Body = http.NoBody
	}
	out.Header.Del("Connection")
	return p.transport.RoundTrip(out)
}

func (p *FaultProxy) forwardAndCopy(w http.ResponseWriter, r *http.Request) {
	resp, err := p.forward(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	copyResponse(w, resp)
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		if strings.EqualFold(k, "Connection") || strings.EqualFold(k, "Transfer-Encoding") {
			continue
		}
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Error><Code>%s</Code><Message>%s</Message><RequestId>faultproxy</RequestId></Error>", code, msg)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", fmt.Sprint(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// resetConn closes the client connection with a TCP RST, as a crashed
// server or a broken network path would.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "fault proxy: connection cannot be hijacked", http.StatusInternalServerError)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}

// Request matchers for S3 operations (path-style addressing).

// IsConditionalPut matches a PutObject with If-None-Match (WriteExclusive).
func IsConditionalPut(r *http.Request) bool {
	return r.Method == http.MethodPut && r.Header.Get("If-None-Match") != ""
}

// IsPutObject matches a plain PutObject (not a part upload).
func IsPutObject(r *http.Request) bool {
	return r.Method == http.MethodPut && !r.URL.Query().Has("uploadId") && r.Header.Get("X-Amz-Copy-Source") == ""
}

// IsUploadPart matches an UploadPart, optionally only part number n (n > 0).
func IsUploadPart(n int) func(*http.Request) bool {
	return func(r *http.Request) bool {
		q := r.URL.Query()
		return r.Method == http.MethodPut && q.Has("uploadId") && (n <= 0 || q.Get("partNumber") == fmt.Sprint(n))
	}
}

// IsCompleteMultipart matches a CompleteMultipartUpload.
func IsCompleteMultipart(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
}

// IsRangeGet matches a GetObject with a Range header.
func IsRangeGet(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Range") != ""
}

// IsList matches a ListObjectsV2.
func IsList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2"
}
