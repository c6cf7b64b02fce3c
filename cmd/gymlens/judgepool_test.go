package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/internal/sample"
	"github.com/gymlens/gymlens/reports"
)

// A judge over a pool of four servers, one of which fails every request,
// stores the same answers as over one server, and says how its requests
// were spread and which server left the pool.
func TestJudgeOverAPool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 4, Configs: 1}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c", "judgments"))
	one, four := filepath.Join(dir, "one.duckdb"), filepath.Join(dir, "four.duckdb")
	for _, db := range []string{one, four} {
		if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", filepath.Join(dir, "c")); code != 0 {
			t.Fatal(stderr)
		}
	}
	var servers []*openaitest.Server
	for range 4 {
		f := openaitest.New()
		f.Latency = 5 * time.Millisecond // so that the fewest in flight spreads the requests
		defer f.Close()
		servers = append(servers, f)
	}
	for range 50 {
		servers[2].Script("500")
	}
	urls := []string{}
	for _, f := range servers {
		urls = append(urls, f.URL+"/v1")
	}
	solo := openaitest.New()
	defer solo.Close()
	run := func(db, spec string) ([]map[string]any, string) {
		t.Helper()
		code, out, stderr := gymlens(t, "--db", db, "judge", "--metric", "tc", "--judge", spec, "--limit", "60", "--concurrency", "2", "--format", "json")
		if code != 0 {
			t.Fatalf("%s: %s", spec, stderr)
		}
		var reps []map[string]any
		if err := json.Unmarshal([]byte(out), &reps); err != nil {
			t.Fatal(err, out)
		}
		return reps, stderr
	}
	run(one, "p=fake-judge@"+solo.URL+"/v1")
	reps, notes := run(four, "p=fake-judge@"+strings.Join(urls, ","))
	if !strings.Contains(notes, urls[2]+" taken out of the pool") || !strings.Contains(notes, "requests by server of its pool") {
		t.Errorf("notes: %s", notes)
	}
	if reps[0]["sent"] != float64(60) {
		t.Errorf("report: %v", reps[0])
	}
	for i, f := range servers {
		if i != 2 && f.Count() < 10 {
			t.Errorf("server %d answered %d of 60", i, f.Count())
		}
	}
	answers := func(db string) string {
		code, out, stderr := gymlens(t, "--db", db, "query", "--format", "csv",
			"SELECT run_id, task, correctness, grounding, completeness, artifact_quality, reasons FROM judgments WHERE judge = 'p' ORDER BY ALL")
		if code != 0 {
			t.Fatal(stderr)
		}
		return out
	}
	if a, b := answers(one), answers(four); a != b || strings.Count(a, "\n") != 61 {
		t.Errorf("the pool's answers differ from one server's (%d and %d lines)", strings.Count(a, "\n"), strings.Count(b, "\n"))
	}
}

