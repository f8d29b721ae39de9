package sched_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// serveLimited serves h with at most max connections on a loopback port.
func serveLimited(t *testing.T, max int, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sched.NewHTTPServer(policy.HTTP{MaxConnections: max}, h)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	return ln.Addr().String()
}

// keptAlive opens a connection, makes one request on it and leaves it open,
// idle, as a keep-alive client does; it is closed when the test ends.
func keptAlive(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

func fresh() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// At the connection cap, connections serving a request are never closed
// to make room: a new connection waits until one is done.
func TestAtTheConnectionCapBusyConnectionsAreNotEvicted(t *testing.T) {
	release := make(chan struct{})
	var inside atomic.Int32
	addr := serveLimited(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			inside.Add(1)
			<-release
		}
		io.WriteString(w, "ok")
	}))
	busy := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			resp, err := fresh().Get("http://" + addr + "/block")
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			busy <- err
		}()
	}
	waitFor(t, "two busy requests", 5*time.Second, func() bool { return inside.Load() == 2 })
	third := make(chan error, 1)
	go func() {
		resp, err := fresh().Get("http://" + addr + "/ok")
		if err == nil {
			resp.Body.Close()
		}
		third <- err
	}()
	select {
	case err := <-third:
		t.Fatalf("a third connection was served beside two busy ones with a cap of 2 (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for i := 0; i < 2; i++ {
		if err := <-busy; err != nil {
			t.Fatalf("a busy request was cut off: %v", err)
		}
	}
	if err := <-third; err != nil {
		t.Fatalf("the waiting connection: %v", err)
	}
}

// At the cap, a new connection closes the connection idle the longest.
func TestAtTheConnectionCapTheLongestIdleConnectionMakesRoom(t *testing.T) {
	addr := serveLimited(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		idle = append(idle, keptAlive(t, addr))
		time.Sleep(20 * time.Millisecond) // idle[0] is the older
	}
	start := time.Now()
	resp, err := fresh().Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a new connection beside two idle ones: %v", err)
	}
	resp.Body.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("served after %s", d)
	}
	idle[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the longest idle connection was not closed: %v", err)
	}
	// The younger idle one is still served.
	io.WriteString(idle[1], "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	idle[1].SetReadDeadline(time.Now().Add(2 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(idle[1]), nil); err != nil {
		t.Fatalf("the younger idle connection was closed too: %v", err)
	} else {
		resp.Body.Close()
	}
}

// At the cap, a keep-alive connection idle after a request makes room
// before a connection whose request has not been read yet, even an older
// one: on a loaded machine a probe's connection can wait to be read while
// a flood of idle connections arrives after it.
func TestAtTheConnectionCapAnIdleKeepAliveMakesRoomBeforeAnUnreadConnection(t *testing.T) {
	addr := serveLimited(t, 3, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	unread, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer unread.Close()
	time.Sleep(20 * time.Millisecond) // unread is the oldest
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		idle = append(idle, keptAlive(t, addr))
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := fresh().Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a new connection at the cap: %v", err)
	}
	resp.Body.Close()
	idle[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle keep-alive was not the one closed: %v", err)
	}
	// The older connection, not read from yet, is still served.
	io.WriteString(unread, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	unread.SetReadDeadline(time.Now().Add(2 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(unread), nil); err != nil {
		t.Fatalf("the unread connection was closed to make room: %v", err)
	} else {
		resp.Body.Close()
	}
}

// Connections that never send a request hold their slots only for a
// moment: at the cap, one silent past the grace period makes room.
func TestAtTheConnectionCapASilentConnectionMakesRoomAfterAMoment(t *testing.T) {
	addr := serveLimited(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	var silent []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	resp, err := fresh().Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a new connection beside two silent ones: %v", err)
	}
	resp.Body.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("served after %s: the silent connections held their slots", d)
	}
	silent[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := silent[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the oldest silent connection was not closed: %v", err)
	}
}
