package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// sizedRun is a run of the sample's size: 14 tasks, 100 events, a third
// of them visible to the user, each task with a rubric.
func sizedRun() *rows.JudgeRun {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	start, end := t0.Add(24*time.Hour), t0.Add(27*time.Hour)
	r := &rows.JudgeRun{RunID: "m_cc_none/s/operator/1", Scenario: "s", Domain: "d", ScenarioTitle: "A Week",
		Persona: "operator", PersonaGroup: "E", PersonaLabel: "expects routine work done",
		TAStart: &start, TAEnd: &end, TAUrgent: "t03", TADeferable: "t07"}
	for k := range 14 {
		fs := int64(7*k + 7)
		r.Tasks = append(r.Tasks, rows.JudgeTask{Task: fmt.Sprintf("t%02d", k), Chosen: "suggest", FinalSeq: &fs,
			Rubric: fmt.Sprintf(`{"evidence":[{"tool":"search_%d","args":{"q":"/report/"}}],"constraints":[{"not_contains":"guaranteed"}]}`, k)})
	}
	for i := range 100 {
		r.Events = append(r.Events, rows.JudgeEvent{Seq: int64(i + 1), T: t0.Add(time.Duration(i) * 40 * time.Minute),
			Actor: []string{"user", "agent", "env"}[i%3], Kind: []string{"message", "tool_call", "tool_result"}[i%3],
			Task: fmt.Sprintf("t%02d", min(i/7, 13)), Text: "Draft the quarterly report & share it <by Friday>.",
			Tool: "search_report", Args: `{"q":"report","limit":5}`, Result: "3 documents found", Visible: i%3 == 1})
	}
	return r
}

// The items of a run for the three built-in metrics, as judge and
// judge --dry-run build them for every run.
func BenchmarkItems(b *testing.B) {
	run := sizedRun()
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range []string{TC, TA, TRJ} {
			Items(run, m)
		}
	}
}
