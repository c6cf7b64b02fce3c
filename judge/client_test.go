package judge

import (
	"context"
	"errors"
	"net/http"

	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// recordSleeps replaces the client's sleep with one that records how long
// it was asked to wait, so that retry spacing is checked without waiting.
func recordSleeps(c *Client) *[]time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return ctx.Err()
	}
	return &got
}

// server starts the in-process endpoint with a script.
func server(t *testing.T, script ...string) *openaitest.Server {
	f := openaitest.New(script...)
	t.Cleanup(f.Close)
	return f
}

// endpoint points a judge named name at f, with a key in the environment.
func endpoint(f *openaitest.Server, name string) Endpoint {
	ep, _ := ParseEndpoint(name+"=judge-model@"+f.URL+"/v1", func(k string) string {
		if k == "GYMLENS_"+strings.ToUpper(name)+"_API_KEY" {
			return "sk-test-" + name
		}
		return ""
	})
	return ep
}

var req = Request{System: "s", User: "u", SchemaName: "answer", Schema: map[string]any{"type": "object"}}

func TestRetriesHonourRetryAfterAndBackOff(t *testing.T) {
	f := server(t, "429:7", "500", "drop", "ok")
	c := NewClient(endpoint(f, "a"), ClientOptions{BaseBackoff: 100 * time.Millisecond})
	sleeps := recordSleeps(c)
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 4 || f.Count() != 4 || !strings.Contains(resp.Content, `"correctness"`) || resp.InputTokens != 120 || resp.OutputTokens != 30 {
		t.Fatalf("%+v after %d requests", resp, f.Count())
	}
	s := *sleeps
	// The server's Retry-After first; then full-jitter backoff within
	// (0, 100 ms] and (0, 400 ms] (the third wait follows the third try).
	if len(s) != 3 || s[0] != 7*time.Second || s[1] <= 0 || s[1] > 200*time.Millisecond || s[2] <= 0 || s[2] > 400*time.Millisecond {
		t.Errorf("waits %v", s)
	}
}

func TestNoRetryOnClientErrorsAndGivingUp(t *testing.T) {
	f := server(t, "400")
	c := NewClient(endpoint(f, "a"), ClientOptions{})
	recordSleeps(c)
	if _, err := c.Complete(context.Background(), req); err == nil || f.Count() != 1 {
		t.Errorf("400: %v after %d requests", err, f.Count())
	}
	f = server(t, "500", "500", "500", "500")
	c = NewClient(endpoint(f, "a"), ClientOptions{MaxRetries: 2})
	recordSleeps(c)
	_, err := c.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || f.Count() != 3 {
		t.Errorf("%v after %d requests", err, f.Count())
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	f := server(t, "hang", "ok")
	c := NewClient(endpoint(f, "a"), ClientOptions{Timeout: 50 * time.Millisecond})
	recordSleeps(c)
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Attempts != 2 {
		t.Fatalf("%+v %v", resp, err)
	}
}

func TestRequestAndKey(t *testing.T) {
	f := server(t)
	c := NewClient(endpoint(f, "a"), ClientOptions{Seed: 42})
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body, h := f.Requests[0], f.Headers[0]
	rf, _ := body["response_format"].(map[string]any)
	if body["model"] != "judge-model" || body["temperature"] != float64(0) || body["seed"] != float64(42) || rf["type"] != "json_schema" {
		t.Errorf("request %v", body)
	}
	if h.Get("Authorization") != "Bearer sk-test-a" {
		t.Errorf("authorization %q", h.Get("Authorization"))
	}
}

func TestConcurrencyBound(t *testing.T) {
	f := server(t)
	f.Latency = 20 * time.Millisecond
	c := NewClient(endpoint(f, "a"), ClientOptions{Concurrency: 3})
	var wg sync.WaitGroup
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Complete(context.Background(), req); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := f.MaxInFlight(); m > 3 || m < 2 {
		t.Errorf("%d requests in flight at most, bound 3", m)
	}
}

func TestCancelStopsAtOnce(t *testing.T) {
	f := server(t, "hang", "hang", "hang")
	c := NewClient(endpoint(f, "a"), ClientOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	if _, err := c.Complete(ctx, req); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	env := map[string]string{"GYMLENS_QWEN_JUDGE_API_KEY": "k1", "OPENAI_API_KEY": "k2"}
	get := func(k string) string { return env[k] }
	ep, err := ParseEndpoint("qwen-judge=Qwen/Qwen3.5-397B@http://localhost:8000/v1", get)
	if err != nil || ep.Model != "Qwen/Qwen3.5-397B" || ep.BaseURL != "http://localhost:8000/v1" || ep.apiKey != "k1" {
		t.Errorf("%+v %v", ep, err)
	}
	ep, _ = ParseEndpoint("gpt=gpt-5.6-luna", get)
	if ep.BaseURL != "" || ep.apiKey != "k2" || ep.Model != "gpt-5.6-luna" {
		t.Errorf("%+v", ep)
	}
	ep, _ = ParseEndpoint("local=llama@3b@http://h:1/v1", func(string) string { return "" })
	if ep.Model != "llama@3b" || ep.apiKey != "" {
		t.Errorf("%+v", ep)
	}
	for _, bad := range []string{"noequals", "=model", "bad name=m"} {
		if _, err := ParseEndpoint(bad, get); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Credentials in the URL never pass for part of the model name (the
	// requests would go to the default endpoint, with the key): refused.
	for spec, want := range map[string]string{
		"q=Qwen/X@http://user:pass@host/v1": "holds credentials",
		"q=Qwen/X@https://tok@host/v1":      "holds credentials",
		"q=@http://host/v1":                 "no model before the URL",
		"q=Qwen/X@ftp://host/v1":            "looks like a URL",
		"q=Qwen/X@http:///v1":               "names no host",
	} {
		_, err := ParseEndpoint(spec, get)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	// The first @http(s):// starts the URL; "@" before it is the model's.
	ep, err = ParseEndpoint("m=org/model@v2@HTTPS://api.example.test/v1", get)
	if err != nil || ep.Model != "org/model@v2" || ep.BaseURL != "HTTPS://api.example.test/v1" {
		t.Errorf("%+v %v", ep, err)
	}
}

func TestRetryAfterForms(t *testing.T) {
	h := func(v string) *http.Response { return &http.Response{Header: http.Header{"Retry-After": {v}}} }
	if d := retryAfter(h("2.5")); d != 2500*time.Millisecond {
		t.Errorf("seconds: %v", d)
	}
	if d := retryAfter(h(time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat))); d < 80*time.Second || d > 91*time.Second {
		t.Errorf("date: %v", d)
	}
	if d := retryAfter(h("soon")); d != 0 {
		t.Errorf("junk: %v", d)
	}
	if d := retryAfter(nil); d != 0 {
		t.Errorf("no response: %v", d)
	}
}
