package ingest_test

import (
	"context"
	"math"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

// A judge asked twice (seeds 1 and 2) by a server whose answers flip on a
// known set of items: every answer is kept, the judgments are the means,
// and the self-agreement reports exactly the scripted flip rate, with the
// α nominal α has for it. A rerun asks nothing; a third repeat asks one
// request an item.
func TestRepeatsAndSelfAgreement(t *testing.T) {
	ctx := context.Background()
	w := warehouse(t)
	f := server(t)
	f.FlipEvery = 4
	opt := judge.RunOptions{Metrics: []string{judge.TC, judge.TA}, Judges: []judge.Endpoint{endpoint(f, "j")}, Repeats: 2,
		Client: judge.ClientOptions{Concurrency: 4, Seed: 1}}
	reps, err := judge.Run(ctx, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 4 || reps[0].Seed == nil || *reps[0].Seed != 1 || *reps[1].Seed != 2 {
		t.Fatalf("reports: %+v", reps)
	}
	// What the server was asked: each input under seeds 1 and 2.
	inputs := map[string]map[float64]bool{}
	flipTA, allTA := 0, 0
	for _, body := range f.Requests {
		user := lastUserOf(body)
		if inputs[user] == nil {
			inputs[user] = map[float64]bool{}
			if rf, _ := body["response_format"].(map[string]any); rf != nil {
				if js, _ := rf["json_schema"].(map[string]any); js["name"] == "ta_answer" {
					allTA++
					if openaitest.Flips(user, 4) {
						flipTA++
					}
				}
			}
		}
		seed, _ := body["seed"].(float64)
		inputs[user][seed] = true
	}
	for u, seeds := range inputs {
		if len(seeds) != 2 || !seeds[1] || !seeds[2] {
			t.Fatalf("input asked with seeds %v: %.80s", seeds, u)
		}
	}
	if flipTA == 0 || flipTA == allTA {
		t.Fatalf("the script flips %d of %d TA items: no test", flipTA, allTA)
	}
	if n := count(t, w, `SELECT count(*) FROM judge_calls WHERE judge = 'j'`); n != 2*(count(t, w, `SELECT count(*) FROM judgments WHERE judge = 'j'`)) {
		t.Errorf("%d answers kept for the judgments", n)
	}
	// Judgments: the means; TA's extra keeps the share with both labels.
	if n := count(t, w, `SELECT count(*) FROM judgments WHERE judge = 'j' AND metric = 'ta' AND ta_now = 0.5 AND (extra->>'$.repeats') = '2' AND (extra->>'$.both')::DOUBLE = 0`); n != flipTA {
		t.Errorf("%d TA judgments at now = 0.5, want %d", n, flipTA)
	}
	if n := count(t, w, `SELECT count(*) FROM judgments WHERE judge = 'j' AND metric = 'tc' AND correctness NOT IN (0.5, 0.75)`); n != 0 {
		t.Errorf("%d TC judgments neither a flip's mean nor the steady value", n)
	}
	// A run page's TA is the metrics': the mean of now ∧ later kept.
	var flipped string
	if err := w.DB().QueryRow(`SELECT run_id FROM judgments WHERE judge = 'j' AND metric = 'ta' AND ta_now = 0.5 ORDER BY run_id LIMIT 1`).Scan(&flipped); err != nil {
		t.Fatal(err)
	}
	page, err := w.RunPage(ctx, flipped)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.TA) != 1 || !page.TA[0].HasBoth || page.TA[0].Both != 0 || page.TA[0].Now != 0.5 {
		t.Errorf("run page TA: %+v", page.TA)
	}
	// And the runs the analyses read (the stored inputs, made from the
	// tables): the share kept for the flipped run.
	all, err := w.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range all {
		if r.RunID == flipped {
			found = true
			if len(r.TA) != 1 || !r.TA[0].HasBoth || r.TA[0].Both != 0 || r.TA[0].Now != 0.5 {
				t.Errorf("TA of %s: %+v", flipped, r.TA)
			}
		}
	}
	if !found {
		t.Errorf("no run %s", flipped)
	}
	items, err := w.JudgeRepeats(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := reports.NewDataset(ctx, w, reports.Options{Name: "w", Keep: reports.KeepTasks})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ds.Selected()
	if err != nil {
		t.Fatal(err)
	}
	s, err := analysis.CompareSelf("j", items, analysis.RunSlice(runs), analysis.BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	N, F := float64(allTA), float64(flipTA)
	for _, sc := range s.Scores {
		switch sc.Score {
		case "TA.now":
			if sc.Items != allTA || sc.FlipRate.Value != F/N || math.Abs(sc.Alpha.Value-(1-(2*N-1)/(2*N-F))) > 1e-12 || !(sc.FlipRate.Lo <= F/N && F/N <= sc.FlipRate.Hi) {
				t.Errorf("TA.now: %+v; want flip rate %v, α %v", sc, F/N, 1-(2*N-1)/(2*N-F))
			}
		case "TA.later", "TC.grounding":
			if sc.SDWithin != 0 {
				t.Errorf("%s never changes: %+v", sc.Score, sc)
			}
		}
	}
	// A rerun asks nothing; a third repeat asks once per input.
	before := f.Count()
	if _, err := judge.Run(ctx, w, opt); err != nil || f.Count() != before {
		t.Fatalf("rerun: %d requests, %v", f.Count()-before, err)
	}
	opt.Repeats = 3
	if _, err := judge.Run(ctx, w, opt); err != nil || f.Count()-before != len(inputs) {
		t.Fatalf("a third repeat: %d requests for %d inputs, %v", f.Count()-before, len(inputs), err)
	}
	if n := count(t, w, `SELECT count(*) FROM judgments WHERE judge = 'j' AND metric = 'ta' AND (extra->>'$.repeats') = '3' AND abs(ta_now - 2.0/3) < 1e-12`); n != flipTA {
		t.Errorf("%d TA judgments at now = 2/3 after a third repeat (seed 3 does not flip), want %d", n, flipTA)
	}
}

func lastUserOf(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}
