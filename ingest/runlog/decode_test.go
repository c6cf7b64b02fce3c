package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodEvent = `{"type":"event","run_id":"r1","seq":7,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message","text":"Is that M27 really £150?","task":"mp_price"}`

func TestDecodeGoodRecords(t *testing.T) {
	var d Decoder
	cases := []struct {
		line string
		typ  string
	}{
		{goodEvent, TypeEvent},
		{`{"type":"run","run_id":"r1","scenario":"s","persona":"reviewer","rep":1,"config":{"model":"Claude Opus 5","harness":"CC"}}`, TypeRun},
		{`{"type":"task","run_id":"r1","task":"t1","active":true,"final_seq":19,"rules":{"evidence":1,"outputs":0.5,"constraints":null}}`, TypeTask},
		{`{"type":"judgment","run_id":"r1","task":"t1","metric":"tc","judge":"qwen","scores":{"correctness":0.9,"grounding":0.8,"completeness":0.6,"artifact_quality":0.7}}`, TypeJudgment},
		{`{"type":"judgment","run_id":"r1","metric":"ta","judge":"qwen","scores":{"now":1,"later":0,"cq":0.5}}`, TypeJudgment},
		{`{"type":"rating","rater":"a","question":"trust","value":4,"day":2,"condition":"AMA","item":"x"}`, TypeRating},
	}
	for _, c := range cases {
		rec, err := d.DecodeLine([]byte(c.line))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if rec.RecordType() != c.typ {
			t.Errorf("type %s, want %s", rec.RecordType(), c.typ)
		}
	}
}

func TestDecodeKeepsUnknownFields(t *testing.T) {
	var d Decoder
	rec, err := d.DecodeLine([]byte(`{"type":"run","run_id":"r1","scenario":"s","persona":"p","rep":2,"config":{"model":"m","harness":"CD","temperature":0.2},"gym_version":"1.4","notes":{"a":[1,2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := rec.(*Run)
	if string(r.Extra) != `{"gym_version":"1.4","notes":{"a":[1,2]}}` {
		t.Errorf("extra = %s", r.Extra)
	}
	if string(r.ConfigExtra) != `{"temperature":0.2}` {
		t.Errorf("config extra = %s", r.ConfigExtra)
	}
	if r.Effort != "none" || r.Status != "ok" {
		t.Errorf("defaults: effort %q status %q", r.Effort, r.Status)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, line, field, want string
	}{
		{"wrong type", `{"type":"event","run_id":"r1","seq":"7","t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`, "seq", `expected an integer, found string "7"`},
		{"fractional seq", `{"type":"event","run_id":"r1","seq":7.5,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`, "seq", "expected an integer, found number 7.5"},
		{"unknown type", `{"type":"evnt","run_id":"r1"}`, "type", `expected one of scenario, run, event, task, judgment, rating, found "evnt"`},
		{"missing field", `{"type":"event","run_id":"r1","seq":1,"actor":"user","kind":"message"}`, "t", "required field is missing"},
		{"bad enum", `{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"robot","kind":"message"}`, "actor", `expected one of agent, user, env, system, found string "robot"`},
		{"bad time", `{"type":"event","run_id":"r1","seq":1,"t":"yesterday","actor":"user","kind":"message"}`, "t", "expected an RFC 3339 time"},
		{"tc out of range", `{"type":"judgment","run_id":"r1","task":"t","metric":"tc","judge":"j","scores":{"correctness":1.7,"grounding":0.8,"completeness":0.6,"artifact_quality":0.7}}`, "scores.correctness", "expected a score in [0,1], found 1.7"},
		{"trj out of range", `{"type":"judgment","run_id":"r1","task":"t","metric":"trj","judge":"j","scores":{"understandability":0,"competence":3,"reliability":3,"attachment":3,"faith":3}}`, "scores.understandability", "expected a score in [1,5], found 0"},
		{"ta half", `{"type":"judgment","run_id":"r1","metric":"ta","judge":"j","scores":{"now":0.5,"later":0}}`, "scores.now", "expected 0 or 1, found 0.5"},
		{"cq", `{"type":"judgment","run_id":"r1","metric":"ta","judge":"j","scores":{"now":1,"later":0,"cq":0.7}}`, "scores.cq", "expected 0, 0.5 or 1, found 0.7"},
		{"unknown score", `{"type":"judgment","run_id":"r1","metric":"ta","judge":"j","scores":{"now":1,"later":0,"nwo":1}}`, "scores.nwo", "unknown field"},
		{"tc needs task", `{"type":"judgment","run_id":"r1","metric":"tc","judge":"j","scores":{"correctness":1,"grounding":1,"completeness":1,"artifact_quality":1}}`, "task", "required for metric tc"},
		{"rep zero", `{"type":"run","run_id":"r1","scenario":"s","persona":"p","rep":0,"config":{"model":"m","harness":"CD"}}`, "rep", "expected an integer ≥ 1, found 0"},
		{"missing harness", `{"type":"run","run_id":"r1","scenario":"s","persona":"p","rep":1,"config":{"model":"m"}}`, "config.harness", "required field is missing"},
		{"rules range", `{"type":"task","run_id":"r1","task":"t","active":true,"rules":{"evidence":2}}`, "rules.evidence", "expected a fraction in [0,1] or null, found 2"},
		{"negative tokens", `{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"agent","kind":"message","usage":{"input_tokens":-3}}`, "usage.input_tokens", "expected a count ≥ 0, found -3"},
		{"decision without verdict", `{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"decision"}`, "decision", "needs a verdict"},
		{"not an object", `[1,2]`, "", "expected a JSON object"},
	}
	var d Decoder
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := d.DecodeLine([]byte(c.line))
			if err == nil {
				t.Fatal("no error")
			}
			e := Locate(err, "f.jsonl", 3, []byte(c.line))
			if e.Field != c.field {
				t.Errorf("field %q, want %q (%v)", e.Field, c.field, e)
			}
			if !strings.Contains(e.Error(), c.want) || !strings.HasPrefix(e.Error(), "f.jsonl:3") {
				t.Errorf("error %q does not say %q at f.jsonl:3", e.Error(), c.want)
			}
			if c.field != "" && strings.Contains(c.line, `"`+c.field[strings.LastIndex(c.field, ".")+1:]+`"`) && e.Column == 0 {
				t.Errorf("no column for field %q", c.field)
			}
		})
	}
}

