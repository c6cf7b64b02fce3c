package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gymlens/gymlens/ingest/rows"
)

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct{ name, a, b, want string }{
		{"t.csv", "a,b\n1,2\n3,4\n", "a,b\n1,2\n3,5\n", `first at line 3: the report has "3,4", the rebuild "3,5"`},
		{"t.md", "x\ny\n", "x\ny\nz\n", `first at line 3: the report has "", the rebuild "z"`},
		{"t.md", "x\ny", "x", `first at line 2: the report has "y", the rebuild no such line`},
		{"f.png", "\x89PNGabc", "\x89PNGabd", "first at byte 6 (of 7 in the report, 7 rebuilt)"},
		{"i.html", "<p>\n" + strings.Repeat("x", 100) + "A" + strings.Repeat("y", 10), "<p>\n" + strings.Repeat("x", 100) + "B" + strings.Repeat("y", 10),
			`first at line 2, byte 101 of it: the report has …"` + strings.Repeat("x", 40) + `Ayyyyyyyyyy", the rebuild …"` + strings.Repeat("x", 40) + `Byyyyyyyyyy"`},
		{"f.pdf", "%PDF-1", "%PDF-1.4", "first at byte 6 (of 6 in the report, 8 rebuilt)"},
		// Past the first 64 KB block, lines counted across blocks.
		{"t.csv", strings.Repeat("ab\n", 30000) + "X", strings.Repeat("ab\n", 30000) + "Y", `first at line 30001: the report has "X", the rebuild "Y"`},
		{"t.md", strings.Repeat("a", 70000) + "1" + strings.Repeat("ü", 200), strings.Repeat("a", 70000) + "2",
			`first at line 1, byte 70001 of it: the report has …"` + strings.Repeat("a", 40) + "1" + strings.Repeat("ü", 79) + `…", the rebuild …"` + strings.Repeat("a", 40) + `2"`},
		// 40 bytes back is inside an é: the quote starts at its first byte.
		{"t.md", strings.Repeat("é", 60) + "xA\nz", strings.Repeat("é", 60) + "xB\nz", `first at line 1, byte 122 of it: the report has …"` + strings.Repeat("é", 20) + `xA", the rebuild …"` + strings.Repeat("é", 20) + `xB"`},
		// One file ends where the other has a newline.
		{"t.md", "x\n", "x\n\n", `first at line 3: the report has no such line, the rebuild ""`},
		{"t.md", "x", "x\n", `first at line 2: the report has no such line, the rebuild ""`},
		{"t.md", "x\ny\n", "x\ny", `first at line 3: the report has "", the rebuild no such line`},
	} {
		if got := FirstDifference(c.name, []byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("%s %q vs %q: %s, want %s", c.name, c.a, c.b, got, c.want)
		}
	}
}

// An input is matched by the end of its path, so a moved corpus still
// matches; other content, a missing and an extra input are each named.
func TestCheckInputs(t *testing.T) {
	m := &Manifest{Inputs: []rows.InputFile{
		{Path: "runs/a.jsonl", SHA256: "aa", Size: 1},
		{Path: "runs/b.jsonl", SHA256: "bb", Size: 2},
		{Path: "scenarios/s.yaml", SHA256: "ss", Size: 3},
	}}
	have := []rows.InputFile{
		{Path: "/elsewhere/corpus/runs/a.jsonl", SHA256: "aa", Size: 1},
		{Path: "/elsewhere/corpus/runs/b.jsonl", SHA256: "b2", Size: 2},
		{Path: "/elsewhere/corpus/runs/c.jsonl", SHA256: "cc", Size: 4},
	}
	got := CheckInputs(m, have)
	want := []string{
		"runs/b.jsonl: the warehouse holds other content",
		"scenarios/s.yaml: an input of the report, not in the warehouse",
		"/elsewhere/corpus/runs/c.jsonl: in the warehouse, not an input of the report",
	}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].String(), w) {
			t.Errorf("%d: %s, want %s…", i, got[i], w)
		}
	}
	if p := CheckInputs(m, have[:1]); len(p) != 2 {
		t.Errorf("two inputs missing: %v", p)
	}
}

func TestCheckJudgeSteps(t *testing.T) {
	m := &Manifest{Steps: Steps{Judge: []rows.JudgeStep{{Judge: "j", Model: "m", Prompt: "tc/v1", Params: "{}", Calls: 10, Valid: 9}}}}
	if p := CheckJudgeSteps(m, []rows.JudgeStep{{Judge: "j", Model: "m", Prompt: "tc/v1", Params: "{}", Calls: 10, Valid: 9}}); len(p) != 0 {
		t.Errorf("same calls: %v", p)
	}
	p := CheckJudgeSteps(m, []rows.JudgeStep{{Judge: "j", Model: "m", Prompt: "tc/v1", Params: "{}", Calls: 12, Valid: 11}, {Judge: "k", Model: "m", Prompt: "tc/v1", Params: "{}", Calls: 1}})
	if len(p) != 2 || !strings.Contains(p[0].What, "12 calls (11 valid) in the warehouse, 10 (9 valid)") || !strings.Contains(p[1].String(), "judge k") {
		t.Errorf("%v", p)
	}
}

