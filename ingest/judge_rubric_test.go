package ingest_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func examples(t *testing.T) []*judge.Rubric {
	t.Helper()
	rubs, err := judge.LoadRubrics([]string{filepath.Join("..", "judge", "prompts", "examples")})
	if err != nil {
		t.Fatal(err)
	}
	return rubs
}

// The example rubrics judged through the warehouse: their judgments keep
// their scores, their definitions are stored, and the metrics they make
// are computed from the scores as the registry says (task-level: the mean
// over the tasks judged; run-level: the run's), shown by a Dataset like
// the built-in ones.
func TestCustomRubricsBecomeMetrics(t *testing.T) {
	ctx := context.Background()
	w := warehouse(t)
	f := server(t)
	rubs := examples(t)
	reps, err := judge.Run(ctx, w, judge.RunOptions{Rubrics: rubs, Judges: []judge.Endpoint{endpoint(f, "j")}, Client: judge.ClientOptions{Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	runs := count(t, w, `SELECT count(*) FROM runs`)
	tasks := count(t, w, `SELECT count(*) FROM task_outcomes WHERE active`)
	if len(reps) != 2 || reps[0].Metric != "custom.initiative" || reps[0].Items != runs || reps[1].Metric != "custom.interruption" || reps[1].Items != tasks {
		t.Fatalf("reports %+v (runs %d, active tasks %d)", reps, runs, tasks)
	}
	for _, r := range reps {
		if r.Invalid+r.Failed > 0 || r.Valid+r.Cached != r.Items {
			t.Errorf("%s: %+v", r.Metric, r)
		}
	}
	if n := count(t, w, `SELECT count(*) FROM judge_rubrics`); n != 2 {
		t.Errorf("%d rubrics stored", n)
	}
	if n := count(t, w, `SELECT count(*) FROM judgments WHERE metric = 'custom.interruption' AND prompt = 'interruption/v1'
		AND correctness IS NULL AND json_extract(extra, '$.scores.timing') IS NOT NULL`); n == 0 {
		t.Errorf("no custom judgment with its scores in extra")
	}
	// A rerun asks nothing.
	before := f.Count()
	if _, err := judge.Run(ctx, w, judge.RunOptions{Rubrics: rubs, Judges: []judge.Endpoint{endpoint(f, "j")}}); err != nil || f.Count() != before {
		t.Fatalf("rerun: %d requests, %v", f.Count()-before, err)
	}

	// The metrics, by hand from the stored scores.
	ds, err := reports.NewDataset(ctx, w, reports.Options{Name: "w", Metrics: []string{"all"}, Bootstrap: analysis.BootstrapOptions{Resamples: 200, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ds.Values()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{} // by run: interruption, .timing, .necessary, initiative, .initiative, .restraint
	rs, err := w.DB().Query(`SELECT run_id, task, metric, extra->>'$.scores' FROM judgments WHERE metric LIKE 'custom.%' ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	type acc struct{ sum, n [3]float64 }
	task := map[string]*acc{}
	run := map[string][3]float64{}
	for rs.Next() {
		var id, tk, metric, sc string
		if err := rs.Scan(&id, &tk, &metric, &sc); err != nil {
			t.Fatal(err)
		}
		var s map[string]float64
		json.Unmarshal([]byte(sc), &s)
		if metric == "custom.interruption" {
			a := task[id]
			if a == nil {
				a = &acc{}
				task[id] = a
			}
			// timing 1–5 and necessary 0–1 differ in range: the metric rescales both to 0–100.
			overall := (100*(s["timing"]-1)/4 + 100*s["necessary"]) / 2
			for i, x := range []float64{overall, s["timing"], 100 * s["necessary"]} {
				a.sum[i] += x
				a.n[i]++
			}
		} else {
			// Both in [0, 1]: the metric keeps the range, ×100.
			run[id] = [3]float64{100 * (s["initiative"] + s["restraint"]) / 2, 100 * s["initiative"], 100 * s["restraint"]}
		}
	}
	rs.Close()
	for id, a := range task {
		want[id] = []float64{a.sum[0] / a.n[0], a.sum[1] / a.n[1], a.sum[2] / a.n[2]}
		r := run[id]
		want[id] = append(want[id], r[:]...)
	}
	names := []string{"custom.interruption", "custom.interruption.timing", "custom.interruption.necessary",
		"custom.initiative", "custom.initiative.initiative", "custom.initiative.restraint"}
	checked := 0
	for i, r := range v.Runs {
		w, ok := want[r.RunID]
		if !ok {
			continue
		}
		for k, n := range names {
			m := analysis.MetricIndex(n)
			if m < 0 {
				t.Fatalf("metric %s unknown", n)
			}
			if got := v.Values[i][m]; math.Abs(got-w[k]) > 1e-9 {
				t.Errorf("run %s %s = %v, want %v", r.RunID, n, got, w[k])
			}
		}
		checked++
	}
	if checked != len(want) || checked == 0 {
		t.Errorf("checked %d runs of %d", checked, len(want))
	}
	for n, scale := range map[string]string{"custom.interruption": "0–100", "custom.interruption.timing": "1–5", "custom.initiative": "0–100"} {
		if m, ok := analysis.MetricNamed(n); !ok || m.Scale != scale {
			t.Errorf("%s: %+v", n, m)
		}
	}
	// A run page shows the rubrics' scores, and its tasks are the ones the
	// metrics read (their judgments of the rubrics too).
	id := v.Runs[0].RunID
	page, err := w.RunPage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	loaded := ingest.RunRow{RunID: id}
	if err := w.LoadRunTasks(ctx, &loaded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(page.Tasks, loaded.Tasks) || len(page.Custom) != 1 || page.Custom[0].Metric != "custom.initiative" {
		t.Errorf("the run page's tasks or run-level rubric judgments differ from the metrics':\n%+v\n%+v\n%+v", page.Tasks, loaded.Tasks, page.Custom)
	}
	shown := 0
	for _, j := range page.Judgments {
		if j.Metric == "custom.interruption" && len(j.Scores) == 2 && j.Scores[0].Name == "necessary" && j.Scores[1].Name == "timing" {
			shown++
		}
	}
	if shown == 0 {
		t.Errorf("the run page shows no rubric score: %+v", page.Judgments)
	}
	// Summaries name them.
	est, err := ds.Summarize(nil, []string{"custom.interruption", "custom.initiative"}, nil)
	if err != nil || len(est) != 2 || est[0].Metric != "custom.interruption" || math.IsNaN(est[0].Value) || !(est[0].Lo <= est[0].Value && est[0].Value <= est[0].Hi) {
		t.Errorf("summary %+v, %v", est, err)
	}
}
