package reports

import (
	"context"
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
