package judge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// plainEndpoint points a judge at url, with no key.
func plainEndpoint(t *testing.T, url string) Endpoint {
	t.Helper()
	ep, err := ParseEndpoint("a=judge-model@"+url+"/v1", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// A redirect is never followed: the judge's inputs go only to the URL the
// user named, and the refusal is not retried.
func TestRedirectIsRefused(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var asked atomic.Int64
		named := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Add(1)
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}))
		c := NewClient(plainEndpoint(t, named.URL), ClientOptions{})
		recordSleeps(c)
		_, err := c.Complete(context.Background(), req)
		named.Close()
		if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), "--judge") {
			t.Errorf("%d: %v", code, err)
		}
		if asked.Load() != 1 {
			t.Errorf("%d: the named server was asked %d times, want once (no retry)", code, asked.Load())
		}
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the redirect's target was asked %d times", elsewhere.Load())
	}
}

// An answer longer than MaxAnswerBytes is an error, whether its length is
// announced or not, and is not read further nor retried.
func TestAnswerSizeIsBounded(t *testing.T) {
	for _, announce := range []bool{true, false} {
		var asked atomic.Int64
		big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			asked.Add(1)
			w.Header().Set("Content-Type", "application/json")
			body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("a", MaxAnswerBytes) + `"}}]}`
			if !announce {
				w.Header().Set("Transfer-Encoding", "chunked")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(body))
		}))
		c := NewClient(plainEndpoint(t, big.URL), ClientOptions{})
		recordSleeps(c)
		_, err := c.Complete(context.Background(), req)
		big.Close()
		if err == nil || !strings.Contains(err.Error(), "16 MiB limit") {
			t.Errorf("announced %v: %v", announce, err)
		}
		if asked.Load() != 1 {
			t.Errorf("announced %v: asked %d times, want once", announce, asked.Load())
		}
	}
	// An answer within the bound passes.
	f := server(t)
	c := NewClient(endpoint(f, "a"), ClientOptions{})
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}
