package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodRubric = `name: care
version: 2
item: task
records: {kinds: [message], actors: [agent]}
instructions: Judge the care taken.
answer:
  type: object
  additionalProperties: false
  required: [care, ok, reasons]
  properties:
    care: {type: integer, minimum: 1, maximum: 7}
    ok: {type: number, enum: [0, 1]}
    reasons: {type: string}
scores:
  care: {min: 1, max: 7}
  ok: {min: 0, max: 1}
`

func TestRubricReads(t *testing.T) {
	rb, err := ParseRubric("care.yaml", []byte(goodRubric))
	if err != nil {
		t.Fatal(err)
	}
	if rb.Metric != "custom.care" || rb.Version != "care/v2" || rb.Item != ItemTask || rb.RunLevel() || len(rb.Scores) != 2 ||
		rb.Scores[0].Name != "care" || rb.Scores[1].Levels[1] != 1 || rb.schemaName() != "custom_care_answer" || rb.evidence {
		t.Fatalf("%+v", rb)
	}
	// Answers are checked against the schema and the ranges.
	for _, c := range []struct{ answer, err string }{
		{`{"care": 5, "ok": 1, "reasons": "fine"}`, ""},
		{"```json\n{\"care\": 1, \"ok\": 0, \"reasons\": \"\"}\n```", ""},
		{`{"care": 5.5, "ok": 1, "reasons": "x"}`, "schema"},
		{`{"care": 9, "ok": 1, "reasons": "x"}`, "schema"},
		{`{"care": 5, "ok": 0.5, "reasons": "x"}`, "schema"},
		{`{"care": 5, "reasons": "x"}`, "schema"},
		{`{"care": 5, "ok": 1, "reasons": "x", "extra": 1}`, "schema"},
		{`not json`, "not JSON"},
	} {
		a, err := rb.ParseAnswer(c.answer)
		if c.err == "" {
			if err != nil || a.Scores["care"] < 1 || a.Reasons == "x" {
				t.Errorf("%s: %v %+v", c.answer, err, a)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error with %q", c.answer, err, c.err)
		}
	}
	// The digest follows everything that shapes a request.
	rb2, _ := ParseRubric("care.yaml", []byte(strings.Replace(goodRubric, "maximum: 7}", "maximum: 7, description: x}", 1)))
	if rb2.digest == rb.digest {
		t.Error("a schema change kept the digest")
	}
	rb3, _ := ParseRubric("other.yaml", []byte(goodRubric+"\n# a comment\n"))
	if rb3.digest != rb.digest {
		t.Error("a comment changed the digest")
	}
}

// Bad rubrics fail before any request, naming the file, the line and the
// field.
func TestBadRubrics(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown item kind", "item: task", "item: session", "care.yaml:3: field item: expected one of tc, trj, ta, task, run"},
		{"score missing from the schema", "  ok: {min: 0, max: 1}", "  ok: {min: 0, max: 1}\n  depth: {min: 0, max: 1}", `field scores.depth: the score "depth" is not a field of the answer's schema`},
		{"invalid schema", "type: integer, minimum: 1", "type: integr, minimum: 1", "care.yaml:11: field answer.properties.care.type: not a valid JSON Schema: value must be one of"},
		{"score not a number", "ok: {type: number, enum: [0, 1]}", "ok: {type: string}", "field scores.ok: the schema's \"ok\" has type string"},
		{"empty range", "care: {min: 1, max: 7}", "care: {min: 7, max: 1}", "care.yaml:15: field scores.care: expected {min: LOW, max: HIGH}"},
		{"enum outside the range", "enum: [0, 1]", "enum: [0, 2]", "field scores.ok: the schema's enum holds 2"},
		{"not strict", "additionalProperties: false", "additionalProperties: true", "field answer.additionalProperties: expected false"},
		{"a field not required", "required: [care, ok, reasons]", "required: [care, ok]", `field answer.required: "reasons" is not required`},
		{"records for a built-in item", "item: task", "item: tc", "field records: only task and run items select records"},
		{"unknown record kind", "kinds: [message]", "kinds: [mesage]", "field records.kinds: expected some of message"},
		{"bad name", "name: care", "name: Care Score", "care.yaml:1: field name"},
		{"no version", "version: 2\n", "", "field version"},
		{"no instructions", "instructions: Judge the care taken.\n", "", "field instructions: missing"},
		{"no scores", "scores:\n  care: {min: 1, max: 7}\n  ok: {min: 0, max: 1}\n", "", "field scores: missing"},
		{"unknown field", "version: 2", "version: 2\nitems: task", "field items not found"},
		{"not YAML", "name: care", "name: [care", "care.yaml: not YAML or JSON"},
	} {
		text := strings.Replace(goodRubric, c.from, c.to, 1)
		if text == goodRubric {
			t.Fatalf("%s: the edit changed nothing", c.name)
		}
		_, err := ParseRubric("care.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %q", c.name, err, c.want)
		}
	}
}

func TestLoadRubricsFolders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(goodRubric), 0o644)
	os.WriteFile(filepath.Join(dir, "a.yml"), []byte(strings.Replace(goodRubric, "name: care", "name: attention", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a rubric"), 0o644)
	rubs, err := LoadRubrics([]string{dir})
	if err != nil || len(rubs) != 2 || rubs[0].Metric != "custom.attention" || rubs[1].Metric != "custom.care" {
		t.Fatalf("%v %v", rubs, err)
	}
	if _, err := LoadRubrics([]string{dir, filepath.Join(dir, "b.yaml")}); err == nil || !strings.Contains(err.Error(), `rubric "care" is also defined by`) {
		t.Errorf("a name twice: %v", err)
	}
	if _, err := LoadRubrics([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "holds no rubric") {
		t.Errorf("an empty folder: %v", err)
	}
	if _, err := LoadRubrics([]string{filepath.Join(dir, "missing.yaml")}); err == nil {
		t.Error("a missing file passed")
	}
	// The shipped examples read.
	ex, err := LoadRubrics([]string{filepath.Join("prompts", "examples")})
	if err != nil || len(ex) != 2 {
		t.Fatalf("examples: %v %v", ex, err)
	}
}