func TestColumnPointsAtField(t *testing.T) {
	line := `{"type":"event","run_id":"r1","seq":"x","t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`
	var d Decoder
	_, err := d.DecodeLine([]byte(line))
	e := Locate(err, "f", 1, []byte(line))
	if got := line[e.Column-1 : e.Column+4]; got != `"seq"` {
		t.Errorf("column %d points at %q", e.Column, got)
	}
}

func TestInvalidUTF8(t *testing.T) {
	line := []byte(`{"type":"event","run_id":"r` + "\xff" + `1"}`)
	var d Decoder
	_, err := d.DecodeLine(line)
	e := Locate(err, "f", 2, line)
	if e.Column != 28 || !strings.Contains(e.Error(), "invalid UTF-8") {
		t.Errorf("got %v (column %d)", e, e.Column)
	}
}

const scenarioYAML = `type: scenario
scenario: s1
personas:
  reviewer: {group: S}
  operator: {group: E}
tasks:
  - id: a
    expected_depth: {reviewer: suggest, operator: execute}
  - id: b
    weight: -1
    expected_depth: {reviewer: suggest, operator: execute}
`

func TestScenarioYAMLErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/s.yaml"
	writeFile(t, path, scenarioYAML)
	_, _, err := ReadScenarioFile(path)
	if err == nil {
		t.Fatal("no error for a negative weight")
	}
	e := err.(*Error)
	if e.Line != 10 || e.Field != "tasks[1].weight" {
		t.Errorf("got line %d field %q: %v", e.Line, e.Field, e)
	}
	good := strings.Replace(scenarioYAML, "weight: -1", "weight: 2", 1)
	writeFile(t, path, good)
	s, _, err := ReadScenarioFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks) != 2 || s.Tasks[1].Weight != 2 || s.Tasks[0].Weight != 1 || len(s.Personas) != 2 {
		t.Errorf("parsed %+v", s)
	}
}

