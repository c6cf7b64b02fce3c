package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Zero limits are the defaults, and the defaults are a viewer's: idle
// connections closed within two minutes, far fewer connections than the
// open files a process has (1,024 at the least), bodies and answers
// bounded in time.
func TestLimitsDefaults(t *testing.T) {
	d := Limits{}.withDefaults()
	want := Limits{MaxConns: DefaultMaxConns, ReadHeaderTimeout: DefaultReadHeaderTimeout, ReadTimeout: DefaultReadTimeout,
		IdleTimeout: DefaultIdleTimeout, WriteTimeout: DefaultWriteTimeout, LongWriteTimeout: DefaultLongWriteTimeout}
	if d != want {
		t.Errorf("defaults %+v, not %+v", d, want)
	}
	if d.IdleTimeout <= 0 || d.IdleTimeout > 2*time.Minute || d.MaxConns <= 0 || d.MaxConns > 512 || d.ReadHeaderTimeout <= 0 ||
		d.ReadTimeout < d.ReadHeaderTimeout || d.WriteTimeout <= 0 || d.LongWriteTimeout < d.WriteTimeout {
		t.Errorf("defaults %+v", d)
	}
	set := Limits{MaxConns: 3, IdleTimeout: time.Second}.withDefaults()
	if set.MaxConns != 3 || set.IdleTimeout != time.Second || set.ReadTimeout != DefaultReadTimeout {
		t.Errorf("set limits are kept: %+v", set)
	}
}

// A page has WriteTimeout to be written, a run's page, a comparison and
// the JSON answers LongWriteTimeout.
func TestWriteTimeoutPerRoute(t *testing.T) {
	s := hostServer(t, Options{Limits: Limits{WriteTimeout: time.Second, LongWriteTimeout: time.Hour}})
	for path, d := range map[string]time.Duration{"/": time.Second, "/runs": time.Second, "/annotate/q/items/1": time.Second, "/assets/style.css": time.Second,
		"/runs/a/b": time.Hour, "/compare": time.Hour, "/pare/x": time.Hour, "/api/runs": time.Hour, "/api/runs/x": time.Hour, "/api/metrics": time.Hour,
		"/api/annotate/q/items": time.Hour, "/inspect": time.Hour, "/inspect/sample": time.Hour, "/inspect/compare": time.Hour} {
		if got := s.writeTimeout(path); got != d {
			t.Errorf("%s: %v, not %v", path, got, d)
		}
	}
}

// serving serves h on a loopback port with lim until the test ends (the
// server must then stop without error); it returns the address and what
// the server logged.
func serving(t *testing.T, ln net.Listener, h http.Handler, lim Limits) (string, *syncBuffer) {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	logged := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveOn(ctx, ln, h, lim, log.New(logged, "", 0)) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			t.Errorf("the server stopped by itself: %v", err)
			return
		default:
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop 10 s after its context ended")
		}
	})
	return ln.Addr().String(), logged
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The write deadline runs from an answer's first byte, not from the
// request: a handler may think longer than it, and a client that reads
// nothing of a long answer is let go after it.
func TestWriteDeadlineFromTheFirstByte(t *testing.T) {
	const d = 300 * time.Millisecond
	failed := make(chan time.Duration, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = writeDeadline(w, d)
		if r.URL.Path == "/slow" {
			time.Sleep(2 * d)
			io.WriteString(w, "thought long")
			return
		}
		start := time.Now()
		chunk := make([]byte, 1<<20)
		for range 1024 { // 1 GiB: more than any socket buffer holds
			if _, err := w.Write(chunk); err != nil {
				failed <- time.Since(start)
				return
			}
		}
		failed <- -1
	})
	addr, _ := serving(t, nil, h, Limits{})
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "thought long" {
		t.Errorf("an answer that took longer than the write deadline to start: %q", b)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /big HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	select {
	case took := <-failed:
		if took < 0 || took > d+2*time.Second {
			t.Errorf("a client reading nothing held the answer %v (deadline %v)", took, d)
		}
	case <-time.After(d + 5*time.Second):
		t.Fatal("a client reading nothing held the answer past its deadline")
	}
}

// closedWithin reads c until the server closes it and says how long that
// took (or fails after limit).
func closedWithin(t *testing.T, c net.Conn, r *bufio.Reader, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	if r == nil {
		r = bufio.NewReader(c)
	}
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open %v", limit)
	}
	return time.Since(start)
}

