package ingest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/judge"
)

// The judge and the warehouse together: judge.Run through the
// warehouse's judge store (the judge's own tests need no database).

func server(t *testing.T, script ...string) *openaitest.Server {
	f := openaitest.New(script...)
	t.Cleanup(f.Close)
	return f
}

// endpoint points a judge named name at f, with a key in the environment.
func endpoint(f *openaitest.Server, name string) judge.Endpoint {
	ep, _ := judge.ParseEndpoint(name+"=judge-model@"+f.URL+"/v1", func(k string) string {
		if k == "GYMLENS_"+strings.ToUpper(name)+"_API_KEY" {
			return "sk-test-" + name
		}
		return ""
	})
	return ep
}

// warehouse is a copy of the shared sample warehouse of seed 6, one
// configuration, its scenarios and runs without judgments, open for
// writing.
func warehouse(t *testing.T) *ingest.Warehouse {
	t.Helper()
	path, _ := ingest.SampleCopy(t, 6, 1, true)
	w, err := ingest.Open(context.Background(), path, ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func count(t *testing.T, w *ingest.Warehouse, q string) int {
	var n int
	if err := w.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Invalid JSON and out-of-range scores are asked once more, then stored as
// invalid with the reason, and left out of the judgments.
func TestInvalidAnswersAreStoredAsInvalid(t *testing.T) {
	w := warehouse(t)
	f := server(t, "badjson", "badjson", "outofrange", "outofrange")
	opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 5, Client: judge.ClientOptions{Concurrency: 1}}
	reps, err := judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Invalid != 2 || reps[0].Valid != 3 || f.Count() != 7 {
		t.Errorf("%+v after %d requests", reps[0], f.Count())
	}
	if n := count(t, w, `SELECT count(*) FROM judge_calls WHERE status = 'invalid' AND reason LIKE '%not JSON%'`); n != 1 {
		t.Errorf("%d invalid JSON answers stored", n)
	}
	if n := count(t, w, `SELECT count(*) FROM judge_calls WHERE status = 'invalid' AND reason LIKE '%expected in [0,1]%'`); n != 1 {
		t.Errorf("%d out-of-range answers stored", n)
	}
	if n := count(t, w, `SELECT count(*) FROM judgments WHERE judge = 'j'`); n != 3 {
		t.Errorf("%d judgments, want the 3 valid ones", n)
	}
}

// A run cancelled midway keeps every answer it got; the next run asks only
// for the rest.
func TestCancelledRunResumes(t *testing.T) {
	w := warehouse(t)
	f := server(t)
	opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 40, Client: judge.ClientOptions{Concurrency: 2}}
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	opt.Progress = func(p judge.Progress) {
		if p.Done >= 10 && done == 0 {
			done = int(p.Done)
			cancel()
		}
	}
	if _, err := judge.Run(ctx, w, opt); err != context.Canceled {
		t.Fatalf("got %v", err)
	}
	saved := count(t, w, `SELECT count(*) FROM judge_calls`)
	first := f.Count()
	if saved < 10 || saved > first {
		t.Fatalf("%d saved of %d requests", saved, first)
	}
	opt.Progress = nil
	reps, err := judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Cached != saved || reps[0].Sent != 40-saved || count(t, w, `SELECT count(*) FROM judge_calls`) != 40 {
		t.Errorf("resume: %+v, %d saved before", reps[0], saved)
	}
	// No item already judged was asked again: every input was sent once,
	// except those in flight when the first run stopped.
	if f.Count()-first != 40-saved {
		t.Errorf("%d requests to finish %d items", f.Count()-first, 40-saved)
	}
}

// An endpoint that refuses structured output gets plain requests, and its
// replies are parsed.
func TestFallbackWithoutStructuredOutput(t *testing.T) {
	w := warehouse(t)
	f := server(t, "400")
	reps, err := judge.Run(context.Background(), w, judge.RunOptions{Metrics: []string{judge.TA}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 3,
		Client: judge.ClientOptions{Concurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Valid != 3 {
		t.Errorf("%+v", reps[0])
	}
	last := f.Requests[len(f.Requests)-1]
	if _, ok := last["response_format"]; ok {
		t.Error("still asking for structured output after a 400")
	}
}

// A new prompt version re-asks its metric only; a changed input re-asks
// only the items it changes; --force re-asks everything.
func TestCacheReasksOnlyWhatChanged(t *testing.T) {
	w := warehouse(t)
	f := server(t)
	opt := judge.RunOptions{Metrics: []string{judge.TC, judge.TA}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 10, Client: judge.ClientOptions{Concurrency: 2}}
	if _, err := judge.Run(context.Background(), w, opt); err != nil {
		t.Fatal(err)
	}
	n := f.Count()
	if n != 20 {
		t.Fatalf("%d requests for 20 items", n)
	}
	old := judge.PromptVersion[judge.TA]
	judge.PromptVersion[judge.TA] = "ta/v1-test"
	reps, err := judge.Run(context.Background(), w, opt)
	judge.PromptVersion[judge.TA] = old
	if err != nil {
		t.Fatal(err)
	}
	if f.Count()-n != 10 || reps[0].Metric != judge.TC || reps[0].Sent != 0 || reps[1].Sent != 10 {
		t.Errorf("after a judge.TA prompt change: %d requests, %+v", f.Count()-n, reps)
	}
	// Change what the judge of one task --limit's sample judged on TC
	// sees: rescoring sets its chosen depth, which judge.TC items show.
	n = f.Count()
	var run, task, chosen string
	if err := w.DB().QueryRow(`SELECT o.run_id, o.task, coalesce(o.chosen_depth, '') FROM task_outcomes o JOIN judgments j USING (run_id, task)
		WHERE o.active AND j.metric = 'tc' ORDER BY o.run_id, o.task LIMIT 1`).Scan(&run, &task, &chosen); err != nil {
		t.Fatal(err)
	}
	other := "execute"
	if chosen == other {
		other = "noop"
	}
	if err := w.WriteScores(context.Background(), []ingest.TaskScore{{RunID: run, Task: task, DerivedExpected: "noop", DerivedChosen: "noop",
		EffectiveExpected: "noop", EffectiveChosen: other, Prefer: "derived"}}); err != nil {
		t.Fatal(err)
	}
	reps, err = judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count()-n != 1 || reps[0].Sent != 1 || reps[0].Cached != 9 {
		t.Errorf("after one input changed: %d requests, %+v", f.Count()-n, reps[0])
	}
	opt.Force = true
	n = f.Count()
	if _, err := judge.Run(context.Background(), w, opt); err != nil || f.Count()-n != 20 {
		t.Errorf("--force: %d requests, %v", f.Count()-n, err)
	}
	if c := count(t, w, `SELECT count(*) FROM judge_calls`); c != 20+10+1 {
		t.Errorf("%d calls stored (forced answers replace theirs)", c)
	}
}

// A rerun finds answers by their source key without rendering, and by the
// hash of the rendered input when the source key is unknown (answers saved
// by an older gymlens) or the source changed without changing the input.
func TestCacheBySourceKeyAndByInput(t *testing.T) {
	w := warehouse(t)
	f := server(t)
	opt := judge.RunOptions{Metrics: []string{judge.TC, judge.TRJ}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 10, Client: judge.ClientOptions{Concurrency: 2}}
	if _, err := judge.Run(context.Background(), w, opt); err != nil {
		t.Fatal(err)
	}
	if f.Count() != 20 {
		t.Fatalf("%d requests for 20 items", f.Count())
	}
	if n := count(t, w, `SELECT count(DISTINCT source_key) FROM judge_calls WHERE source_key IS NOT NULL`); n != 20 {
		t.Fatalf("%d distinct source keys stored, want 20", n)
	}
	// Without source keys, the rendered inputs still match.
	if _, err := w.DB().Exec(`UPDATE judge_calls SET source_key = NULL`); err != nil {
		t.Fatal(err)
	}
	reps, err := judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count() != 20 || reps[0].Cached != 10 || reps[1].Cached != 10 {
		t.Errorf("without source keys: %d requests, %+v", f.Count()-20, reps)
	}
	// Rescoring changes judge.TC's input (the chosen depth) but not TR-J's:
	// a task --limit's sample judged on TC.
	var run, task, chosen string
	if err := w.DB().QueryRow(`SELECT o.run_id, o.task, coalesce(o.chosen_depth, '') FROM task_outcomes o JOIN judgments j USING (run_id, task)
		WHERE o.active AND j.metric = 'tc' ORDER BY o.run_id, o.task LIMIT 1`).Scan(&run, &task, &chosen); err != nil {
		t.Fatal(err)
	}
	other := "execute"
	if chosen == other {
		other = "noop"
	}
	if err := w.WriteScores(context.Background(), []ingest.TaskScore{{RunID: run, Task: task, DerivedExpected: "noop", DerivedChosen: other,
		EffectiveExpected: "noop", EffectiveChosen: other, Prefer: "derived"}}); err != nil {
		t.Fatal(err)
	}
	reps, err = judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count() != 21 || reps[0].Metric != judge.TC || reps[0].Sent != 1 || reps[1].Sent != 0 {
		t.Errorf("after rescoring one task: %d requests, %+v", f.Count()-20, reps)
	}
	// Only the runs asked for: one with a TR-J item judged.
	if err := w.DB().QueryRow(`SELECT min(run_id) FROM judgments WHERE metric = 'trj'`).Scan(&run); err != nil {
		t.Fatal(err)
	}
	reps, err = judge.Run(context.Background(), w, judge.RunOptions{Metrics: []string{judge.TRJ}, Judges: []judge.Endpoint{endpoint(f, "j")},
		Runs: map[string]bool{run: true}, Client: judge.ClientOptions{Concurrency: 2}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	tasks := count(t, w, `SELECT count(*) FROM task_outcomes WHERE active AND run_id = '`+run+`'`)
	if reps[0].Items != tasks || reps[0].Cached == 0 || reps[0].Cached == tasks || reps[0].EstInputTokens == 0 {
		t.Errorf("one run of %d active tasks: %+v", tasks, reps[0])
	}
}

// Items with identical inputs (a task with the same records in two runs)
// are asked once and each gets its answer; an item whose input was
// answered for another item gets a copy, without a request.
func TestIdenticalInputsAskedOnce(t *testing.T) {
	w := warehouse(t)
	f := server(t)
	opt := judge.RunOptions{Metrics: []string{judge.TC, judge.TRJ}, Judges: []judge.Endpoint{endpoint(f, "j")}, Client: judge.ClientOptions{Concurrency: 8}}
	reps, err := judge.Run(context.Background(), w, opt)
	if err != nil {
		t.Fatal(err)
	}
	items := reps[0].Items + reps[1].Items
	distinct := count(t, w, `SELECT count(DISTINCT (metric, input_hash)) FROM judge_calls`)
	if distinct >= items {
		t.Fatalf("the sample has no identical inputs (%d distinct of %d): the test needs some", distinct, items)
	}
	if f.Count() != distinct || reps[0].Sent+reps[1].Sent != distinct || reps[0].Cached+reps[1].Cached != items-distinct {
		t.Errorf("%d requests for %d distinct inputs; %+v", f.Count(), distinct, reps)
	}
	for _, q := range []string{`SELECT count(*) FROM judge_calls`, `SELECT count(DISTINCT source_key) FROM judge_calls`,
		`SELECT count(*) FROM judgments WHERE file_id = 0`} {
		if n := count(t, w, q); n != items {
			t.Errorf("%s: %d, want one per item (%d)", q, n, items)
		}
	}
	if n := count(t, w, `SELECT count(*) FROM judge_calls WHERE attempts = 0 AND input_tokens = 0`); n != items-distinct {
		t.Errorf("%d copies cost nothing, want %d", n, items-distinct)
	}
	// Lose one item of a shared input: the rerun copies the answer back.
	if _, err := w.DB().Exec(`CREATE TEMP TABLE gone AS SELECT run_id, task, metric FROM judge_calls
		WHERE (metric, input_hash) IN (SELECT (metric, input_hash) FROM judge_calls GROUP BY ALL HAVING count(*) > 1) ORDER BY ALL LIMIT 1;
		DELETE FROM judge_calls WHERE (run_id, task, metric) IN (SELECT (run_id, task, metric) FROM gone);
		DELETE FROM judgments WHERE (run_id, task, metric) IN (SELECT (run_id, task, metric) FROM gone)`); err != nil {
		t.Fatal(err)
	}
	n := f.Count()
	if _, err := judge.Run(context.Background(), w, opt); err != nil {
		t.Fatal(err)
	}
	if f.Count() != n {
		t.Errorf("%d requests to restore a copy", f.Count()-n)
	}
	if c := count(t, w, `SELECT count(*) FROM judgments WHERE file_id = 0 AND (run_id, task, metric) IN (SELECT (run_id, task, metric) FROM gone)`); c != 1 {
		t.Errorf("the lost item has %d judgments after the rerun", c)
	}
}

// A 400 about one item (it fails with and without structured output) does
// not turn structured output off for the endpoint; the failed item's
// requests are counted. A 400 that plain JSON cures does, said once.
func TestBadRequestDecidesPerEndpoint(t *testing.T) {
	w := warehouse(t)
	f := server(t, "400", "400")
	reps, err := judge.Run(context.Background(), w, judge.RunOptions{Metrics: []string{judge.TA}, Judges: []judge.Endpoint{endpoint(f, "j")}, Limit: 3,
		Client: judge.ClientOptions{Concurrency: 1}})
	if err == nil || reps[0].Failed != 1 || reps[0].Valid != 2 || reps[0].Requests != 4 || len(reps[0].Notes) != 0 {
		t.Fatalf("%v %+v", err, reps[0])
	}
	if _, ok := f.Requests[len(f.Requests)-1]["response_format"]; !ok {
		t.Error("structured output was turned off by a 400 that plain JSON did not cure")
	}
	f2 := server(t, "400")
	reps, err = judge.Run(context.Background(), warehouse(t), judge.RunOptions{Metrics: []string{judge.TA}, Judges: []judge.Endpoint{endpoint(f2, "j")}, Limit: 3,
		Client: judge.ClientOptions{Concurrency: 1}})
	if err != nil || len(reps[0].Notes) != 1 || !strings.Contains(reps[0].Notes[0], "refused structured output") {
		t.Errorf("%v %+v", err, reps[0])
	}
}

// --limit N judges a stratified random sample of N items per metric:
// equal shares of the configuration × scenario cells (here 2 × 10, so 20
// items take one of each), drawn with the seed: the same seed draws the
// same items, another seed others; a larger N holds a smaller one's
// items.
func TestLimitSamplesAcrossConfigurationsAndScenarios(t *testing.T) {
	path, _ := ingest.SampleCopy(t, 6, 2, true)
	w, err := ingest.Open(context.Background(), path, ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := server(t)
	judged := func(name string, limit int, seed int64) string {
		t.Helper()
		ep := endpoint(f, name)
		ep.Model = "model-" + name // nothing cached by another's answers
		opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep}, Limit: limit, Client: judge.ClientOptions{Concurrency: 2, Seed: seed}}
		if _, err := judge.Run(context.Background(), w, opt); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := w.DB().QueryRow(`SELECT string_agg(run_id || '/' || task, ' ' ORDER BY run_id, task) FROM judgments WHERE judge = ?`, name).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := judged("a", 20, 1)
	cells := count(t, w, `SELECT count(DISTINCT r.config_id || '/' || r.scenario) FROM judgments j JOIN runs r USING (run_id) WHERE j.judge = 'a'`)
	all := count(t, w, `SELECT count(DISTINCT config_id || '/' || scenario) FROM runs`)
	if n := len(strings.Fields(a)); n != 20 || all != 20 || cells != 20 {
		t.Errorf("--limit 20: %d items in %d of %d configuration × scenario cells, want one in each", n, cells, all)
	}
	if b := judged("b", 20, 1); b != a {
		t.Errorf("the same seed drew other items:\n%s\n%s", a, b)
	}
	if c := judged("c", 20, 2); c == a {
		t.Errorf("seed 2 drew seed 1's items")
	}
	d := strings.Fields(judged("d", 45, 1))
	for _, it := range strings.Fields(a) {
		if !slices.Contains(d, it) {
			t.Errorf("--limit 45 lacks %s, which --limit 20 drew", it)
		}
	}
	if per := count(t, w, `SELECT max(n) - min(n) FROM (SELECT count(*) AS n FROM judgments j JOIN runs r USING (run_id) WHERE j.judge = 'd' GROUP BY r.config_id, r.scenario)`); len(d) != 45 || per > 1 {
		t.Errorf("--limit 45: %d items, cells' shares differing by %d", len(d), per)
	}
}