// A folder written by WriteReport lists every file with its hash, passes
// CheckFolder and its manifest the JSON Schema; an edited, a removed and
// an unlisted file are each named; a malformed manifest is refused with
// its line.
func TestManifestAndCheckFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rep")
	r := &Report{Title: "t", Tables: []*Table{{Name: "main", Caption: "c", Keys: []string{"k"}, Columns: []Column{{Header: "x", Digits: 1}}, Rows: []Row{{Keys: []string{"a"}, Cells: []Value{{V: 1.5}}}}}}}
	r.Manifest.Tool, r.Manifest.Version, r.Manifest.Build, r.Manifest.SchemaVersion = "gymlens", "0.1.0", BuildOf(), 14
	r.Manifest.Bootstrap = Bootstrap{Method: "percentile", Level: 0.95, Resamples: 10, Seed: 1, Unit: "scenarios"}
	r.Manifest.Study, r.Manifest.PDFDate = r.Manifest.Bootstrap, "1970-01-01T00:00:00Z"
	r.Manifest.Inputs, r.Manifest.Judges = []rows.InputFile{{Path: "runs/a.jsonl", SHA256: strings.Repeat("a", 64), Size: 3, Format: "runlog", Records: map[string]any{"run": 1}}}, nil
	if err := WriteReport(dir, r); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 6 || m.Files[0].Path != "index.html" || len(m.Files[0].SHA256) != 64 {
		t.Errorf("files: %+v", m.Files)
	}
	if p := CheckFolder(dir, m); len(p) != 0 {
		t.Errorf("untouched: %v", p)
	}
	validateManifest(t, filepath.Join(dir, "manifest.json"))
	os.WriteFile(filepath.Join(dir, "tables", "main.csv"), []byte("x\n2\n"), 0o644)
	os.Remove(filepath.Join(dir, "tables", "main.md"))
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	p := CheckFolder(dir, m)
	var got []string
	for _, x := range p {
		got = append(got, x.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range []string{"tables/main.csv: changed since the report was written", "tables/main.md: listed in the manifest, not in the folder", "notes.txt: in the folder, not listed"} {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q in\n%s", w, all)
		}
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{\n  \"manifest_version\": 2,\n  \"files\": [,]\n}"), 0o644)
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "manifest.json:3: not valid JSON") {
		t.Errorf("malformed: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"manifest_version": "2"}`), 0o644)
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "field manifest_version: expected int") {
		t.Errorf("wrong type: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"tool": "gymlens"}`), 0o644)
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "before manifest version 2") {
		t.Errorf("old manifest: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"manifest_version": 2, "files": [{"path": "../x", "sha256": "aa"}]}`), 0o644)
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "files[0].path") {
		t.Errorf("a path outside: %v", err)
	}
	// A manifest may not make the rebuild write or read elsewhere.
	for _, arg := range []string{"--out=/etc", "--db=/tmp/other.duckdb", "--seed", "seed=3", "--colour=red"} {
		os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"manifest_version": 2, "files": [{"path": "index.html", "sha256": "aa"}],
			"steps": {"report": {"options": {"seed": 1, "out": "", "db": ""}, "args": ["--seed=2", "`+arg+`"]}}}`), 0o644)
		if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "field steps.report.args[1]") {
			t.Errorf("args %s: %v", arg, err)
		}
	}
}

// validateManifest checks a manifest against docs/manifest.schema.json.
func validateManifest(t *testing.T, path string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join("..", "docs", "manifest.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("%s against docs/manifest.schema.json: %v", path, err)
	}
}

// The same report written twice, in different folders, is the same bytes.
func TestReportTwiceIsIdentical(t *testing.T) {
	r := &Report{Title: "t", Tables: []*Table{{Name: "main", Caption: "c", Keys: []string{"k"}, Columns: []Column{{Header: "x", Digits: 1}}, Rows: []Row{{Keys: []string{"a"}, Cells: []Value{{V: 1.5}}}}}}}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "deeper", "b")
	for _, d := range []string{a, b} {
		if err := WriteReport(d, r); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := ReadManifest(a)
	if p := CompareFolders(a, b, m); len(p) != 0 {
		t.Errorf("%v", p)
	}
}
