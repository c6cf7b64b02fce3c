package judge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the chat-completions protocol of OpenAI-compatible
// endpoints. Each request takes the next scripted behaviour: "ok",
// "429:SECONDS", "500", "400", "hang" (answers after the client gave up),
// "drop" (closes the connection), or "json:CONTENT" (answers CONTENT).
// After the script it answers "ok".
type fakeServer struct {
	*httptest.Server
	mu          sync.Mutex
	script      []string
	requests    []map[string]any
	headers     []http.Header
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	latency     time.Duration
	answer      string
}

func newFakeServer(t *testing.T, script ...string) *fakeServer {
	f := &fakeServer{script: script, answer: `{"ok":true}`}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.requests = append(f.requests, body)
	f.headers = append(f.headers, r.Header.Clone())
	step := "ok"
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	answer := f.answer
	f.mu.Unlock()
	if f.latency > 0 {
		time.Sleep(f.latency)
	}
	switch {
	case len(step) > 4 && step[:4] == "429:":
		w.Header().Set("Retry-After", step[4:])
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"rate limited","type":"rate_limit"}}`)
		return
	case step == "500":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"boom"}}`)
		return
	case step == "400":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"bad request"}}`)
		return
	case step == "hang":
		time.Sleep(300 * time.Millisecond)
	case step == "drop":
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
		return
	case len(step) > 5 && step[:5] == "json:":
		answer = step[5:]
	}
	content, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],
		"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`, body["model"], content)
}

func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeServer) endpoint(name string) Endpoint {
	ep, _ := ParseEndpoint(name+"=judge-model@"+f.URL+"/v1", func(k string) string {
		if k == "GYMLENS_"+strings.ToUpper(name)+"_API_KEY" {
			return "sk-test-" + name
		}
		return ""
	})
	return ep
}