// A batch by hand: export-batch writes the requests, a batch server (here
// the in-process one's answers) answers them, import-batch saves them, and
// the metrics read the judge; a malformed output is refused naming its
// line, and changes nothing.
func TestJudgeBatchCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 4, Configs: 1}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c", "judgments"))
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", filepath.Join(dir, "c")); code != 0 {
		t.Fatal(stderr)
	}
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	flags := []string{"--metric", "tc,trj", "--judge", "b=judge-model@http://127.0.0.1:9/v1", "--limit", "25"}
	code, stdout, stderr := gymlens(t, append([]string{"--db", db, "judge", "export-batch", "--out", in}, flags...)...)
	if code != 0 || !strings.Contains(stdout, "wrote "+in+": 50 requests") {
		t.Fatalf("export-batch: %d %s %s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(in)
	var answers strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var req struct {
			CustomID string         `json:"custom_id"`
			Body     map[string]any `json:"body"`
		}
		json.Unmarshal([]byte(line), &req)
		content, _ := json.Marshal(openaitest.Answer(req.Body))
		fmt.Fprintf(&answers, `{"id":"r%d","custom_id":%q,"response":{"status_code":200,"body":{"choices":[{"index":0,"message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":100,"completion_tokens":20}}},"error":null}`+"\n", i, req.CustomID, content)
	}
	os.WriteFile(out, []byte(answers.String()+"{broken\n"), 0o644)
	if code, _, stderr := gymlens(t, append([]string{"--db", db, "judge", "import-batch", out}, flags...)...); code == 0 || !strings.Contains(stderr, "out.jsonl:51: not a JSON object") {
		t.Errorf("a malformed output: %d %s", code, stderr)
	}
	os.WriteFile(out, []byte(answers.String()), 0o644)
	code, stdout, stderr = gymlens(t, append([]string{"--db", db, "-f", "json", "judge", "import-batch", out}, flags...)...)
	if code != 0 {
		t.Fatalf("import-batch: %s", stderr)
	}
	var reps []map[string]any
	json.Unmarshal([]byte(stdout), &reps)
	if len(reps) != 2 || reps[0]["valid"] != float64(25) || reps[1]["valid"] != float64(25) {
		t.Errorf("import: %s", stdout)
	}
	if code, out, _ := gymlens(t, "--db", db, "query", "--format", "csv", "SELECT count(*) FROM judgments WHERE judge = 'b'"); code != 0 || out != "count_star()\n50\n" {
		t.Errorf("judgments: %q", out)
	}
	// Nothing is left to ask.
	code, stdout, _ = gymlens(t, append([]string{"--db", db, "judge", "export-batch", "--out", in}, flags...)...)
	if code != 0 || !strings.Contains(stdout, ": 0 requests") {
		t.Errorf("a second export: %s", stdout)
	}
}

// gymlens judge --batch, run after run: submits, finds the batch running,
// collects it when it has completed; --batch-wait does it all in one run.
func TestJudgeBatchAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 4, Configs: 1}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c", "judgments"))
	db, db2 := filepath.Join(dir, "w.duckdb"), filepath.Join(dir, "w2.duckdb")
	for _, d := range []string{db, db2} {
		if code, _, stderr := gymlens(t, "--db", d, "-q", "ingest", filepath.Join(dir, "c")); code != 0 {
			t.Fatal(stderr)
		}
	}
	f := openaitest.New()
	defer f.Close()
	args := []string{"judge", "--batch", "--metric", "tc", "--judge", "bt=judge-model@" + f.URL + "/v1", "--limit", "20"}
	for _, want := range []string{"submitted batch batch_1 with 20 requests", "batch_1 (20 requests) is in_progress", "is finalizing", "batch_1 completed: 20 answers saved"} {
		code, _, stderr := gymlens(t, append([]string{"--db", db}, args...)...)
		if code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("want %q: %d %s", want, code, stderr)
		}
	}
	if code, out, _ := gymlens(t, "--db", db, "query", "--format", "csv", "SELECT count(*), min(status), bool_and(collected) FROM judge_batches"); code != 0 || out != "count_star(),min(status),bool_and(collected)\n1,completed,true\n" {
		t.Errorf("judge_batches: %q", out)
	}
	code, _, stderr := gymlens(t, append([]string{"--db", db2}, append(args, "--batch-wait", "--batch-poll", "1ms")...)...)
	if code != 0 || !strings.Contains(stderr, "batch_2 completed: 20 answers saved") {
		t.Errorf("--batch-wait: %d %s", code, stderr)
	}
	if code, out, _ := gymlens(t, "--db", db2, "query", "--format", "csv", "SELECT count(*) FROM judgments WHERE judge = 'bt'"); code != 0 || out != "count_star()\n20\n" {
		t.Errorf("judgments after --batch-wait: %q", out)
	}
	if f.Count() != 0 {
		t.Errorf("%d live requests", f.Count())
	}
}

