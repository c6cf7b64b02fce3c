package ingest

import (
	"reflect"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// A run page's tasks and TA labels are what the metrics read
// (LoadRunTasks), for every run of a sample warehouse; its judgments keep
// their reasons and citations, and every task, active or not, is listed.
func TestRunPageAgreesWithTheMetrics(t *testing.T) {
	w := sampleWarehouse(t)
	runs, err := w.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cited, inactive, rescoredLabels := 0, 0, 0
	for i := range runs {
		want := rows.RunRow{RunID: runs[i].RunID}
		if err := w.LoadRunTasks(ctx, &want); err != nil {
			t.Fatal(err)
		}
		p, err := w.RunPage(ctx, runs[i].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Tasks, want.Tasks) || !reflect.DeepEqual(p.TA, want.TA) {
			t.Fatalf("%s: the run page's tasks differ from LoadRunTasks':\n%+v\n%+v", runs[i].RunID, p.Tasks, want.Tasks)
		}
		for _, j := range p.Judgments {
			if len(j.Evidence) > 0 && j.Evidence[0].Seq > 0 && j.Reasons != "" {
				cited++
			}
		}
		for _, v := range p.TaskViews {
			if !v.Active {
				inactive++
			}
			if v.Rescored {
				rescoredLabels++
			}
		}
		if len(p.Events) == 0 || p.Window[0] == nil {
			t.Fatalf("%s: %d events, window %v", runs[i].RunID, len(p.Events), p.Window)
		}
	}
	// Read together, the runs' pages are the same as read one by one.
	var ids []string
	for i := range min(len(runs), 40) {
		ids = append(ids, runs[i].RunID)
	}
	pages, err := w.RunPages(ctx, append(ids, "no such run"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != len(ids) {
		t.Errorf("%d pages for %d runs (and one missing)", len(pages), len(ids))
	}
	for _, id := range ids {
		one, _ := w.RunPage(ctx, id)
		if !reflect.DeepEqual(one, pages[id]) {
			t.Fatalf("%s: read alone and with others differ", id)
		}
	}
	if _, err := w.RunPages(ctx, make([]string, MaxRunPages+1)); err == nil {
		t.Error("more runs than MaxRunPages at once")
	}
	if cited == 0 || inactive == 0 {
		t.Errorf("no judgment with reasons and citations (%d), or no inactive task (%d), in the sample", cited, inactive)
	}
	_ = rescoredLabels
}

// A query locks DuckDB's configuration for the whole database; the
// connections opened after it (pages read at once) still open.
func TestConnectionsAfterAQuery(t *testing.T) {
	w := sampleWarehouse(t)
	if _, _, err := w.Query(ctx, "SELECT count(*) FROM runs"); err != nil {
		t.Fatal(err)
	}
	runs, _ := w.LoadRuns(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.RunPage(ctx, runs[i%len(runs)].RunID)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
