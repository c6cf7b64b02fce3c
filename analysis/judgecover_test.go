package analysis

import (
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// A judge that judged some of the items a selection's numbers average is
// named in a note with its share, per metric family, and the
// configurations it touched; a judge that judged all of them, or none,
// is not.
func TestJudgeCoverageNotes(t *testing.T) {
	var runs []rows.RunRow
	for _, c := range []string{"c1", "c2"} {
		for _, s := range []string{"s1", "s2"} {
			r := rows.RunRow{RunID: c + s, ConfigID: c, Scenario: s, Persona: "p", HasTAWindow: true,
				TA: []rows.TAJudgment{{Judge: "a"}, {Judge: "b"}}}
			for k := range 5 {
				task := rows.TaskRow{Task: string(rune('t' + k)), TC: []rows.TCJudgment{{Judge: "a"}, {Judge: "b"}}, TRJ: []rows.TRJJudgment{{Judge: "a"}}}
				if c == "c1" && k < 3 && s == "s1" {
					task.TC = append(task.TC, rows.TCJudgment{Judge: "trial"}, rows.TCJudgment{Judge: "trial"}) // asked twice: one item
				}
				r.Tasks = append(r.Tasks, task)
			}
			runs = append(runs, r)
		}
	}
	cov := NewJudgeCoverage()
	for i := range runs {
		cov.Add(&runs[i])
	}
	notes := cov.Notes([]int{0, 1, 2, 3})
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "judge trial judged 3 of the 20 TC items judged (15%), in 1 of 2 configurations (c1: 3 of 10)") {
		t.Errorf("every run: %q", notes)
	}
	if notes := cov.Notes([]int{2, 3}); len(notes) != 0 {
		t.Errorf("c2's runs, which trial did not judge: %q", notes)
	}
	if notes := cov.Notes([]int{0}); len(notes) != 1 || !strings.Contains(notes[0], "judged 3 of the 5 TC items judged (60%)") {
		t.Errorf("c1/s1: %q", notes)
	}
	// TA judged by a alone in one run: b judged 3 of 4.
	runs[3].TA = runs[3].TA[:1]
	cov = NewJudgeCoverage()
	for i := range runs {
		cov.Add(&runs[i])
	}
	notes = cov.Notes([]int{0, 1, 2, 3})
	if len(notes) != 2 || !strings.HasPrefix(notes[1], "judge b judged 3 of the 4 TA items judged (75%), in 2 of 2 configurations") {
		t.Errorf("TA: %q", notes)
	}
}
