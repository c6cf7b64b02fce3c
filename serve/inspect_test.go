package serve

import (
	"context"
	"html"
	"math"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// inspectFake is the fake warehouse with Inspect samples: a task and a
// configuration whose names need escaping in a link ("&", "|", "+") and
// in a page (payload), one sample at two epochs.
type inspectFake struct {
	fake
	asked []rows.InspectSampleQuery
	// When gate is set, InspectSample counts the reads under way (in, most)
	// and waits for it.
	gate     chan struct{}
	imu      sync.Mutex
	in, most int
}

const inspectTask, inspectConfig = "qa & " + payload, "openai/gpt-5 | a+b | none"

func (f *inspectFake) LoadInspect(context.Context) (*rows.InspectData, error) {
	return &rows.InspectData{Evals: []rows.InspectEval{{EvalID: "e1", Task: inspectTask, ConfigID: inspectConfig, Epochs: 2}},
		Scores: []rows.InspectScore{{EvalID: "e1", SampleID: "s" + payload, Epoch: 1, Scorer: "match", Metric: "inspect.match", Value: 1, Valid: true},
			{EvalID: "e1", SampleID: "s" + payload, Epoch: 2, Scorer: "match", Metric: "inspect.match", Value: 0, Valid: true}}}, nil
}

func (f *inspectFake) InspectFacets(context.Context) (*rows.InspectFacets, error) {
	return &rows.InspectFacets{Tasks: []string{inspectTask}, Configs: []string{inspectConfig}, Metrics: []string{"inspect.match"}, Epochs: []int{1, 2}}, nil
}

func (f *inspectFake) summary(epoch int) rows.InspectSampleSummary {
	return rows.InspectSampleSummary{InspectSampleID: rows.InspectSampleID{EvalID: "e1", SampleID: "s" + payload, Epoch: epoch}, Task: inspectTask,
		Config: inspectConfig, Model: "openai/gpt-5", InputTokens: 10, OutputTokens: 2, TotalTokens: 12, TotalTime: 1.5, WorkingTime: math.NaN(),
		Scores: []rows.InspectScoreView{{Scorer: "match", Metric: "inspect.match", Value: float64(2 - epoch), Valid: true, Raw: `"C"`, Explanation: "because " + payload}}}
}

func (f *inspectFake) InspectSamples(_ context.Context, q rows.InspectSampleQuery) (*rows.InspectSampleList, error) {
	f.asked = append(f.asked, q)
	l := &rows.InspectSampleList{Total: 2}
	for _, e := range []int{1, 2} {
		if q.Epoch == 0 || q.Epoch == e {
			l.Samples = append(l.Samples, f.summary(e))
		}
	}
	return l, nil
}

func (f *inspectFake) InspectSample(_ context.Context, k rows.InspectSampleID) (*rows.InspectSamplePage, error) {
	if f.gate != nil {
		f.imu.Lock()
		f.in++
		f.most = max(f.most, f.in)
		f.imu.Unlock()
		<-f.gate
		f.imu.Lock()
		f.in--
		f.imu.Unlock()
	}
	if k.EvalID != "e1" || k.Epoch > 2 {
		return nil, nil
	}
	p := &rows.InspectSamplePage{InspectSampleSummary: f.summary(k.Epoch), Input: "question " + payload, Capped: []string{"the first 20000 event items are shown"},
		Conversation: []rows.InspectMessage{{Role: "user", Text: "hi " + payload, Pool: -1},
			{Role: "assistant", Text: "calling", ToolCalls: []rows.InspectToolCall{{ID: "c1", Function: "bash", Arguments: `{"cmd":"` + payload + `"}`}}, Pool: -1},
			{Role: "tool", ToolCallID: "c1", Function: "bash", Text: "out " + payload, Error: "timeout: " + payload, Pool: -1}},
		Events: []rows.InspectEventView{{Index: 0, Type: "model", Model: "openai/gpt-5", InputTokens: 10, OutputTokens: 2, TotalTokens: 12, Seconds: 0.25,
			Input: []rows.InspectMessage{{Role: "user", Text: "hi " + payload, Pool: 0}}, InputRefs: "0–0", Request: `{"messages":"` + payload + `"}`},
			{Index: 1, Type: "tool", Function: "bash", Arguments: payload, Result: payload},
			{Index: 2, Type: "info", JSON: payload}},
		Pool: []rows.InspectMessage{{Role: "user", Text: "hi " + payload, Pool: 0}}}
	return p, nil
}

func inspectServerFake(t *testing.T) (*Server, *inspectFake) {
	t.Helper()
	f := &inspectFake{}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	s, err := New(context.Background(), f, Options{Name: "test.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// The Inspect pages escape every warehouse string (task, configuration,
// sample id, transcript, tool calls, results, explanations, events);
// each overview cell links to exactly its task, configuration and
// scorer, whatever characters their names hold; a capped page says so.
func TestInspectPagesEscapeAndLink(t *testing.T) {
	s, f := inspectServerFake(t)
	over := get(t, s, "/inspect")
	if over.Code != 200 {
		t.Fatalf("/inspect: %d %s", over.Code, over.Body)
	}
	body := over.Body.String()
	cell := regexp.MustCompile(`<td class="num"><a href="([^"]+)">0.500</a>`).FindStringSubmatch(body)
	if cell == nil {
		t.Fatalf("no cell of 0.500:\n%s", body)
	}
	u, err := url.Parse(html.UnescapeString(cell[1]))
	if err != nil || u.Path != "/inspect/samples" || u.Query().Get("task") != inspectTask || u.Query().Get("config") != inspectConfig || u.Query().Get("metric") != "inspect.match" {
		t.Errorf("the cell links to %s", cell[1])
	}
	list := get(t, s, html.UnescapeString(cell[1]))
	if list.Code != 200 || len(f.asked) == 0 {
		t.Fatalf("%d %s", list.Code, list.Body)
	}
	if q := f.asked[len(f.asked)-1]; q.Task != inspectTask || q.Config != inspectConfig || q.Metric != "inspect.match" || q.Limit != 50 {
		t.Errorf("the list asked %+v", q)
	}
	sample := regexp.MustCompile(`<a href="(/inspect/sample\?[^"]+)">`).FindStringSubmatch(list.Body.String())
	if sample == nil {
		t.Fatalf("no sample link:\n%s", list.Body)
	}
	page := get(t, s, html.UnescapeString(sample[1]))
	if page.Code != 200 {
		t.Fatalf("%s: %d %s", sample[1], page.Code, page.Body)
	}
	cmp := get(t, s, "/inspect/compare?"+url.Values{"eval_a": {"e1"}, "id_a": {"s" + payload}, "epoch_a": {"1"}, "eval_b": {"e1"}, "id_b": {"s" + payload}, "epoch_b": {"2"}}.Encode())
	if cmp.Code != 200 || !strings.Contains(cmp.Body.String(), `<td class="num">1 (C)</td><td class="num">0 (C)</td><td class="num">-1</td>`) {
		t.Errorf("compare: %d %s", cmp.Code, cmp.Body)
	}
	for name, b := range map[string]string{"overview": body, "list": list.Body.String(), "sample": page.Body.String(), "compare": cmp.Body.String()} {
		if strings.Contains(b, "<script") || strings.Contains(b, "<img") {
			t.Errorf("%s: the payload is not escaped:\n%s", name, b)
		}
	}
	p := page.Body.String()
	for _, want := range []string{"Capped: the first 20000 event items are shown", "tool error: timeout: &lt;script&gt;", "because &lt;script&gt;", "tokens 10 in, 2 out, 12 in all · 250 ms"} {
		if !strings.Contains(p, want) {
			t.Errorf("the sample page does not say %q", want)
		}
	}
	// Bounded: a page of the list is at most maxInspectList samples.
	get(t, s, "/inspect/samples?limit=100000")
	if q := f.asked[len(f.asked)-1]; q.Limit != maxInspectList {
		t.Errorf("limit=100000 asked %d", q.Limit)
	}
	if rec := get(t, s, "/inspect/sample?eval=e9&id=1&epoch=1"); rec.Code != 404 {
		t.Errorf("a sample not there: %d", rec.Code)
	}
	// A warehouse without Inspect tables says so.
	plain, _ := newServer(t, "")
	if rec := get(t, plain, "/inspect"); rec.Code != 404 || !strings.Contains(rec.Body.String(), "holds no Inspect tables") {
		t.Errorf("no Inspect tables: %d %s", rec.Code, rec.Body)
	}
}

// Sample pages and comparisons are read maxInspectReads at a time (each
// may hold tens of MiB while it is built); a request waiting for a slot
// gives up when it is cancelled.
func TestInspectSampleReadsAtOnce(t *testing.T) {
	s, f := inspectServerFake(t)
	f.gate = make(chan struct{})
	const n = 5
	codes := make(chan int, n)
	for i := range n {
		go func() {
			path := "/inspect/sample?eval=e1&id=1&epoch=1"
			if i%2 == 1 {
				path = "/inspect/compare?eval_a=e1&id_a=1&epoch_a=1&eval_b=e1&id_b=1&epoch_b=2"
			}
			codes <- get(t, s, path).Code
		}()
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 5 s: %s", what)
			}
		}
	}
	waitFor("two reads under way", func() bool { f.imu.Lock(); defer f.imu.Unlock(); return f.in == maxInspectReads })
	time.Sleep(50 * time.Millisecond) // the others, were they not held, would be in by now
	// A request that waits for a slot and is cancelled ends.
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/inspect/sample?eval=e1&id=1&epoch=1", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { s.ServeHTTP(rec, req); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled request still waits for a slot")
	}
	close(f.gate)
	for range n {
		if c := <-codes; c != 200 {
			t.Errorf("a page: %d", c)
		}
	}
	if f.most != maxInspectReads {
		t.Errorf("%d samples read at once, want at most %d", f.most, maxInspectReads)
	}
}
