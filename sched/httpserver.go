package sched

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/compactd/compactd/policy"
)

// HTTPServer serves the daemon's Handler within the limits of the config's
// http section: timeouts on every phase of a connection, a header cap,
// and a cap on open connections. Each connection is a file descriptor of
// the daemon, which its jobs and its warehouse lock need too; without the
// cap, clients that keep connections open (idle keep-alives never time out
// in net/http without IdleTimeout) exhaust them.
type HTTPServer struct {
	srv *http.Server
	lim *connLimiter
}

// NewHTTPServer prepares a server of h with the limits of c.
func NewHTTPServer(c policy.HTTP, h http.Handler) *HTTPServer {
	c.WithDefaults()
	lim := newConnLimiter(c.MaxConnections)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout.D(),
		ReadTimeout:       c.ReadTimeout.D(),
		WriteTimeout:      c.WriteTimeout.D(),
		IdleTimeout:       c.IdleTimeout.D(),
		MaxHeaderBytes:    c.MaxHeaderBytes,
		ConnState:         lim.state,
	}
	return &HTTPServer{srv: srv, lim: lim}
}

// Serve accepts connections on ln until Shutdown; it returns
// http.ErrServerClosed after Shutdown.
func (s *HTTPServer) Serve(ln net.Listener) error {
	return s.srv.Serve(&limitListener{Listener: ln, lim: s.lim})
}

// Shutdown stops accepting, closes idle connections and waits for active
// ones until ctx ends.
func (s *HTTPServer) Shutdown(ctx context.Context) error {
	s.lim.close()
	return s.srv.Shutdown(ctx)
}

// connLimiter caps the open connections of one server. A connection is
// evictable while it is not serving a request (net/http's StateNew or
// StateIdle). At the cap, a newly accepted connection closes the
// keep-alive connection idle the longest after a request; when there is
// none, the connection silent the longest since it was accepted, but only
// once it has been silent for unreadGrace (a client that connects sends its
// request at once: one still unread after that is holding a slot, while a
// younger one is merely waiting for a loaded server to read it, like a
// probe that arrived just before a flood). Otherwise, and while every
// connection is serving a request, the new one waits.
type connLimiter struct {
	max    int
	mu     sync.Mutex
	cond   *sync.Cond
	conns  map[*limitConn]struct{}
	closed bool
}

func newConnLimiter(max int) *connLimiter {
	if max <= 0 {
		max = policy.DefaultHTTPMaxConnections
	}
	l := &connLimiter{max: max, conns: map[*limitConn]struct{}{}}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// admit makes room for c (closing the longest evictable connection, or
// waiting for a slot) and registers it. It reports false if the server is
// closing.
func (l *connLimiter) admit(c *limitConn) bool {
	l.mu.Lock()
	for !l.closed && len(l.conns) >= l.max {
		oldest, wake := l.victimLocked(time.Now())
		if oldest == nil {
			if wake > 0 {
				// A silent connection becomes evictable then.
				t := time.AfterFunc(wake, func() {
					l.mu.Lock()
					l.cond.Broadcast()
					l.mu.Unlock()
				})
				l.cond.Wait()
				t.Stop()
			} else {
				l.cond.Wait()
			}
			continue
		}
		// Closing it here keeps the count exact; its server goroutine sees
		// the closed connection and reports StateClosed later.
		delete(l.conns, oldest)
		oldest.evictable = false
		l.mu.Unlock()
		_ = oldest.closeConn()
		l.mu.Lock()
	}
	if l.closed {
		l.mu.Unlock()
		return false
	}
	c.evictable, c.since = true, time.Now()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return true
}

// unreadGrace is how long a connection may stay silent after it was
// accepted before it can be closed to make room.
const unreadGrace = 500 * time.Millisecond

// victimLocked picks the connection to close at the cap (nil if none may be
// closed now) and, if a silent connection becomes evictable later, when.
func (l *connLimiter) victimLocked(now time.Time) (*limitConn, time.Duration) {
	var idle, silent *limitConn
	var wake time.Duration
	for o := range l.conns {
		switch {
		case !o.evictable:
		case o.served:
			if idle == nil || o.since.Before(idle.since) {
				idle = o
			}
		case now.Sub(o.since) < unreadGrace:
			if w := unreadGrace - now.Sub(o.since); wake == 0 || w < wake {
				wake = w
			}
		default:
			if silent == nil || o.since.Before(silent.since) {
				silent = o
			}
		}
	}
	if idle != nil {
		return idle, 0
	}
	return silent, wake
}

// state follows net/http's view of each connection.
func (l *connLimiter) state(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		c.evictable, c.since = true, time.Now()
		c.served = c.served || st == http.StateIdle
		l.cond.Broadcast() // a waiting admit may evict it
	case http.StateActive:
		c.evictable = false
	case http.StateHijacked, http.StateClosed:
		l.forgetLocked(c)
	}
}

func (l *connLimiter) forgetLocked(c *limitConn) {
	if _, ok := l.conns[c]; ok {
		delete(l.conns, c)
		l.cond.Broadcast()
	}
}

func (l *connLimiter) close() {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
}

type limitListener struct {
	net.Listener
	lim *connLimiter
}

func (ll *limitListener) Accept() (net.Conn, error) {
	nc, err := ll.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &limitConn{Conn: nc, lim: ll.lim}
	if !ll.lim.admit(c) {
		_ = nc.Close()
		return nil, net.ErrClosed
	}
	return c, nil
}

// limitConn is one admitted connection; the fields other than Conn are
// guarded by lim.mu.
type limitConn struct {
	net.Conn
	lim       *connLimiter
	evictable bool
	served    bool // has answered a request and is kept alive
	since     time.Time
	once      sync.Once
	err       error
}

func (c *limitConn) closeConn() error {
	c.once.Do(func() { c.err = c.Conn.Close() })
	return c.err
}

// Close releases the connection's slot.
func (c *limitConn) Close() error {
	err := c.closeConn()
	c.lim.mu.Lock()
	c.lim.forgetLocked(c)
	c.lim.mu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
