package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/pare"
)

var (
	pareFixtures = filepath.Join("..", "..", "ingest", "pare", "testdata")
	pareHandmade = filepath.Join("..", "..", "ingest", "testdata", "pare")
	configA      = "proactive_claude-4.5_claude-4.5 | gpt-5-mini"
	configB      = "proactive_gpt-5_gpt-5 | gpt-5-mini"
)

type metricRecord struct {
	Group    map[string]string `json:"group"`
	Metric   string            `json:"metric"`
	NRuns    int               `json:"n_runs"`
	Clusters int               `json:"n_clusters"`
	Mean     *float64          `json:"mean"`
	Lo       *float64          `json:"ci_low"`
	Hi       *float64          `json:"ci_high"`
	Method   string            `json:"ci_method"`
	Warnings []string          `json:"warnings"`
}

// metricRecords runs a metrics command with -f json and reads its records.
func metricRecords(t *testing.T, args ...string) []metricRecord {
	t.Helper()
	code, stdout, stderr := gymlens(t, append(args, "-f", "json")...)
	if code != 0 {
		t.Fatalf("%v: %d %s", args, code, stderr)
	}
	var out []metricRecord
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err, stdout)
	}
	return out
}

// A PARE user points gymlens at a results folder and a traces folder:
// result rows link to their traces, PARE's numbers come back (and every
// stored number that differs is listed), with intervals, pass@k and
// paired comparisons PARE does not give.
func TestPAREResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	traces := filepath.Join(dir, "traces")
	os.MkdirAll(traces, 0o755)
	for _, n := range []string{"add_missing_group_contacts_run_1.json", "apartment_feature_comparison_query_run_4.json", "urgent_meeting_bumps_personal_errand_run_3.json"} {
		b, err := os.ReadFile(filepath.Join(pareFixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(traces, n), b, 0o644)
	}
	// validate reads them as ingest would and writes nothing.
	code, stdout, stderr := gymlens(t, "validate", filepath.Join(pareHandmade, "results"), traces, filepath.Join(pareHandmade, "are"))
	if code != 0 || !strings.Contains(stdout, "valid 9 files") || !strings.Contains(stdout, "3 pare runs, 75 pare events, 2 decision points, 40 pare results, 5 pare reports") {
		t.Fatalf("validate: %d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = gymlens(t, "--db", db, "ingest", filepath.Join(pareHandmade, "results"), traces, filepath.Join(pareHandmade, "are"))
	if code != 0 || !strings.Contains(stdout, "3 pare runs, 75 pare events, 2 decision points, 40 pare results, 5 pare reports") ||
		!strings.Contains(stdout, "40 result rows, 3 linked to an ingested trace") ||
		!strings.Contains(stdout, "in 3 result rows (linked to traces; 37 not linked) and 5 report sections: 6 mismatches") {
		t.Fatalf("ingest: %d %s %s", code, stdout, stderr)
	}

	// Exactly the numbers altered on purpose (make_handmade.py) differ.
	code, stdout, stderr = gymlens(t, "--db", db, "reconcile", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var mm []struct {
		Where, Item, Field, Kind string
		Stored, Recomputed       float64
	}
	if err := json.Unmarshal([]byte(stdout), &mm); err != nil {
		t.Fatal(err, stdout)
	}
	var got []string
	for _, m := range mm {
		got = append(got, fmt.Sprintf("%s/%s/%s/%.6g/%.6g/%s", filepath.Base(m.Where), strings.Split(m.Item, " | ")[0], m.Field, m.Stored, m.Recomputed, m.Kind))
	}
	want := []string{
		"benchmark_stats.json:29/search/pass_k/2/1/value",
		"combined_result.json:9/proactive_claude-4.5_claude-4.5/success_rate/0.538462/53.8462/unit",
		"combined_result.json:9/proactive_claude-4.5_claude-4.5/total_acceptances/9/8/value",
		"obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0_result.json:188/apartment_feature_comparison_query_run_4/number_of_turns/9/10/value",
		"obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0_result.json:188/apartment_feature_comparison_query_run_4/proposal_rate/0.111111/0.1/value",
		"obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0_result.json:188/apartment_feature_comparison_query_run_4/acceptance_rate/100/1/unit",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mismatches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code, _, stderr := gymlens(t, "--db", db, "reconcile", "--strict"); code != 1 || !strings.Contains(stderr, "6 mismatches") {
		t.Errorf("--strict: %d %s", code, stderr)
	}

	// Success, PARE's Pass@k / Pass^k and the unbiased estimators, per
	// configuration, against the reference script's numbers.
	var refs struct {
		Pass    map[string]map[string]float64
		Success map[string]float64
	}
	b, _ := os.ReadFile(filepath.Join(pareHandmade, "refs.json"))
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--where", "source=pare", "--resamples", "500",
		"--metrics", "success,pass@1,pass@2,pass^2,pass@3,pare_pass@k,pare_pass^k,pass@k")
	cfgName := map[string]string{configA: "A", configB: "B"}
	checked := 0
	for _, r := range recs {
		name := cfgName[r.Group["config"]]
		if name == "" {
			continue // the traces no result row names
		}
		want, ok := refs.Pass[name][r.Metric]
		if r.Metric == "success" {
			want, ok = refs.Success[name], true
		}
		if r.Metric == "pass@k" {
			want, ok = refs.Pass[name][fmt.Sprintf("pass@%g", refs.Pass[name]["k"])], true
		}
		if !ok || r.Mean == nil || math.Abs(*r.Mean-want) > 1e-9 {
			t.Errorf("%s %s: %v, reference %v", name, r.Metric, r.Mean, want)
		}
		checked++
	}
	if checked != 16 {
		t.Errorf("%d values checked", checked)
	}

	// PARE's own report, recomputed from the rows: equal to the numpy port
	// of PARE's report code for every statistic.
	code, stdout, stderr = gymlens(t, "--db", db, "metrics", "--source", "pare", "--pare-report", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var report []map[string]any
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err, stdout)
	}
	var trueA map[string]any
	b, _ = os.ReadFile(filepath.Join(pareHandmade, "refs.json"))
	var all map[string]json.RawMessage
	json.Unmarshal(b, &all)
	json.Unmarshal(all["combined_A_true"], &trueA)
	found := 0
	for _, row := range report {
		if row["config"] != configA {
			continue
		}
		for k, v := range trueA {
			if f, ok := v.(float64); ok && k != "tool_failure_probability" && k != "num_env_events_per_minute" {
				found++
				if g, ok := row[k].(float64); !ok || math.Abs(g-f) > 1e-9*math.Max(1, math.Abs(f)) {
					t.Errorf("--pare-report %s: %v, reference %v", k, row[k], f)
				}
			}
		}
	}
	if found < 30 || len(report) != 5 {
		t.Errorf("--pare-report: %d statistics checked, %d sections", found, len(report))
	}

	// PARE's pooled rates with intervals: for A the acceptance rate (its
	// rows' stored counts and the linked traces' agree on acceptances and
	// proposals), for B both rates.
	recs = metricRecords(t, "--db", db, "metrics", "--source", "pare", "--metrics", "pooled_acceptance_rate,pooled_proposal_rate", "--resamples", "300")
	var trueB map[string]any
	cb, _ := os.ReadFile(filepath.Join(pareHandmade, "results", "base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10", "combined_result.json"))
	var combined struct {
		Per []map[string]any `json:"per_config_results"`
	}
	json.Unmarshal(cb, &combined)
	trueB = combined.Per[1]
	pooled := map[string]float64{}
	for _, r := range recs {
		if r.Mean != nil {
			pooled[cfgName[r.Group["config"]]+"/"+r.Metric] = *r.Mean
		}
		if cfgName[r.Group["config"]] != "" && (r.Lo == nil || r.Hi == nil) || !strings.Contains(strings.Join(r.Warnings, ";"), "pooled over runs") {
			t.Errorf("pooled: %+v", r)
		}
	}
	if math.Abs(pooled["A/pooled_acceptance_rate"]-100*trueA["aggregate_acceptance_rate"].(float64)) > 1e-9 ||
		math.Abs(pooled["B/pooled_acceptance_rate"]-100*trueB["aggregate_acceptance_rate"].(float64)) > 1e-9 ||
		math.Abs(pooled["B/pooled_proposal_rate"]-trueB["aggregate_proposal_rate"].(float64)) > 1e-9 {
		t.Errorf("pooled %v", pooled)
	}

	// Paired comparison of the two configurations on the same scenarios.
	code, stdout, stderr = gymlens(t, "--db", db, "compare", "--source", "pare", configA, configB, "--metrics", "success,pass@1,pass@k,pooled_acceptance_rate",
		"--resamples", "500", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var cmp []struct {
		Metric   string
		Diff     float64
		N        int `json:"n_clusters"`
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
		t.Fatal(err, stdout)
	}
	// pass@k: k is the same on both sides, the fewer of the two (B has a
	// scenario with two validated runs).
	// Run metrics, then pooled ones, then scenario ones.
	if len(cmp) != 4 || cmp[1].Metric != "pooled_acceptance_rate" ||
		math.Abs(cmp[1].Diff-100*(trueB["aggregate_acceptance_rate"].(float64)-trueA["aggregate_acceptance_rate"].(float64))) > 1e-9 {
		t.Errorf("pooled: %s", stdout)
	}
	cmp = append(cmp[:1], cmp[2:]...)
	if len(cmp) != 3 || cmp[2].Metric != "pass@k" || math.Abs(cmp[2].Diff-(refs.Pass["B"]["pass@2"]-refs.Pass["A"]["pass@2"])) > 1e-9 ||
		!strings.Contains(strings.Join(cmp[2].Warnings, ";"), "k = 2") || refs.Pass["B"]["k"] != 2 || refs.Pass["A"]["k"] != 3 {
		t.Errorf("pass@k: %s", stdout)
	}
	if cmp[0].Metric != "success" || math.Abs(cmp[0].Diff-(refs.Success["B"]-refs.Success["A"])) > 1e-9 ||
		cmp[1].Metric != "pass@1" || math.Abs(cmp[1].Diff-(refs.Pass["B"]["pass@1"]-refs.Pass["A"]["pass@1"])) > 1e-9 || cmp[1].N != 4 {
		t.Errorf("%s", stdout)
	}

	// Meta-ARE by capability; the model named by benchmark_stats.json.
	recs = metricRecords(t, "--db", db, "metrics", "--source", "pare", "--where", "source=are", "--by", "capability,config,noise",
		"--metrics", "success", "--resamples", "200")
	if len(recs) != 2 || recs[0].Group["capability"] != "execution" || recs[0].Group["config"] != "llama-4-maverick" ||
		recs[0].Group["noise"] != "none" || *recs[0].Mean != 50 || recs[0].NRuns != 8 || *recs[1].Mean != 500.0/6 {
		t.Errorf("%+v", recs)
	}
	// App sets come from the traces.
	recs = metricRecords(t, "--db", db, "metrics", "--source", "pare", "--by", "apps", "--metrics", "proposals", "--resamples", "200")
	if len(recs) != 4 || recs[0].Group["apps"] != "HomeScreenSystemApp+PASAgentUserInterface+StatefulApartmentApp+StatefulContactsApp+StatefulMessagingApp" &&
		!strings.Contains(recs[0].Group["apps"], "PASAgentUserInterface") || recs[3].Group["apps"] != "unknown" {
		t.Errorf("%+v", recs)
	}
	// PARE's exports write zero token counts: unknown, never 0.
	recs = metricRecords(t, "--db", db, "metrics", "--source", "pare", "--where", "config="+configA, "--metrics", "tokens", "--resamples", "200")
	if len(recs) != 1 || recs[0].Mean != nil || recs[0].NRuns != 0 || !strings.Contains(strings.Join(recs[0].Warnings, ";"), "unknown token counts (the export wrote zeros) left out, not counted as 0") {
		t.Errorf("tokens: %+v", recs)
	}

	// The same runs from another file: refused, nothing written.
	again := filepath.Join(dir, "again")
	os.MkdirAll(again, 0o755)
	src, _ := os.ReadFile(filepath.Join(pareHandmade, "results", "base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10", "obs_gpt-5_exec_gpt-5_enmi_0_es_42_tfp_0.0_result.json"))
	os.WriteFile(filepath.Join(again, "copy_result.json"), append(src, '\n'), 0o644)
	if code, _, stderr := gymlens(t, "--db", db, "ingest", again); code != 1 || !strings.Contains(stderr, "copy_result.json:2") ||
		!strings.Contains(stderr, "is already in the warehouse from another result file") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("again: %d %s", code, stderr)
	}
	// A bad row: the file, line and field.
	os.WriteFile(filepath.Join(again, "copy_result.json"), []byte("[\n{\"base_scenario_id\": \"x\", \"proactive_model\": \"p\", \"status\": \"won\"}]"), 0o644)
	if code, _, stderr := gymlens(t, "--db", db, "ingest", again); code != 1 || !strings.Contains(stderr, "copy_result.json:2") ||
		!strings.Contains(stderr, "status") {
		t.Errorf("bad row: %d %s", code, stderr)
	}
	// Neither failed ingest changed the warehouse.
	code, stdout, _ = gymlens(t, "--db", db, "-f", "csv", "query", "SELECT (SELECT count(*) FROM pare_results) || '/' || (SELECT count(*) FROM ingested_files) AS n")
	if code != 0 || strings.TrimSpace(stdout) != "n\n40/9" {
		t.Errorf("after failed ingests: %q", stdout)
	}
}

// One validated run per scenario: the success rate gets a Wilson score
// interval (the reference is statsmodels', in refs.json).
func TestPAREWilson(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "standard", "search")
	os.MkdirAll(out, 0o755)
	var lines []string
	for i := range 10 {
		score := 0.0
		if i < 3 {
			score = 1
		}
		lines = append(lines, fmt.Sprintf(`{"task_id": "s%02d", "trace_id": null, "score": %g, "metadata": {"scenario_id": "s%02d", "run_number": 1}}`, i, score, i))
	}
	os.WriteFile(filepath.Join(out, "output.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	db := filepath.Join(dir, "w.duckdb")
	if code, stdout, stderr := gymlens(t, "--db", db, "ingest", dir); code != 0 || !strings.Contains(stdout, "10 pare results") {
		t.Fatalf("%d %s %s", code, stdout, stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--metrics", "success")
	lo, hi := analysis.Wilson(3, 10, 0.95)
	// statsmodels: proportion_confint(3, 10, method="wilson")
	const refLo, refHi = 0.10779126740630525, 0.6032218525388546
	if len(recs) != 1 || recs[0].Method != "wilson" || *recs[0].Mean != 30 || math.Abs(*recs[0].Lo-100*refLo) > 1e-9 || math.Abs(*recs[0].Hi-100*refHi) > 1e-9 ||
		math.Abs(lo-refLo) > 1e-12 || math.Abs(hi-refHi) > 1e-12 || recs[0].Group["config"] != "unknown model" {
		t.Errorf("%+v", recs)
	}
}

// A Meta-ARE output.jsonl outside Gaia2's folders and without a stats
// file: its lines take the model and the capability from the traces
// they name.
func TestAREModelFromTrace(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	var lines []string
	for i, s := range []string{"t1", "t2"} {
		// t1's trace calls its run Invalid; its line says success.
		trace := `{"version": "are_simulation_v1", "apps": [{"name": "Cal", "class_name": "CalendarApp"}], "completed_events": [], "world_logs": [],
			"metadata": {"definition": {"scenario_id": "` + s + `", "run_number": 1, "config": "time"}, "simulation": {"agent_id": "default", "model_id": "llama-x"},
			"annotation": {"validation_decision": "Invalid"}}}`
		os.WriteFile(filepath.Join(dir, "traces", s+".json"), []byte(trace), 0o644)
		lines = append(lines, fmt.Sprintf(`{"task_id": "%s", "trace_id": "/cluster/out/traces/%s.json", "score": %d, "metadata": {"scenario_id": "%s", "run_number": 1, "status": "%s"}}`,
			s, s, 1-i, s, []string{"success", "failed"}[i]))
	}
	os.WriteFile(filepath.Join(dir, "output.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	db := filepath.Join(dir, "w.duckdb")
	if code, stdout, stderr := gymlens(t, "--db", db, "ingest", dir); code != 0 || !strings.Contains(stdout, "2 result rows, 2 linked") {
		t.Fatalf("%d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr := gymlens(t, "--db", db, "reconcile", "-f", "csv")
	if code != 0 || !strings.Contains(stdout, "output.jsonl:1,t1_run_1 | llama-x,success,1,0,value,") || strings.Count(stdout, "\n") != 2 {
		t.Errorf("reconcile: %d %s %s", code, stdout, stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--by", "config,capability,apps", "--metrics", "success")
	if len(recs) != 1 || recs[0].Group["config"] != "llama-x" || recs[0].Group["capability"] != "time" || recs[0].Group["apps"] != "CalendarApp" ||
		*recs[0].Mean != 50 || recs[0].NRuns != 2 {
		t.Errorf("%+v", recs)
	}
}

// Traces without result rows: the success is the trace's own verdict
// (Valid, Invalid); the rate-limited run is left out.
func TestPARESuccessFromTraces(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", pareFixtures); code != 0 {
		t.Fatal(stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--by", "scenario", "--metrics", "success,pare_pass@k", "--resamples", "200")
	got := map[string]float64{}
	for _, r := range recs {
		if r.Mean != nil {
			got[r.Group["scenario"]+"/"+r.Metric] = *r.Mean
		}
	}
	// PARE's report needs result rows.
	if code, _, stderr := gymlens(t, "--db", db, "metrics", "--source", "pare", "--pare-report"); code != 1 || !strings.Contains(stderr, "no PARE or Meta-ARE result rows") {
		t.Errorf("--pare-report without rows: %d %s", code, stderr)
	}
	if len(recs) != 4 || got["add_missing_group_contacts/success"] != 0 || got["apartment_feature_comparison_query/success"] != 100 ||
		got["apartment_feature_comparison_query/pare_pass@k"] != 100 {
		t.Errorf("%v", got)
	}
}

// A scenario with no validated run (every run an exception, as when all
// were rate-limited) is left out of k and of pass@k, and named; the other
// scenarios keep their pass@k.
func TestPassAtKWithAnEmptyScenario(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "standard", "search")
	os.MkdirAll(out, 0o755)
	var lines []string
	for s := range 4 {
		for run := 1; run <= 3; run++ {
			score, status := "0", "failed"
			switch {
			case s == 3:
				score, status = "null", "exception"
			case run <= s:
				score, status = "1", "success"
			}
			lines = append(lines, fmt.Sprintf(`{"task_id": "s%d", "trace_id": null, "score": %s, "metadata": {"scenario_id": "s%d", "run_number": %d, "status": "%s"}}`,
				s, score, s, run, status))
		}
	}
	os.WriteFile(filepath.Join(out, "output.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", dir); code != 0 {
		t.Fatal(stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--metrics", "pass@k,pass^k,pass@1", "--resamples", "200")
	// s0, s1, s2 have 3 validated runs with 0, 1 and 2 successes: k = 3;
	// pass@3 = (0 + 1 + 1)/3, pass^3 = 0, pass@1 = (0 + 1/3 + 2/3)/3.
	want := map[string]float64{"pass@k": 200.0 / 3, "pass^k": 0, "pass@1": 100.0 / 3}
	if len(recs) != 3 {
		t.Fatalf("%+v", recs)
	}
	for _, r := range recs {
		if r.Mean == nil || math.Abs(*r.Mean-want[r.Metric]) > 1e-9 || r.NRuns != 3 {
			t.Errorf("%s: %v over %d scenarios, want %v over 3", r.Metric, r.Mean, r.NRuns, want[r.Metric])
		}
		w := strings.Join(r.Warnings, "; ")
		if !strings.Contains(w, "1 scenarios with no validated run left out: s3") ||
			(r.Metric == "pass@k" && !strings.Contains(w, "k = 3")) || strings.Contains(w, "no run has this metric") {
			t.Errorf("%s warnings: %s", r.Metric, w)
		}
	}
}

// The noise dimension has one vocabulary: a Meta-ARE line of Gaia2's noise
// phase and a trace without a line whose definition turns on tool and
// environment noise are one condition, tool+env.
func TestNoiseDimensionHasOneVocabulary(t *testing.T) {
	if pare.NoiseLabel(true, true) != "tool+env" || pare.NoiseLabel(false, false) != "none" {
		t.Fatal("NoiseLabel")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "noise", "search")
	os.MkdirAll(out, 0o755)
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	os.WriteFile(filepath.Join(out, "output.jsonl"), []byte(`{"task_id": "s1", "trace_id": null, "score": 1, "metadata": {"scenario_id": "s1", "run_number": 1}}`+"\n"), 0o644)
	trace := `{"version": "are_simulation_v1", "apps": [{"name": "Cal", "class_name": "CalendarApp"}], "completed_events": [], "world_logs": [],
		"metadata": {"definition": {"scenario_id": "s2", "run_number": 1, "has_tool_augmentation": true, "has_env_events_augmentation": true},
		"simulation": {"agent_id": "default", "model_id": "llama-x"}, "annotation": {"validation_decision": "Valid"}}}`
	os.WriteFile(filepath.Join(dir, "traces", "s2.json"), []byte(trace), 0o644)
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", dir); code != 0 {
		t.Fatal(stderr)
	}
	recs := metricRecords(t, "--db", db, "metrics", "--source", "pare", "--by", "noise", "--metrics", "success", "--resamples", "100")
	if len(recs) != 1 || recs[0].Group["noise"] != "tool+env" || recs[0].NRuns != 2 {
		t.Errorf("noise groups: %+v", recs)
	}
}

// The study-design commands on PARE's runs (configurations × scenarios ×
// repetitions, no personas): the variance by REML (the results are
// unbalanced) with the persona terms 0, the MDE on that design, and the
// ranks, whose values are metrics --source pare's.
func TestStudyDesignOnPARE(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", pareFixtures, pareHandmade); code != 0 {
		t.Fatal(stderr)
	}
	code, out, stderr := gymlens(t, "--db", db, "variance", "--source", "pare", "--resamples", "100", "-f", "csv")
	if code != 0 || !strings.Contains(out, "success,persona,0,0,0,0,0,0") || !strings.Contains(out, "success,config×persona,0,0,0,0,0,0") ||
		!strings.Contains(out, "REML (restricted maximum likelihood; unbalanced design)") || !strings.Contains(stderr, "one persona per scenario") {
		t.Fatalf("variance: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "power", "--source", "pare", "--delta", "20", "-f", "csv")
	if code != 0 || !strings.Contains(out, "success,percentage points,9,1,3,0.05,0.8,") {
		t.Errorf("power: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "rank", "--source", "pare", "--resamples", "500", "-f", "json")
	var ranks []struct {
		Config string  `json:"config"`
		Metric string  `json:"metric"`
		Value  float64 `json:"value"`
		Rank   int     `json:"rank"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ranks) != nil || len(ranks) != 3 || ranks[0].Config != "llama-4-maverick" || ranks[0].Metric != "success" || ranks[0].Rank != 1 {
		t.Fatalf("rank: exit %d\n%s%s", code, out, stderr)
	}
	_, out, _ = gymlens(t, "--db", db, "metrics", "--source", "pare", "--by", "config", "--metrics", "success", "--resamples", "100", "-f", "json")
	var est []struct {
		Group map[string]string `json:"group"`
		Mean  float64           `json:"mean"`
	}
	json.Unmarshal([]byte(out), &est)
	for _, r := range ranks {
		for _, e := range est {
			if e.Group["config"] == r.Config && math.Abs(e.Mean-r.Value) > 1e-9 {
				t.Errorf("%s: rank's value %v, metrics' %v", r.Config, r.Value, e.Mean)
			}
		}
	}
	if code, _, stderr := gymlens(t, "--db", db, "rank", "--source", "pare", "--metric", "TC"); code != 2 || !strings.Contains(stderr, "not a per-run PARE metric") {
		t.Errorf("rank --metric TC on PARE: exit %d, %s", code, stderr)
	}
}
