package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/judge"
)

// batchOutputFor answers a batch input as a batch server would (the
// in-process server's answers), but for the lines named in fail (HTTP
// 500) and drop (left out).
func batchOutputFor(t *testing.T, input []byte, fail, drop map[int]bool) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(nil, 64<<20)
	for n := 0; sc.Scan(); n++ {
		var line struct {
			CustomID string         `json:"custom_id"`
			Method   string         `json:"method"`
			URL      string         `json:"url"`
			Body     map[string]any `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Method != "POST" || line.URL != "/v1/chat/completions" || line.Body["model"] != "judge-model" || line.Body["response_format"] == nil {
			t.Fatalf("batch line %d: %s", n+1, sc.Bytes())
		}
		switch {
		case drop[n]:
			continue
		case fail[n]:
			fmt.Fprintf(&out, `{"id":"r%d","custom_id":%q,"response":{"status_code":500,"body":{"error":{"message":"boom"}}},"error":null}`+"\n", n, line.CustomID)
			continue
		}
		content, _ := json.Marshal(openaitest.Answer(line.Body))
		fmt.Fprintf(&out, `{"id":"r%d","custom_id":%q,"response":{"status_code":200,"body":{"id":"c%d","object":"chat.completion","created":1,"model":"judge-model",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}},"error":null}`+"\n",
			n, line.CustomID, n, content)
	}
	return out.Bytes()
}

// A batch round trip: export writes one request per distinct input not
// yet answered, with the very body a live request sends; import saves the
// answers, checked as live ones are, at half the live price, and leaves
// what failed or is missing to ask; the next export holds exactly those.
// The judgments equal a live run's against the same server.
func TestBatchExportAndImport(t *testing.T) {
	ctx := context.Background()
	live := warehouse(t)
	batch := warehouse(t)
	f := server(t)
	ep := endpoint(f, "b")
	prices := map[string]judge.Price{"judge-model": {Input: 2, Output: 8}}
	opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep}, Limit: 40, Prices: prices, Client: judge.ClientOptions{Concurrency: 4}}
	if _, err := judge.Run(ctx, live, opt); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	exp := opt
	exp.Batch = &judge.Batch{Export: &in}
	reps, err := judge.Run(ctx, batch, exp)
	if err != nil {
		t.Fatal(err)
	}
	exported := reps[0].Batch.Exported
	if exported == 0 || exported != bytes.Count(in.Bytes(), []byte("\n")) {
		t.Fatalf("exported %d lines (%d in the file)", exported, bytes.Count(in.Bytes(), []byte("\n")))
	}
	if n := count(t, batch, "SELECT count(*) FROM judge_calls"); n != 0 {
		t.Fatalf("the export wrote %d answers", n)
	}
	// The body is the live request's, byte for byte (the live server saw
	// them): compare the first request's messages.
	var first struct{ Body map[string]any }
	json.Unmarshal(bytes.SplitN(in.Bytes(), []byte("\n"), 2)[0], &first)
	liveBodies := map[string]bool{}
	for _, r := range f.Requests {
		b, _ := json.Marshal(r["messages"])
		liveBodies[string(b)] = true
	}
	if b, _ := json.Marshal(first.Body["messages"]); !liveBodies[string(b)] {
		t.Error("the batch request differs from the live one")
	}
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out.jsonl")
	os.WriteFile(outPath, batchOutputFor(t, in.Bytes(), map[int]bool{3: true, 7: true}, map[int]bool{5: true}), 0o644)
	answers, err := judge.ReadBatchOutput(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer answers.Close()
	imp := opt
	imp.Batch = &judge.Batch{Answers: answers}
	reps, err = judge.Run(ctx, batch, imp)
	if err != nil {
		t.Fatal(err)
	}
	c := reps[0].Batch
	if c.Answered != exported-3 || c.Failed != 2 || c.Missing != 1 {
		t.Errorf("import: %+v of %d", c, exported)
	}
	notes := strings.Join(reps[0].Notes, "\n")
	if !strings.Contains(notes, "out.jsonl:4: HTTP 500") || !strings.Contains(notes, "1 requests are not in the batch") {
		t.Errorf("notes: %s", notes)
	}
	// Half the live price: 120 input and 30 output tokens at $2 and $8 per million.
	liveCost := (120*2.0 + 30*8.0) / 1e6
	if reps[0].CostUSD == nil || math.Abs(*reps[0].CostUSD-float64(c.Answered)*liveCost*judge.BatchDiscount) > 1e-12 {
		t.Errorf("cost %v, want %d × %g × %g", reps[0].CostUSD, c.Answered, liveCost, judge.BatchDiscount)
	}
	// The answers stored are the live run's (the three not answered aside).
	q := "SELECT run_id, task, correctness, grounding, completeness, artifact_quality, reasons, evidence::VARCHAR FROM judgments WHERE judge = 'b' ORDER BY ALL"
	liveRows := judgmentRows(t, live, q)
	batchRows := judgmentRows(t, batch, q)
	if len(batchRows) == 0 || len(liveRows)-len(batchRows) < 3 {
		t.Fatalf("%d judgments from the batch, %d live", len(batchRows), len(liveRows))
	}
	for r := range batchRows {
		if !liveRows[r] {
			t.Errorf("a batch judgment the live run does not have: %s", r)
		}
	}
	// The next export holds only what is still to ask.
	var again bytes.Buffer
	exp.Batch = &judge.Batch{Export: &again}
	reps, err = judge.Run(ctx, batch, exp)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Batch.Exported != 3 {
		t.Errorf("the second export: %d requests, want the 3 not answered", reps[0].Batch.Exported)
	}
}

// A batch output that is not one — bad JSON, no custom_id, an id twice, a
// 200 without a completion — is refused naming the file, line and field.
func TestBadBatchOutput(t *testing.T) {
	dir := t.TempDir()
	ok := `{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":"{}"}}]}}}`
	for name, c := range map[string]struct{ text, want string }{
		"json.jsonl":    {ok + "\n{nope\n", "json.jsonl:2: not a JSON object"},
		"noid.jsonl":    {`{"response":{"status_code":200,"body":{}}}` + "\n", `noid.jsonl:1: field "custom_id": missing`},
		"twice.jsonl":   {ok + "\n" + ok + "\n", `twice.jsonl:2: field "custom_id": "a" answered twice`},
		"empty.jsonl":   {`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[]}}}` + "\n", `field "response.body.choices": empty`},
		"nothing.jsonl": {`{"custom_id":"a"}` + "\n", `field "response": missing`},
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(c.text), 0o644)
		if _, err := judge.ReadBatchOutput(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	p := filepath.Join(dir, "failed.jsonl")
	os.WriteFile(p, []byte(`{"custom_id":"x","response":null,"error":{"code":"batch_expired","message":"not run in time"}}`+"\n"), 0o644)
	o, err := judge.ReadBatchOutput(p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if a, ok, err := o.Get("x"); !ok || err != nil || a.Err != "batch_expired not run in time" || a.Line != 1 {
		t.Errorf("an error line: %+v %v %v", a, ok, err)
	}
	if _, ok, _ := o.Get("nope"); ok {
		t.Error("an id not in the batch is found")
	}
}

// judgmentRows are the rows of q, each as one string.
func judgmentRows(t *testing.T, w *ingest.Warehouse, q string) map[string]bool {
	t.Helper()
	rs, err := w.DB().Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	out := map[string]bool{}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rs.Scan(ptrs...)
		out[fmt.Sprint(vals...)] = true
	}
	return out
}

// Judging through a Batches API, run after run as a user would (each call
// a new process, the warehouse all that carries over): a batch is
// submitted and its id kept; while it validates, runs and finalizes, later
// runs leave it running and submit nothing; once completed it is
// collected, its failed requests resubmitted, and a run that waits
// collects that one too. An expired batch's unrun half, and a failed
// batch's every request, are asked again.
func TestBatchesAPI(t *testing.T) {
	ctx := context.Background()
	w := warehouse(t)
	f := server(t)
	f.BatchFail = func(i int) bool { return i%10 == 3 }
	ep := endpoint(f, "bb")
	opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep}, Limit: 40}
	var said []string
	bo := judge.BatchOptions{Dir: t.TempDir(), Say: func(s string) { said = append(said, s) }}
	judged := func() int { return count(t, w, "SELECT count(*) FROM judgments WHERE judge = 'bb'") }
	open := func() []string {
		bs, err := w.JudgeBatches(ctx, "bb", "judge-model")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%s:%s:%d", b.ID, b.Status, b.Requests))
		}
		return out
	}
	if _, err := judge.RunBatches(ctx, w, opt, bo); err != nil {
		t.Fatal(err)
	}
	first := open()
	if len(first) != 1 || !strings.HasPrefix(first[0], "batch_1:validating:") || judged() != 0 || f.Count() != 0 {
		t.Fatalf("after submitting: %v, %d judgments, %d live requests", first, judged(), f.Count())
	}
	var n int
	fmt.Sscanf(strings.Split(first[0], ":")[2], "%d", &n)
	for _, want := range []string{"in_progress", "finalizing"} {
		if _, err := judge.RunBatches(ctx, w, opt, bo); err != nil {
			t.Fatal(err)
		}
		if got := open(); len(got) != 1 || !strings.Contains(got[0], ":"+want+":") || judged() != 0 {
			t.Fatalf("while %s: %v", want, got)
		}
	}
	// Completed: collected; its failed tenth resubmitted at once.
	if _, err := judge.RunBatches(ctx, w, opt, bo); err != nil {
		t.Fatal(err)
	}
	failed := (n + 6) / 10
	second := open()
	if judged() != n-failed || len(second) != 1 || second[0] != fmt.Sprintf("batch_2:validating:%d", failed) {
		t.Fatalf("after completion: %d judgments of %d (%d failed), open %v\n%s", judged(), n, failed, second, strings.Join(said, "\n"))
	}
	// Waiting collects the second.
	f.BatchFail = nil
	bo.Wait, bo.Poll = true, time.Millisecond
	if _, err := judge.RunBatches(ctx, w, opt, bo); err != nil {
		t.Fatal(err)
	}
	if judged() != n || len(open()) != 0 {
		t.Errorf("after waiting: %d judgments of %d, open %v", judged(), n, open())
	}
	// Nothing left: nothing submitted.
	before := f.BatchGets
	if _, err := judge.RunBatches(ctx, w, opt, bo); err != nil || f.BatchGets != before || !strings.Contains(said[len(said)-1], "nothing left to ask") {
		t.Errorf("with nothing left: %v, %d polls, %q", err, f.BatchGets-before, said[len(said)-1])
	}
	if f.Count() != 0 {
		t.Errorf("%d live requests were sent", f.Count())
	}

	// An expired batch: the half that ran is saved, the rest asked again;
	// a failed batch: everything is asked again.
	w2 := warehouse(t)
	g := server(t)
	g.BatchSteps = []string{"in_progress", "expired"}
	ep2 := endpoint(g, "bx")
	opt2 := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep2}, Limit: 40}
	if _, err := judge.RunBatches(ctx, w2, opt2, bo); err != nil {
		t.Fatal(err)
	}
	if bs, _ := w2.JudgeBatches(ctx, "bx", "judge-model"); len(bs) != 0 {
		t.Fatalf("an expired batch is left open: %+v", bs)
	}
	if got := count(t, w2, "SELECT count(*) FROM judgments WHERE judge = 'bx'"); got != n/2 {
		t.Errorf("an expired batch saved %d answers, want its first half (%d)", got, n/2)
	}
	if !strings.Contains(strings.Join(said, "\n"), "batch_1 expired") {
		t.Errorf("said: %s", strings.Join(said, "\n"))
	}
	// The next run asks the unrun half again (and it expires half-run too).
	if _, err := judge.RunBatches(ctx, w2, opt2, bo); err != nil {
		t.Fatal(err)
	}
	rest := n - n/2
	if got := count(t, w2, "SELECT count(*) FROM judgments WHERE judge = 'bx'"); got != n/2+rest/2 || !strings.Contains(strings.Join(said, "\n"), fmt.Sprintf("submitted batch batch_2 with %d requests", rest)) {
		t.Errorf("the resubmission: %d answers, want %d\n%s", got, n/2+rest/2, strings.Join(said, "\n"))
	}
	g.BatchSteps = []string{"failed"}
	if _, err := judge.RunBatches(ctx, w2, opt2, bo); err != nil {
		t.Fatal(err)
	}
	before2 := count(t, w2, "SELECT count(*) FROM judgments WHERE judge = 'bx'")
	if !strings.Contains(said[len(said)-1], "batch_3 failed: invalid_request the input file is not valid: 0 answers saved") ||
		count(t, w2, "SELECT count(*) FROM judgments WHERE judge = 'bx'") != before2 {
		t.Errorf("a failed batch: %s", strings.Join(said, "\n"))
	}
}
