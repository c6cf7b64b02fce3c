package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// inspectModels is the synthetic fixture of three models on the same 12
// samples × 3 epochs (ingest/testdata/inspect/make_fixture.py), and
// refs.json what numpy and scipy make of it.
var inspectModels = filepath.Join("..", "..", "ingest", "testdata", "inspect")

type inspectRefs struct {
	Configs  []string
	Means    map[string]float64
	Variance map[string]map[string]float64
	Corr     map[string]float64
	Costs    map[string]map[string]float64
}

// inspectModelsDB ingests the fixture into a new warehouse.
func inspectModelsDB(t *testing.T) (string, *inspectRefs) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", filepath.Join(inspectModels, "logs")); code != 0 {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(filepath.Join(inspectModels, "refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r inspectRefs
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return db, &r
}

// csvRecords runs a command with -f csv and returns its records by header.
func csvRecords(t *testing.T, args ...string) []map[string]string {
	t.Helper()
	code, stdout, stderr := gymlens(t, append(args, "-f", "csv")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%v: %v\n%s", args, err, stdout)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

func closeRel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// variance, power, rank, corr and table on Inspect runs give the
// numbers numpy and scipy give for the fixture, and refuse what does
// not apply to Inspect runs.
func TestInspectReadingCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("ingests the Inspect fixture and runs each reading command on it")
	}
	db, ref := inspectModelsDB(t)
	// variance: the components of configurations × samples × epochs.
	terms := map[string]string{"sample": "sample", "config×sample": "config_sample", "epoch": "epoch"}
	recs := csvRecords(t, "--db", db, "variance", "--source", "inspect", "--resamples", "200")
	seen := 0
	for _, r := range recs {
		if r["table"] != "components" {
			continue
		}
		metric := strings.TrimSuffix(r["metric"], " (arith)")
		key, ok := terms[r["term"]]
		if !ok {
			t.Errorf("term %q (no persona term for Inspect runs)", r["term"])
			continue
		}
		seen++
		if want := math.Max(0, ref.Variance[metric][key]); !closeRel(num(t, r["variance"]), want, 1e-9) {
			t.Errorf("variance %s %s: %s, numpy %g", metric, key, r["variance"], want)
		}
	}
	if seen != 6 {
		t.Errorf("%d components, want 3 terms × 2 scorers", seen)
	}
	// power: the MDE over 12 samples and the samples an MDE of 0.1 needs.
	for _, r := range csvRecords(t, "--db", db, "power", "--source", "inspect", "--delta", "0.1") {
		v := ref.Variance[strings.TrimSuffix(r["metric"], " (arith)")]
		if !closeRel(num(t, r["mde"]), v["mde"], 1e-6) || !closeRel(num(t, r["r_implied"]), v["r_implied"], 1e-9) ||
			num(t, r["samples_needed"]) != v["samples_for_0.1"] || r["samples"] != "12" || r["epochs"] != "3" {
			t.Errorf("power %v, scipy %v", r, v)
		}
	}
	// corr: match against quality over the configurations' samples.
	for _, r := range csvRecords(t, "--db", db, "corr", "--source", "inspect", "--resamples", "200") {
		if r["level"] == "sample" && !closeRel(num(t, r["r"]), ref.Corr[r["method"]], 1e-9) {
			t.Errorf("corr %v, scipy %g", r, ref.Corr[r["method"]])
		}
	}
	// rank: model-c first on quality in every resample.
	recs = csvRecords(t, "--db", db, "rank", "--source", "inspect", "--resamples", "200")
	if len(recs) != 6 || recs[3]["config"] != ref.Configs[2] || recs[3]["metric"] != "inspect.quality (arith)" || recs[3]["rank_high"] != "1" || recs[3]["n_values"] != "36" {
		t.Errorf("rank: %v", recs)
	}
	// table main and costs: the means and the tokens and seconds per sample.
	recs = csvRecords(t, "--db", db, "table", "main", "--source", "inspect", "--resamples", "200")
	if len(recs) != 6 {
		t.Errorf("table main: %d rows", len(recs))
	}
	for _, r := range recs {
		if want := ref.Means[r["config"]+"|"+r["scorer"]]; math.Abs(num(t, r["mean"])-want) > 5e-4 {
			t.Errorf("table main %v: numpy %g", r, want)
		}
	}
	for _, r := range csvRecords(t, "--db", db, "table", "costs", "--source", "inspect", "--resamples", "200") {
		if want, ok := ref.Costs[r["config"]][r["cost"]]; ok && math.Abs(num(t, r["mean per sample"])-want) > 0.05 {
			t.Errorf("table costs %v: numpy %g", r, want)
		}
	}
	// What does not apply is refused (exit 2), naming the flag.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"variance", "--source", "inspect", "--where", "harness=CC"}, "variance --source inspect: --where does not apply"},
		{[]string{"power", "--source", "inspect", "--personas", "2"}, "--personas does not apply"},
		{[]string{"rank", "--source", "inspect", "--metric", "TA"}, "--metric does not apply"},
		{[]string{"corr", "--source", "inspect", "--judge", "j"}, "corr --source inspect: --judge does not apply"},
		{[]string{"corr", "--source", "pare"}, "expected gym or inspect"},
		{[]string{"compare", "--source", "inspect", ref.Configs[0], ref.Configs[1], "--where", "harness=CC"}, "compare --source inspect: --where does not apply"},
		{[]string{"metrics", "--source", "inspect", "--judge", "j"}, "metrics --source inspect: --judge does not apply"},
		{[]string{"table", "--source", "inspect", "trj-constructs"}, "name one table: main, comparisons"},
		{[]string{"table", "--source", "inspect", "main", "--mark", "significance"}, "--mark does not apply"},
		{[]string{"report", "--source", "inspect", "--out", filepath.Join(t.TempDir(), "r"), "--judge", "j"}, "--judge does not apply"},
		{[]string{"report", "--source", "3t", "--out", filepath.Join(t.TempDir(), "r")}, "expected gym or inspect"},
	} {
		if code, _, stderr := gymlens(t, append([]string{"--db", db}, tc.args...)...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}

// report on a warehouse of Inspect runs alone is the Inspect report: its
// tables per task and scorer, the same bytes from the same inputs and
// seed, LaTeX that compiles with every engine.
func TestInspectReport(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes the Inspect report twice and compiles its LaTeX")
	}
	db, _ := inspectModelsDB(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, out := range []string{a, b} {
		if code, _, stderr := gymlens(t, "--db", db, "report", "--out", out, "--resamples", "300"); code != 0 {
			t.Fatal(stderr)
		}
	}
	for _, name := range []string{"main", "comparisons", "rank", "variance", "power", "correlations", "costs"} {
		if _, err := os.Stat(filepath.Join(a, "tables", "inspect-"+name+".tex")); err != nil {
			t.Errorf("table inspect-%s: %v", name, err)
		}
	}
	if filesDigest(t, a) != filesDigest(t, b) {
		t.Error("the same warehouse and seed gave two reports")
	}
	m, _ := os.ReadFile(filepath.Join(a, "manifest.json"))
	if !strings.Contains(string(m), `"unit": "samples (each sample's epochs averaged)"`) || !strings.Contains(string(m), `"--resamples=300"`) {
		t.Errorf("manifest:\n%s", m)
	}
	page, _ := os.ReadFile(filepath.Join(a, "index.html"))
	if !strings.Contains(string(page), "Inspect runs") || !strings.Contains(string(page), "inspect.quality (arith)") {
		t.Error("index.html has no Inspect table")
	}
	// verify rebuilds it, choosing the Inspect report again.
	if code, stdout, stderr := gymlens(t, "--db", db, "verify", a); code != 0 || !strings.Contains(stdout, "files match a rebuild") {
		t.Errorf("verify: exit %d %s %s", code, stdout, stderr)
	}
	// The Proactivity-Gym report is still there when asked for.
	if code, _, stderr := gymlens(t, "--db", db, "report", "--source", "gym", "--out", filepath.Join(dir, "g")); code == 0 {
		t.Errorf("report --source gym on Inspect runs alone: exit 0 %s", stderr)
	}
	checkTeX(t, filepath.Join(a, "tables"))
}
