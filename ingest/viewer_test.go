package ingest

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
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

// A run's events read from where they lie (run_spans) are all of them,
// in order, when they are spread over two files and interleaved with
// another run's; a replaced run keeps only its new events' spans.
func TestRunEventsFromTheirSpans(t *testing.T) {
	w := openTemp(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "scenario.yaml"), scenarioFile)
	run2 := strings.ReplaceAll(strings.SplitN(runFile, "\n", 2)[0], `"r1"`, `"r2"`)
	ev := func(run string, seq int) string {
		return fmt.Sprintf(`{"type":"event","run_id":"%s","seq":%d,"t":"2026-03-02T18:%02d:00Z","actor":"user","kind":"message","text":"%s says %d"}`, run, seq, seq, run, seq)
	}
	// a.jsonl: r1's run, r1 and r2's events interleaved; b.jsonl: r2's
	// run first, then more of r1's events.
	a := strings.SplitN(runFile, "\n", 2)[0] + "\n"
	for s := 1; s <= 6; s++ {
		a += ev("r1", s) + "\n" + ev("r2", s) + "\n"
	}
	b := run2 + "\n" + ev("r1", 7) + "\n" + ev("r1", 8) + "\n"
	write(t, filepath.Join(dir, "a.jsonl"), a)
	write(t, filepath.Join(dir, "b.jsonl"), b)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(run string, want []int64) {
		t.Helper()
		for _, page := range []bool{false, true} {
			var got []int64
			if page {
				ps, err := w.RunPages(ctx, []string{"r1", "r2"})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ps[run].Events {
					got = append(got, e.Seq)
				}
			} else {
				es, err := w.RunEvents(ctx, run)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range es {
					got = append(got, e.Seq)
					if !strings.HasPrefix(e.Text, run+" says") {
						t.Errorf("%s shows %q", run, e.Text)
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (page %v): events %v, want %v", run, page, got, want)
			}
		}
	}
	check("r1", []int64{1, 2, 3, 4, 5, 6, 7, 8})
	check("r2", []int64{1, 2, 3, 4, 5, 6})
	var spans int
	w.db.QueryRow(`SELECT count(*) FROM run_spans`).Scan(&spans)
	if spans != 3 {
		t.Errorf("%d spans, want 3 (r1 in two files, r2 in one)", spans)
	}
	// r2 replaced from a new file: its old span goes.
	dir2 := t.TempDir()
	write(t, filepath.Join(dir2, "c.jsonl"), strings.Replace(run2, `"rep":1`, `"rep":1,"note":"again"`, 1)+"\n"+ev("r2", 1)+"\n")
	if _, err := w.Ingest(ctx, []string{dir2}, IngestOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	check("r2", []int64{1})
	check("r1", []int64{1, 2, 3, 4, 5, 6, 7, 8})
}
