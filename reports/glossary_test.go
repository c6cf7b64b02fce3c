package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// The glossary explains every code the runs, specs and ratings use: the
// harnesses with their models, the persona groups with the specs' own
// labels, the efforts in their order, the study conditions letter by
// letter; and it escapes what it writes as HTML.
func TestGlossary(t *testing.T) {
	ps := []rows.Persona{{Scenario: "s1", Name: "reviewer", Group: "S", Label: "Reviewer: wants options"},
		{Scenario: "s2", Name: "reviewer", Group: "S", Label: "Reviewer: wants options"},
		{Scenario: "s1", Name: "operator", Group: "E", Label: "<b>Operator</b>"}}
	runs := []rows.RunRow{{Model: "M1", Harness: "CC", Effort: "xhigh"}, {Model: "M2", Harness: "CC", Effort: "low"}, {Model: "M1", Harness: "OC", Effort: "none"}}
	ratings := []rows.RatingRow{{Condition: "AMA"}, {Condition: "AMA"}, {Condition: ""}}
	g := Glossary(ps, runs, ratings)
	byCode := map[string]GlossaryEntry{}
	var efforts []string
	for _, e := range g {
		byCode[e.Code] = e
		if e.Kind == "effort" {
			efforts = append(efforts, e.Code)
		}
	}
	for code, want := range map[string]string{
		"CC":   "models run on it: M1, M2.",
		"OC":   "models run on it: M1.",
		"S":    "persona group of reviewer (the scenario specs: “Reviewer: wants options”).",
		"E":    "persona group of operator",
		"AMA":  "appropriate, misaligned, appropriate.",
		"TR-D": "the depth the persona expects",
		"CQ":   "continuation quality",
	} {
		if !strings.Contains(byCode[code].Meaning, want) {
			t.Errorf("%s: %q lacks %q", code, byCode[code].Meaning, want)
		}
	}
	if strings.Join(efforts, ",") != "none,low,xhigh" {
		t.Errorf("efforts in the order %v", efforts)
	}
	var b bytes.Buffer
	WriteGlossary(&b, "html", g)
	if strings.Contains(b.String(), "<b>") || !strings.Contains(b.String(), "&lt;b&gt;Operator") {
		t.Error("the glossary's HTML is not escaped")
	}
}

// The glossary names TC's parts as the judges score them: every TC
// component of the metrics (the judge's correctness, grounding,
// completeness and artifact_quality among them) has its own entry, and
// each judged one says how it enters semantics or completion.
func TestGlossaryNamesTheJudgesTCParts(t *testing.T) {
	parts := map[string]string{}
	for _, e := range Glossary(nil, nil, nil) {
		if e.Kind == "TC part" {
			parts[e.Code] = e.Meaning
		}
	}
	for _, c := range analysis.Components {
		name, ok := strings.CutPrefix(c, "TC.")
		if !ok {
			continue
		}
		if _, ok := parts[name]; !ok {
			t.Errorf("no glossary entry for TC's part %s (have %v)", name, parts)
		}
	}
	for _, p := range []string{"correctness", "grounding"} {
		if !strings.Contains(parts[p], "semantics") {
			t.Errorf("%s: %q does not say it enters semantics", p, parts[p])
		}
	}
	for _, p := range []string{"completeness", "artifact_quality"} {
		if !strings.Contains(parts[p], "completion") {
			t.Errorf("%s: %q does not say it enters completion", p, parts[p])
		}
	}
}