// A researcher's rubrics (the shipped examples), judged over a pool of
// two servers and, on a copy of the warehouse, through a batch: the same
// judgments either way, and their metrics with intervals in metrics, the
// custom table (compiled by TeX with the other tables' tests' preamble)
// and the report.
func TestRubricThroughPoolAndBatch(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 4, 2, false)
	db2 := filepath.Join(filepath.Dir(db), "w2.duckdb")
	if b, err := os.ReadFile(db); err != nil || os.WriteFile(db2, b, 0o644) != nil {
		t.Fatal(err)
	}
	examples := filepath.Join("..", "..", "judge", "prompts", "examples")
	a, b, c := openaitest.New(), openaitest.New(), openaitest.New()
	defer a.Close()
	defer b.Close()
	defer c.Close()
	if code, _, stderr := gymlens(t, "--db", db, "-q", "judge", "--prompt", examples, "--judge", "r=judge-model@"+a.URL+"/v1,"+b.URL+"/v1"); code != 0 {
		t.Fatal(stderr)
	}
	if a.Count() == 0 || b.Count() == 0 {
		t.Errorf("the pool's requests: %d and %d", a.Count(), b.Count())
	}
	if code, _, stderr := gymlens(t, "--db", db2, "judge", "--batch", "--batch-wait", "--batch-poll", "1ms", "--prompt", examples, "--judge", "r=judge-model@"+c.URL+"/v1"); code != 0 {
		t.Fatal(stderr)
	}
	q := "SELECT run_id, task, metric, prompt, extra::VARCHAR FROM judgments ORDER BY ALL"
	_, live, _ := gymlens(t, "--db", db, "query", "--format", "csv", q)
	_, batch, _ := gymlens(t, "--db", db2, "query", "--format", "csv", q)
	if live != batch || strings.Count(live, "\n") < 50 || !strings.Contains(live, "custom.initiative,initiative/v1") || !strings.Contains(live, "custom.interruption,interruption/v1") {
		t.Errorf("judgments through the pool and through the batch differ, or are too few:\n%.600s\n---\n%.600s", live, batch)
	}
	// metrics: the 3T metrics and the rubrics' by default, with intervals.
	code, out, stderr := gymlens(t, "--db", db, "metrics", "--by", "model,harness", "--format", "json", "--resamples", "200")
	if code != 0 {
		t.Fatal(stderr)
	}
	var est []map[string]any
	if err := json.Unmarshal([]byte(out), &est); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range est {
		m, _ := e["metric"].(string)
		lo, _ := e["ci_low"].(float64)
		hi, _ := e["ci_high"].(float64)
		v, _ := e["mean"].(float64)
		ws, _ := e["warnings"].([]any)
		if strings.HasPrefix(m, "custom.") && (!(lo <= v && v <= hi && lo < hi) || len(ws) > 0) {
			t.Errorf("%v", e)
		}
		seen[m]++
	}
	if seen["custom.interruption"] != 2 || seen["custom.initiative"] != 2 || seen["TC"] != 2 {
		t.Errorf("metrics shown: %v", seen)
	}
	// corr and compare take them by name too.
	if code, out, stderr := gymlens(t, "--db", db, "corr", "--metrics", "TC,custom.interruption", "--format", "csv", "--resamples", "200"); code != 0 || !strings.Contains(out, "TC,custom.interruption,") {
		t.Errorf("corr: %d %s %.300s", code, stderr, out)
	}
	if code, out, stderr := gymlens(t, "--db", db, "compare", "--harness-switch", "CC,CD", "--metrics", "custom.initiative", "--format", "csv", "--resamples", "200"); code != 0 || !strings.Contains(out, "custom.initiative") {
		t.Errorf("compare: %d %s %.300s", code, stderr, out)
	}
	if code, out, stderr := gymlens(t, "--db", db, "table", "custom", "-f", "md", "--resamples", "200"); code != 0 || !strings.Contains(out, "custom.interruption.timing") {
		t.Errorf("table custom: %d %s %.300s", code, stderr, out)
	}
	dir := filepath.Join(t.TempDir(), "rep")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", dir, "--resamples", "200"); code != 0 {
		t.Fatal(stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(page), "custom.initiative") {
		t.Errorf("the report shows no rubric metric (%v)", err)
	}
	t.Run("tex", func(t *testing.T) { checkTeX(t, filepath.Join(dir, "tables")) }) // skipped alone, the checks below still run
	// The manifest records the judge's calls (model, rubric digest); verify
	// passes against the warehouse, and refuses --inputs, which cannot
	// give the model's answers.
	var m reports.Manifest
	mj, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	json.Unmarshal(mj, &m)
	if len(m.Steps.Judge) != 2 || m.Steps.Judge[0].Model != "judge-model" || len(m.Steps.Judge[0].PromptSHA256) != 64 || m.Steps.Judge[0].Valid == 0 {
		t.Errorf("judge steps: %+v", m.Steps.Judge)
	}
	if code, out, stderr := gymlens(t, "--db", db, "verify", dir); code != 0 {
		t.Errorf("verify: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := gymlens(t, "verify", "--inputs", t.TempDir(), dir); code != 1 || !strings.Contains(stderr, "judgments `gymlens judge` made (judge r, model judge-model") {
		t.Errorf("verify --inputs with the judge's judgments: exit %d, %s", code, stderr)
	}
	// More calls since the report: named.
	if code, _, stderr := gymlens(t, "--db", db, "-q", "judge", "--metric", "tc", "--limit", "3", "--judge", "r=judge-model@"+a.URL+"/v1"); code != 0 {
		t.Fatal(stderr)
	}
	if code, out, _ := gymlens(t, "--db", db, "verify", dir); code != 1 || !strings.Contains(out, "judge r · judge-model · tc/v1") || !strings.Contains(out, "calls in the warehouse, none in the manifest") {
		t.Errorf("verify after more judging: exit %d\n%s", code, out)
	}
}

// judge --repeats 2, then agree --self: the judge against itself, and the
// noise share against the sample's logged judge.
func TestRepeatsThenAgreeSelf(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 4, 1, true)
	f := openaitest.New()
	defer f.Close()
	f.FlipEvery = 3
	code, out, stderr := gymlens(t, "--db", db, "judge", "--metric", "ta,tc", "--repeats", "2", "--judge", "again=judge-model@"+f.URL+"/v1", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "judge,model,metric,seed,items") || !strings.Contains(out, "again,judge-model,ta,2,") {
		t.Fatalf("%d %s\n%s", code, stderr, out)
	}
	// Bad repeats and temperatures are refused before any request, and
	// nothing is written.
	before := f.Count()
	_, calls, _ := gymlens(t, "--db", db, "query", "--format", "csv", "SELECT count(*) FROM judge_calls")
	for _, bad := range [][]string{{"--repeats", "-1"}, {"--repeats", "101"}, {"--temperature", "3"}} {
		code, _, stderr := gymlens(t, append([]string{"--db", db, "judge", "--metric", "ta", "--judge", "again=judge-model@" + f.URL + "/v1"}, bad...)...)
		if code == 0 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: %d %s", bad, code, stderr)
		}
	}
	_, after, _ := gymlens(t, "--db", db, "query", "--format", "csv", "SELECT count(*) FROM judge_calls")
	if f.Count() != before || after != calls {
		t.Errorf("bad flags sent %d requests, calls %q → %q", f.Count()-before, calls, after)
	}
	code, out, stderr = gymlens(t, "--db", db, "agree", "--self", "again", "--format", "csv", "--resamples", "200")
	if code != 0 {
		t.Fatal(stderr)
	}
	lines := strings.Split(out, "\n")
	var now, noise string
	for _, l := range lines {
		if strings.HasPrefix(l, "self,again,TA.now,binary,") {
			now = l
		}
		if strings.HasPrefix(l, "noise,again,") && strings.Contains(l, ",TC.correctness,") {
			noise = l
		}
	}
	if now == "" || noise == "" {
		t.Fatalf("agree --self:\n%s", out)
	}
	// The other judges were asked once: their noise is unknown, left out,
	// and the row and a note say so.
	if !strings.Contains(noise, ",unknown,") || !strings.Contains(stderr, "noise is left out") {
		t.Errorf("agree --self against judges asked once: %s\n%s", noise, stderr)
	}

	if code, _, stderr := gymlens(t, "--db", db, "agree", "--self", "nobody"); code == 0 || !strings.Contains(stderr, "asked no item twice") {
		t.Errorf("a judge never asked again: %d %s", code, stderr)
	}
	// --judge-noise: the same estimates, intervals at least as wide, and
	// a note that says so.
	width := func(args ...string) (map[string]float64, map[string]float64, string) {
		code, out, stderr := gymlens(t, append([]string{"--db", db, "metrics", "--judge", "again", "--metrics", "TC.correctness,TA", "--format", "json", "--resamples", "300"}, args...)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		var est []map[string]any
		if err := json.Unmarshal([]byte(out), &est); err != nil {
			t.Fatal(err)
		}
		mean, w := map[string]float64{}, map[string]float64{}
		for _, e := range est {
			m := e["metric"].(string)
			mean[m], w[m] = e["mean"].(float64), e["ci_high"].(float64)-e["ci_low"].(float64)
		}
		return mean, w, out
	}
	// On a terminal, the long read shows what it does; with -q nothing.
	for _, quiet := range []bool{false, true} {
		var o, eb bytes.Buffer
		args := []string{"gymlens", "--db", db, "metrics", "--judge", "again", "--judge-noise", "--resamples", "100"}
		if quiet {
			args = append(args, "-q")
		}
		if err := newApp(&env{stdout: &o, stderr: &eb, terminal: true}).Run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		if shown := strings.Contains(eb.String(), "redrawing the judges' repeated answers"); shown == quiet {
			t.Errorf("quiet %v: progress %q", quiet, eb.String())
		}
	}
	m0, w0, _ := width()
	m1, w1, out := width("--judge-noise")
	if m0["TC.correctness"] != m1["TC.correctness"] || !(w1["TC.correctness"] > w0["TC.correctness"]) || !(w1["TA"] >= w0["TA"]) || !strings.Contains(out, "interval includes the judges' noise") {
		t.Errorf("--judge-noise: means %v %v, widths %v %v\n%.400s", m0, m1, w0, w1, out)
	}
}

