package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
)

// onPort is req as it arrives on a connection to 127.0.0.1:port, naming
// host in its Host header ("" for none, as HTTP/1.0 may send it).
func onPort(req *http.Request, host string, port int) *http.Request {
	req.Host = host
	ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	return req.WithContext(ctx)
}

// hostServer is a viewer over the fake runs with opt's hosts and address.
func hostServer(t *testing.T, opt Options) *Server {
	t.Helper()
	opt.Name, opt.Bootstrap = "test.duckdb", analysis.DefaultBootstrap
	opt.Bootstrap.Resamples = 100
	s, err := New(context.Background(), &fake{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The Host a request names decides before anything else: loopback
// literals, localhost and *.localhost with the port the connection came
// to; --allowed-hosts names (any port, or the one given); the --addr host
// with the listening port. A trailing dot is the same name; everything
// else, a missing Host included, is refused with 403 naming the flag.
func TestHostCheck(t *testing.T) {
	s := hostServer(t, Options{AllowedHosts: []string{"Viewer.Example.org", "lab.example.org:9000", "10.0.0.7", "[fd00::7]:8077"}, Addr: "192.168.1.5:8077", Token: testToken})
	cases := map[string]bool{
		"127.0.0.1:8077":               true,
		"127.3.4.5:8077":               true,
		"[::1]:8077":                   true,
		"[0:0:0:0:0:0:0:1]:8077":       true,
		"[::ffff:127.0.0.1]:8077":      true,
		"localhost:8077":               true,
		"LocalHost:8077":               true,
		"localhost.:8077":              true,
		"127.0.0.1.:8077":              true,
		"app.localhost:8077":           true,
		"a.b.localhost.:8077":          true,
		"viewer.example.org":           true,
		"VIEWER.EXAMPLE.ORG:443":       true,
		"viewer.example.org.:8077":     true,
		"lab.example.org:9000":         true,
		"10.0.0.7:1234":                true,
		"[fd00::7]:8077":               true,
		"192.168.1.5:8077":             true,
		"":                             false, // no Host (HTTP/1.0)
		"evil.example:8077":            false,
		"evil.example":                 false,
		"localhost.evil.example:8077":  false,
		"localhost.evil.example.:8077": false,
		"evil.localhost.example:8077":  false,
		"xlocalhost:8077":              false,
		".localhost:8077":              false,
		"localhost..:8077":             false,
		"localhost:8078":               false, // another port than the one listened on
		"localhost":                    false, // port 80
		"127.0.0.1":                    false,
		"[::1]":                        false,
		"[::1]:8078":                   false,
		"::1":                          false,
		"0.0.0.0:8077":                 false,
		"[::]:8077":                    false,
		"127.0.0.1:8077:8077":          false,
		"localhost:80a":                false,
		"[fe80::1%25eth0]:8077":        false,
		"lab.example.org:8077":         false,
		"lab.example.org":              false,
		"x.viewer.example.org":         false,
		"[fd00::7]:9000":               false,
		"192.168.1.5:9000":             false,
		"192.168.1.6:8077":             false,
	}
	for host, ok := range cases {
		rec := httptest.NewRecorder()
		req := onPort(httptest.NewRequest("GET", "/api/runs", nil), host, 8077)
		req.Header.Set("Authorization", "Bearer "+testToken)
		s.ServeHTTP(rec, req)
		if ok && rec.Code != 200 {
			t.Errorf("Host %q: %d %s", host, rec.Code, rec.Body.String())
		}
		if !ok && (rec.Code != 403 || !strings.Contains(rec.Body.String(), "--allowed-hosts") || strings.Contains(rec.Body.String(), "Model A")) {
			t.Errorf("Host %q: %d %.200s", host, rec.Code, rec.Body.String())
		}
		if !ok && rec.Header().Get("Content-Security-Policy") != csp {
			t.Errorf("Host %q: the refusal has no CSP", host)
		}
	}
	// A request no server's connection carried (a handler called directly)
	// has no listening port: loopback names are refused, allowed names
	// without a port are not.
	for host, code := range map[string]int{"localhost:8077": 403, "viewer.example.org": 200} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/runs", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+testToken)
		if s.ServeHTTP(rec, req); rec.Code != code {
			t.Errorf("Host %q without a connection: %d, not %d", host, rec.Code, code)
		}
	}
}

// A page on a name that rebinds to 127.0.0.1 sends its own name as Host
// and Origin, and Sec-Fetch-Site says same-origin: every route, GET and
// POST, with and without a token (given right), refuses it before
// anything else — no answer stored, no queue made, no cookie set.
func TestHostCheckEveryRoute(t *testing.T) {
	gets := []string{"/", "/runs", "/runs/Model%20A/s1/p/1", "/compare?a=Model%20A/s1/p/1&b=Model%20A/s1/p/1", "/pare", "/pare/x",
		"/inspect", "/inspect/samples?task=t", "/inspect/sample?eval=e&id=1&epoch=1", "/inspect/compare?eval_a=e&id_a=1&epoch_a=1&eval_b=e&id_b=1&epoch_b=1",
		"/api/runs", "/api/runs/Model%20A/s1/p/1", "/api/metrics?by=model", "/annotate", "/annotate/q1", "/annotate/q1?annotator=mallory",
		"/annotate/q1/status", "/annotate/q1/items/2", "/api/annotate/q1/status", "/api/annotate/q1/items", "/assets/style.css", "/favicon.ico",
		"/?token=" + testToken, "/nothing"}
	type post struct{ path, contentType, body string }
	posts := []post{
		{"/annotate", form, "queue=stolen&kind=pare&k=1"},
		{"/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.5"},
		{"/api/annotate/q1/answers", "application/json", `{"item": "x", "annotator": "alice", "answers": {"tc": 1}}`},
	}
	for _, token := range []string{"", testToken} {
		s, n := annotated(t, token, false)
		for _, host := range []string{"evil.example:8077", "localhost.evil.example:8077", "127.0.0.1.evil.example:8077", ""} {
			origin := "http://" + host
			send := func(req *http.Request) *httptest.ResponseRecorder {
				req = onPort(req, host, 8077)
				req.Header.Set("Origin", origin)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				req.Header.Set("Cookie", nameCookie+"=alice")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				return rec
			}
			for _, path := range gets {
				for _, method := range []string{"GET", "HEAD"} {
					rec := send(httptest.NewRequest(method, path, nil))
					if rec.Code != 403 || !strings.Contains(rec.Body.String(), "--allowed-hosts") && method == "GET" || rec.Header().Get("Set-Cookie") != "" {
						t.Errorf("token %q, Host %q: %s %s: %d %.300s", token, host, method, path, rec.Code, rec.Body.String())
					}
				}
			}
			for _, p := range posts {
				req := httptest.NewRequest("POST", p.path, strings.NewReader(p.body))
				req.Header.Set("Content-Type", p.contentType)
				if rec := send(req); rec.Code != 403 || !strings.Contains(rec.Body.String(), "--allowed-hosts") {
					t.Errorf("token %q, Host %q: POST %s: %d %.300s", token, host, p.path, rec.Code, rec.Body.String())
				}
			}
		}
		if len(n.answers["q1"]) != 0 || n.saves != 0 || len(n.queues) != 1 {
			t.Fatalf("token %q: a rebound request stored something: %d answers, %d saves, %d queues", token, len(n.answers["q1"]), n.saves, len(n.queues))
		}
		// The same POST from the viewer's own page goes through.
		req := onPort(httptest.NewRequest("POST", "/annotate/q1/items/2", strings.NewReader("q:trj.competence=4&q:tc=0.5")), "localhost:8077", 8077)
		req.Header.Set("Content-Type", form)
		req.Header.Set("Origin", "http://localhost:8077")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Cookie", nameCookie+"=alice")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		if s.ServeHTTP(rec, req); rec.Code != 303 || len(n.answers["q1"]) != 2 {
			t.Errorf("token %q: the page's own POST: %d %s", token, rec.Code, rec.Body.String())
		}
	}
}

// exchange sends one raw request on a new connection to addr and returns
// the status line of the answer.
func exchange(t *testing.T, addr, request string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	return strings.TrimSpace(line)
}

// listening starts s.Listen on its Addr and returns the address it
// listens on; the server stops when the test ends, and must stop without
// error.
func listening(t *testing.T, s *Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- s.Listen(ctx, func(u string) { got <- u })
	}()
	var u string
	select {
	case u = <-got:
	case err := <-done:
		t.Fatalf("Listen: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Listen told no address in 5 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Listen: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Listen did not return 10 s after its context ended")
		}
	})
	return strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(u, "?", 2)[0], "http://"), "/")
}

