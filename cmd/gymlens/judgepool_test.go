package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/internal/sample"
)

// A judge over a pool of four servers, one of which fails every request,
// stores the same answers as over one server, and says how its requests
// were spread and which server left the pool.
func TestJudgeOverAPool(t *testing.T) {
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