func TestScenarioChecks(t *testing.T) {
	cases := map[string]string{
		"persona without depth": strings.Replace(scenarioYAML, "{reviewer: suggest, operator: execute}\n  - id: b", "{reviewer: suggest}\n  - id: b", 1),
		"unknown persona":       strings.Replace(scenarioYAML, "{reviewer: suggest, operator: execute}\n  - id: b", "{reviewer: suggest, operator: execute, boss: noop}\n  - id: b", 1),
		"duplicate task":        strings.Replace(scenarioYAML, "id: b", "id: a", 1),
		"bad regex":             scenarioYAML + "    rubric: {evidence: [{tool: search, args: {q: \"/(/\"}}]}\n",
		"ta names no task":      scenarioYAML + "ta: {window: {start: 2026-03-02T09:00:00Z, end: 2026-03-02T12:00:00Z}, urgent: a, deferrable: zz}\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			path := t.TempDir() + "/s.yaml"
			writeFile(t, path, strings.Replace(text, "weight: -1", "weight: 1", 1))
			if _, _, err := ReadScenarioFile(path); err == nil {
				t.Error("no error")
			} else if e := err.(*Error); e.Line == 0 {
				t.Errorf("no line: %v", e)
			}
		})
	}
}

func FuzzDecodeLine(f *testing.F) {
	f.Add([]byte(goodEvent))
	f.Add([]byte(`{"type":"scenario","scenario":"s","personas":{"p":{"group":"S"}},"tasks":[{"id":"a","expected_depth":{"p":"noop"}}]}`))
	f.Add([]byte(`{"type":"judgment","run_id":"r1","metric":"ta","judge":"qwen","scores":{"now":1,"later":0,"cq":0.5}}`))
	f.Add([]byte(`{"type":"run","run_id":"r","scenario":"s","persona":"p","rep":1,"config":{"model":"m","harness":"h"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var d Decoder
		rec, err := d.DecodeLine(line)
		if err != nil {
			e := Locate(err, "fuzz", 1, line)
			if e.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		found := false
		for _, typ := range RecordTypes {
			found = found || rec.RecordType() == typ
		}
		if !found {
			t.Fatalf("record of unknown type %q", rec.RecordType())
		}
	})
}

// RFC 3339 allows a lowercase t and z, and leap seconds (at 23:59:60 UTC).
func TestParseTimeAsRFC3339Allows(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-02t18:00:00z":        "2026-03-02T18:00:00Z",
		"2026-03-02T18:00:00.5+01:00": "2026-03-02T17:00:00.5Z",
		"2016-12-31T23:59:60Z":        "2017-01-01T00:00:00Z",
		"2016-12-31T23:59:60.25Z":     "2017-01-01T00:00:00Z",
		"2017-01-01T00:59:60+01:00":   "2017-01-01T00:00:00Z",
	} {
		got, err := ParseTime(in)
		if err != nil || got.UTC().Format(time.RFC3339Nano) != want {
			t.Errorf("%s: %v %v, want %s", in, got.UTC(), err, want)
		}
	}
	for _, bad := range []string{"2026-03-02 18:00:00Z", "2026-03-02T12:00:60Z", "2026-03-02T18:00:00", "2026-13-02T18:00:00Z"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// The apostrophe an annotation sheet puts before a formula-like cell is
// taken off again when the filled sheet is read.
func TestRatingsCSVTakesOffTheFormulaGuard(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.csv")
	os.WriteFile(p, []byte("rater,question,value,run_id,task\nann,trust,4,'=HYPERLINK(1),'@t\nann,trust,3,'plain,x\n"), 0o644)
	var got []*Rating
	err := ReadRatingsCSV(p, 1, func(line int, g *Rating, raw, row []byte, rowErr *Error) error {
		if rowErr != nil {
			return rowErr
		}
		got = append(got, g)
		return nil
	})
	if err != nil || len(got) != 2 || got[0].RunID != "=HYPERLINK(1)" || got[0].Task != "@t" || got[1].RunID != "'plain" {
		t.Errorf("%v %+v", err, got)
	}
}

// A scenario spec over its size limit is refused before it is parsed.
func TestScenarioFileSizeLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	os.WriteFile(p, []byte("type: scenario\nscenario: s\nnote: \""+strings.Repeat("x", MaxScenarioFile)+"\"\n"), 0o644)
	if _, _, err := ReadScenarioFile(p); err == nil || !strings.Contains(err.Error(), "a scenario spec may hold at most 16 MB") {
		t.Errorf("%v", err)
	}
}