// The same over a real loopback connection, as curl sends it: the port
// is the one the listener was given (":0" in the address).
func TestHostCheckOnALoopbackListener(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "::1"} {
		addr := net.JoinHostPort(ip, "0")
		if ln, err := net.Listen("tcp", addr); err != nil {
			t.Logf("no %s here: %v", ip, err)
			continue
		} else {
			ln.Close()
		}
		s := hostServer(t, Options{Addr: addr})
		at := listening(t, s)
		_, port, _ := net.SplitHostPort(at)
		for host, want := range map[string]string{
			at:                               "200",
			"localhost:" + port:              "200",
			"evil.example:" + port:           "403",
			"localhost.evil.example:" + port: "403",
			net.JoinHostPort(ip, "1"):        "403",
			"localhost." + ":" + port:        "200",
			"[::1]:" + port:                  "200",
			"evil.example.localhost:" + port: "200",
			"127.0.0.1:" + port + "0":        "403",
		} {
			if line := exchange(t, at, fmt.Sprintf("GET /api/runs HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)); !strings.Contains(line, " "+want+" ") {
				t.Errorf("%s, Host %q: %s, not %s", at, host, line, want)
			}
		}
		if line := exchange(t, at, "GET /api/runs HTTP/1.0\r\n\r\n"); !strings.Contains(line, " 403 ") {
			t.Errorf("%s, HTTP/1.0 without Host: %s", at, line)
		}
	}
}

// The names given are checked when the viewer is made: a name or an IP
// address, with a port or without; nothing else.
func TestCheckHosts(t *testing.T) {
	for _, h := range []string{"viewer.example.org", "Viewer.Example.org.", "viewer:8077", "10.0.0.7", "[fd00::7]", "[fd00::7]:80", "fd00::7", "my_host.lan"} {
		if err := CheckHosts([]string{h}); err != nil {
			t.Errorf("%q: %v", h, err)
		}
	}
	for _, h := range []string{"", " ", "http://viewer.example.org", "viewer.example.org/", "*.example.org", "a..b", ".example.org", "viewer:", "viewer:0", "viewer:65536", "viewer:http",
		"[fd00::7", "[viewer]:80", "vi ewer", "viewer..", "user@viewer"} {
		err := CheckHosts([]string{"ok.example", h})
		if err == nil || !strings.Contains(err.Error(), "--allowed-hosts") || !strings.Contains(err.Error(), fmt.Sprintf("%q", h)) {
			t.Errorf("%q: %v", h, err)
		}
		if _, err := New(context.Background(), &fake{}, Options{AllowedHosts: []string{h}}); err == nil {
			t.Errorf("New took --allowed-hosts %q", h)
		}
	}
}
