package ingest

import (
	"testing"
)

// TestNewCallsReplaceNothing: a call replaces the stored one of its key
// (a call that is not New, or a batch holding one), while a batch of New
// calls is taken at its word and looks for none; valid answers replace
// their judgment either way.
func TestNewCallsReplaceNothing(t *testing.T) {
	w := openTemp(t)
	call := func(answer string, isNew bool) JudgeCall {
		return JudgeCall{Model: "m", Params: "p", Prompt: "ta/v1", InputHash: "h1", Judge: "j", RunID: "r1", Metric: "ta",
			Valid: true, Answer: answer, Scores: map[string]float64{"ta_now": 1}, New: isNew}
	}
	other := JudgeCall{Model: "m", Params: "p", Prompt: "ta/v1", InputHash: "h2", Judge: "j", RunID: "r2", Metric: "ta", Answer: "x"}
	state := func() (calls, judgments int, answers string) {
		t.Helper()
		if err := w.DB().QueryRow(`SELECT count(*), string_agg(answer, ',' ORDER BY answer) FROM judge_calls WHERE run_id = 'r1'`).Scan(&calls, &answers); err != nil {
			t.Fatal(err)
		}
		if err := w.DB().QueryRow(`SELECT count(*) FROM judgments WHERE run_id = 'r1'`).Scan(&judgments); err != nil {
			t.Fatal(err)
		}
		return
	}
	for i, step := range []struct {
		batch     []JudgeCall
		calls     int
		judgments int
		answers   string
	}{
		{[]JudgeCall{call("a", true)}, 1, 1, "a"},
		{[]JudgeCall{call("b", false)}, 1, 1, "b"},       // replaces a
		{[]JudgeCall{call("c", true), other}, 1, 1, "c"}, // other is not New: the batch replaces
		{[]JudgeCall{call("d", true)}, 2, 1, "c,d"},      // taken at its word
		{[]JudgeCall{{Model: "m", Params: "p", Prompt: "ta/v1", InputHash: "h1", Judge: "j", RunID: "r1", Metric: "ta", Answer: "e"}}, 1, 1, "e"},
	} {
		if err := w.SaveJudgeCalls(ctx, step.batch); err != nil {
			t.Fatal(err)
		}
		if c, j, a := state(); c != step.calls || j != step.judgments || a != step.answers {
			t.Errorf("step %d: %d calls (%s) and %d judgments of r1, want %d (%s) and %d", i+1, c, a, j, step.calls, step.answers, step.judgments)
		}
	}
}
