package sample

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func digest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestSameSeedSameBytes(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if _, err := Write(d, Options{Seed: 11, Configs: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(c, Options{Seed: 12, Configs: 3}); err != nil {
		t.Fatal(err)
	}
	if digest(t, a) != digest(t, b) {
		t.Error("the same seed wrote different bytes")
	}
	if digest(t, a) == digest(t, c) {
		t.Error("another seed wrote the same bytes")
	}
}

func TestGrid(t *testing.T) {
	g := Grid()
	if len(g) != 26 {
		t.Fatalf("%d configurations", len(g))
	}
	main := 0
	for _, c := range g {
		if c.Effort == "none" {
			main++
		}
	}
	if main != 23 {
		t.Errorf("%d main-grid configurations, want 23", main)
	}
	for _, s := range scenarios(1) {
		if n := len(s.tasks); n < 10 || n > 19 {
			t.Errorf("%s has %d tasks", s.id, n)
		}
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../docs/runlog-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("runlog-v1.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("runlog-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The published JSON Schema accepts every record of the sample corpus and
// refuses records that gymlens refuses.
func TestSchemaAcceptsTheSampleCorpus(t *testing.T) {
	sch := compileSchema(t)
	dir := t.TempDir()
	if _, err := Write(dir, Options{Seed: 2, Configs: 2}); err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(where string, v any) {
		n++
		if err := sch.Validate(v); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".sample" {
			return filepath.SkipDir // the corpus's own notes, which discovery skips
		}
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".jsonl"):
			f, _ := os.Open(p)
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<24)
			for line := 1; sc.Scan(); line++ {
				v, err := jsonschema.UnmarshalJSON(strings.NewReader(sc.Text()))
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("%s:%d", p, line), v)
			}
		case strings.HasSuffix(p, ".yaml"):
			b, _ := os.ReadFile(p)
			var y any
			if err := yaml.Unmarshal(b, &y); err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(y)
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
			check(p, v)
		case strings.HasSuffix(p, ".csv"):
			f, _ := os.Open(p)
			defer f.Close()
			rows, _ := csv.NewReader(f).ReadAll()
			for i, row := range rows[1:] {
				rec := map[string]any{"type": "rating"}
				for j, col := range rows[0] {
					if row[j] == "" {
						continue
					}
					if col == "value" || col == "day" {
						var x json.Number = json.Number(row[j])
						rec[col] = x
					} else {
						rec[col] = row[j]
					}
				}
				js, _ := json.Marshal(rec)
				v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
				check(fmt.Sprintf("%s:%d", p, i+2), v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10000 {
		t.Errorf("only %d records checked", n)
	}
	for _, bad := range []string{
		`{"type":"judgment","run_id":"r","task":"t","metric":"tc","judge":"j","scores":{"correctness":1.2,"grounding":1,"completeness":1,"artifact_quality":1}}`,
		`{"type":"event","run_id":"r","seq":"1","t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`,
		`{"type":"event","run_id":"r","seq":1,"t":"tomorrow","actor":"user","kind":"message"}`,
		`{"type":"run","run_id":"r","scenario":"s","persona":"p","rep":0,"config":{"model":"m","harness":"h"}}`,
		`{"type":"judgment","run_id":"r","metric":"ta","judge":"j","scores":{"now":0.5,"later":1}}`,
		`{"type":"rating","rater":"a","question":"q","value":1,"task":"t"}`,
		`{"type":"evnt"}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if sch.Validate(v) == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
}

// The sample's task records follow the derivation rules of the format
// (chosen depth from the trajectory), except where a disagreement is
// planted, and agents read operators worst.
func TestSampleTaskRecords(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, Options{Seed: 4, Configs: 4}); err != nil {
		t.Fatal(err)
	}
	type key struct{ run, task string }
	maxDepth := map[key]int{}
	tools := map[string]string{}
	for _, s := range scenarios(4) {
		for k, v := range s.tools {
			tools[k] = v
		}
	}
	matched, total := map[string]int{}, map[string]int{}
	mismatches := 0
	files, _ := filepath.Glob(filepath.Join(dir, "runs", "*.jsonl"))
	for _, p := range files {
		f, _ := os.Open(p)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				Type, RunID, Task, Actor, Kind, Tool, Depth string
				Active                                      bool
				ExpectedDepth                               string `json:"expected_depth"`
				ChosenDepth                                 string `json:"chosen_depth"`
			}
			json.Unmarshal(sc.Bytes(), &r)
			var raw map[string]any
			json.Unmarshal(sc.Bytes(), &raw)
			r.RunID, _ = raw["run_id"].(string)
			k := key{r.RunID, r.Task}
			switch {
			case r.Type == "event" && r.Actor == "agent" && r.Task != "":
				d := r.Depth
				if d == "" && r.Kind == "approval_request" {
					d = "suggest"
				}
				if d == "" && r.Kind == "tool_call" {
					d = tools[r.Tool]
				}
				if i := depthIndex(d); d != "read" && i > maxDepth[k] {
					maxDepth[k] = i
				}
			case r.Type == "task" && r.Active:
				if depthNames[maxDepth[k]] != r.ChosenDepth {
					mismatches++
				}
				persona := strings.Split(r.RunID, "/")[2]
				total[persona]++
				if r.ChosenDepth == r.ExpectedDepth {
					matched[persona]++
				}
			}
		}
		f.Close()
	}
	var man struct {
		Planted []Planted `json:"planted_disagreements"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".sample", "manifest.json"))
	json.Unmarshal(b, &man)
	planted := 0
	for _, p := range man.Planted {
		if p.Field == "chosen_depth" {
			planted++
		}
	}
	if mismatches != planted {
		t.Errorf("%d chosen depths disagree with the trajectory, %d planted", mismatches, planted)
	}
	rate := func(p string) float64 { return float64(matched[p]) / float64(total[p]) }
	if !(rate("operator") < rate("planner") && rate("operator") < rate("reviewer")) {
		t.Errorf("depth match rates: reviewer %.2f planner %.2f operator %.2f", rate("reviewer"), rate("planner"), rate("operator"))
	}
}

// CopyFile gives the same bytes in a new file, and never writes over one.
func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	want := bytes.Repeat([]byte("gymlens\x00"), 300_000) // past one copy's chunk
	if err := os.WriteFile(from, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CopyFile(to, from); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(to); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the copy differs (%d bytes of %d, %v)", len(got), len(want), err)
	}
	if err := CopyFile(to, from); err == nil {
		t.Error("a second copy over the first was not refused")
	}
	if err := CopyFile(filepath.Join(dir, "c"), filepath.Join(dir, "none")); err == nil {
		t.Error("a copy of a missing file was not refused")
	}
}

// The corpus's third judge is of a family of its own (Claude) and favours
// agents of its family, and the families file names every model and judge.
func TestSampleThirdJudgeAndFamilies(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, Options{Seed: 2, Configs: len(Grid())}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FamiliesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"name,family\n", "Claude Opus 5,Claude\n", "judge-sonnet-5,Claude\n", "judge-qwen3.5-397b,Qwen\n", "judge-gpt-5.6-luna,GPT\n"} {
		if !strings.Contains(string(b), line) {
			t.Errorf("%s lacks %q:\n%s", FamiliesFile, line, b)
		}
	}
	// Mean TR-J of the Claude judge less the Qwen judge's, on Claude's
	// agents and on the others.
	mean := func(judge string, claude bool) float64 {
		var s, n float64
		files, _ := filepath.Glob(filepath.Join(dir, "judgments", judge, "*.jsonl"))
		for _, f := range files {
			if strings.Contains(filepath.Base(f), "claude") != claude {
				continue
			}
			fh, _ := os.Open(f)
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var rec struct {
					Metric string
					Scores map[string]float64
				}
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatal(err)
				}
				if rec.Metric == "trj" {
					s += rec.Scores["faith"]
					n++
				}
			}
			fh.Close()
		}
		return s / n
	}
	own := mean("judge-sonnet-5", true) - mean("judge-qwen3.5-397b", true)
	other := mean("judge-sonnet-5", false) - mean("judge-qwen3.5-397b", false)
	if d := own - other; !(d >= 0.2 && d <= 0.4) {
		t.Errorf("the Claude judge's preference for Claude agents: %.3f (own %.3f, other %.3f), want about 0.3", d, own, other)
	}
}

// Options.Check refuses, in the words of gymlens sample's flags, what
// the generator cannot write: a scale below 1, more configurations than
// the grid has, an unknown compression.
func TestOptionsCheck(t *testing.T) {
	n := len(Grid())
	for _, o := range []Options{{Scale: 1, Compress: "none"}, {Scale: 3, Configs: n, Compress: "none"}, {Scale: 1, Compress: "gz"}, {Scale: 1, Compress: "zst"}} {
		if err := o.Check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Scale: 0}, "--scale: expected a whole number ≥ 1, found 0"},
		{Options{Scale: 1, Configs: -1}, fmt.Sprintf("--configs: expected 0 (all) to %d, found -1", n)},
		{Options{Scale: 1, Configs: n + 1}, fmt.Sprintf("--configs: expected 0 (all) to %d, found %d", n, n+1)},
		{Options{Scale: 1, Compress: "xz"}, `--compress: expected none, gz or zst, found "xz"`},
		{Options{Scale: 1, Compress: ""}, `--compress: expected none, gz or zst, found ""`},
		{Options{Scale: 0, Configs: -1, Compress: "xz"}, "--scale: expected a whole number ≥ 1, found 0"},
	} {
		if err := c.o.Check(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
