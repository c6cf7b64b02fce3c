package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/judge"
)

// inspectWarehouse is a new warehouse holding some of Inspect's test logs
// (not log_formats.json with log_formats.eval: they share an eval id).
func inspectWarehouse(t *testing.T, names ...string) *ingest.Warehouse {
	t.Helper()
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("inspect", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(logs, n), b, 0o644)
	}
	w, err := ingest.Open(context.Background(), filepath.Join(dir, "w.duckdb"), ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.Ingest(context.Background(), []string{logs}, ingest.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	return w
}

var judgedLogs = []string{"log_streaming.eval", "popularity_cancelled.json", "log_tool_call_error.json", "log_message_deduplication.eval"}

func answerRubric(t *testing.T) []*judge.Rubric {
	t.Helper()
	rubs, err := judge.LoadRubrics([]string{filepath.Join("testdata", "inspect_answer.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	return rubs
}

// A rubric of item: run judges every Inspect sample at every epoch: one
// judgment each, stored under the sample's key with the answer's scores;
// the prompt holds the transcript (messages, tool calls with their
// arguments, tool results with their errors) and no name of a model,
// harness, configuration or evaluation; a rerun asks nothing.
func TestJudgeInspectSamples(t *testing.T) {
	ctx := context.Background()
	w := inspectWarehouse(t, judgedLogs...)
	f := server(t)
	ij, err := w.InspectJudge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opt := judge.RunOptions{Samples: true, Rubrics: answerRubric(t), Judges: []judge.Endpoint{endpoint(f, "j")}, Client: judge.ClientOptions{Concurrency: 2}}
	reps, err := judge.Run(ctx, ij, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Two epochs of one sample with the same transcript are one input,
	// asked once, its answer copied to both.
	if len(reps) != 1 || reps[0].Metric != "custom.answer" || reps[0].Items != 9 || reps[0].Valid+reps[0].Cached != 9 || reps[0].Invalid+reps[0].Failed != 0 {
		t.Fatalf("reports %+v", reps)
	}
	// The keys: every sample and epoch, by InspectSampleKey.
	var want []string
	rs, err := w.DB().Query(`SELECT eval_id, sample_id, epoch FROM inspect_samples ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var e, s string
		var ep int
		rs.Scan(&e, &s, &ep)
		want = append(want, rows.InspectSampleKey(e, s, ep))
	}
	rs.Close()
	slices.Sort(want)
	// Each judgment holds its call's scores, and each call's answer is
	// the server's answer to one of the requests.
	answers := map[string]bool{}
	for _, body := range f.Requests {
		answers[openaitest.Answer(body)] = true
	}
	var got []string
	rs, err = w.DB().Query(`SELECT j.run_id, j.task, j.prompt, j.judge, (j.extra->'$.scores')::VARCHAR, c.answer
		FROM judgments j JOIN judge_calls c USING (run_id, task, metric, judge, prompt) WHERE j.metric = 'custom.answer' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var key, task, prompt, jn, scores, answer string
		if err := rs.Scan(&key, &task, &prompt, &jn, &scores, &answer); err != nil {
			t.Fatal(err)
		}
		got = append(got, key)
		if task != "" || prompt != "answer/v1" || jn != "j" || !answers[answer] {
			t.Errorf("%s: task %q prompt %q judge %q answer %s", key, task, prompt, jn, answer)
		}
		var s, a map[string]any
		json.Unmarshal([]byte(scores), &s)
		json.Unmarshal([]byte(answer), &a)
		if len(s) != 2 || s["correct"] != a["correct"] || s["quality"] != a["quality"] {
			t.Errorf("%s: scores %s, answer %s", key, scores, answer)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("judged %q\nwant %q", got, want)
	}
	// The prompts: the tool-using sample's transcript is there, whole.
	var prompts []string
	for _, body := range f.Requests {
		b, _ := json.Marshal(body["messages"])
		prompts = append(prompts, string(b))
	}
	all := strings.Join(prompts, "\n")
	for _, s := range []string{`Guess the number`, `\"kind\":\"tool_call\"`, `\"tool\":\"bash\"`, `\"args\":\"{\\\"cmd\\\":\\\"ls\\\"}\"`,
		`bin\\nboot\\ndev`, `\"kind\":\"tool_result\"`, `error (timeout)`, `Positive posts about myself`, `\"actor\":\"system\"`} {
		if !strings.Contains(all, s) {
			t.Errorf("no prompt holds %s", s)
		}
	}
	// … and nothing that names what was judged.
	var names []string
	rs2, err := w.DB().Query(`SELECT DISTINCT unnest([eval_id, model, harness, config_id, coalesce(run_id, eval_id)]) FROM inspect_evals`)
	if err != nil {
		t.Fatal(err)
	}
	for rs2.Next() {
		var n string
		rs2.Scan(&n)
		names = append(names, n)
	}
	rs2.Close()
	names = append(names, "gpt-4o-mini", "Meta-Llama", "hardcoded", rows.InspectKeyPrefix)
	for _, n := range names {
		if strings.Contains(all, n) {
			t.Errorf("a prompt names %q", n)
		}
	}
	// A rerun asks nothing.
	before := f.Count()
	if reps, err := judge.Run(ctx, ij, opt); err != nil || f.Count() != before || reps[0].Cached != 9 {
		t.Fatalf("rerun: %d requests, %+v, %v", f.Count()-before, reps, err)
	}
	// --limit draws a sample over configuration × task.
	if reps, err := judge.Run(ctx, ij, judge.RunOptions{Samples: true, Rubrics: opt.Rubrics, Judges: []judge.Endpoint{endpoint(f, "k")}, Limit: 3, DryRun: true}); err != nil || reps[0].Items != 3 {
		t.Fatalf("--limit 3: %+v, %v", reps, err)
	}
}

// What does not judge a sample is refused before any request: the
// built-in metrics, a rubric of another item, a warehouse without
// samples.
func TestJudgeInspectRefuses(t *testing.T) {
	ctx := context.Background()
	w := inspectWarehouse(t, "log_streaming.eval")
	f := server(t)
	ij, err := w.InspectJudge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, err := judge.ParseRubric("task.yaml", []byte(strings.Replace(mustRead(t, filepath.Join("testdata", "inspect_answer.yaml")), "item: run", "item: task", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  judge.RunOptions
		want string
	}{
		{judge.RunOptions{Metrics: []string{"tc"}}, "the built-in metrics (tc)"},
		{judge.RunOptions{}, "give a rubric of item: run"},
		{judge.RunOptions{Rubrics: []*judge.Rubric{task}}, `task.yaml: field item: --source inspect judges each sample's transcript whole`},
	} {
		c.opt.Samples, c.opt.Judges = true, []judge.Endpoint{endpoint(f, "j")}
		if _, err := judge.Run(ctx, ij, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
	if f.Count() != 0 {
		t.Errorf("%d requests", f.Count())
	}
	empty, err := ingest.Open(ctx, filepath.Join(t.TempDir(), "e.duckdb"), ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, err := empty.InspectJudge(ctx); err == nil || !strings.Contains(err.Error(), "holds no Inspect sample") {
		t.Errorf("empty: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A transcript's records: each message and tool call in order, content
// parts as text, reasoning left out, a tool's error after its result,
// the model's name masked wherever it occurs; a message that is not one
// is an error naming it.
func TestInspectTranscript(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"system","content":"You are gpt-4o-mini.","model":"x"}`),
		json.RawMessage(`{"role":"user","content":[{"type":"text","text":"Look"},{"type":"image","image":"data:..."}]}`),
		json.RawMessage(`{"role":"assistant","model":"openai/gpt-4o-mini","content":[{"type":"reasoning","reasoning":"secret"},{"type":"text","text":"On it"}],
			"tool_calls":[{"id":"c1","function":"search","arguments":{"q":"x","a":1}}]}`),
		json.RawMessage(`{"role":"tool","content":"","function":"search","error":{"type":"timeout","message":"too slow"}}`),
	}
	got, err := ingest.InspectTranscript(msgs, "openai/gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	want := []rows.JudgeEvent{
		{Seq: 0, Actor: "system", Kind: "message", Text: "You are [model]."},
		{Seq: 1, Actor: "user", Kind: "message", Text: "Look\n[image]", Visible: true},
		{Seq: 2, Actor: "agent", Kind: "message", Text: "On it", Visible: true},
		{Seq: 3, Actor: "agent", Kind: "tool_call", Tool: "search", Args: `{"a":1,"q":"x"}`},
		{Seq: 4, Actor: "env", Kind: "tool_result", Tool: "search", Result: "error (timeout): too slow"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("records\n%+v\nwant\n%+v", got, want)
	}
	for _, c := range []struct{ msg, want string }{
		{`{"role":"critic","content":"x"}`, `message 0: role: expected system, user, assistant or tool, found "critic"`},
		{`{"role":"user","content":7}`, `message 0: content: expected a string or a list of content parts`},
		{`[1]`, `message 0: not a chat message`},
	} {
		if _, err := ingest.InspectTranscript([]json.RawMessage{json.RawMessage(c.msg)}, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.msg, err, c.want)
		}
	}
}

// Keys round-trip, whatever the evaluation and sample ids hold.
func TestInspectSampleKey(t *testing.T) {
	for _, c := range [][3]string{{"abc", "1", "1"}, {"run/task", "a:b", "12"}, {"e:v%3A", "x", "3"}} {
		ep := map[string]int{"1": 1, "12": 12, "3": 3}[c[2]]
		k := rows.InspectSampleKey(c[0], c[1], ep)
		e, s, n, ok := rows.ParseInspectSampleKey(k)
		if !ok || e != c[0] || s != c[1] || n != ep {
			t.Errorf("%q: %q %q %d %v", k, e, s, n, ok)
		}
	}
	for _, k := range []string{"run-1", "inspect:x", "inspect:x:01:y", "inspect:x:a:y"} {
		if _, _, _, ok := rows.ParseInspectSampleKey(k); ok {
			t.Errorf("%q read as a key", k)
		}
	}
}

// A chunked sample's conversation refers to its message pool: the
// transcript follows the references. Here the conversation of
// log_message_deduplication.eval, whose pool holds its first eleven
// messages, is made into references and read the same.
func TestInspectTranscriptFollowsMessageRefs(t *testing.T) {
	ctx := context.Background()
	w := inspectWarehouse(t, "log_message_deduplication.eval")
	var ev, sample string
	var epoch int
	if err := w.DB().QueryRow(`SELECT eval_id, sample_id, epoch FROM inspect_samples`).Scan(&ev, &sample, &epoch); err != nil {
		t.Fatal(err)
	}
	key := rows.InspectSampleKey(ev, sample, epoch)
	before, err := w.InspectTranscripts(ctx, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.DB().Exec(`UPDATE inspect_items SET data = ('{"message_ref": ' || idx || '}')::JSON WHERE kind = 'message' AND idx < 11`)
	if n, _ := res.RowsAffected(); err != nil || n != 11 {
		t.Fatal(n, err)
	}
	after, err := w.InspectTranscripts(ctx, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if len(before[0]) < 12 || !slices.Equal(before[0], after[0]) {
		t.Errorf("before %+v\nafter %+v", before[0], after[0])
	}
	if _, err := w.InspectTranscripts(ctx, []string{rows.InspectSampleKey(ev, "nope", 1)}); err == nil || !strings.Contains(err.Error(), "no Inspect sample") {
		t.Errorf("a missing sample: %v", err)
	}
}
