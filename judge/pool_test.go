package judge

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// pool points a judge at the servers, as NAME=MODEL@URL1,URL2,….
func pool(t *testing.T, fs ...*openaitest.Server) Endpoint {
	t.Helper()
	var urls []string
	for _, f := range fs {
		urls = append(urls, f.URL+"/v1")
	}
	ep, err := ParseEndpoint("k=judge-model@"+strings.Join(urls, ","), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// sendAll sends n requests, as many at once as the client takes, and
// returns the errors.
func sendAll(c *Client, n int) []error {
	var wg sync.WaitGroup
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
	for range c.Capacity() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if _, err := c.Complete(context.Background(), req); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// A pool of four servers, one of which fails every request: every request
// is answered, the failing server is taken out after three failures in a
// row (noted) and gets no more, the others share the rest, and none has
// more than Concurrency requests in flight.
func TestPoolSpreadsAndTakesOutAFailingServer(t *testing.T) {
	good := []*openaitest.Server{server(t), server(t), server(t)}
	bad := server(t)
	for range 100 {
		bad.Script("500")
	}
	for _, f := range append(good, bad) {
		f.Latency = 5 * time.Millisecond
	}
	c := NewClient(pool(t, good[0], bad, good[1], good[2]), ClientOptions{Concurrency: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if c.Capacity() != 12 {
		t.Fatalf("capacity %d, want 4 servers × 3", c.Capacity())
	}
	if errs := sendAll(c, 300); len(errs) > 0 {
		t.Fatalf("%d requests failed: %v", len(errs), errs[0])
	}
	// Three in a row take it out; requests already in flight to it (at
	// most Concurrency) may fail too.
	if n := bad.Count(); n < poolFailures || n > poolFailures+3 {
		t.Errorf("the failing server got %d requests", n)
	}
	total := 0
	for i, f := range good {
		total += f.Count()
		if f.Count() < 80 || f.MaxInFlight() > 3 {
			t.Errorf("server %d: %d requests, %d at once at most", i, f.Count(), f.MaxInFlight())
		}
	}
	if total != 300 {
		t.Errorf("the good servers answered %d requests, want 300", total)
	}
	if notes := strings.Join(c.Notes(), "\n"); !strings.Contains(notes, bad.URL+"/v1 taken out of the pool after 3 failed requests in a row") {
		t.Errorf("notes: %q", notes)
	}
}

// A server taken out comes back after the pause; when it fails again the
// pause doubles; when every server is out, requests still go (to the one
// due back first) rather than stall.
func TestPoolPauseAndReturn(t *testing.T) {
	a, b := server(t), server(t)
	a.Script("500", "500", "500")
	c := NewClient(pool(t, a, b), ClientOptions{Concurrency: 1, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	for range 6 { // a's three failures (retried on b), then b alone
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if a.Count() != 3 {
		t.Fatalf("a got %d requests before its pause, want 3", a.Count())
	}
	for range 4 {
		c.Complete(context.Background(), req)
	}
	if a.Count() != 3 {
		t.Errorf("a got requests while out: %d", a.Count())
	}
	advance(poolPause + time.Second)
	for range 4 {
		c.Complete(context.Background(), req)
	}
	if a.Count() < 4 {
		t.Errorf("a did not come back after the pause: %d requests", a.Count())
	}
	// Failing again straight after its return (no answer between), it
	// leaves for twice as long.
	advance(time.Second)
	a.Script("500", "500", "500")
	before := a.Count()
	for range 8 {
		c.Complete(context.Background(), req)
	}
	c.pmu.Lock()
	pause := c.members[0].outUntil.Sub(now)
	c.pmu.Unlock()
	if a.Count()-before != 3 || pause != poolPause {
		t.Errorf("after answering on return, a fails again: %d requests, out for %v (want 3 and %v)", a.Count()-before, pause, poolPause)
	}
	advance(poolPause + time.Second)
	a.Script("500", "500", "500")
	for range 8 {
		c.Complete(context.Background(), req)
	}
	c.pmu.Lock()
	pause = c.members[0].outUntil.Sub(now)
	c.pmu.Unlock()
	if pause != 2*poolPause {
		t.Errorf("failing again on return without an answer between: out for %v, want %v", pause, 2*poolPause)
	}
	// Both out: a request still goes, to the one due back first.
	b.Script("500", "500", "500")
	for range 3 {
		c.Complete(context.Background(), req)
	}
	a.Script("ok")
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Errorf("with both servers out: %v", err)
	}
}

// At the start, a server of the pool that does not answer is left out
// (noted) and the others serve; a pool none of whose servers answers
// fails the run.
func TestPoolCheck(t *testing.T) {
	up := server(t)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String() + "/v1"
	l.Close()
	ep, err := ParseEndpoint("k=m@"+up.URL+"/v1,"+down, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(ep, ClientOptions{Concurrency: 2})
	if err := c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if errs := sendAll(c, 20); len(errs) > 0 || up.Count() != 20 {
		t.Errorf("%d errors, the server up got %d of 20", len(errs), up.Count())
	}
	if notes := strings.Join(c.Notes(), "\n"); !strings.Contains(notes, down+" refused the connection") || !strings.Contains(notes, "left out of the pool") {
		t.Errorf("notes: %q", notes)
	}
	ep, _ = ParseEndpoint("k=m@"+down+","+strings.Replace(down, "/v1", "/v2", 1), func(string) string { return "" })
	if err := NewClient(ep, ClientOptions{}).Check(context.Background()); err == nil {
		t.Error("a pool with no server up passes the check")
	}
}

func TestParsePools(t *testing.T) {
	ep, err := ParseEndpoint("k=org/m@http://a:8000/v1, http://b:8000/v1,https://c/v1", func(string) string { return "" })
	if err != nil || ep.Model != "org/m" || ep.BaseURL != "http://a:8000/v1" || fmt.Sprint(ep.URLs()) != "[http://a:8000/v1 http://b:8000/v1 https://c/v1]" {
		t.Errorf("%+v %v", ep, err)
	}
	for spec, want := range map[string]string{
		"k=m@http://a/v1,http://a/v1":     "named twice",
		"k=m@http://a/v1,ftp://b":         "http:// or https://",
		"k=m@http://a/v1,http://u:p@b/v1": "credentials",
		"k=m@http://a/v1,":                "",
	} {
		if _, err := ParseEndpoint(spec, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", spec, err)
		}
	}
	eps, err := Endpoints([]string{"k=org@m"}, []string{"k=http://a/v1,http://b/v1"})
	if err != nil || len(eps) != 1 || len(eps[0].URLs()) != 2 || eps[0].Model != "org@m" {
		t.Errorf("--endpoint with a pool: %+v %v", eps, err)
	}
}

// BenchmarkPool sends requests over one server and over a pool of four
// at the same per-server concurrency and latency; requests/s is the
// throughput to compare.
func BenchmarkPool(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var urls []string
			for range n {
				f := openaitest.New()
				f.Latency = 2 * time.Millisecond
				defer f.Close()
				urls = append(urls, f.URL+"/v1")
			}
			ep, _ := ParseEndpoint("k=m@"+strings.Join(urls, ","), func(string) string { return "" })
			c := NewClient(ep, ClientOptions{Concurrency: 4})
			b.ResetTimer()
			t0 := time.Now()
			if errs := sendAll(c, b.N); len(errs) > 0 {
				b.Fatal(errs[0])
			}
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "requests/s")
		})
	}
}
