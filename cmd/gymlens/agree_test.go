package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/sample"

	"github.com/gymlens/gymlens/reports"
)

// The whole sample corpus, judgments and ratings included, in one
// warehouse for the agreement commands.
// The warehouse is the one the CSV tests read (seed 1, as `gymlens
// sample` writes by default), copied: this test adds to it.
func TestAgreeAndHumanOnTheSample(t *testing.T) {
	t.Parallel()
	dir, db, sampleDir := sharedSample(t, 1, 0)
	type row struct {
		Score, Statistic string
		Value, Lo, Hi    *float64
		N                int
	}
	t.Run("judges", func(t *testing.T) {
		code, out, stderr := gymlens(t, "--db", db, "agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", "--resamples", "200", "-f", "json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var res map[string][]struct {
			Score     string   `json:"score"`
			Statistic string   `json:"statistic"`
			Value     *float64 `json:"value"`
			Lo        *float64 `json:"ci_low"`
			Hi        *float64 `json:"ci_high"`
			N         int      `json:"n"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err, out)
		}
		stat := map[string]float64{}
		for sec, rows := range res {
			for _, r := range rows {
				// Near r = 1 the configuration-level replicates all fall
				// below the estimate: only the interval's order is checked.
				if r.Value == nil || r.Lo == nil || *r.Lo > *r.Hi || (sec != "configuration" && (*r.Lo > *r.Value || *r.Hi < *r.Value)) {
					t.Errorf("%s %s %s: %v not within its interval", sec, r.Score, r.Statistic, r.Value)
					continue
				}
				stat[sec+"/"+r.Score+"/"+r.Statistic] = *r.Value
			}
		}
		// The sample plants a second judge that is more lenient on TC and on
		// TR-J; both agree closely on TC.
		if d := stat["continuous/TC.semantics/delta"]; d <= 0 {
			t.Errorf("TC.semantics Δ = %v, want > 0", d)
		}
		if r := stat["continuous/TC.semantics/pearson"]; r < 0.8 {
			t.Errorf("TC.semantics r = %v", r)
		}
		if k := stat["binary/TA/cohen_kappa"]; k <= 0 || k >= 1 {
			t.Errorf("TA κ = %v", k)
		}
		if r := stat["configuration/TRJ/config_pearson"]; r <= stat["continuous/TRJ/pearson"] {
			t.Errorf("configuration-level r %v should exceed the task-level r %v", r, stat["continuous/TRJ/pearson"])
		}
		if len(res["continuous"]) != 12*6 || len(res["binary"]) != 3*5 || len(res["configuration"]) != 13*2 {
			t.Errorf("sections: %d continuous, %d binary, %d configuration rows", len(res["continuous"]), len(res["binary"]), len(res["configuration"]))
		}
	})
	t.Run("human", func(t *testing.T) {
		code, out, stderr := gymlens(t, "--db", db, "agree", "--human", "--resamples", "200", "-f", "json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var res map[string][]map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err, out)
		}
		for _, sec := range []string{"judge_human", "confusion", "human_reliability", "human_pairs", "conflation", "ppi"} {
			if len(res[sec]) == 0 {
				t.Errorf("no %s rows", sec)
			}
		}
		found := map[string]bool{}
		for _, r := range res["judge_human"] {
			found[r["statistic"].(string)] = true
		}
		for _, s := range []string{"kendall_tau_b", "weighted_kappa", "pearson", "mae"} {
			if !found[s] {
				t.Errorf("judge vs human lacks %s", s)
			}
		}
		// The sample's humans tie trust to capability more than the judges do.
		for _, r := range res["conflation"] {
			if r["statistic"] == "difference" && r["value"].(float64) <= 0 {
				t.Errorf("conflation difference %v", r["value"])
			}
		}
		if !strings.Contains(stderr, "repeat a rater's rating") {
			t.Errorf("no note on repeated ratings: %q", stderr)
		}
	})
	t.Run("study", func(t *testing.T) {
		code, out, stderr := gymlens(t, "--db", db, "human", "--resamples", "500", "-f", "json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var res map[string][]struct {
			Question, Condition string
			N                   int
			Value               float64
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		tr := map[string]float64{}
		for _, r := range res["transition"] {
			if r.Question == "trust" {
				tr[r.Condition] = r.Value
			}
			if r.N != 24 {
				t.Errorf("%+v: want 24 participants", r)
			}
		}
		if !(tr["A→A"] > 0 && tr["M→A"] > 0 && tr["A→M"] < 0 && tr["M→M"] < 0) {
			t.Errorf("trust transitions %v", tr)
		}
		if len(res["over_days"]) != 2*4*3 || len(res["acceptance"]) != 4 || len(res["acceptance_difference"]) != 6 {
			t.Errorf("rows: %d over days, %d acceptance, %d differences", len(res["over_days"]), len(res["acceptance"]), len(res["acceptance_difference"]))
		}
	})
	// Every table in every format, against its golden file.
	t.Run("tables", func(t *testing.T) {
		// Every table through the library's command on one shared dataset
		// (a CLI run reads the warehouse anew each time: 56 more reads);
		// the main table through the CLI as well, in every format, which
		// must give the library's bytes.
		lib := libraryCommand(t, db, "table")
		for _, name := range reports.TableNames {
			if name == "custom" {
				continue // the sample has no user rubric: TestRubricThroughPoolAndBatch
			}
			for _, f := range []string{"latex", "md", "csv", "html"} {
				out := lib(f, name, "--resamples", "200")
				if name == "main" {
					code, stdout, stderr := gymlens(t, "--db", db, "table", name, "-f", f, "--resamples", "200")
					if code != 0 || stdout != out {
						t.Errorf("table main -f %s: the CLI and the library differ (exit %d: %s)", f, code, stderr)
					}
				}
				goldenFile(t, filepath.Join("testdata", "tables", name+"."+f), []byte(out))
			}
		}
		if code, _, stderr := gymlens(t, "--db", db, "table", "nope"); code != 2 || !strings.Contains(stderr, "unknown table") {
			t.Errorf("unknown table: exit %d, %q", code, stderr)
		}
		if code, _, stderr := gymlens(t, "--db", db, "table", "main", "-f", "json"); code != 2 {
			t.Errorf("json table: exit %d, %q", code, stderr)
		}
	})
	t.Run("plots", func(t *testing.T) {
		out := filepath.Join(dir, "figs")
		for _, name := range []string{"effort", "human-trust", "harness-switch"} {
			code, stdout, stderr := gymlens(t, "--db", db, "plot", name, "--out", out, "--resamples", "200")
			if code != 0 {
				t.Fatalf("%s: %s", name, stderr)
			}
			for _, f := range []string{"png", "svg", "pdf"} {
				p := filepath.Join(out, name+"."+f)
				if st, err := os.Stat(p); err != nil || st.Size() < 1000 || !strings.Contains(stdout, p) {
					t.Errorf("%s: %v %v", p, st, err)
				}
			}
		}
		// The effort figure is of the one model run at several efforts.
		svg, _ := os.ReadFile(filepath.Join(out, "effort.svg"))
		if !strings.Contains(string(svg), "xhigh") {
			t.Error("effort.svg has no xhigh level")
		}
		if code, _, stderr := gymlens(t, "--db", db, "plot", "pie", "--out", out); code != 2 || !strings.Contains(stderr, "unknown figure") {
			t.Errorf("unknown figure: exit %d, %q", code, stderr)
		}
		if code, _, stderr := gymlens(t, "--db", db, "plot", "harness-switch", "--switch", "XX,YY", "--out", out, "--resamples", "200"); code != 1 || !strings.Contains(stderr, "XX and YY") {
			t.Errorf("unknown harnesses: exit %d, %q", code, stderr)
		}
	})
	// The report folder, checked in a real browser.
	t.Run("report", func(t *testing.T) {
		out := filepath.Join(dir, "rep")
		code, stdout, stderr := gymlens(t, "--db", db, "report", "--out", out, "--resamples", "200")
		if code != 0 || !strings.Contains(stdout, "index.html") {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		var m struct {
			Inputs []struct {
				Path, SHA256 string
			}
			Judges []struct {
				Judge, Prompt string
			}
			Tables, Figures []struct {
				Name  string
				Files []string
			}
			Skipped   []string
			Bootstrap struct {
				Resamples int
				Seed      uint64
			}
		}
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		// The sample has everything: nothing is left out.
		if len(m.Skipped) != 0 || len(m.Tables) != 16 || len(m.Figures) != 10 || len(m.Inputs) != 116 || len(m.Judges) == 0 ||
			m.Bootstrap.Resamples != 200 || len(m.Inputs[0].SHA256) != 64 {
			t.Errorf("manifest: %d tables, %d figures, %d inputs, skipped %v, %+v", len(m.Tables), len(m.Figures), len(m.Inputs), m.Skipped, m.Bootstrap)
		}
		// The glossary explains the codes, from the specs' labels.
		page, _ := os.ReadFile(filepath.Join(out, "index.html"))
		gl, _ := os.ReadFile(filepath.Join(out, "glossary.md"))
		for _, want := range []string{"persona group of reviewer", "appropriate, misaligned, appropriate", "models run on it:", "continuation quality"} {
			if !strings.Contains(string(page), want) || !strings.Contains(string(gl), want) {
				t.Errorf("the report's glossary lacks %q", want)
			}
		}
		// No local path in the report: inputs relative to their folder.
		for _, in := range m.Inputs {
			if filepath.IsAbs(in.Path) || strings.Contains(in.Path, dir) || strings.Contains(in.Path, sampleDir) {
				t.Errorf("manifest names a local path: %s", in.Path)
				break
			}
		}
		for _, local := range []string{dir, filepath.Dir(sampleDir)} {
			if strings.Contains(string(page), local) || strings.Contains(string(b), local) {
				t.Errorf("the report names the local folder %s", local)
			}
		}
		for _, o := range append(m.Tables, m.Figures...) {
			for _, f := range o.Files {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Error(err)
				}
			}
		}
		// Each check that needs a tool is a subtest of its own: when one
		// skips (under -short, or without the tool) the others still run.
		t.Run("browser", func(t *testing.T) { checkInBrowser(t, filepath.Join(out, "index.html"), len(m.Tables), len(m.Figures)) })
		t.Run("tex", func(t *testing.T) { checkTeX(t, filepath.Join(out, "tables")) })
		t.Run("paper", func(t *testing.T) { checkPaper(t, out) })
		csvs, _ := filepath.Glob(filepath.Join(out, "tables", "*.csv"))
		checkCSVReadsBack(t, csvs)
	})
	// verify passes on the report — it rebuilds the report in a scratch
	// folder of its own and compares every byte, so two builds in two
	// folders are the same —, fails naming each edited, removed or changed
	// file, and rebuilds it from the input files alone.
	t.Run("verify", func(t *testing.T) {
		rep := filepath.Join(dir, "rep")
		files := 0
		filepath.WalkDir(rep, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
			}
			return err
		})
		pdf, _ := os.ReadFile(filepath.Join(rep, "figures", "rank.pdf"))
		var m reports.Manifest
		mj, _ := os.ReadFile(filepath.Join(rep, "manifest.json"))
		if err := json.Unmarshal(mj, &m); err != nil {
			t.Fatal(err)
		}
		// The PDFs carry the date of the newest run's end, not the time they were made.
		if m.PDFDate != "2026-05-07T00:00:00Z" || !bytes.Contains(pdf, []byte("/CreationDate (D:20260507000000")) {
			t.Errorf("PDF date %s; rank.pdf %q", m.PDFDate, regexp.MustCompile(`/CreationDate \([^)]*\)`).Find(pdf))
		}
		if len(m.Files) != files-1 || m.Steps.Report.Args[0] != "--resamples=200" || len(m.Steps.Ingests) != 1 || len(m.Steps.Ingests[0].Files) != 116 ||
			m.Build.Go == "" || len(m.Build.Modules) < 10 {
			t.Errorf("manifest: %d files of %d, steps %+v, build %s with %d modules", len(m.Files), files, m.Steps.Report, m.Build.Go, len(m.Build.Modules))
		}
		sch, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "manifest.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mj)); err != nil || sch.Validate(doc) != nil {
			t.Errorf("manifest.json against docs/manifest.schema.json: %v %v", err, sch.Validate(doc))
		}
		if code, out, stderr := gymlens(t, "--db", db, "verify", rep); code != 0 || !strings.Contains(out, "all 113 files match a rebuild from the 116 inputs") {
			t.Fatalf("untouched: exit %d\n%s%s", code, out, stderr)
		}
		// Edited, removed, added: each named, with the first differing line.
		bad := filepath.Join(t.TempDir(), "rep")
		os.CopyFS(bad, os.DirFS(rep))
		main, _ := os.ReadFile(filepath.Join(bad, "tables", "main.csv"))
		os.WriteFile(filepath.Join(bad, "tables", "main.csv"), bytes.Replace(main, []byte("Claude Opus 5,CC"), []byte("Claude Opus 6,CC"), 1), 0o644)
		os.Remove(filepath.Join(bad, "figures", "rank.svg"))
		code, out, _ := gymlens(t, "--db", db, "verify", bad)
		for _, want := range []string{"tables/main.csv: changed since the report was written", `tables/main.csv: differs from the rebuild: first at line 2: the report has "Claude Opus 6,CC`,
			"figures/rank.svg: listed in the manifest, not in the folder"} {
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("edited report: exit %d, no %q in\n%s", code, want, out)
			}
		}
		// From the inputs alone: TestVerifyFromTheInputsAlone.
	})
	// The warehouse exported as a Parquet lake, read in place: the same
	// bytes from every analysis, table, figure and the report; verify
	// passes against it; writing to it is refused.
	// Every notebook runs on the sample; its Markdown output is golden.
	t.Run("notebooks", func(t *testing.T) {
		books, _ := filepath.Glob(filepath.Join("..", "..", "notebooks", "*.md"))
		if len(books) < 3 {
			t.Fatalf("%d notebooks", len(books))
		}
		// notebooks/pare.md reads PARE and Meta-ARE files: the fixtures and
		// the hand-made ones, beside the sample; notebooks/inspect.md the
		// synthetic Inspect logs.
		if code, _, stderr := gymlens(t, "--db", db, "--quiet", "ingest", filepath.Join("..", "..", "ingest", "pare", "testdata"),
			filepath.Join("..", "..", "ingest", "testdata", "pare"), filepath.Join(inspectModels, "logs")); code != 0 {
			t.Fatal(stderr)
		}
		out := filepath.Join(dir, "nb")
		for _, nb := range books {
			code, _, stderr := gymlens(t, "--db", db, "notebook", "run", nb, "--out", out)
			if code != 0 {
				t.Fatalf("%s: %s", nb, stderr)
			}
			stem := strings.TrimSuffix(filepath.Base(nb), ".md")
			md, _ := os.ReadFile(filepath.Join(out, stem+".md"))
			goldenFile(t, filepath.Join("testdata", "notebooks", stem+".md"), md)
			page, _ := os.ReadFile(filepath.Join(out, stem+".html"))
			if !strings.Contains(string(page), "<table") || strings.Contains(string(page), "<script") {
				t.Errorf("%s.html: no table, or a script", stem)
			}
		}
		// A failing block stops the run, names the block, writes nothing.
		bad := writeFile(t, dir, "bad.md", "# Bad\n\n<script>alert(1)</script>\n\n```sql\nSELECT 1 AS one\n```\n\n```sql\nSELECT nope FROM nowhere\n```\n")
		code, _, stderr := gymlens(t, "--db", db, "notebook", "run", bad, "--out", filepath.Join(dir, "badout"))
		if code != 1 || !strings.Contains(stderr, "bad.md:9: the sql block \"SELECT nope FROM nowhere\" failed") {
			t.Errorf("failing block: exit %d, %q", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "badout")); err == nil {
			t.Error("a failed notebook wrote its output folder")
		}
		good := writeFile(t, dir, "good.md", "# Good\n\n<script>alert(1)</script>\n\n```sql\nSELECT '<b>x</b>' AS tag\n```\n")
		if code, _, stderr := gymlens(t, "--db", db, "notebook", "run", good, "--out", filepath.Join(dir, "goodout")); code != 0 {
			t.Fatal(stderr)
		}
		page, _ := os.ReadFile(filepath.Join(dir, "goodout", "good.html"))
		if strings.Contains(string(page), "<script") || strings.Contains(string(page), "<b>x") || !strings.Contains(string(page), "&lt;b&gt;x") {
			t.Errorf("good.html does not escape:\n%s", page)
		}
		for _, args := range [][]string{{"notebook", "run", good, "--out", dir + "/o2", "--db", filepath.Join(dir, "none.duckdb")}} {
			if code, _, stderr := gymlens(t, args...); code != 1 || !strings.Contains(stderr, "no warehouse") {
				t.Errorf("%v: exit %d %q", args, code, stderr)
			}
		}
	})
	// Last: it adds ratings.
	t.Run("annotate", func(t *testing.T) {
		sheet := filepath.Join(dir, "sheet.csv")
		if code, _, stderr := gymlens(t, "--db", db, "annotate", "sample", "-n", "23", "--by", "scenario", "--seed", "3", "--out", sheet); code != 0 {
			t.Fatal(stderr)
		}
		again := filepath.Join(dir, "again.csv")
		gymlens(t, "--db", db, "annotate", "sample", "-n", "23", "--by", "scenario", "--seed", "3", "--out", again)
		a, _ := os.ReadFile(sheet)
		b, _ := os.ReadFile(again)
		if string(a) != string(b) {
			t.Error("the same seed drew a different sample")
		}
		rows, err := csv.NewReader(strings.NewReader(string(a))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		strata := map[string]int{}
		for _, r := range rows[1:] {
			if r[0] != "" || r[2] != "" || r[3] == "" || r[4] == "" || r[6] == "" {
				t.Fatalf("row %v: want empty rater and value, ids and context", r)
			}
			strata[r[5]]++
		}
		// 23 tasks over 10 scenarios of nearly equal size: 2 or 3 each,
		// two questions per task.
		if len(rows) != 1+46 || len(strata) != 10 {
			t.Errorf("%d rows, %d strata", len(rows)-1, len(strata))
		}
		for s, c := range strata {
			if c != 4 && c != 6 {
				t.Errorf("stratum %s: %d rows", s, c)
			}
		}
		// As a queue: its 23 items and two questions; a bad sheet is refused
		// naming its line and field, and makes no queue.
		bad := filepath.Join(dir, "badsheet.csv")
		os.WriteFile(bad, []byte("rater,question,value,run_id,task\n,trust,,,t1\n"), 0o644)
		if code, _, stderr := gymlens(t, "--db", db, "annotate", "queue", "q1", "--sheet", bad); code != 1 || !strings.Contains(stderr, `badsheet.csv:2:`) || !strings.Contains(stderr, `field "run_id"`) {
			t.Errorf("a bad sheet: exit %d, %q", code, stderr)
		}
		if code, stdout, stderr := gymlens(t, "--db", db, "annotate", "queue", "q1", "--sheet", sheet, "--k", "3"); code != 0 ||
			!strings.Contains(stdout, "queue q1 in "+db+": 23 items (0 practice), 3 annotators each, at most 1000 annotators, questions trust, tc") {
			t.Errorf("a queue from the sheet: exit %d, %q %q", code, stdout, stderr)
		}
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"annotate", "queue", "q1", "--sheet", sheet}, 1, `queue "q1" is already in`},
			{[]string{"annotate", "queue", "q2"}, 2, "give one of --sheet FILE.csv or --pare"},
			{[]string{"annotate", "queue", "a/b", "--sheet", sheet}, 2, "without /"},
			{[]string{"annotate", "queue", "q2", "--sheet", sheet, "--k", "3", "--max-annotators", "2"}, 2, "--max-annotators 2"},
			{[]string{"annotate", "queue", "q2", "--sheet", sheet, "--max-annotators", "-1"}, 2, "--max-annotators -1"},
			{[]string{"annotate", "export", "nope", "--out", filepath.Join(dir, "x.csv")}, 1, `annotation queue "nope": not in the warehouse`},
		} {
			if code, _, stderr := gymlens(t, append([]string{"--db", db}, c.args...)...); code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("%v: exit %d, %q", c.args, code, stderr)
			}
		}
		if code, stdout, _ := gymlens(t, "--db", db, "annotate", "export", "q1", "--out", filepath.Join(dir, "q1.csv")); code != 0 || !strings.Contains(stdout, ": 0 answers of queue q1") {
			t.Errorf("export of a queue without answers: %q", stdout)
		}
		small := filepath.Join(dir, "small.duckdb")
		if code, _, stderr := gymlens(t, "--db", small, "-q", "ingest", corpus(t, goodRun)); code != 0 {
			t.Fatal(stderr)
		}
		if code, _, stderr := gymlens(t, "--db", small, "annotate", "queue", "q3", "--pare"); code != 1 || !strings.Contains(stderr, "no PARE annotation sample") {
			t.Errorf("--pare without PARE samples: exit %d, %q", code, stderr)
		}
		if code, _, stderr := gymlens(t, "--db", filepath.Join(dir, "none.duckdb"), "annotate", "queue", "q", "--sheet", sheet); code != 1 || !strings.Contains(stderr, "no warehouse at") {
			t.Errorf("no warehouse: exit %d, %q", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "none.duckdb")); err == nil {
			t.Error("annotate queue made a warehouse")
		}
		// Unfilled, it is refused; filled, it ingests as ratings.
		if code, _, stderr := gymlens(t, "--db", db, "ingest", sheet); code != 1 || !strings.Contains(stderr, `field "rater"`) {
			t.Errorf("unfilled sheet: exit %d, %q", code, stderr)
		}
		for _, r := range rows[1:] {
			r[0], r[2] = "rater-x", "3"
		}
		var buf strings.Builder
		cw := csv.NewWriter(&buf)
		cw.WriteAll(rows)
		filled := writeFile(t, dir, "filled.csv", buf.String())
		if code, out, stderr := gymlens(t, "--db", db, "ingest", filled); code != 0 || !strings.Contains(out+stderr, "46 ratings") {
			t.Errorf("filled sheet: exit %d, %q %q", code, out, stderr)
		}
	})
	t.Run("bad", func(t *testing.T) {
		if code, _, stderr := gymlens(t, "--db", db, "agree", "--judges", "a,b", "--human"); code != 2 || !strings.Contains(stderr, "give one of") {
			t.Errorf("two modes: exit %d, %q", code, stderr)
		}
		if code, _, stderr := gymlens(t, "--db", db, "agree", "--judges", "judge-gpt-5.6-luna,nobody"); code != 1 || !strings.Contains(stderr, `"nobody"`) {
			t.Errorf("unknown judge: exit %d, %q", code, stderr)
		}
		if code, _, stderr := gymlens(t, "--db", db, "agree", "--judges", "judge-gpt-5.6-luna"); code != 2 {
			t.Errorf("one judge: exit %d, %q", code, stderr)
		}
	})
}

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenFile compares got with the file at path, or writes it with -update.
func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/gymlens -run Sample -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: output differs from the golden file; got:\n%s", path, got)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// agree --input on the worked example of Krippendorff (2011), and on bad
// and degenerate files.
func TestAgreeInput(t *testing.T) {
	dir := t.TempDir()
	data := [][]string{
		{"1", "2", "3", "3", "2", "1", "4", "1", "2", "", "", ""},
		{"1", "2", "3", "3", "2", "2", "4", "1", "2", "5", "", "3"},
		{"", "3", "3", "3", "2", "3", "4", "2", "2", "5", "1", ""},
		{"1", "2", "3", "3", "2", "4", "4", "1", "2", "5", "1", ""},
	}
	var b strings.Builder
	b.WriteString("item,rater,value\n")
	for r, row := range data {
		for u, v := range row {
			fmt.Fprintf(&b, "u%02d,%c,%s\n", u+1, 'A'+r, v)
		}
	}
	path := writeFile(t, dir, "k2011.csv", b.String())
	for level, want := range map[string]float64{"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797} {
		code, out, stderr := gymlens(t, "agree", "--input", path, "--level", level, "--resamples", "200", "-f", "json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err, out)
		}
		if a, _ := res["krippendorff_alpha"].(float64); math.Abs(a-want) > 0.0005 {
			t.Errorf("%s: α = %v, want %v", level, a, want)
		}
		for _, k := range []string{"fleiss_kappa", "percent_agreement", "n_items", "n_raters", "cohen_kappa", "weighted_kappa"} {
			if _, ok := res[k]; !ok {
				t.Errorf("no %s in %s", k, out)
			}
		}
		if res["n_items"].(float64) != 12 || res["n_raters"].(float64) != 4 || res["cohen_kappa"] != nil {
			t.Errorf("%s", out)
		}
	}
	// Two raters: Cohen's κ; per question.
	two := writeFile(t, dir, "two.csv", "item,rater,value,question\n1,a,1,q\n1,b,1,q\n2,a,2,q\n2,b,3,q\n3,a,3,q\n3,b,3,q\n1,a,0,z\n2,a,1,z\n")
	code, out, stderr := gymlens(t, "agree", "--input", two, "--level", "ordinal", "--resamples", "200", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var byQ struct {
		ByQuestion map[string]map[string]any `json:"by_question"`
	}
	if err := json.Unmarshal([]byte(out), &byQ); err != nil {
		t.Fatal(err)
	}
	if k, _ := byQ.ByQuestion["q"]["cohen_kappa"].(float64); math.Abs(k-0.5) > 1e-12 {
		t.Errorf("q: κ = %v, want 0.5 (po 2/3, pe 1/3)", byQ.ByQuestion["q"]["cohen_kappa"])
	}
	// One rater: nothing to agree on, and every figure says why.
	z := byQ.ByQuestion["z"]
	for _, k := range []string{"krippendorff_alpha", "fleiss_kappa", "cohen_kappa"} {
		if z[k] != nil || !strings.Contains(fmt.Sprint(z["reasons"]), k+":") {
			t.Errorf("one rater: %s = %v, reasons %v", k, z[k], z["reasons"])
		}
	}
	for name, c := range map[string]struct{ text, want string }{
		"nocol.csv":  {"item,value\n1,2\n", `nocol.csv:1: field "rater": required column`},
		"nan.csv":    {"item,rater,value\n1,a,2\n1,b,high\n", `nan.csv:3:5: field "value": expected a number (--level interval; text categories need --level nominal, or their order in --categories 2,high), found "high"`},
		"dup.csv":    {"item,rater,value\n1,a,2\n1,a,3\n", `dup.csv:3: field "value": rater "a" rated item "1" twice (first on line 2)`},
		"empty.csv":  {"", "empty file"},
		"quote.csv":  {"item,rater,value\n1,\"a,2\n", "malformed CSV"},
		"noitem.csv": {"item,rater,value\n,a,2\n", `noitem.csv:2:1: field "item": expected a non-empty item, found an empty cell`},
	} {
		code, _, stderr := gymlens(t, "agree", "--input", writeFile(t, dir, name, c.text))
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want %q", name, code, stderr, c.want)
		}
	}
	// One pairable item: α may exist, its interval cannot, and says why.
	one := writeFile(t, dir, "one.csv", "item,rater,value\n1,a,1\n1,b,2\n2,a,3\n")
	code, out, stderr = gymlens(t, "agree", "--input", one, "--level", "interval", "-f", "json")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("one pairable item: %d %s %s", code, out, stderr)
	}
	if ci := res["krippendorff_alpha_ci"].([]any); ci[0] != nil || !strings.Contains(fmt.Sprint(res["reasons"]), "krippendorff_alpha_ci:") {
		t.Errorf("one pairable item: interval %v without its reason: %v", ci, res["reasons"])
	}
	// A file too large to hold is refused with the limit, before reading.
	big := filepath.Join(dir, "big.csv")
	bf, _ := os.Create(big)
	bf.WriteString("item,rater,value\n")
	bf.Truncate(41 << 20)
	bf.Close()
	if code, _, stderr := gymlens(t, "agree", "--input", big); code != 1 || !strings.Contains(stderr, "big.csv: 41 MB: agree --input holds the ratings in memory and reads at most 40 MB") {
		t.Errorf("a 41 MB ratings file: exit %d %q", code, stderr)
	}
	if code, _, stderr := gymlens(t, "agree", "--input", path, "--level", "cardinal"); code != 2 {
		t.Errorf("bad level: exit %d %q", code, stderr)
	}
}

