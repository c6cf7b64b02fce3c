package reports

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// countingStore serves two runs and counts how often it is read.
type countingStore struct{ runs, ratings int }

func (c *countingStore) LoadRunsWith(_ context.Context, visit func(int, *rows.RunRow), _ bool) ([]rows.RunRow, error) {
	c.runs++
	rs := []rows.RunRow{{RunID: "a", ConfigID: "m | CC | none", Model: "m", Harness: "CC", Effort: "none", Scenario: "s1"},
		{RunID: "b", ConfigID: "m | CC | none", Model: "m", Harness: "CC", Effort: "none", Scenario: "s2"}}
	for i := range rs {
		visit(i, &rs[i])
	}
	return rs, nil
}

func (c *countingStore) LoadRatings(context.Context) ([]rows.RatingRow, error) {
	c.ratings++
	return nil, nil
}

// Datasets that read the same runs (same judge, enough tasks kept) share
// them instead of reading the store again; another judge or more tasks
// than the first kept is read anew.
func TestDatasetsShareWhatTheyRead(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	a, _ := NewDataset(ctx, st, Options{Keep: KeepTasks, Bootstrap: analysis.DefaultBootstrap})
	if _, err := a.Values(); err != nil {
		t.Fatal(err)
	}
	a.Ratings()
	other := analysis.DefaultBootstrap
	other.Resamples = 100
	b, _ := NewDataset(ctx, st, Options{Keep: KeepValues, Bootstrap: other, Metrics: []string{"TC"}, Mark: "significance"})
	if !b.ShareFrom(a) {
		t.Fatal("b did not share a's runs")
	}
	v, _ := b.Values()
	b.Ratings()
	if st.runs != 1 || st.ratings != 1 || len(v.Runs) != 2 || len(v.Metrics) != 1 || v.Metrics[0] != analysis.MetricIndex("TC") {
		t.Errorf("reads %d runs, %d ratings; %d runs with metrics %v", st.runs, st.ratings, len(v.Runs), v.Metrics)
	}
	if av, _ := a.Values(); len(av.Metrics) != len(analysis.MainMetrics) {
		t.Errorf("sharing changed a's metrics: %v", av.Metrics)
	}
	c, _ := NewDataset(ctx, st, Options{Keep: KeepTasks, Judge: "j"})
	d, _ := NewDataset(ctx, st, Options{Keep: KeepTasks})
	if c.ShareFrom(a) || d.ShareFrom(b) {
		t.Error("shared across judges, or from a dataset that kept fewer tasks")
	}
}

// A packed dataset never shares with one that needs task names, and one
// that keeps no judgments refuses the agreement instead of computing it
// on runs without tasks.
func TestPackedDatasetsKeepToTheirTasks(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	p, _ := NewDataset(ctx, st, Options{Keep: KeepPacked})
	if _, err := p.Values(); err != nil {
		t.Fatal(err)
	}
	if n, _ := NewDataset(ctx, st, Options{Keep: KeepTaskNames}); n.ShareFrom(p) {
		t.Error("a task-names dataset shared the packed runs, which hold no task names")
	}
	if v, _ := NewDataset(ctx, st, Options{Keep: KeepValues}); !v.ShareFrom(p) {
		t.Error("a values dataset did not share the packed runs' values")
	}
	set, err := p.SelectedSet()
	if err != nil {
		t.Errorf("packed: %v", err)
	}
	// The selection names its runs without decoding them, as decoded.
	p2, _ := NewDataset(ctx, st, Options{Keep: KeepPacked, Where: map[string][]string{"scenario": {"s2"}}})
	p2.ShareFrom(p)
	sel, err := p2.SelectedSet()
	if err != nil || set.Len() != 2 || sel.Len() != 1 || analysis.RunIDOf(sel, 0) != "b" || sel.Run(0).RunID != "b" || analysis.RunIDOf(set, 0) != "a" {
		t.Errorf("selection: %v; %d and %d runs", err, set.Len(), sel.Len())
	}
	v, _ := NewDataset(ctx, st, Options{Keep: KeepValues})
	if _, err := v.Judges(); err == nil || !strings.Contains(err.Error(), "KeepPacked") {
		t.Errorf("a values dataset compared judges: %v", err)
	}
}

// repeatStore serves 40 runs (10 scenarios) of one task judged by j and
// k, j asked again on the TC of the runs of odd scenarios.
type repeatStore struct{ countingStore }

func (*repeatStore) LoadRunsWith(_ context.Context, visit func(int, *rows.RunRow), dropTasks bool) ([]rows.RunRow, error) {
	var rs []rows.RunRow
	for i := range 40 {
		c := 0.1 * float64(i%7)
		rs = append(rs, rows.RunRow{RunID: fmt.Sprintf("r%02d", i), ConfigID: "m | CC | none", Model: "m", Harness: "CC", Effort: "none",
			Scenario: fmt.Sprintf("s%d", i%10), Tasks: []rows.TaskRow{{Task: "t", Weight: 1, TC: []rows.TCJudgment{
				{Judge: "j", Correctness: c, Grounding: c, Completeness: c, ArtifactQ: c},
				{Judge: "k", Correctness: 1 - c, Grounding: c, Completeness: c, ArtifactQ: c}}}}})
	}
	for i := range rs {
		visit(i, &rs[i])
		if dropTasks {
			rs[i].Tasks = nil
		}
	}
	return rs, nil
}

