package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

func sampleReport(t *testing.T) *Report {
	t.Helper()
	res := []analysis.GroupEstimate{}
	for i, h := range []string{"CC", "<script>alert(1)</script>"} {
		for _, m := range analysis.MainMetrics {
			res = append(res, analysis.GroupEstimate{Group: map[string]string{"harness": h}, Metric: m, NRuns: 9,
				Estimate: analysis.Estimate{Value: float64(10 + i), Lo: float64(8 + i), Hi: float64(12 + i), Level: 0.95, Method: "percentile", Resamples: 100, Seed: 1}})
		}
	}
	fig, err := plots.HarnessComparison(res, analysis.MainMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return &Report{
		Title:   "Report <b>x</b>",
		Tables:  []*Table{sampleTable()},
		Figures: []*plots.Figure{fig},
		Skipped: []string{"figure human-trust: no study <rating>"},
		Manifest: Manifest{Tool: "gymlens", Version: "test", Warehouse: "/w.duckdb", SchemaVersion: 5,
			Inputs:    []rows.InputFile{{Path: "runs/<a>.jsonl", SHA256: "ab12", Size: 10, Format: "jsonl"}},
			Judges:    []rows.JudgeVersion{{Judge: "j1", Prompt: "tc/v1", Metric: "tc", Judgments: 3}},
			Bootstrap: Bootstrap{Method: "percentile", Level: 0.95, Resamples: 100, Seed: 1, Unit: "scenarios"}},
	}
}

// The folder has every file, the page embeds its figures and escapes every
// text, the manifest lists it all, and the same report gives the same bytes.
func TestWriteReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rep")
	if err := WriteReport(dir, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"index.html", "manifest.json", "tables/main.tex", "tables/main.md", "tables/main.csv", "tables/main.html",
		"figures/harness-comparison.png", "figures/harness-comparison.svg", "figures/harness-comparison.pdf"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	// The one script is the sorting one, fixed text; no input reaches it.
	if strings.Count(string(page), "<script") != 1 || !strings.Contains(string(page), "<script>"+sortScript+"</script>") {
		t.Error("index.html: not exactly the sorting script")
	}
	p := strings.Replace(string(page), "<script>"+sortScript+"</script>", "", 1)
	for _, bad := range []string{"<script", "<b>x", "<a>.jsonl", "<rating>", "http://", "https://"} {
		if strings.Contains(p, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	for _, want := range []string{"data:image/png;base64,", "&lt;script&gt;", "tc/v1", "100 resamples of scenarios, seed 1",
		`name="viewport"`, "@media print", `id="table-main"`, "no study &lt;rating&gt;"} {
		if !strings.Contains(p, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	var m Manifest
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) != 1 || len(m.Tables[0].Files) != 5 || len(m.Figures) != 1 || len(m.Figures[0].Files) != 3 ||
		m.Inputs[0].SHA256 != "ab12" || len(m.Skipped) != 1 {
		t.Errorf("manifest: %s", b)
	}
	// Again, over the first: the same bytes, nothing left over.
	os.WriteFile(filepath.Join(dir, "stale.txt"), []byte("x"), 0o644)
	if err := WriteReport(dir, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale.txt")); err == nil {
		t.Error("a file of the old report survived")
	}
	for f, first := range map[string]string{"index.html": string(page), "manifest.json": string(b)} {
		again, _ := os.ReadFile(filepath.Join(dir, f))
		if first != string(again) {
			t.Errorf("%s differs between two writes", f)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("left beside the report: %v", entries)
	}
}

// A report that cannot be written leaves the old one as it was.
func TestWriteReportFailureKeepsOld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rep")
	if err := WriteReport(dir, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	r := sampleReport(t)
	r.Figures = append(r.Figures, &plots.Figure{Name: "broken"}) // nothing to draw with
	if err := WriteReport(dir, r); err == nil {
		t.Error("a broken figure was written")
	}
	after, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || string(after) != string(before) {
		t.Errorf("the old report changed: %v", err)
	}
}

// A report names no local path: inputs relative to the folder they share,
// the warehouse by its file name.
func TestManifestPathsAreRelative(t *testing.T) {
	in := []rows.InputFile{{Path: "/home/ana/exp/corpus/runs/a.jsonl"}, {Path: "/home/ana/exp/corpus/scenarios/s.yaml"}, {Path: "/home/ana/exp/corpus/ratings.csv"}}
	if root := relativeInputs(in); root != "corpus" {
		t.Errorf("root %q", root)
	}
	var got []string
	for _, f := range in {
		got = append(got, f.Path)
	}
	if strings.Join(got, " ") != "runs/a.jsonl scenarios/s.yaml ratings.csv" {
		t.Errorf("paths %v", got)
	}
	one := []rows.InputFile{{Path: "/data/x/run.jsonl"}}
	if root := relativeInputs(one); root != "x" || one[0].Path != "run.jsonl" {
		t.Errorf("one input: %q %q", root, one[0].Path)
	}
	apart := []rows.InputFile{{Path: "/a/r.jsonl"}, {Path: "/b/s.yaml"}}
	if root := relativeInputs(apart); root != "" || apart[0].Path != "a/r.jsonl" || apart[1].Path != "b/s.yaml" {
		t.Errorf("apart: %q %v", root, apart)
	}
}
