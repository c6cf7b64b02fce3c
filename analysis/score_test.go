package analysis

import (
	"database/sql"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

func scoringSpec() map[string]*rows.ScenarioSpec {
	return map[string]*rows.ScenarioSpec{"s": {
		Tools: map[string]string{"search": "read", "draft": "prepare", "checkout": "execute"},
		Tasks: map[string]rows.TaskSpecRow{
			"buy": {ExpectedDepth: map[string]string{"reviewer": "suggest", "operator": "execute"}, AfterApproval: "execute", AfterDenial: "noop",
				Rubric: []byte(`{"evidence":[{"tool":"search","args":{"q":"/(?i)monitor/"}},{"tool":"search","args":{"max":3}}],
					"outputs":[{"tool":"draft","args":{"item":"M27"}}],
					"constraints":[{"contains":"£"},{"not_contains":"guaranteed"},{"regex":"\\d+ ?Hz"}]}`)},
			"plain": {ExpectedDepth: map[string]string{"reviewer": "prepare"}, AfterApproval: "execute"},
		}}}
}

func TestDeriveByHand(t *testing.T) {
	sc, err := NewScorer(scoringSpec())
	if err != nil {
		t.Fatal(err)
	}
	task := &rows.ScoreTask{RunID: "r", Scenario: "s", Persona: "reviewer", Task: "buy",
		Events: []rows.ScoreEvent{
			{Seq: 1, Actor: "user", Kind: "message", Text: "find me a monitor"},
			{Seq: 2, Actor: "agent", Kind: "tool_call", Tool: "search", Args: `{"q":"Monitor 27in","max":3}`},
			{Seq: 3, Actor: "agent", Kind: "tool_call", Tool: "draft", Args: `{"item":"M28"}`},
			{Seq: 4, Actor: "agent", Kind: "approval_request", Text: "The M28 is £150 at 144Hz. Buy it?"},
			{Seq: 5, Actor: "user", Kind: "decision", Decision: "decline"},
		}}
	d, err := sc.Derive(task)
	if err != nil {
		t.Fatal(err)
	}
	// search is a read tool, draft prepares, the approval request suggests.
	// Declined: after_denial (noop). Evidence: both checks met (regex
	// ignoring case; the number 3). Outputs: M28 is not M27. Constraints: £
	// present, "guaranteed" absent, "144Hz" matches.
	if d.Chosen != "suggest" || d.Expected != "noop" || *d.Rules[0] != 1 || *d.Rules[1] != 0 || *d.Rules[2] != 1 {
		t.Errorf("derived %+v (rules %v %v %v)", d, *d.Rules[0], *d.Rules[1], *d.Rules[2])
	}
	// Approved later: the last decision counts; the agent then executes.
	task.Events = append(task.Events,
		rows.ScoreEvent{Seq: 6, Actor: "user", Kind: "decision", Decision: "approve"},
		rows.ScoreEvent{Seq: 7, Actor: "agent", Kind: "tool_call", Tool: "checkout", Args: `{"note":"guaranteed delivery"}`})
	d, _ = sc.Derive(task)
	if d.Chosen != "execute" || d.Expected != "execute" || *d.Rules[2] != 2.0/3 {
		t.Errorf("after approval %+v, constraints %v", d, *d.Rules[2])
	}
	// A deferral changes nothing; an explicit depth counts as given.
	task.Events = []rows.ScoreEvent{
		{Seq: 1, Actor: "user", Kind: "decision", Decision: "defer"},
		{Seq: 2, Actor: "agent", Kind: "message", Text: "ok", Depth: "prepare"},
	}
	d, _ = sc.Derive(task)
	if d.Chosen != "prepare" || d.Expected != "suggest" || *d.Rules[0] != 0 {
		t.Errorf("deferred %+v", d)
	}
	// No rubric: no rule components; no agent records: noop.
	d, _ = sc.Derive(&rows.ScoreTask{RunID: "r", Scenario: "s", Persona: "reviewer", Task: "plain"})
	if d.Chosen != "noop" || d.Expected != "prepare" || d.Rules != [3]*float64{} {
		t.Errorf("plain %+v", d)
	}
	if _, err := sc.Derive(&rows.ScoreTask{RunID: "r", Scenario: "nope", Task: "x"}); err == nil {
		t.Error("an unknown scenario was scored")
	}
}

func TestDisagreementsAndEffective(t *testing.T) {
	one, half := 1.0, 0.5
	task := &rows.ScoreTask{RunID: "r", Task: "buy", LoggedExpected: "suggest", LoggedChosen: "execute", RulesLogged: true,
		LoggedRules: [3]sql.NullFloat64{{Float64: 1, Valid: true}, {Float64: 1, Valid: true}, {}}}
	d := Derived{Expected: "suggest", Chosen: "suggest", Rules: [3]*float64{&one, &half, &half}}
	got := Disagreements(task, d)
	if len(got) != 3 || got[0].Field != "chosen_depth" || got[1].Field != "rules.outputs" || got[2].Field != "rules.constraints" {
		t.Fatalf("%+v", got)
	}
	e := Effective(task, d, false)
	if e.EffectiveChosen != "execute" || *e.EffectiveRules[1] != 1 || e.EffectiveRules[2] != nil || e.Prefer != "logged" {
		t.Errorf("logged wins: %+v", e)
	}
	e = Effective(task, d, true)
	if e.EffectiveChosen != "suggest" || *e.EffectiveRules[1] != 0.5 || *e.EffectiveRules[2] != 0.5 {
		t.Errorf("derived wins: %+v", e)
	}
	task.LoggedChosen, task.RulesLogged = "", false
	e = Effective(task, d, false)
	if e.EffectiveChosen != "suggest" || *e.EffectiveRules[1] != 0.5 {
		t.Errorf("not logged: the derived value is used: %+v", e)
	}
}
