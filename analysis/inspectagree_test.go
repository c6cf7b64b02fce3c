package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Which raters are paired, and how a rating finds its sample: by task,
// sample and epoch, then config or eval when the task has several
// evaluations.
func TestInspectAgreementPairsAndRatings(t *testing.T) {
	d := &rows.InspectRaters{
		Evals: []rows.InspectEval{{EvalID: "e1", Task: "t", ConfigID: "A"}, {EvalID: "e2", Task: "t", ConfigID: "A"}, {EvalID: "e3", Task: "u", ConfigID: "B"}},
	}
	vals := []float64{0, 1, 1, 0, 1}
	for _, ev := range []string{"e1", "e2", "e3"} {
		for i, v := range vals {
			s := string(rune('a' + i))
			d.Samples = append(d.Samples, rows.InspectSampleRef{EvalID: ev, SampleID: s, Epoch: 1})
			d.Scores = append(d.Scores, rows.InspectScore{EvalID: ev, SampleID: s, Epoch: 1, Metric: "inspect.m", Value: v, Valid: true},
				rows.InspectScore{EvalID: ev, SampleID: s, Epoch: 1, Metric: "inspect.n", Value: 1 - v, Valid: true})
			for _, j := range []string{"x", "y"} {
				d.Judgments = append(d.Judgments, rows.InspectJudgment{EvalID: ev, SampleID: s, Epoch: 1, Judge: j, Metric: "custom.r",
					Scores: map[string]float64{"ok": v, "q": float64(i + 1)}})
			}
		}
	}
	d.Ratings = []rows.InspectRating{
		{Task: "t", SampleID: "a", Epoch: 1, EvalID: "e2", Rater: "h", Question: "ok", Value: 1, File: "r.csv", Line: 2},
		{Task: "u", SampleID: "b", Epoch: 1, Rater: "h", Question: "ok", Value: 1, File: "r.csv", Line: 3},
	}
	d.Judgments = append(d.Judgments, rows.InspectJudgment{EvalID: "e9", SampleID: "a", Epoch: 1, Judge: "x", Metric: "custom.r", Scores: map[string]float64{"ok": 1}})
	opt := BootstrapOptions{Resamples: 100, Seed: 1}
	pairs, notes, err := InspectAgreement(d, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "1 judgments are of samples the warehouse no longer holds") {
		t.Errorf("notes %q", notes)
	}
	var got []string
	for _, p := range pairs {
		got = append(got, p.Task+": "+p.A+" ~ "+p.B)
	}
	for _, want := range []string{"t: inspect.m ~ custom.r.ok (x)", "t: inspect.n ~ custom.r.q (y)", "t: custom.r.ok (x) ~ custom.r.ok (y)",
		"t: custom.r.q (y) ~ human.ok", "u: inspect.m ~ human.ok"} {
		if !slices.Contains(got, want) {
			t.Errorf("no pair %s", want)
		}
	}
	for _, not := range []string{"t: inspect.m ~ inspect.n", "t: custom.r.ok (x) ~ custom.r.q (x)", "t: custom.r.ok (x) ~ custom.r.q (y)"} {
		if slices.Contains(got, not) {
			t.Errorf("pair %s", not)
		}
	}
	for _, p := range pairs {
		if p.Task == "t" && p.B == "human.ok" && p.Stats[0].N != 1 {
			t.Errorf("%s ~ %s: n %d, want the one rated item of e2", p.A, p.B, p.Stats[0].N)
		}
		if p.Task == "t" && p.A == "inspect.m" && p.B == "custom.r.ok (x)" && (!p.Binary || p.Stats[0].N != 10) {
			t.Errorf("%+v", p)
		}
	}
	// Without its eval, the first rating matches both evaluations of A.
	d.Ratings[0].EvalID = ""
	if _, _, err := InspectAgreement(d, opt); err == nil || !strings.Contains(err.Error(), `r.csv:2: field "config": sample "a" of task "t" at epoch 1 was run 2 times: A (eval e1); A (eval e2)`) {
		t.Errorf("ambiguous: %v", err)
	}
	d.Ratings[0].EvalID, d.Ratings[0].Epoch = "e2", 2
	if _, _, err := InspectAgreement(d, opt); err == nil || !strings.Contains(err.Error(), `r.csv:2: field "eval": no sample "a" of task "t" at epoch 2 in evaluation e2 is in the warehouse`) {
		t.Errorf("missing: %v", err)
	}
}