// agree --input with text categories: nominal labels of any text, ordered
// ones with --categories, against scikit-learn and statsmodels on the same
// strings (analysis/testdata/make_audit_refs.py).
func TestAgreeInputTextCategories(t *testing.T) {
	var refs struct {
		Text struct {
			Two struct {
				A, B         []string
				CohenKappa   float64 `json:"cohen_kappa"`
				AlphaNominal float64 `json:"alpha_nominal"`
			}
			Three struct {
				Ratings          [][]string
				FleissKappa      float64 `json:"fleiss_kappa"`
				AlphaNominal     float64 `json:"alpha_nominal"`
				PercentAgreement float64 `json:"percent_agreement"`
			}
		} `json:"text_labels"`
		Ordered struct {
			Order          []string
			A, B           []string
			CohenKappa     float64 `json:"cohen_kappa"`
			QuadraticKappa float64 `json:"quadratic_kappa"`
			AlphaOrdinal   float64 `json:"alpha_ordinal"`
			AlphaNominal   float64 `json:"alpha_nominal"`
		} `json:"ordered_labels"`
	}
	b, err := os.ReadFile("../../analysis/testdata/audit_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	long := func(name string, raters ...[]string) string {
		var s strings.Builder
		s.WriteString("item,rater,value\n")
		for r, vs := range raters {
			for i, v := range vs {
				fmt.Fprintf(&s, "i%03d,r%d,%s\n", i, r, v)
			}
		}
		return writeFile(t, dir, name, s.String())
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		code, out, stderr := gymlens(t, append([]string{"agree", "--resamples", "100", "-f", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err, out)
		}
		return res
	}
	near := func(what string, got any, want float64) {
		t.Helper()
		if g, ok := got.(float64); !ok || math.Abs(g-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	two := long("two.csv", refs.Text.Two.A, refs.Text.Two.B)
	res := run("--input", two, "--level", "nominal")
	near("Cohen's κ of accept/reject/gather_context", res["cohen_kappa"], refs.Text.Two.CohenKappa)
	near("nominal α", res["krippendorff_alpha"], refs.Text.Two.AlphaNominal)
	if res["weighted_kappa"] != nil || !strings.Contains(fmt.Sprint(res["reasons"]), "no order") {
		t.Errorf("weighted κ of unordered text: %v (%v)", res["weighted_kappa"], res["reasons"])
	}
	var cols [3][]string
	for _, row := range refs.Text.Three.Ratings {
		for r := range 3 {
			cols[r] = append(cols[r], row[r])
		}
	}
	res = run("--input", long("three.csv", cols[:]...), "--level", "nominal")
	near("Fleiss' κ of yes/no", res["fleiss_kappa"], refs.Text.Three.FleissKappa)
	near("nominal α of yes/no", res["krippendorff_alpha"], refs.Text.Three.AlphaNominal)
	near("percent agreement", res["percent_agreement"], refs.Text.Three.PercentAgreement)

	ord := long("ordered.csv", refs.Ordered.A, refs.Ordered.B)
	cats := strings.Join(refs.Ordered.Order, ",")
	res = run("--input", ord, "--level", "ordinal", "--categories", cats)
	near("ordinal α", res["krippendorff_alpha"], refs.Ordered.AlphaOrdinal)
	near("quadratic κ in the given order", res["weighted_kappa"], refs.Ordered.QuadraticKappa)
	near("Cohen's κ", res["cohen_kappa"], refs.Ordered.CohenKappa)
	res = run("--input", ord, "--level", "nominal")
	near("nominal α without an order", res["krippendorff_alpha"], refs.Ordered.AlphaNominal)

	// Text at an ordered level needs the order; a value outside the given
	// categories is named with its line.
	if code, _, stderr := gymlens(t, "agree", "--input", ord, "--level", "ordinal"); code != 1 || !strings.Contains(stderr, "--categories") {
		t.Errorf("ordinal text without --categories: exit %d %q", code, stderr)
	}
	bad := writeFile(t, dir, "bad.csv", "item,rater,value\n1,a,low\n1,b,medium\n")
	if code, _, stderr := gymlens(t, "agree", "--input", bad, "--level", "ordinal", "--categories", cats); code != 1 ||
		!strings.Contains(stderr, `bad.csv:3:5: field "value": expected one of --categories low,mid,high, found "medium"`) {
		t.Errorf("value outside --categories: exit %d %q", code, stderr)
	}
}

// Numbers in ratings files follow JSON's grammar; a blank question cell is
// an error, not a question named "".
func TestRatingsNumberGrammar(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1_0", "0x1p4", "0x10", "+1", ".5", "1.", "Inf", "NaN", "01"} {
		p := writeFile(t, dir, "n.csv", "item,rater,value\n1,a,2\n1,b,"+v+"\n")
		// At the default (interval) level, a value that is not a number
		// is text, which needs an order.
		if code, _, stderr := gymlens(t, "agree", "--input", p); code != 1 || !strings.Contains(stderr, `n.csv:3:5: field "value": expected a number (--level interval;`) {
			t.Errorf("agree --input value %q: exit %d %q", v, code, stderr)
		}
		corpus := writeFile(t, dir, "ratings.csv", "rater,question,value,item\nann,trust,"+v+",x\n")
		if code, _, stderr := gymlens(t, "--db", filepath.Join(dir, "w.duckdb"), "validate", corpus); code != 1 ||
			!strings.Contains(stderr, `ratings.csv:2:11: field "value": expected a number (JSON's grammar), found `) {
			t.Errorf("ratings CSV value %q: exit %d %q", v, code, stderr)
		}
	}
	p := writeFile(t, dir, "q.csv", "item,rater,value,question\n1,a,2,trust\n1,b,3, \n")
	if code, _, stderr := gymlens(t, "agree", "--input", p); code != 1 || !strings.Contains(stderr, `q.csv:3:7: field "question": expected a non-empty question, found an empty cell`) {
		t.Errorf("blank question: exit %d %q", code, stderr)
	}
}

// agree --human resamples the scenarios that hold rated items: runs of
// scenarios nobody rated change nothing, n_clusters counts the rated
// scenarios, and with one rated scenario there is no interval, with the
// reason.
func TestAgreeHumanClustersAreTheRatedScenarios(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	// Six configurations: every scenario still has rated tasks.
	if _, err := sample.Write(full, sample.Options{Seed: 2, Configs: 6}); err != nil {
		t.Fatal(err)
	}
	scenarioOf := func(runID string) string {
		parts := strings.Split(runID, "/")
		if len(parts) < 2 {
			return ""
		}
		return parts[1]
	}
	specs, _ := filepath.Glob(filepath.Join(full, "scenarios", "*.yaml"))
	var all []string
	for _, s := range specs {
		all = append(all, strings.TrimSuffix(filepath.Base(s), ".yaml"))
	}
	// copyCorpus copies the corpus, keeping the ratings of the scenarios in
	// rated and the run records of those in kept.
	copyCorpus := func(name string, rated, kept []string) string {
		out := filepath.Join(dir, name)
		err := filepath.WalkDir(full, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err
			}
			rel, _ := filepath.Rel(full, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var keep []string
			switch {
			case strings.HasSuffix(p, "task_ratings.csv"):
				rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				keep = append(keep, rows[0])
				for _, r := range rows[1:] {
					if slices.Contains(rated, scenarioOf(strings.Split(r, ",")[3])) {
						keep = append(keep, r)
					}
				}
			case strings.HasSuffix(p, ".jsonl"):
				for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
					var rec struct {
						RunID string `json:"run_id"`
					}
					json.Unmarshal([]byte(l), &rec)
					if slices.Contains(kept, scenarioOf(rec.RunID)) {
						keep = append(keep, l)
					}
				}
			default:
				keep = []string{strings.TrimSuffix(string(b), "\n")}
			}
			os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755)
			return os.WriteFile(filepath.Join(out, rel), []byte(strings.Join(keep, "\n")+"\n"), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, name+".duckdb")
		if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", out); code != 0 {
			t.Fatal(stderr)
		}
		return db
	}
	agree := func(db string) map[string][]map[string]any {
		code, out, stderr := gymlens(t, "--db", db, "-q", "agree", "--human", "--resamples", "300", "-f", "json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var res map[string][]map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	half := all[:5]
	some, only := agree(copyCorpus("some", half, all)), agree(copyCorpus("only", half, half))
	for _, sec := range []string{"judge_human", "conflation"} {
		if len(some[sec]) == 0 {
			t.Fatalf("no %s rows", sec)
		}
		for i, r := range some[sec] {
			if r["n_clusters"] != float64(5) {
				t.Errorf("%s %v %v: n_clusters %v, want the 5 rated scenarios", sec, r["score"], r["statistic"], r["n_clusters"])
			}
			if !reflect.DeepEqual(r, only[sec][i]) {
				t.Errorf("%s: runs of unrated scenarios changed\n %v\nto\n %v", sec, only[sec][i], r)
			}
		}
	}
	one := agree(copyCorpus("one", all[:1], all))
	for _, r := range one["judge_human"] {
		if r["n_clusters"] != float64(1) || r["ci_low"] != nil || !strings.Contains(fmt.Sprint(r["warnings"]), "no interval") {
			t.Errorf("one rated scenario: %v", r)
		}
	}
}

// Question names of any text come out as valid JSON (they were written
// with Go's %q, whose escapes are not JSON's).
func TestAgreeInputJSONEscapesNames(t *testing.T) {
	p := writeFile(t, t.TempDir(), "q.csv", "item,rater,value,question\n1,a,2,\"caf\u00e9 \x01\"\n1,b,3,\"caf\u00e9 \x01\"\n2,a,1,\"say \"\"hi\"\"\"\n2,b,1,\"say \"\"hi\"\"\"\n")
	code, out, stderr := gymlens(t, "agree", "--input", p, "--resamples", "100", "-f", "json")
	var res struct {
		ByQuestion map[string]map[string]any `json:"by_question"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("%d %s %s", code, out, stderr)
	}
	if _, ok := res.ByQuestion["café \x01"]; !ok || res.ByQuestion[`say "hi"`] == nil {
		t.Errorf("questions %v", res.ByQuestion)
	}
}

// Every notebook runs on a warehouse that lacks what some blocks need (no
// human ratings, no effort ablation, no PARE runs): those blocks become
// notes and the notebook goes on; --strict fails on the first of them.
func TestNotebooksRunOnAnyWarehouse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c")
	if _, err := sample.Write(corpus, sample.Options{Seed: 3, Configs: 4}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(corpus, "ratings"))
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", corpus); code != 0 {
		t.Fatal(stderr)
	}
	books, _ := filepath.Glob(filepath.Join("..", "..", "notebooks", "*.md"))
	for _, book := range books {
		stem := strings.TrimSuffix(filepath.Base(book), ".md")
		out := filepath.Join(dir, stem)
		code, _, stderr := gymlens(t, "--db", db, "notebook", "run", book, "--out", out)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", stem, code, stderr)
			continue
		}
		md, _ := os.ReadFile(filepath.Join(out, stem+".md"))
		notes := strings.Count(string(md), "> **Note.** Not run on this warehouse")
		if stem != "personas-and-scenarios" && notes == 0 {
			t.Errorf("%s: no block noted as not run", stem)
		}
		if notes > 0 {
			if code, _, stderr := gymlens(t, "--db", db, "notebook", "run", book, "--out", out+"-strict", "--strict"); code != 1 || !strings.Contains(stderr, ".md:") || !strings.Contains(stderr, "failed: ") {
				t.Errorf("%s --strict: exit %d: %s", stem, code, stderr)
			}
			if _, err := os.Stat(out + "-strict"); err == nil {
				t.Errorf("%s --strict wrote its folder", stem)
			}
		}
	}
}

// libraryCommand runs a reading command through the library (as a
// notebook block does) on one warehouse, its datasets shared between the
// calls: what the command prints in a format for the given words.
func libraryCommand(t *testing.T, db, name string) func(format string, words ...string) string {
	t.Helper()
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	c := reports.CommandNamed(name)
	datasets := map[string]*reports.Dataset{}
	return func(format string, words ...string) string {
		t.Helper()
		args, err := c.Parse(words)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		x := &reports.Exec{Args: args, Format: format, Out: &out, Err: io.Discard, Quiet: true, Name: db, Datasets: datasets,
			Open: func(context.Context) (reports.Warehouse, error) { return w, nil }}
		if err := c.Run(context.Background(), x); err != nil {
			t.Fatalf("%s %v -f %s: %v", name, words, format, err)
		}
		return out.String()
	}
}

// The Parquet lake that export writes gives every reading command the
// bytes the warehouse gives, and verify rebuilds a report from it. The
// grid's first three configurations (270 runs, both judges, human
// ratings) have every table these commands print.
func TestLakeGivesTheWarehousesBytes(t *testing.T) {
	t.Parallel()
	dir, db, _ := sharedSample(t, 1, 3)
	lake := filepath.Join(t.TempDir(), "lake")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "export", "--out", lake); code != 0 {
		t.Fatal(stderr)
	}
	rep := filepath.Join(dir, "rep")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", rep, "--resamples", "200"); code != 0 {
		t.Fatal(stderr)
	}
	for _, args := range [][]string{
		{"metrics", "--by", "model,harness", "-f", "json", "--resamples", "200"},
		{"compare", "--harness-switch", "CC,OC", "-f", "csv", "--resamples", "200"},
		{"corr", "-f", "csv", "--resamples", "200"},
		{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", "-f", "json", "--resamples", "200"},
		{"agree", "--human", "-f", "json", "--resamples", "200"},
		{"human", "-f", "json", "--resamples", "200"},
		{"variance", "-f", "csv", "--resamples", "100"},
		{"rank", "-f", "csv", "--resamples", "200"},
		{"query", "-f", "csv", "SELECT run_id, seq, kind, t FROM events ORDER BY run_id, seq LIMIT 2000"},
	} {
		c1, a, e1 := gymlens(t, append([]string{"--db", db}, args...)...)
		c2, b, e2 := gymlens(t, append([]string{"--db", lake}, args...)...)
		if c1 != 0 || c2 != 0 || a != b {
			t.Errorf("%v: the lake gives other bytes (exit %d, %d: %s%s)", args, c1, c2, e1, e2)
		}
	}
	// The report: verify rebuilds it from the lake and compares each
	// of its bytes with the file's report.
	if code, out, stderr := gymlens(t, "--db", lake, "verify", rep); code != 0 || !strings.Contains(out, "all 110 files match a rebuild") {
		t.Errorf("the report from the lake differs from the file's: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := gymlens(t, "--db", lake, "score"); code != 1 || !strings.Contains(stderr, "is a Parquet lake (gymlens export): it is read in place, read-only") {
		t.Errorf("score into a lake: exit %d, %s", code, stderr)
	}
	if code, _, stderr := gymlens(t, "--db", lake, "query", "SELECT count(*) FROM read_csv('/etc/passwd')"); code != 1 || !strings.Contains(stderr, "disabled by configuration") {
		t.Errorf("query reading outside the lake: exit %d, %s", code, stderr)
	}
}
