package analysis

import (
	"math"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

func TestReduceEpochsAsInspect(t *testing.T) {
	for _, tc := range []struct {
		reducer string
		values  []float64
		want    float64
	}{
		{"", []float64{0, 1, 1}, 2.0 / 3},
		{"mean", []float64{0.5, 1}, 0.75},
		{"median", []float64{3, 1, 2, 10}, 2.5},
		{"mode", []float64{0, 1, 1, 0}, 0},
		{"max", []float64{0, 0.5, 0.25}, 0.5},
		{"at_least_2", []float64{1, 0, 1}, 1},
		{"at_least_3", []float64{1, 0, 1}, 0},
		// pass@k: 1 − C(n−c, k)/C(n, k); n=5, c=2, k=2: 1 − 3/10.
		{"pass_at_2", []float64{1, 0, 1, 0, 0}, 0.7},
		// pass^k: C(c, k)/C(n, k) = 1/10.
		{"pass_2", []float64{1, 0, 1, 0, 0}, 0.1},
	} {
		got, ok := ReduceEpochs(tc.values, tc.reducer)
		if !ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s%v = %v (%v), want %v", tc.reducer, tc.values, got, ok, tc.want)
		}
	}
	if v, ok := ReduceEpochs([]float64{1}, "pass_at_2"); !ok || !math.IsNaN(v) {
		t.Errorf("pass_at_2 of one epoch: %v, want NaN as Inspect", v)
	}
	if _, ok := ReduceEpochs([]float64{1}, "my_reducer"); ok {
		t.Error("an unknown reducer reduced")
	}
}

// log_streaming.eval's numbers: samples 1 (I, C) and 2 (C, C), reduced
// by mean to 0.5 and 1; Inspect stored accuracy 0.75 and stderr 0.25.
func TestReconcileInspect(t *testing.T) {
	d := &rows.InspectData{
		Evals: []rows.InspectEval{{EvalID: "e", Task: "popularity", ConfigID: "m | h | none", Epochs: 2}},
		Scores: []rows.InspectScore{
			{EvalID: "e", SampleID: "1", Epoch: 1, Scorer: "match", Metric: "inspect.match", Value: 0, Valid: true},
			{EvalID: "e", SampleID: "1", Epoch: 2, Scorer: "match", Metric: "inspect.match", Value: 1, Valid: true},
			{EvalID: "e", SampleID: "2", Epoch: 1, Scorer: "match", Metric: "inspect.match", Value: 1, Valid: true},
			{EvalID: "e", SampleID: "2", Epoch: 2, Scorer: "match", Metric: "inspect.match", Value: 1, Valid: true},
		},
		Results: []rows.InspectResult{
			{EvalID: "e", Score: "match", Scorer: "match", Metric: "accuracy", Value: 0.75, Params: "{}"},
			{EvalID: "e", Score: "match", Scorer: "match", Metric: "stderr", Value: 0.25, Params: "{}"},
			{EvalID: "e", Score: "match", Scorer: "match", Metric: "std", Value: 0.5, Params: "{}"},
			{EvalID: "e", Score: "match", Scorer: "match", Metric: "bootstrap_stderr", Value: 0.2, Params: "{}"},
			{EvalID: "e", Score: "match", Scorer: "match", Metric: "mean", Value: 0.7, Params: "{}"},
		},
	}
	got := map[string]string{}
	for _, c := range ReconcileInspect(d) {
		got[c.Metric] = c.Status
	}
	want := map[string]string{"accuracy": "equal", "stderr": "equal", "std": "differs", "bootstrap_stderr": "cannot", "mean": "differs"}
	for m, s := range want {
		if got[m] != s {
			t.Errorf("%s: %s, want %s", m, got[m], s)
		}
	}
	means, err := InspectMeans(d, "", BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil || len(means) != 1 || means[0].Value != 0.75 || means[0].Samples != 2 || means[0].Values != 4 {
		t.Fatalf("means %+v %v", means, err)
	}
	// pass^2: sample 1 (I, C) fails, sample 2 (C, C) passes; pass@2 both.
	for red, want := range map[string]float64{"pass_2": 0.5, "pass_at_2": 1} {
		means, err = InspectMeans(d, red, BootstrapOptions{Resamples: 200, Seed: 1})
		if err != nil || len(means) != 1 || means[0].Value != want || means[0].Metric != "inspect.match ("+red+")" {
			t.Errorf("%s: %+v %v", red, means, err)
		}
	}
	// pass@3 of two epochs: no sample has a value.
	if means, err = InspectMeans(d, "pass_at_3", BootstrapOptions{Resamples: 200, Seed: 1}); err != nil || len(means) != 0 {
		t.Errorf("pass_at_3: %+v %v", means, err)
	}
	if _, err = InspectMeans(d, "median_of_medians", BootstrapOptions{}); err == nil {
		t.Error("an unknown reducer accepted")
	}
}