func (*repeatStore) JudgeRepeats(context.Context, string) ([]rows.RepeatItem, error) {
	var items []rows.RepeatItem
	for i := 1; i < 40; i += 2 {
		c := 0.1 * float64(i%7)
		it := rows.RepeatItem{RunID: fmt.Sprintf("r%02d", i), Task: "t", Metric: "tc", Judge: "j", Seeds: []int64{1, 2}}
		it.Names, it.Values = rows.RepeatScores([]map[string]float64{
			{"correctness": c, "grounding": c, "completeness": c, "artifact_quality": c},
			{"correctness": c + 0.3, "grounding": c, "completeness": c, "artifact_quality": c}})
		items = append(items, it)
	}
	return items, nil
}

// The judges' noise keeps the tasks of the noisy runs alone when nothing
// else needs tasks, with the same estimates as keeping every run's; such
// a dataset gives its runs only to another that needs no more. agree
// --self's dataset (PackOnly the runs asked again) gives what the full one
// gives.
func TestTasksKeptForTheNoiseAlone(t *testing.T) {
	ctx := context.Background()
	st := &repeatStore{}
	boot := analysis.BootstrapOptions{Resamples: 300, Seed: 2}
	opt := Options{Keep: KeepValues, JudgeNoise: true, Judge: "j", Bootstrap: boot, Metrics: []string{"TC", "TC.correctness"}}
	few, _ := NewDataset(ctx, st, opt)
	opt.Keep = KeepPacked
	all, _ := NewDataset(ctx, st, opt)
	a, err := few.Metrics([]string{"scenario"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := all.Metrics([]string{"scenario"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%v", a) != fmt.Sprintf("%v", b) {
		t.Errorf("noise with the noisy runs' tasks:\n%v\nwith every run's:\n%v", a, b)
	}
	wide := false
	for _, e := range a {
		wide = wide || e.Hi > e.Lo
	}
	if !wide {
		t.Error("no interval widened by the noise")
	}
	for i := range 40 {
		if n := len(few.packed.Run(i).Tasks); n != i%2 {
			t.Fatalf("run %d: %d tasks kept", i, n)
		}
		if n := len(all.packed.Run(i).Tasks); n != 1 {
			t.Fatalf("every run's: run %d has %d tasks", i, n)
		}
	}
	other, _ := NewDataset(ctx, st, opt)
	opt.Keep = KeepValues
	same, _ := NewDataset(ctx, st, opt)
	if other.ShareFrom(few) || !same.ShareFrom(few) {
		t.Error("a dataset that needs every run's tasks took the noisy runs' alone, or one that needs no more did not")
	}
	items, _ := st.JudgeRepeats(ctx, "")
	self := func(ds *Dataset) string {
		set, err := ds.SelectedSet()
		if err != nil {
			t.Fatal(err)
		}
		s, err := analysis.CompareSelf("j", items, set, boot)
		if err != nil || len(s.Noise) == 0 {
			t.Fatalf("%v: %+v", err, s)
		}
		return fmt.Sprintf("%+v", *s)
	}
	packed, _ := NewDataset(ctx, st, Options{Keep: KeepPacked, Bootstrap: boot})
	packed.PackOnly(func(id string) bool { return id[2]%2 == 1 })
	full, _ := NewDataset(ctx, st, Options{Keep: KeepPacked, Bootstrap: boot})
	if x, y := self(packed), self(full); x != y {
		t.Errorf("agree --self on the runs asked again:\n%s\non every run:\n%s", x, y)
	}
}

// The runs a judge run's --where selects: none given, every run (nil) and
// the store unread; a selection, its runs' ids; a mistake, an option error.
func TestArgsSelectedRuns(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	a := NewArgs(nil)
	a.Put("where", []string(nil), false)
	if runs, err := a.SelectedRuns(ctx, st, "w.duckdb"); runs != nil || err != nil || st.runs != 0 {
		t.Errorf("no --where: %v %v, the store read %d times", runs, err, st.runs)
	}
	a.Put("where", []string{"scenario=s2"}, true)
	if runs, err := a.SelectedRuns(ctx, st, "w.duckdb"); err != nil || len(runs) != 1 || !runs["b"] {
		t.Errorf("--where scenario=s2: %v %v", runs, err)
	}
	a.Put("where", []string{"colour=red"}, true)
	var oe *analysis.OptionError
	if runs, err := a.SelectedRuns(ctx, st, "w.duckdb"); runs != nil || !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), "--where: ") {
		t.Errorf("--where colour=red: %v %v", runs, err)
	}
}
