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
	a, err := judge.ReadBatchOutput(p)
	if err != nil || a["x"].Err != "batch_expired not run in time" {
		t.Errorf("an error line: %+v %v", a, err)
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
