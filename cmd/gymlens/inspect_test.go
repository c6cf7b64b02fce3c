package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var inspectFixtures = filepath.Join("..", "..", "ingest", "inspect", "testdata")

// A folder of Inspect's own logs ingests, every stored result that can
// be recomputed reconciles, and metrics gives each scorer's mean per
// configuration and task.
func TestInspectLogsReconcileAndMeasure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	for _, n := range []string{"log_formats.eval", "log_streaming.eval", "log_message_deduplication.eval", "log_read_sample.eval",
		"mmlu-summary-choices.eval", "popularity_cancelled.json", "no_samples_cancelled.json", "log_tool_call_error.json"} {
		b, err := os.ReadFile(filepath.Join(inspectFixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(logs, n), b, 0o644)
	}
	code, stdout, stderr := gymlens(t, "--db", db, "ingest", logs)
	if code != 0 || !strings.Contains(stdout, "8 inspect evals, 12 inspect samples") || !strings.Contains(stdout+stderr, "2 cancelled") {
		t.Fatalf("ingest: %d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = gymlens(t, "--db", db, "reconcile", "--source", "inspect", "--strict", "-f", "json")
	if code != 0 {
		t.Fatalf("reconcile: %d %s %s", code, stdout, stderr)
	}
	var checks []map[string]any
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil {
		t.Fatal(err, stdout)
	}
	status := map[string]int{}
	for _, c := range checks {
		status[c["status"].(string)]++
		// Only the logs without sample scores (no_samples_cancelled.json,
		// log_tool_call_error.json) leave a stored metric unrecomputed.
		if c["status"] == "cannot" && (!strings.Contains(c["note"].(string), "no sample scores") || c["task"] != "testtaskname" && c["task"] != "...") {
			t.Errorf("not recomputed: %v", c)
		}
	}
	if status["equal"] < 12 || status["differs"] != 0 {
		t.Errorf("statuses %v", status)
	}
	code, stdout, stderr = gymlens(t, "--db", db, "metrics", "--source", "inspect", "--resamples", "500", "-f", "json")
	if code != 0 {
		t.Fatalf("metrics: %d %s %s", code, stdout, stderr)
	}
	var means []map[string]any
	if err := json.Unmarshal([]byte(stdout), &means); err != nil {
		t.Fatal(err, stdout)
	}
	found := false
	for _, m := range means {
		if m["task"] == "popularity" && m["metric"] == "inspect.match" && m["samples"] == 2.0 && m["values"] == 4.0 {
			found = m["mean"] == 0.75
		}
	}
	if !found {
		t.Errorf("no popularity mean of 0.75 over 2 samples × 2 epochs: %s", stdout)
	}
	// A metadata field as a dimension: the fixtures' samples have none, so
	// each mean is under "(absent)"; a gym dimension is refused, and so is
	// --cluster for the gym runs.
	code, stdout, stderr = gymlens(t, "--db", db, "metrics", "--source", "inspect", "--by", "config,meta.level", "--resamples", "200", "-f", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "config,task,meta.level,metric,") || !strings.Contains(stdout, ",popularity,(absent),inspect.match,2,4,0.75,") {
		t.Errorf("--by meta.level: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr = gymlens(t, "--db", db, "metrics", "--source", "inspect", "--by", "harness"); code != 2 || !strings.Contains(stderr, `"harness" is not config, task or meta.FIELD`) {
		t.Errorf("--by harness: %d %s", code, stderr)
	}
	if code, _, stderr = gymlens(t, "--db", db, "metrics", "--source", "inspect", "--cluster", "meta.level"); code == 0 || !strings.Contains(stderr, "has no level in its metadata") {
		t.Errorf("--cluster on samples without the field: %d %s", code, stderr)
	}
	if code, _, stderr = gymlens(t, "--db", db, "metrics", "--cluster", "meta.level"); code != 2 || !strings.Contains(stderr, "--cluster is for --source inspect") {
		t.Errorf("--cluster for gym runs: %d %s", code, stderr)
	}
	// Two configurations paired by sample on popularity: gpt-4o-mini's
	// samples 1 and 2 (1, 1) against Llama's (½, 1), its sample 3 left out.
	llama := "azureai/Meta-Llama-3-1-405B-Instruct-jqf | system_message+generate | none"
	code, stdout, stderr = gymlens(t, "--db", db, "compare", "--source", "inspect", "openai/gpt-4o-mini | system_message+generate | none", llama, "--resamples", "200", "-f", "csv")
	if code != 0 || !strings.Contains(stdout, ",inspect.match (popularity),1,0.75,-0.25,") || !strings.HasSuffix(strings.Split(stdout, "\n")[0], ",warnings,r_samples") ||
		!strings.Contains(stdout, "1 samples scored by some of the configurations compared only: left out") {
		t.Errorf("compare --source inspect: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr = gymlens(t, "--db", db, "compare", "--source", "inspect", "--harness-switch", "a,b"); code != 2 || !strings.Contains(stderr, "--harness-switch is for Proactivity-Gym runs") {
		t.Errorf("compare --source inspect --harness-switch: %d %s", code, stderr)
	}
	// pass^2 of log_streaming.eval: sample 2 (C, C) only.
	code, stdout, stderr = gymlens(t, "--db", db, "metrics", "--source", "inspect", "--reducer", "pass_2", "--resamples", "500", "-f", "csv")
	if code != 0 || !strings.Contains(stdout, "popularity,inspect.match (pass_2),2,4,0.5,") {
		t.Errorf("pass_2: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr = gymlens(t, "--db", db, "metrics", "--reducer", "pass_2"); code == 0 || !strings.Contains(stderr, "--reducer is for --source inspect") {
		t.Errorf("--reducer on gym runs: %d %s", code, stderr)
	}
}
