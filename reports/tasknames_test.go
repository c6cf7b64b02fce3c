package reports

import (
	"context"
	"fmt"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// taskStore serves runs with tasks and, as the warehouse does, drops a
// run's tasks once visited when asked to.
type taskStore struct{ runs []rows.RunRow }

func (s *taskStore) LoadRunsWith(_ context.Context, visit func(int, *rows.RunRow), dropTasks bool) ([]rows.RunRow, error) {
	rs := make([]rows.RunRow, len(s.runs))
	for i, r := range s.runs {
		rs[i] = r
		rs[i].Tasks = append([]rows.TaskRow(nil), r.Tasks...)
		visit(i, &rs[i])
		if dropTasks {
			rs[i].Tasks = nil
		}
	}
	return rs, nil
}

func (s *taskStore) LoadRatings(context.Context) ([]rows.RatingRow, error) { return nil, nil }

func sampleRuns() []rows.RunRow {
	var runs []rows.RunRow
	for i := range 40 {
		r := rows.RunRow{RunID: fmt.Sprintf("r%02d", i), ConfigID: "m | CC | none", Model: "m", Harness: []string{"CC", "OC"}[i%2],
			Effort: "none", Scenario: fmt.Sprintf("s%d", i%7), Persona: "p", Rep: 1}
		for k := range 1 + i%4 {
			r.Tasks = append(r.Tasks, rows.TaskRow{Task: fmt.Sprintf("t%d", k), Weight: 1,
				TC: []rows.TCJudgment{{Judge: "j"}}})
		}
		runs = append(runs, r)
	}
	return runs
}

// A dataset that keeps task names holds them apart from the runs (whose
// rows keep no tasks: 4 KB a run at --scale 100 took annotate sample to
// 1,374 MB), and a sample drawn from them is the one drawn from the runs
// with their tasks, for either unit, with and without strata and a
// selection.
func TestTaskNamesKeptApartDrawTheSameSample(t *testing.T) {
	ctx := context.Background()
	st := &taskStore{runs: sampleRuns()}
	for _, where := range []map[string][]string{nil, {"harness": {"OC"}}} {
		ds, err := NewDataset(ctx, st, Options{Keep: KeepTaskNames, Where: where})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := ds.Selected()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range sel {
			if r.Tasks != nil {
				t.Fatalf("run %s kept its task rows: %+v", r.RunID, r.Tasks)
			}
		}
		tasks, err := ds.SelectedTaskNames()
		if err != nil {
			t.Fatal(err)
		}
		full, _ := NewDataset(ctx, st, Options{Keep: KeepTasks, Where: where})
		fullSel, err := full.Selected()
		if err != nil {
			t.Fatal(err)
		}
		for _, unit := range []string{"task", "run"} {
			for _, by := range []string{"", "scenario"} {
				got, gs, err := analysis.StratifiedSampleOf(sel, tasks, unit, by, 9, 5)
				if err != nil {
					t.Fatal(err)
				}
				want, ws, err := analysis.StratifiedSample(fullSel, unit, by, 9, 5)
				if err != nil {
					t.Fatal(err)
				}
				if gs != ws || len(got) != len(want) || len(got) != 9 {
					t.Fatalf("%v %s by %q: %d items in %d strata, want %d in %d", where, unit, by, len(got), gs, len(want), ws)
				}
				for i := range got {
					if got[i].Run.RunID != want[i].Run.RunID || got[i].Task != want[i].Task || got[i].Stratum != want[i].Stratum {
						t.Errorf("%v %s by %q: item %d is %s/%s, want %s/%s", where, unit, by, i, got[i].Run.RunID, got[i].Task, want[i].Run.RunID, want[i].Task)
					}
				}
			}
		}
	}
	ds, _ := NewDataset(ctx, st, Options{Keep: KeepValues})
	if _, err := ds.SelectedTaskNames(); err == nil {
		t.Error("a dataset that keeps no task names gave them")
	}
}
