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
	// Every task outcome and judgment of a run is on its page (read from
	// where they lie: row_spans), counted here by run id alone.
	counts := map[string][2]int{}
	rs, err := w.db.Query(`SELECT run_id, (SELECT count(*) FROM task_outcomes o WHERE o.run_id = r.run_id),
		(SELECT count(*) FROM judgments j WHERE j.run_id = r.run_id) FROM runs r`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id string
		var c [2]int
		if err := rs.Scan(&id, &c[0], &c[1]); err != nil {
			t.Fatal(err)
		}
		counts[id] = c
	}
	rs.Close()
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
		if c := counts[runs[i].RunID]; len(p.TaskViews) != c[0] || len(p.Judgments) != c[1] || c[1] == 0 {
			t.Fatalf("%s: %d tasks and %d judgments on its page, %d and %d in the warehouse", runs[i].RunID, len(p.TaskViews), len(p.Judgments), c[0], c[1])
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
		return fmt.Sprintf(`{"type":"event","run_id":"%s","seq":%d,"t":"2026-03-02T18:%02d:00Z","actor":"user","kind":"message","text":"%s says %d","task":"mp_price"}`, run, seq, seq, run, seq)
	}
	// a.jsonl: r1's run, r1 and r2's events interleaved; b.jsonl: r2's
	// run first, then more of r1's events.
	a := strings.SplitN(runFile, "\n", 2)[0] + "\n"
	for s := 1; s <= 6; s++ {
		a += ev("r1", s) + "\n" + ev("r2", s) + "\n"
	}
	// Task outcomes and judgments the same way: r1's price task and r2's
	// in a.jsonl, interleaved; r1's buy task and its judgments in b.jsonl.
	task := func(run, name string) string {
		return fmt.Sprintf(`{"type":"task","run_id":"%s","task":"%s","active":true,"rules":{"evidence":1}}`, run, name)
	}
	judgment := func(run, name, judge string) string {
		return fmt.Sprintf(`{"type":"judgment","run_id":"%s","task":"%s","metric":"tc","judge":"%s","scores":{"correctness":0.5,"grounding":0.5,"completeness":0.5,"artifact_quality":0.5}}`, run, name, judge)
	}
	a += task("r1", "mp_price") + "\n" + task("r2", "mp_price") + "\n" + judgment("r1", "mp_price", "j1") + "\n" +
		judgment("r2", "mp_price", "j1") + "\n" + judgment("r1", "mp_price", "j2") + "\n"
	b := run2 + "\n" + ev("r1", 7) + "\n" + ev("r1", 8) + "\n" + task("r1", "mp_buy") + "\n" + judgment("r1", "mp_buy", "j1") + "\n"
	write(t, filepath.Join(dir, "a.jsonl"), a)
	write(t, filepath.Join(dir, "b.jsonl"), b)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	// Packed, r1 from both files (the pages below read the packs).
	if st, err := w.RefreshEventPacks(ctx, nil); err != nil || st.Runs != 2 || st.Events != 14 {
		t.Fatalf("packing: %+v, %v", st, err)
	}
	packed := func() (ids []string) {
		rs, _ := w.db.Query(`SELECT run_id FROM event_packs ORDER BY run_id`)
		defer rs.Close()
		for rs.Next() {
			var id string
			rs.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	listed := func(run string, tasks, judgments string) {
		t.Helper()
		p, err := w.RunPage(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		var ts, js []string
		for _, v := range p.TaskViews {
			ts = append(ts, v.Task)
		}
		for _, j := range p.Judgments {
			js = append(js, j.Task+"/"+j.Judge)
		}
		if strings.Join(ts, " ") != tasks || strings.Join(js, " ") != judgments {
			t.Errorf("%s: tasks %v, judgments %v; want %s and %s", run, ts, js, tasks, judgments)
		}
	}
	listed("r1", "mp_price mp_buy", "mp_buy/j1 mp_price/j1 mp_price/j2")
	listed("r2", "mp_price", "mp_price/j1")
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
		// The judge reads them from the runs' files and lines too.
		heads, err := w.JudgeHeads(ctx, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		given := 0
		if err := w.ScanJudgeEvents(ctx, heads, func(r *JudgeRun) error {
			given++
			for _, e := range r.Events {
				if r.RunID == run {
					got = append(got, e.Seq)
				}
				if !strings.HasPrefix(e.Text, r.RunID+" says") {
					t.Errorf("the judge's %s shows %q", r.RunID, e.Text)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || given != len(heads) {
			t.Errorf("%s (judge): events %v of %d runs given, want %v of %d", run, got, given, want, len(heads))
		}
	}
	// Rescoring reads each task's events, from both files.
	scored := func(want map[string][]int64) {
		t.Helper()
		got := map[string][]int64{}
		if err := w.ScanScoreTasks(ctx, func(x *ScoreTask) error {
			k := x.RunID + "/" + x.Task
			got[k] = []int64{}
			for _, e := range x.Events {
				got[k] = append(got[k], e.Seq)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("scored tasks' events %v, want %v", got, want)
		}
	}
	check("r1", []int64{1, 2, 3, 4, 5, 6, 7, 8})
	check("r2", []int64{1, 2, 3, 4, 5, 6})
	scored(map[string][]int64{"r1/mp_price": {1, 2, 3, 4, 5, 6, 7, 8}, "r1/mp_buy": {}, "r2/mp_price": {1, 2, 3, 4, 5, 6}})
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
	if got := packed(); !reflect.DeepEqual(got, []string{"r1"}) {
		t.Errorf("packs after r2 is replaced: %v, want r1's alone", got)
	}
	check("r2", []int64{1})
	check("r1", []int64{1, 2, 3, 4, 5, 6, 7, 8})
	if st, err := w.RefreshEventPacks(ctx, nil); err != nil || st.Runs != 1 || st.Events != 1 {
		t.Fatalf("packing again: %+v, %v", st, err)
	}
	check("r2", []int64{1})
	// Spans without lines (a row without one) read their files whole.
	if _, err := w.db.Exec(`UPDATE run_spans SET lo = NULL, hi = NULL WHERE run_id = 'r1' AND file_id = (SELECT min(file_id) FROM run_spans)`); err != nil {
		t.Fatal(err)
	}
	check("r1", []int64{1, 2, 3, 4, 5, 6, 7, 8})
	scored(map[string][]int64{"r1/mp_price": {1, 2, 3, 4, 5, 6, 7, 8}, "r1/mp_buy": {}})
	listed("r2", "", "")
	listed("r1", "mp_price mp_buy", "mp_buy/j1 mp_price/j1 mp_price/j2")
	w.db.QueryRow(`SELECT count(*) FROM row_spans WHERE run_id = 'r2'`).Scan(&spans)
	if spans != 0 {
		t.Errorf("the replaced r2 keeps %d task or judgment spans", spans)
	}
}

// A search's snippets: for each run asked for whose trajectory holds the
// text, its first matching event, with the match and some text around it
// (whatever its case); runs without a match are left out.
func TestSearchSnippets(t *testing.T) {
	w := sampleWarehouse(t)
	var id, text string
	var seq int64
	if err := w.db.QueryRow(`SELECT run_id, seq, text FROM events WHERE length(text) > 60 ORDER BY run_id, seq LIMIT 1`).Scan(&id, &seq, &text); err != nil {
		t.Fatal(err)
	}
	q := strings.ToUpper(text[20:30])
	found, err := w.SearchRuns(ctx, q)
	if err != nil || !found[id] {
		t.Fatalf("search %q: %v, %v", q, found[id], err)
	}
	var other string
	w.db.QueryRow(`SELECT run_id FROM runs WHERE run_id <> ? ORDER BY run_id LIMIT 1`, id).Scan(&other)
	sn, err := w.SearchSnippets(ctx, q, []string{id, other, "nope"})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := sn[id]
	if !ok || !strings.Contains(strings.ToUpper(s.Text), q) || len([]rune(s.Text)) > 2*SnippetContext+len(q)+2 {
		t.Errorf("snippet of %s for %q: %+v", id, q, s)
	}
	if s.Seq > seq {
		t.Errorf("snippet at #%d, the first match is at #%d or before", s.Seq, seq)
	}
	if _, ok := sn["nope"]; ok {
		t.Error("a snippet for a run not there")
	}
	if !found[other] {
		if _, ok := sn[other]; ok {
			t.Error("a snippet for a run without a match")
		}
	}
}
