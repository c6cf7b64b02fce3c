package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/internal/sample"
)

func gymlens(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), append([]string{"gymlens"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// Most tests need a sample warehouse to read or change, not an ingest to
// watch: each kind is written and ingested once per test binary, in a
// folder TestMain removes, and every test gets a copy of the warehouse
// (a copy takes milliseconds, an ingest up to seconds). The tests that
// watch an ingest ingest their own.

// sampleKey names one shared sample warehouse.
type sampleKey struct {
	seed      uint64
	configs   int
	judgments bool
}

var shared struct {
	sync.Mutex
	dir string
	by  map[sampleKey]*sharedBuild
}

type sharedBuild struct {
	once   sync.Once
	corpus string // the corpus the warehouse was ingested from
	db     string
	err    error
}

// sampleWarehouse is a sample warehouse of so many configurations (with or
// without its judgments), a copy of the shared one in a new folder of the
// test's own; it returns the folder and the warehouse's path.
func sampleWarehouse(t *testing.T, seed uint64, configs int, judgments bool) (dir, db string) {
	t.Helper()
	dir, db, _ = sharedCopy(t, sampleKey{seed, configs, judgments})
	return dir, db
}

// sharedSampleWarehouse is sampleWarehouse with judgments.
func sharedSampleWarehouse(t *testing.T, seed uint64, configs int) (dir, db string) {
	t.Helper()
	dir, db, _ = sharedSample(t, seed, configs)
	return dir, db
}

// sharedSample is sharedSampleWarehouse, also giving the corpus's folder,
// which the test must not change.
func sharedSample(t *testing.T, seed uint64, configs int) (dir, db, corpus string) {
	t.Helper()
	return sharedCopy(t, sampleKey{seed, configs, true})
}

// sharedCopy builds the sample warehouse k once per test binary and gives
// the test a copy: a new folder of its own, the copy's path in it, and
// the shared corpus's folder, which the test must not change.
func sharedCopy(t *testing.T, k sampleKey) (dir, db, corpus string) {
	t.Helper()
	shared.Lock()
	if shared.by == nil {
		shared.by = map[sampleKey]*sharedBuild{}
	}
	b := shared.by[k]
	if b == nil {
		b = &sharedBuild{}
		shared.by[k] = b
	}
	shared.Unlock()
	b.once.Do(func() {
		d, err := os.MkdirTemp(shared.dir, "sample-")
		if err != nil {
			b.err = err
			return
		}
		b.corpus = filepath.Join(d, "c")
		if _, b.err = sample.Write(b.corpus, sample.Options{Seed: k.seed, Configs: k.configs}); b.err != nil {
			return
		}
		if !k.judgments {
			if b.err = os.RemoveAll(filepath.Join(b.corpus, "judgments")); b.err != nil {
				return
			}
		}
		b.db = filepath.Join(d, "w.duckdb")
		var e bytes.Buffer
		if code := run(context.Background(), []string{"gymlens", "--db", b.db, "-q", "ingest", b.corpus}, io.Discard, &e); code != 0 {
			b.err = fmt.Errorf("ingest: %s", e.String())
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	dir = t.TempDir()
	db = filepath.Join(dir, "w.duckdb")
	if err := sample.CopyFile(db, b.db); err != nil {
		t.Fatal(err)
	}
	return dir, db, b.corpus
}

const scenario = `type: scenario
scenario: s1
personas: {reviewer: {group: S}}
tasks:
  - id: a
    expected_depth: {reviewer: suggest}
`

func corpus(t *testing.T, runLines string) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s1.yaml"), []byte(scenario), 0o644)
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(runLines), 0o644)
	return dir
}

const goodRun = `{"type":"run","run_id":"r1","scenario":"s1","persona":"reviewer","rep":1,"config":{"model":"m","harness":"CD"}}
{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message","task":"a"}
`

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"ingest"},
		{"--no-such-flag", "query", "select 1"},
		{"query", "--no-such-flag", "select 1"},
		{"query"},
		{"--format", "xml", "query", "select 1"},
		{"export", "--format", "csv", "--out", "x"},
		{"sample", "--out", "x", "--scale", "0"},
		{"sample", "--out", "x", "--configs", "27"},
		{"demo", "--out", "x", "--configs", "-1"},
		{"ingest", "--max-errors", "0", "x"},
		{"ingest", "--skip-invalid", "--max-rejects", "0", "x"},
		// Checked before the warehouse is opened (there is none here).
		{"--db", "none.duckdb", "table", "main", "--layout", "poster"},
		{"--db", "none.duckdb", "table", "main", "--digits", "9"},
		{"--db", "none.duckdb", "table", "main", "--mark", "stars"},
		{"--db", "none.duckdb", "plot", "effort", "--out", "x", "--size", "poster"},
		{"--db", "none.duckdb", "report", "--out", "x", "--size", "poster"},
		{"--db", "none.duckdb", "report", "--out", "x", "--digits", "-2"},
	} {
		code, _, stderr := gymlens(t, args...)
		if code != 2 || stderr == "" || strings.Contains(stderr, "no warehouse") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := gymlens(t, "--help")
	for _, c := range []string{"demo", "sample", "ingest", "validate", "export", "query", "--db", "--format"} {
		if !strings.Contains(out, c) {
			t.Errorf("help does not mention %s", c)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	code, out, _ = gymlens(t, "ingest", "--help")
	if code != 0 || !strings.Contains(out, "--skip-invalid") || !strings.Contains(out, "--replace") {
		t.Errorf("ingest --help: %d %s", code, out)
	}
}

func TestIngestAndQueryWithGlobalFlagsAnywhere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.duckdb")
	dir := corpus(t, goodRun)
	code, out, stderr := gymlens(t, "--db", db, "ingest", dir)
	if code != 0 || !strings.Contains(out, "1 run,") || stderr != "" {
		t.Fatalf("ingest: %d %q %q", code, out, stderr)
	}
	code, out, _ = gymlens(t, "query", "--db", db, "--format", "json", "SELECT run_id, rep FROM runs")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0]["run_id"] != "r1" {
		t.Fatalf("query after the command: %d %s", code, out)
	}
	code, out, _ = gymlens(t, "--format", "csv", "--db", db, "query", "SELECT count(*) AS n FROM events")
	if code != 0 || out != "n\n1\n" {
		t.Fatalf("query as csv: %d %q", code, out)
	}
	t.Setenv("GYMLENS_DB", db)
	code, out, _ = gymlens(t, "query", "SELECT scenario FROM scenarios")
	if code != 0 || !strings.Contains(out, "s1") {
		t.Fatalf("$GYMLENS_DB: %d %q", code, out)
	}
	code, _, stderr = gymlens(t, "query", "DELETE FROM runs")
	if code != 1 || !strings.Contains(stderr, "read-only") {
		t.Errorf("a write through query: %d %q", code, stderr)
	}
	// This CALL aborted the process (SIGABRT) before the allow-list.
	code, _, stderr = gymlens(t, "query", "CALL enable_logging(storage='file', storage_path='"+t.TempDir()+"'); SELECT 1")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "only read statements are allowed") {
		t.Errorf("CALL enable_logging: %d %q", code, stderr)
	}
	// A judge endpoint with credentials in its URL is refused, naming the
	// key's variable; --endpoint names a URL for a model holding '@'.
	code, _, stderr = gymlens(t, "judge", "--judge", "q=Qwen/X@http://user:pass@localhost:1/v1", "--dry-run")
	if code != 2 || !strings.Contains(stderr, "holds credentials") || !strings.Contains(stderr, "$GYMLENS_Q_API_KEY") {
		t.Errorf("credentials in the URL: %d %q", code, stderr)
	}
	code, out, stderr = gymlens(t, "judge", "--metric", "ta", "--judge", "q=org/m@v2", "--endpoint", "q=http://127.0.0.1:9/v1", "--dry-run", "-f", "csv")
	if code != 0 || !strings.Contains(out, "q,org/m@v2,ta,") {
		t.Errorf("--endpoint: %d %q %q", code, out, stderr)
	}
}

func TestBadInputExitsOneAndWritesNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.duckdb")
	dir := corpus(t, goodRun+`{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`+"\n")
	code, _, stderr := gymlens(t, "--db", db, "ingest", dir)
	if code != 1 || !strings.Contains(stderr, "runs.jsonl:3: field \"seq\"") || !strings.Contains(stderr, "nothing was written") {
		t.Fatalf("%d %q", code, stderr)
	}
	code, out, _ := gymlens(t, "--db", db, "query", "SELECT count(*) AS n FROM runs")
	if code != 0 || !strings.Contains(out, "0") {
		t.Errorf("runs after a failed ingest: %q", out)
	}
	code, _, stderr = gymlens(t, "validate", dir)
	if code != 1 || !strings.Contains(stderr, "runs.jsonl:3") {
		t.Errorf("validate: %d %q", code, stderr)
	}
	code, _, stderr = gymlens(t, "--db", db, "ingest", filepath.Join(dir, "missing.jsonl"))
	if code != 1 || !strings.Contains(stderr, "missing.jsonl") {
		t.Errorf("missing file: %d %q", code, stderr)
	}
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the demo three times at full scale (two ingests of 118 MB, three reports); TestReadmeTourSmoke runs its steps on a small corpus")
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo")
	// The corpus is the shared sample of seed 1 at scale 1, copied (demo
	// would write the same bytes; the third run below writes it anew).
	_, _, corpus := sharedSample(t, 1, 0)
	if err := os.CopyFS(filepath.Join(out, "corpus"), os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := gymlens(t, "demo", "--out", out)
	if code != 0 {
		t.Fatalf("demo: %d %s", code, stderr)
	}
	for _, want := range []string{"26 configurations", "2,340 runs", "GPT 5.6 Sol | CD | xhigh", "Qwen 3.5 2B | OC | none", "\ncodes:\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	// The glossary's codes in a column as wide as the widest code.
	for _, want := range []string{`\n *S +persona group of reviewer`, `\n *TA +Temporal Allocation`, `\n *artifact_quality +a judge.s score`} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "; reused: written before with the same seed and scale") {
		t.Errorf("demo wrote the corpus again rather than take the shared sample's copy:\n%s", stdout)
	}
	// It ends with the report, everything in it.
	page := filepath.Join(out, "report", "index.html")
	if !strings.Contains(stdout, "report: "+page) {
		t.Errorf("demo does not end with the report's path:\n%s", stdout)
	}
	if _, err := os.Stat(page); err != nil || strings.Contains(stderr, "left out") {
		t.Errorf("report: %v; %s", err, stderr)
	}
	// The corpus's families give the report the judges' self-preference.
	if _, err := os.Stat(filepath.Join(out, "report", "tables", "judge-bias-self-preference.md")); err != nil {
		t.Errorf("the demo's report has no self-preference table: %v", err)
	}
	// Again: the corpus reused, not rewritten; nothing loaded twice; no
	// speed for files not read; the scores kept. (The report is written
	// again each time: fewer resamples, which it does not concern.)
	runs := filepath.Join(out, "corpus", "runs")
	ents, _ := os.ReadDir(runs)
	first, _ := os.Stat(filepath.Join(runs, ents[0].Name()))
	code, stdout, _ = gymlens(t, "demo", "--out", out, "--resamples", "200")
	again, _ := os.Stat(filepath.Join(runs, ents[0].Name()))
	if code != 0 || !strings.Contains(stdout, "unchanged since an earlier ingest") || !strings.Contains(stdout, "2,340 runs") ||
		!strings.Contains(stdout, "; reused: written before with the same seed and scale") || strings.Contains(stdout, "MB/s") ||
		!strings.Contains(stdout, "scores: kept from the earlier run") || !again.ModTime().Equal(first.ModTime()) {
		t.Errorf("second demo: %d\n%s", code, stdout)
	}
	// A corpus file changed since: the corpus is written anew (and the
	// changed file's content ingests as a change, refused without --replace).
	os.WriteFile(filepath.Join(out, "corpus", "ratings", "human_study.csv"), []byte("rater,question,value,item\n"), 0o644)
	code, stdout, _ = gymlens(t, "demo", "--out", out, "--resamples", "200")
	if code != 0 || strings.Contains(stdout, "reused") || !strings.Contains(stdout, "MB; written)") {
		t.Errorf("demo after a change: %d\n%s", code, stdout)
	}
	if st := sample.Existing(filepath.Join(out, "corpus"), sample.Options{Seed: 1, Scale: 1, Compress: "none"}); st == nil || st.Runs != 2340 {
		t.Errorf("the rewritten corpus is not recognised: %+v", st)
	}
	if st := sample.Existing(filepath.Join(out, "corpus"), sample.Options{Seed: 2, Scale: 1, Compress: "none"}); st != nil {
		t.Error("a corpus of seed 1 recognised as seed 2's")
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	// A smaller corpus: the scenarios and the three Qwen 3.5 2B run logs
	// (the grid's first three configurations), without judgments.
	if _, err := sample.Write(filepath.Join(dir, "three"), sample.Options{Seed: 3, Configs: 3}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "three", "runs", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "three", "scenarios", "*.yaml"))
	if qwen, _ := filepath.Glob(filepath.Join(dir, "three", "runs", "qwen-3.5-2b_*.jsonl")); len(files) != 3 || len(qwen) != 3 {
		t.Fatalf("the grid's first configurations are not Qwen 3.5 2B's: %v", files)
	}
	os.MkdirAll(filepath.Join(dir, "c"), 0o755)
	for _, f := range append(files, more...) {
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(dir, "c", filepath.Base(f)), b, 0o644)
	}
	if code, _, stderr := gymlens(t, "--db", db, "ingest", filepath.Join(dir, "c")); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := gymlens(t, "--db", db, "metrics", "--by", "harness", "--resamples", "500", "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var res []metricRecord
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 12 || res[0].Group["harness"] != "CC" || res[0].Metric != "TC" || res[0].NRuns != 90 || res[0].Clusters != 10 || res[0].Method != "expanded-percentile" {
		t.Fatalf("%d results, first %+v", len(res), res[0])
	}
	// No judgments were ingested: TA and TR-J have no value, and say why.
	if res[1].Metric != "TA" || res[1].Mean != nil || !strings.Contains(strings.Join(res[1].Warnings, "|"), "without TA judgments") {
		t.Errorf("TA without judgments: %+v", res[1])
	}
	if !strings.Contains(strings.Join(res[0].Warnings, "|"), "without TC judgments") {
		t.Errorf("TC warnings %v", res[0].Warnings)
	}
	code, out2, _ := gymlens(t, "--db", db, "metrics", "--by", "harness", "--resamples", "500", "--format", "json")
	if code != 0 || out2 != out {
		t.Error("the same seed gave different output")
	}
	for _, args := range [][]string{{"--by", "colour"}, {"--where", "harness"}, {"--metrics", "XX"}, {"--ci", "normal"}, {"--resamples", "5"}} {
		if code, _, _ := gymlens(t, append([]string{"--db", db, "metrics"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	code, _, stderr = gymlens(t, "--db", db, "metrics", "--where", "harness=XX")
	if code != 1 || !strings.Contains(stderr, "no run matches") {
		t.Errorf("no match: %d %s", code, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "corr", "--metrics", "TC,TR-D", "--resamples", "300", "--format", "json")
	var corr []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &corr) != nil || len(corr) != 4 {
		t.Fatalf("corr: %d %s %s", code, stderr, out)
	}
	for _, k := range []string{"x", "y", "level", "method", "r", "n", "p", "ci_low", "ci_high", "ci_method", "fisher_low", "fisher_high"} {
		if _, ok := corr[0][k]; !ok {
			t.Errorf("corr JSON lacks %q: %v", k, corr[0])
		}
	}
	if corr[0]["level"] != "run" || corr[0]["n"] != float64(270) || corr[2]["level"] != "config" || corr[2]["n"] != float64(3) {
		t.Errorf("corr: %v", corr)
	}
	if code, _, _ := gymlens(t, "--db", db, "corr", "--metrics", "TC"); code != 2 {
		t.Errorf("corr of one metric: exit %d", code)
	}
	code, out, stderr = gymlens(t, "--db", db, "compare", "--harness-switch", "CC,OC", "--metrics", "TC,TR-D", "--resamples", "300", "--format", "json")
	var cmp []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &cmp) != nil || len(cmp) != 2 {
		t.Fatalf("compare: %d %s %s", code, stderr, out)
	}
	if cmp[0]["a"] != "Qwen 3.5 2B | CC | none" || cmp[0]["b"] != "Qwen 3.5 2B | OC | none" || cmp[0]["metric"] != "TC" {
		t.Errorf("compare: %v", cmp[0])
	}
	d := cmp[0]["mean_b"].(float64) - cmp[0]["mean_a"].(float64)
	if diff := cmp[0]["diff"].(float64); math.Abs(diff-d) > 1e-9 {
		t.Errorf("diff %v, means differ by %v", diff, d)
	}
	code, out, _ = gymlens(t, "--db", db, "compare", "qwen-3.5-2b_cd_none", "Qwen 3.5 2B | OC | none", "--metrics", "TC", "--resamples", "300")
	if code != 0 || !strings.Contains(out, "Qwen 3.5 2B | CD | none") {
		t.Errorf("compare by key: %d %s", code, out)
	}
	for _, args := range [][]string{{"compare", "x"}, {"compare", "--harness-switch", "CC"}, {"compare", "a", "b", "--harness-switch", "CC,OC"}} {
		if code, _, _ := gymlens(t, append([]string{"--db", db}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	if code, _, stderr := gymlens(t, "--db", db, "compare", "nope", "qwen-3.5-2b_cd_none"); code != 1 || !strings.Contains(stderr, `"nope"`) {
		t.Errorf("unknown configuration: %d %s", code, stderr)
	}
}

// The sample's trajectories agree with its logged task values everywhere
// except where it plants a disagreement, and score finds exactly those.
func TestScoreFindsThePlantedDisagreements(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 8, Configs: 6}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "ingest", filepath.Join(dir, "c")); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := gymlens(t, "--db", db, "score", "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var rep []struct {
		Field string `json:"field"`
		N     int    `json:"disagreements"`
	}
	json.Unmarshal([]byte(out), &rep)
	var man struct {
		Planted []sample.Planted `json:"planted_disagreements"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "c", ".sample", "manifest.json"))
	json.Unmarshal(b, &man)
	want := map[string]int{}
	planted := map[string]bool{}
	for _, p := range man.Planted {
		want[p.Field]++
		planted[p.RunID+" "+p.Task+" "+p.Field] = true
	}
	if len(man.Planted) == 0 {
		t.Fatal("the sample planted nothing")
	}
	for _, r := range rep {
		if r.N != want[r.Field] {
			t.Errorf("%s: %d disagreements, %d planted", r.Field, r.N, want[r.Field])
		}
	}
	// The same, row by row.
	code, out, _ = gymlens(t, "--db", db, "query", "--format", "csv", `
		SELECT run_id, task, 'chosen_depth' FROM task_scores JOIN task_outcomes USING (run_id, task) WHERE derived_chosen <> chosen_depth
		UNION ALL
		SELECT run_id, task, 'rules.outputs' FROM task_scores JOIN task_outcomes USING (run_id, task) WHERE derived_outputs <> rule_outputs
		ORDER BY ALL`)
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if code != 0 || len(lines) != len(man.Planted) {
		t.Fatalf("%d disagreeing rows, %d planted", len(lines), len(man.Planted))
	}
	for _, l := range lines {
		f := strings.Split(l, ",")
		if !planted[f[0]+" "+f[1]+" "+f[2]] {
			t.Errorf("not planted: %s", l)
		}
	}
	// --prefer derived: the metrics then use the trajectory's values.
	_, logged, _ := gymlens(t, "--db", db, "metrics", "--by", "", "--metrics", "TR-D", "--resamples", "200", "--format", "csv")
	if code, _, stderr := gymlens(t, "--db", db, "score", "--prefer", "derived", "-q"); code != 0 {
		t.Fatal(stderr)
	}
	_, derived, _ := gymlens(t, "--db", db, "metrics", "--by", "", "--metrics", "TR-D", "--resamples", "200", "--format", "csv")
	if logged == derived {
		t.Error("--prefer derived changed nothing in TR-D, though chosen depths were planted")
	}
}

// gymlens judge end to end against an in-process OpenAI-compatible server:
// judgments land in the warehouse with their prompt version and hash, the
// metrics use them, a rerun asks nothing, and bad evidence is re-asked
// once, then stored as invalid.
func TestJudgeEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 4, Configs: 1}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c", "judgments"))
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "ingest", filepath.Join(dir, "c")); code != 0 {
		t.Fatal(stderr)
	}
	f := openaitest.New("badevidence", "badevidence", "badevidence")
	defer f.Close()
	judgeArg := "e2e=fake-judge@" + f.URL + "/v1"
	args := []string{"--db", db, "judge", "--metric", "tc,ta", "--judge", judgeArg, "--limit", "12", "--concurrency", "1", "--format", "json"}
	code, out, stderr := gymlens(t, args...)
	if code != 0 {
		t.Fatalf("%d %s %s", code, stderr, out)
	}
	var reps []map[string]any
	json.Unmarshal([]byte(out), &reps)
	if len(reps) != 2 || reps[0]["sent"] != float64(12) || reps[1]["sent"] != float64(12) {
		t.Fatalf("reports %v", reps)
	}
	invalid := reps[0]["invalid"].(float64) + reps[1]["invalid"].(float64)
	if invalid != 1 || f.Count() != 24+2 { // one item failed twice (asked again once); another recovered
		t.Errorf("invalid %v, %d requests", invalid, f.Count())
	}
	code, out, _ = gymlens(t, "--db", db, "query", "--format", "csv",
		"SELECT count(*), count(DISTINCT input_hash), min(prompt), max(prompt) FROM judge_calls WHERE status = 'valid'")
	if code != 0 || out != "count_star(),count(DISTINCT input_hash),min(prompt),max(prompt)\n23,23,ta/v1,tc/v1\n" {
		t.Errorf("judge_calls: %q", out)
	}
	// Nothing changed: nothing is sent.
	before := f.Count()
	code, out, _ = gymlens(t, args...)
	json.Unmarshal([]byte(out), &reps)
	if code != 0 || f.Count() != before || reps[0]["cached"] != float64(12) || reps[0]["sent"] != float64(0) {
		t.Errorf("rerun: %d requests, %v", f.Count()-before, reps)
	}
	// The metrics read the new judge.
	code, out, stderr = gymlens(t, "--db", db, "metrics", "--by", "", "--judge", "e2e", "--metrics", "TC.correctness,TA.now", "--resamples", "200", "--format", "csv")
	if code != 0 || !strings.Contains(out, "TC.correctness") || !strings.Contains(out, ",75,") {
		t.Errorf("metrics with the new judge: %s %s", out, stderr)
	}
	// A dry run reads only.
	code, out, _ = gymlens(t, "--db", db, "judge", "--metric", "trj", "--judge", judgeArg, "--dry-run", "--limit", "5")
	if code != 0 || !strings.Contains(out, "dry run") || f.Count() != before {
		t.Errorf("dry run: %d %s", code, out)
	}
	if code, _, _ := gymlens(t, "--db", db, "judge", "--metric", "xx", "--judge", judgeArg); code != 2 {
		t.Errorf("bad metric: exit %d", code)
	}
	code, out, _ = gymlens(t, "--db", db, "judge", "--metric", "ta", "--judge", judgeArg, "--where", "persona_group=E", "--dry-run", "--format", "csv")
	if code != 0 || !strings.Contains(out, "e2e,fake-judge,ta,30,") {
		t.Errorf("--where: %d %q", code, out)
	}
	code, out, _ = gymlens(t, "--db", db, "judge", "--costs", "--format", "csv")
	if code != 0 || !strings.Contains(out, "e2e,fake-judge,24,1,") || !strings.Contains(out, ",unknown") {
		t.Errorf("costs: %d %q", code, out)
	}
}

// PARE traces ingest beside the rest; `decisions` shows PARE's decision
// points; the rate-limited trace is a note.
func TestPAREDecisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	src := filepath.Join("..", "..", "ingest", "pare", "testdata")
	code, stdout, stderr := gymlens(t, "--db", db, "ingest", src)
	if code != 0 || !strings.Contains(stdout, "3 pare runs, 75 pare events, 2 decision points, 6 pare samples") || !strings.Contains(stdout, "RateLimitError") {
		t.Fatalf("ingest: %d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = gymlens(t, "--db", db, "decisions", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var dps []struct {
		SampleID string `json:"sample_id"`
		Class    string `json:"decision_class"`
		Final    bool   `json:"final_decision"`
		Context  *int   `json:"context_messages"`
	}
	if err := json.Unmarshal([]byte(stdout), &dps); err != nil {
		t.Fatal(err, stdout)
	}
	if len(dps) != 2 || dps[0].Class != "reject" || dps[0].Final || dps[0].Context != nil ||
		dps[1].Class != "gather_context" || !dps[1].Final || dps[1].Context == nil || *dps[1].Context != 3 {
		t.Errorf("%s", stdout)
	}
	// PARE's metrics per scenario; the rate-limited run left out.
	code, stdout, stderr = gymlens(t, "--db", db, "metrics", "--source", "pare", "--by", "scenario", "--resamples", "200", "-f", "json",
		"--metrics", "proposals,acceptances,seconds_to_decide")
	if code != 0 {
		t.Fatal(stderr)
	}
	var res []struct {
		Group  map[string]string `json:"group"`
		Metric string            `json:"metric"`
		Mean   *float64          `json:"mean"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err, stdout)
	}
	got := map[string]float64{}
	for _, r := range res {
		if r.Mean != nil {
			got[r.Group["scenario"]+"/"+r.Metric] = *r.Mean
		}
	}
	if len(res) != 6 || got["add_missing_group_contacts/acceptances"] != 0 || got["apartment_feature_comparison_query/acceptances"] != 1 ||
		got["apartment_feature_comparison_query/proposals"] != 1 || math.Abs(got["apartment_feature_comparison_query/seconds_to_decide"]-22.162) > 0.001 {
		t.Errorf("%v", got)
	}
	if code, _, stderr := gymlens(t, "--db", db, "metrics", "--source", "pare", "--by", "harness"); code != 2 || !strings.Contains(stderr, "break down by") {
		t.Errorf("bad --by: %d %q", code, stderr)
	}
	// PARE's annotation samples (the Parquet file, ingested above) and an
	// annotation CSV: the human decisions against the simulated user's.
	ann := filepath.Join(dir, "ann")
	os.MkdirAll(ann, 0o755)
	os.WriteFile(filepath.Join(ann, "annotations.csv"), []byte("annotation_id,sample_id,annotator_id,human_decision,notes\n"+
		"a1,tutorial_airport_return_ride_from_notes_run_2_p0,h1,accept,\n"+
		"a2,tutorial_airport_return_ride_from_notes_run_2_p0,h2,reject,hm\n"+
		"a3,tutorial_calendar_product_search_suggestion_run_4_p0,h1,accept,\n"+
		"a4,tutorial_calendar_product_search_suggestion_run_4_p0,h2,accept,\n"), 0o644)
	code, stdout, stderr = gymlens(t, "--db", db, "ingest", ann)
	if code != 0 || !strings.Contains(stdout, "4 pare annotations") {
		t.Fatalf("annotations: %d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = gymlens(t, "--db", db, "agree", "--pare", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var st []struct {
		Statistic string   `json:"statistic"`
		Value     *float64 `json:"value"`
		N         int      `json:"n"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatal(err, stdout)
	}
	// By hand: the tied sample is left out, the other five agree with the
	// simulated user; among the two annotators, Fleiss' κ is
	// (0.5 − 0.625) / 0.375 and α (nominal) is 0.
	want := map[string][2]float64{"majority_accuracy": {100, 5}, "cohen_kappa": {1, 5}, "fleiss_kappa": {-1.0 / 3, 2}, "krippendorff_alpha": {0, 2}}
	for _, s := range st {
		wv := want[s.Statistic]
		if s.Value == nil || math.Abs(*s.Value-wv[0]) > 1e-12 || s.N != int(wv[1]) {
			t.Errorf("%s = %v (n %d), want %v", s.Statistic, s.Value, s.N, wv)
		}
	}
	// Two PARE configurations compared on the same scenarios: a copy of
	// one trace under another observe model.
	tr, _ := os.ReadFile(filepath.Join(src, "apartment_feature_comparison_query_run_4.json"))
	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "t.json"), bytes.Replace(tr, []byte(`"model_id": "user:gpt-5-mini|observe:`), []byte(`"model_id": "user:gpt-5-mini|observe:other-model|x:`), 1), 0o644)
	if code, _, stderr := gymlens(t, "--db", db, "ingest", other); code != 0 {
		t.Fatal(stderr)
	}
	var arn string
	code, stdout, stderr = gymlens(t, "--db", db, "-f", "csv", "query", "SELECT DISTINCT config_id FROM pare_runs WHERE config_id LIKE 'arn%'")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); code == 0 && len(lines) == 2 {
		arn = lines[1]
	} else {
		t.Fatalf("%d %s %s", code, stdout, stderr)
	}
	// The copy keeps the execute model, so its configuration names both.
	code, stdout, stderr = gymlens(t, "--db", db, "compare", "--source", "pare", "other-model / "+arn, arn,
		"--metrics", "acceptances", "--resamples", "200", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var cmp []struct {
		Metric string  `json:"metric"`
		Diff   float64 `json:"diff"`
	}
	if err := json.Unmarshal([]byte(stdout), &cmp); err != nil || len(cmp) != 1 || cmp[0].Metric != "acceptances" || cmp[0].Diff != -0.5 {
		t.Errorf("compare: %v %s", err, stdout)
	}
	if code, _, stderr := gymlens(t, "--db", db, "compare", "--source", "pare", "nope", arn); code != 1 || !strings.Contains(stderr, "no PARE runs of configuration") {
		t.Errorf("unknown configuration: %d %q", code, stderr)
	}
	// A decision outside PARE's three is an error with its line and field.
	os.WriteFile(filepath.Join(ann, "bad.csv"), []byte("sample_id,annotator_id,human_decision\nx,h1,maybe\n"), 0o644)
	code, _, stderr = gymlens(t, "--db", db, "ingest", filepath.Join(ann, "bad.csv"))
	if code != 1 || !strings.Contains(stderr, "bad.csv:2") || !strings.Contains(stderr, "human_decision") {
		t.Errorf("bad decision: %d %q", code, stderr)
	}
}

// gymlens judge under the name of a judge whose judgments were ingested is
// refused, naming the judge and the count; with --replace its answers
// take their place, and ingesting the logs again with --replace restores
// the logged ones, to the digit.
func TestJudgeUnderAnIngestedJudgesName(t *testing.T) {
	t.Parallel()
	_, db, corpus := sharedCopy(t, sampleKey{4, 1, true})
	const name = "judge-qwen3.5-397b"
	count := func(where string) string {
		t.Helper()
		code, out, stderr := gymlens(t, "--db", db, "query", "-f", "csv", "SELECT count(*) FROM judgments WHERE "+where)
		if code != 0 {
			t.Fatal(stderr)
		}
		return strings.TrimSpace(strings.Split(out, "\n")[1])
	}
	metrics := func() string {
		t.Helper()
		code, out, stderr := gymlens(t, "--db", db, "metrics", "--by", "", "--judge", name, "--metrics", "TC,TC.semantics", "--resamples", "200", "-f", "csv")
		if code != 0 {
			t.Fatal(stderr)
		}
		return out
	}
	logged, all := count("judge = '"+name+"' AND metric = 'tc'"), count("true")
	_, ratings, _ := gymlens(t, "--db", db, "query", "-f", "csv", "SELECT count(*) FROM ratings")
	before := metrics()
	f := openaitest.New()
	defer f.Close()
	args := []string{"--db", db, "-q", "judge", "--metric", "tc", "--judge", name + "=fake-judge@" + f.URL + "/v1", "--limit", "5"}
	code, _, stderr := gymlens(t, args...)
	if code != 1 || !strings.Contains(stderr, `judge "`+name+`" has `+logged+` tc judgments ingested from run logs`) || f.Count() != 0 {
		t.Fatalf("same name without --replace: exit %d, %d requests, %q", code, f.Count(), stderr)
	}
	if code, _, stderr := gymlens(t, append(args, "--replace")...); code != 0 {
		t.Fatal(stderr)
	}
	if n := count("judge = '" + name + "' AND metric = 'tc' AND file_id > 0"); n != "0" {
		t.Errorf("%s logged tc judgments left beside the judge's answers", n)
	}
	if n := count("judge = '" + name + "' AND file_id = 0"); n != "5" {
		t.Errorf("%s judgments written, want 5", n)
	}
	if metrics() == before {
		t.Error("the metrics did not change with the new answers")
	}
	// Ingesting the logs again: without --replace each clash is named;
	// with it the logged judgments are back and the written ones gone.
	code, _, stderr = gymlens(t, "--db", db, "-q", "ingest", corpus)
	if code != 1 || !strings.Contains(stderr, "use --replace to restore this logged one") {
		t.Errorf("re-ingest without --replace: exit %d %q", code, stderr)
	}
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", "--replace", corpus); code != 0 {
		t.Fatal(stderr)
	}
	if got := count("true"); got != all {
		t.Errorf("%s judgments after restoring, want %s", got, all)
	}
	if n := count("judge = '" + name + "' AND file_id = 0"); n != "0" {
		t.Errorf("%s written judgments left after restoring", n)
	}
	if _, out, _ := gymlens(t, "--db", db, "query", "-f", "csv", "SELECT count(*) FROM ratings"); out != ratings {
		t.Errorf("ratings %q after restoring, want %q", out, ratings)
	}
	if after := metrics(); after != before {
		t.Errorf("metrics after restoring:\n%s\nwant\n%s", after, before)
	}
}

// Configurations whose names hold " | " keep ids of their own: model
// "A | B" on harness "C" and model "A" on harness "B | C" are two rows of
// metrics --by config, not one.
func TestConfigIDsNeverCollide(t *testing.T) {
	var lines strings.Builder
	for i, c := range [][2]string{{"A | B", "C"}, {"A", "B | C"}, {`A\`, `| C`}} {
		for rep := 1; rep <= 2; rep++ {
			id := fmt.Sprintf("r%d-%d", i, rep)
			model, _ := json.Marshal(c[0])
			harness, _ := json.Marshal(c[1])
			fmt.Fprintf(&lines, `{"type":"run","run_id":"%s","scenario":"s1","persona":"reviewer","rep":%d,"config":{"model":%s,"harness":%s}}`+"\n", id, rep, model, harness)
			fmt.Fprintf(&lines, `{"type":"event","run_id":"%s","seq":1,"t":"2026-03-02T18:00:00Z","actor":"agent","kind":"message","task":"a","depth":"suggest"}`+"\n", id)
			fmt.Fprintf(&lines, `{"type":"task","run_id":"%s","task":"a","active":true,"expected_depth":"suggest","chosen_depth":"suggest"}`+"\n", id)
		}
	}
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", corpus(t, lines.String())); code != 0 {
		t.Fatal(stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--by", "config", "--metrics", "TR-D", "--resamples", "100")
	got := map[string]int{}
	for _, r := range recs {
		got[r.Group["config"]] = r.NRuns
	}
	want := map[string]int{`A \| B | C | none`: 2, `A | B \| C | none`: 2, `A\\ | \| C | none`: 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("configurations %v, want %v", got, want)
	}
}

// A misspelt --judge is an error that lists the judges there are, in
// every command that takes one; never other numbers with exit 0.
func TestUnknownJudgeIsAnError(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 4, 2, true)
	want := `--judge "judge-qwen3.5-379b": no judgment by this judge in the runs selected; the judges are: judge-gpt-5.6-luna, judge-qwen3.5-397b`
	for _, args := range [][]string{
		{"metrics", "--resamples", "100"},
		{"compare", "--harness-switch", "CC,OC", "--resamples", "100"},
		{"corr", "--resamples", "100"},
		{"agree", "--human", "--resamples", "100"},
	} {
		code, out, stderr := gymlens(t, append([]string{"--db", db}, append(args, "--judge", "judge-qwen3.5-379b")...)...)
		if code != 1 || !strings.Contains(stderr, want) || out != "" {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if code, _, stderr := gymlens(t, "--db", db, "metrics", "--resamples", "100", "--judge", "judge-qwen3.5-397b"); code != 0 {
		t.Errorf("a known judge: %s", stderr)
	}
}

// TestMain lets a test run gymlens as a process of its own (to kill it):
// with GYMLENS_TEST_CLI=1 the test binary is gymlens.
func TestMain(m *testing.M) {
	if os.Getenv("GYMLENS_TEST_CLI") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, append([]string{"gymlens"}, os.Args[1:]...), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	var err error
	if shared.dir, err = os.MkdirTemp("", "gymlens-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The lakes whose check passed are remembered in the user's cache
	// folder (docs/scale.md): the tests' own, here.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(shared.dir, "cache"))
	code := m.Run()
	os.RemoveAll(shared.dir)
	os.Exit(code)
}

// Answers are durable as they arrive: after kill -9 (or SIGTERM) the next
// run asks again at most what was in flight; SIGTERM stops gymlens as
// Ctrl-C does and says truthfully what was saved.
func TestJudgeAnswersSurviveAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills gymlens judge, a process of its own, twice")
	}
	t.Parallel()
	for _, sig := range []os.Signal{os.Kill, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			_, db := sampleWarehouse(t, 4, 1, false)
			f := openaitest.New()
			defer f.Close()
			f.Latency = 40 * time.Millisecond
			const items, concurrency = 150, 4
			args := []string{"--db", db, "judge", "--metric", "tc", "--judge", "k=fake-judge@" + f.URL + "/v1", "--limit", fmt.Sprint(items),
				"--concurrency", fmt.Sprint(concurrency), "-q"}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "GYMLENS_TEST_CLI=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for f.Count() < 40 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			sent := f.Count()
			if sent >= items {
				t.Fatalf("the run finished before the signal (%d requests)", sent)
			}
			if sig == syscall.SIGTERM && (err == nil || !strings.Contains(stderr.String(), "interrupted; the ") || !strings.Contains(stderr.String(), "answers received in this run are saved")) {
				t.Errorf("SIGTERM: %v %q", err, stderr.String())
			}
			code, out, errText := gymlens(t, append(args, "-f", "json")...)
			if code != 0 {
				t.Fatalf("rerun: %s", errText)
			}
			if repeated := f.Count() - items; repeated > concurrency || repeated < 0 {
				t.Errorf("the rerun repeated %d requests (%d sent before the %v, %d in flight at most): %s", repeated, sent, sig, concurrency, out)
			}
			if _, err := os.Stat(db + ".judge-journal.jsonl"); err == nil {
				t.Error("the journal is left after a finished run")
			}
		})
	}
}

// An endpoint with nothing listening fails the run within seconds, naming
// the endpoint, before any retry.
func TestUnreachableEndpointFailsAtOnce(t *testing.T) {
	_, db := sampleWarehouse(t, 4, 1, true)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close() // now nothing listens there
	t0 := time.Now()
	code, _, stderr := gymlens(t, "--db", db, "judge", "--metric", "ta", "--judge", "gone=m@"+url, "--limit", "3")
	if code != 1 || !strings.Contains(stderr, "judge gone: "+url+" refused the connection") || time.Since(t0) > 10*time.Second {
		t.Errorf("exit %d after %v: %q", code, time.Since(t0), stderr)
	}
}

// TestMaxRejectsFlag: --max-rejects bounds the entries the rejects file
// keeps of an input file; the output counts the records left out.
func TestMaxRejectsFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Repeat("not json\n", 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	rejects := filepath.Join(dir, "rejects.jsonl")
	code, out, stderr := gymlens(t, "--db", filepath.Join(dir, "w.duckdb"), "--format", "json", "ingest", "--skip-invalid", "--rejects", rejects, "--max-rejects", "2", bad)
	b, _ := os.ReadFile(rejects)
	if code != 0 || strings.Count(string(b), "\n") != 2 || !strings.Contains(out, `"rejected": 5`) || !strings.Contains(out, `"rejects_unwritten": 3`) {
		t.Errorf("exit %d, %d rejects written\n%s\n%s", code, strings.Count(string(b), "\n"), out, stderr)
	}
}