// A body sent slower than ReadTimeout allows is cut off; an idle
// connection, kept alive or never used, is closed after IdleTimeout or
// ReadHeaderTimeout.
func TestSlowAndIdleConnectionsAreClosed(t *testing.T) {
	const d = 300 * time.Millisecond
	read := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			_, err := io.ReadAll(r.Body)
			read <- err
		}
		io.WriteString(w, "ok")
	})
	addr, _ := serving(t, nil, h, Limits{ReadHeaderTimeout: d, ReadTimeout: d, IdleTimeout: d})

	// A body trickled, a byte every 50 ms of 1,000.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n", addr)
	stop := make(chan struct{})
	go func() {
		for range 1000 {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	select {
	case err := <-read:
		if err == nil {
			t.Error("a trickled body was read whole")
		}
	case <-time.After(d + 3*time.Second):
		t.Error("a trickled body was still being read 3 s after ReadTimeout")
	}
	close(stop)

	// Kept alive after an answer, then idle.
	k, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	fmt.Fprintf(k, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	r := bufio.NewReader(k)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if took := closedWithin(t, k, r, d+3*time.Second); took < d-100*time.Millisecond {
		t.Errorf("an idle connection closed after %v, before IdleTimeout %v", took, d)
	}

	// Opened and never used.
	n, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	closedWithin(t, n, nil, d+3*time.Second)
}

// flakyListener fails its first accepts, as a listener out of file
// descriptors does.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, errors.New("accept4: too many open files")
	}
	return l.Listener.Accept()
}

// An accept error of any kind is logged and retried: the server goes on
// answering, and stops only when told to.
func TestAcceptErrorsDoNotStopTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln}
	fl.fails.Store(3)
	addr, logged := serving(t, fl, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), Limits{})
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || strings.Count(logged.String(), "too many open files") != 3 {
		t.Errorf("%d; logged:\n%s", res.StatusCode, logged)
	}
}

// idleConns opens n connections to addr, each sending nothing when req
// is empty, else req (then reading its answer and keeping the connection
// open); it returns them and the times their answers came.
func idleConns(t *testing.T, addr string, n int, req string) ([]net.Conn, chan time.Time) {
	t.Helper()
	answered := make(chan time.Time, n)
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
		if req == "" {
			continue
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		go func() {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				answered <- time.Now()
			}
		}()
	}
	return conns, answered
}

// A flood of idle connections, twice the cap, degrades into waiting: no
// more than the cap are served at once; each is closed after its idle
// (or header) timeout; a fresh request is answered within 2 s after they
// time out; the server never stops.
func TestFloodOfIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 128 connections and waits for their timeouts (about 5 s)")
	}
	const conns, idle = 32, time.Second
	s := hostServer(t, Options{Addr: "127.0.0.1:0", Limits: Limits{MaxConns: conns, IdleTimeout: idle, ReadHeaderTimeout: idle, ReadTimeout: idle}})
	addr := listening(t, s)
	fresh := func(after time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		client := &http.Client{Timeout: after + 2*time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Get("http://" + addr + "/api/runs")
		if err != nil {
			t.Fatalf("a fresh request in the flood: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("a fresh request in the flood: %d", res.StatusCode)
		}
		return time.Since(start)
	}

	// 2 × cap connections that send nothing: the first cap hold their
	// slots until ReadHeaderTimeout, the rest then until theirs.
	idleConns(t, addr, 2*conns, "")
	if took := fresh(2 * idle); took < idle-200*time.Millisecond {
		t.Errorf("a fresh request behind %d silent connections was answered in %v: the cap of %d did not hold", 2*conns, took, conns)
	}

	// 2 × cap connections that ask once and stay open, idle.
	start := time.Now()
	req := fmt.Sprintf("GET /favicon.ico HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	kept, answered := idleConns(t, addr, 2*conns, req)
	var times []time.Time
	for range 2 * conns {
		select {
		case at := <-answered:
			times = append(times, at)
		case <-time.After(2*idle + 5*time.Second):
			t.Fatalf("%d of %d kept-alive connections answered", len(times), 2*conns)
		}
	}
	early := 0
	for _, at := range times {
		if at.Sub(start) < idle {
			early++
		}
	}
	if early > conns {
		t.Errorf("%d connections answered before the first idle one could close: the cap is %d", early, conns)
	}
	for i, c := range kept {
		c.SetReadDeadline(time.Now().Add(idle + 3*time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("kept-alive connection %d not closed by the server after its idle timeout: %v", i, err)
		}
	}
	fresh(0)
}