// gymlens rank: every configuration once, ranks from 1, the best tied
// with itself and first most often; an unknown metric is a usage error.
func TestRank(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 5, 4, true)
	code, out, stderr := gymlens(t, "--db", db, "rank", "--metric", "TC", "--format", "json", "--resamples", "500")
	if code != 0 {
		t.Fatal(stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err, out)
	}
	if len(rows) < 4 {
		t.Fatalf("%d configurations", len(rows))
	}
	var pMax float64
	for i, r := range rows {
		rank, lo, hi, p := r["rank"].(float64), r["rank_low"].(float64), r["rank_high"].(float64), r["p_best"].(float64)
		if !(lo <= rank && rank <= hi && lo >= 1 && hi <= float64(len(rows))) || p < 0 || p > 1 {
			t.Errorf("%v", r)
		}
		if i > 0 && r["value"].(float64) > rows[i-1]["value"].(float64) {
			t.Errorf("not best first: %v after %v", r, rows[i-1])
		}
		pMax = math.Max(pMax, p)
	}
	if l, _ := rows[0]["letters"].(string); rows[0]["tied_with_best"] != true || rows[0]["rank"].(float64) != 1 || rows[0]["p_best"].(float64) != pMax || !strings.HasPrefix(l, "a") {
		t.Errorf("the best: %v", rows[0])
	}
	// --two-level: the same estimates, wider intervals.
	widths := func(args ...string) (float64, float64) {
		code, out, stderr := gymlens(t, append([]string{"--db", db, "metrics", "--metrics", "TC", "--format", "json", "--resamples", "500"}, args...)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		var est []map[string]any
		if err := json.Unmarshal([]byte(out), &est); err != nil || len(est) == 0 {
			t.Fatal(err, out)
		}
		return est[0]["mean"].(float64), est[0]["ci_high"].(float64) - est[0]["ci_low"].(float64)
	}
	m1, w1 := widths()
	m2, w2 := widths("--two-level")
	if m1 != m2 || !(w2 > w1) {
		t.Errorf("--two-level: mean %v / %v, width %v / %v", m1, m2, w1, w2)
	}
	if code, _, stderr := gymlens(t, "--db", db, "rank", "--metric", "TX"); code != 2 || !strings.Contains(stderr, `unknown metric "TX"`) {
		t.Errorf("unknown metric: %d %s", code, stderr)
	}
}

// gymlens variance on the sample: every metric's five terms share the
// whole; a selection with one persona a scenario cannot tell the terms
// apart and says so.
func TestVariance(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 6, 2, true)
	code, out, stderr := gymlens(t, "--db", db, "variance", "--format", "json", "--resamples", "200")
	if code != 0 {
		t.Fatal(stderr)
	}
	var secs struct {
		Components []map[string]any
		Design     []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &secs); err != nil {
		t.Fatal(err, out)
	}
	share := map[string]float64{}
	for _, r := range secs.Components {
		share[r["metric"].(string)] += r["share"].(float64)
	}
	if len(share) != 4 || len(secs.Components) != 20 || len(secs.Design) != 4 {
		t.Fatalf("%v\n%s", share, out)
	}
	for m, s := range share {
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("%s: shares sum to %v", m, s)
		}
	}
	for _, d := range secs.Design {
		if icc := d["icc"].(float64); icc < 0 || icc > 1 || d["design_effect"].(float64) < 1 || d["configs"].(float64) != 2 {
			t.Errorf("%v", d)
		}
	}
	// --by: one design per group, the group first, in variance and power.
	code, out, stderr = gymlens(t, "--db", db, "variance", "--by", "persona_group", "--metrics", "TC", "--format", "csv", "--resamples", "100")
	if code != 0 || !strings.Contains(out, "group,metric,term,") || strings.Count(out, "persona_group=") != 3*5+3 || !strings.Contains(stderr, "persona_group=B, TC: one persona per scenario") {
		t.Errorf("variance --by: %d %s\n%s", code, stderr, out)
	}
	code, out, _ = gymlens(t, "--db", db, "-q", "power", "--by", "persona_group", "--metrics", "TC", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "group,metric,unit,scenarios,") || strings.Count(out, "persona_group=") != 3 || !strings.Contains(out, "persona_group=E,TC,points of the 0–100 scale,10,1,3,") {
		t.Errorf("power --by: %d\n%s", code, out)
	}
	if code, _, stderr := gymlens(t, "--db", db, "variance", "--by", "colour"); code != 2 || !strings.Contains(stderr, "--by") {
		t.Errorf("variance --by colour: %d %s", code, stderr)
	}
	// One persona: the persona terms are not in the design, and say so.
	code, out, stderr = gymlens(t, "--db", db, "variance", "--where", "persona=operator", "--format", "csv", "--resamples", "100")
	if code != 0 || !strings.Contains(stderr, "TC: one persona per scenario: the persona and configuration × persona terms are not in the design (0)") ||
		!strings.Contains(out, "TC,persona,0,0,0,0,0,0") {
		t.Errorf("one persona: %d %s\n%s", code, stderr, out)
	}
	// power: the MDE falls with more scenarios, and the scenarios a
	// difference of the MDE needs are the design's own.
	mdeOf := func(args ...string) []map[string]any {
		code, out, stderr := gymlens(t, append([]string{"--db", db, "-q", "power", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err, out)
		}
		return rows
	}
	base := mdeOf()
	more := mdeOf("--scenarios", "40")
	for i, r := range base {
		mde := r["mde"].(float64)
		if !(mde > 0) || !(more[i]["mde"].(float64) < mde) {
			t.Errorf("%v / %v", r, more[i])
		}
		again := mdeOf("--metrics", r["metric"].(string), "--delta", strconv.FormatFloat(mde*1.0000001, 'g', -1, 64))
		if n := again[0]["scenarios_needed"].(float64); n != r["scenarios"].(float64) {
			t.Errorf("%s: a difference of its MDE needs %v scenarios, the design has %v", r["metric"], n, r["scenarios"])
		}
	}
	if code, _, stderr := gymlens(t, "--db", db, "power", "--alpha", "1.5"); code != 2 || !strings.Contains(stderr, "--alpha") {
		t.Errorf("bad alpha: %d %s", code, stderr)
	}
}
