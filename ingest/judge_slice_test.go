package ingest_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
)

// judgeState is everything a judge run leaves in the warehouse but the
// clock: every call and every judgment written by gymlens.
func judgeState(t *testing.T, w *ingest.Warehouse) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT model, params, prompt, input_hash, judge, run_id, task, metric, status, coalesce(reason, ''), coalesce(answer, ''),
			input_tokens, output_tokens, coalesce(cost_usd, -1), attempts, coalesce(source_key, '') FROM judge_calls ORDER BY ALL`,
		`SELECT * EXCLUDE (created_at) FROM judgments WHERE file_id = 0 ORDER BY ALL`,
	} {
		rs, err := w.DB().Query(strings.Replace(q, "EXCLUDE (created_at)", exclude(t, w), 1))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := rs.Scan(p...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(v...))
		}
		rs.Close()
	}
	return out
}

// exclude leaves out the judgments' timestamps, if they have any.
func exclude(t *testing.T, w *ingest.Warehouse) string {
	var cols sql.NullString
	if err := w.DB().QueryRow(`SELECT string_agg(column_name, ', ' ORDER BY column_index) FROM duckdb_columns()
		WHERE table_name = 'judgments' AND data_type LIKE 'TIMESTAMP%'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if !cols.Valid {
		return ""
	}
	return "EXCLUDE (" + cols.String + ")"
}

// Planning and asking a few runs at a time (as a large warehouse is
// judged) changes nothing a run does: a dry run counts the same items,
// cache hits and tokens; a live run sends the same requests and leaves the
// same answers, copies and judgments, with repeats settled alike; a batch
// export writes the same lines (in another order), and their import
// saves the same answers.
// The sample's identical inputs are those of neighbouring runs: the slices
// are cut between two such runs.
func TestSlicesChangeNothing(t *testing.T) {
	ctx := context.Background()
	whole, sliced := warehouse(t), warehouse(t)
	fw, fs := server(t), server(t)
	fw.FlipEvery, fs.FlipEvery = 3, 3
	run := func(w *ingest.Warehouse, opt judge.RunOptions, slice int) []judge.JudgeReport {
		t.Helper()
		opt.SliceRuns = slice
		reps, err := judge.Run(ctx, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		return reps
	}
	same := func(what string, a, b []judge.JudgeReport) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the reports differ\nwhole:  %+v\nsliced: %+v", what, a, b)
		}
	}
	base := judge.RunOptions{Metrics: []string{judge.TC, judge.TA, judge.TRJ}, Client: judge.ClientOptions{Concurrency: 4, Seed: 1}}

	// A dry run, and one with a limit that ends inside a slice.
	dry := base
	dry.Judges, dry.DryRun = []judge.Endpoint{endpoint(fw, "j")}, true
	same("dry run", run(whole, dry, 0), run(sliced, dry, 1))
	dry.Limit = 23
	same("dry run, --limit 23", run(whole, dry, 0), run(sliced, dry, 2))

	// Live, twice (the second time everything is cached), then again
	// after losing answers of shared inputs.
	live := base
	live.Metrics = []string{judge.TA, judge.TRJ} // the identical inputs are TR-J's
	live.Judges = []judge.Endpoint{endpoint(fw, "j")}
	if !whole.RunInputsFresh(ctx) {
		t.Fatal("the sample warehouse's run inputs are stale before the judge runs")
	}
	a := run(whole, live, 0)
	// A run that ends rebuilds the runs' inputs its answers made stale.
	if !whole.RunInputsFresh(ctx) {
		t.Error("the run inputs are stale after a judge run that ended")
	}
	k := straddling(t, whole)
	live.Judges = []judge.Endpoint{endpoint(fs, "j")}
	b := run(sliced, live, k)
	a[0].Notes, b[0].Notes = nil, nil // they name the server
	same("live", a, b)
	if a[0].Cached+a[1].Cached == 0 {
		t.Fatal("the sample has no identical inputs: the test needs some")
	}
	if fw.Count() != fs.Count() {
		t.Errorf("%d requests whole, %d sliced", fw.Count(), fs.Count())
	}
	if !reflect.DeepEqual(judgeState(t, whole), judgeState(t, sliced)) {
		t.Error("live: the warehouses differ")
	}
	for _, w := range []*ingest.Warehouse{whole, sliced} {
		if _, err := w.DB().Exec(`DELETE FROM judge_calls WHERE (metric, input_hash) IN
			(SELECT (metric, input_hash) FROM judge_calls GROUP BY ALL HAVING count(*) > 1) AND run_id > (SELECT min(run_id) FROM judge_calls)`); err != nil {
			t.Fatal(err)
		}
	}
	live.Judges = []judge.Endpoint{endpoint(fw, "j")}
	a = run(whole, live, 0)
	live.Judges = []judge.Endpoint{endpoint(fs, "j")}
	b = run(sliced, live, 3)
	a[0].Notes, b[0].Notes = nil, nil
	same("live again", a, b)
	if !reflect.DeepEqual(judgeState(t, whole), judgeState(t, sliced)) {
		t.Error("live again: the warehouses differ")
	}

	// Repeats: every item under two seeds, each judgment the mean.
	rep := base
	rep.Metrics, rep.Repeats, rep.Client.Seed = []string{judge.TA}, 2, 5 // seeds 5 and 6: not asked yet
	rep.Judges = []judge.Endpoint{endpoint(fw, "r")}
	a = run(whole, rep, 0)
	rep.Judges = []judge.Endpoint{endpoint(fs, "r")}
	b = run(sliced, rep, 2)
	for i := range a {
		a[i].Notes, b[i].Notes = nil, nil
	}
	same("repeats", a, b)
	if !reflect.DeepEqual(judgeState(t, whole), judgeState(t, sliced)) {
		t.Error("repeats: the warehouses differ")
	}

	// A batch export and its import.
	var inWhole, inSliced bytes.Buffer
	exp := base
	exp.Metrics = []string{judge.TRJ}
	exp.Client.Seed = 9 // not yet asked: the cache keys on model, parameters and prompt
	exp.Judges = []judge.Endpoint{endpoint(fw, "b")}
	exp.Batch = &judge.Batch{Export: &inWhole}
	a = run(whole, exp, 0)
	exp.Batch = &judge.Batch{Export: &inSliced}
	b = run(sliced, exp, k)
	same("export", a, b)
	// The same lines; in slice order (the runs of a slice, metric by
	// metric), which is deterministic for a given warehouse.
	lines := func(b []byte) []string {
		l := strings.Split(string(b), "\n")
		slices.Sort(l)
		return l
	}
	if inWhole.Len() == 0 || !slices.Equal(lines(inWhole.Bytes()), lines(inSliced.Bytes())) {
		t.Fatalf("the batch files differ (%d and %d bytes)", inWhole.Len(), inSliced.Len())
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	os.WriteFile(out, batchOutputFor(t, inWhole.Bytes(), map[int]bool{2: true}, map[int]bool{4: true}), 0o644)
	imp := exp
	imp.Judges = []judge.Endpoint{endpoint(fw, "b")}
	for i, w := range []*ingest.Warehouse{whole, sliced} {
		answers, err := judge.ReadBatchOutput(out)
		if err != nil {
			t.Fatal(err)
		}
		imp.Batch = &judge.Batch{Answers: answers}
		reps := run(w, imp, []int{0, k}[i])
		answers.Close()
		if i == 0 {
			a = reps
		} else {
			b = reps
		}
	}
	same("import", a, b)
	if !reflect.DeepEqual(judgeState(t, whole), judgeState(t, sliced)) {
		t.Error("import: the warehouses differ")
	}
}

// straddling is a slice size that puts two runs with an identical input
// in different slices: the index of the second (in run order).
func straddling(t *testing.T, w *ingest.Warehouse) int {
	t.Helper()
	var k int
	err := w.DB().QueryRow(`WITH r AS (SELECT run_id, row_number() OVER (ORDER BY run_id) - 1 AS i FROM runs),
		d AS (SELECT metric, input_hash, max(run_id) AS second FROM judge_calls GROUP BY ALL HAVING count(DISTINCT run_id) > 1)
		SELECT min(i) FROM d JOIN r ON r.run_id = d.second`).Scan(&k)
	if err != nil || k == 0 {
		t.Fatalf("no identical inputs in different runs (%v): the test needs some", err)
	}
	return k
}

// eventReads is a warehouse that counts the runs whose events the judge
// reads.
type eventReads struct {
	*ingest.Warehouse
	runs atomic.Int64
}

func (e *eventReads) ScanJudgeEvents(ctx context.Context, runs []*ingest.JudgeRun, fn func(*ingest.JudgeRun) error) error {
	e.runs.Add(int64(len(runs)))
	return e.Warehouse.ScanJudgeEvents(ctx, runs, fn)
}

// The items a run keeps from planning (RunOptions.KeepBytes) change only
// how often the runs' events are read: with every item kept, each run's
// once; with none, again for each ask; with some, in between. The
// requests, answers, copies, settled repeats and a batch export's bytes
// (in order) are the same.
func TestKeptItemsChangeOnlyTheReads(t *testing.T) {
	ctx := context.Background()
	keeps := []int64{-1, 2 << 20, 0} // none, some, every item (the default budget)
	var reports [][]judge.JudgeReport
	var states [][]string
	var exports [][]byte
	var reads, sent []int
	nRuns := 0
	for _, keep := range keeps {
		w := &eventReads{Warehouse: warehouse(t)}
		nRuns = count(t, w.Warehouse, `SELECT count(*) FROM runs`)
		f := server(t)
		f.FlipEvery = 3
		opt := judge.RunOptions{Metrics: []string{judge.TA, judge.TRJ}, Judges: []judge.Endpoint{endpoint(f, "j")}, Repeats: 2,
			KeepBytes: keep, Client: judge.ClientOptions{Concurrency: 4, Seed: 1}}
		reps, err := judge.Run(ctx, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range reps {
			reps[i].Notes = nil // they name the server
		}
		sent = append(sent, f.Count())
		// A batch export under other seeds, nothing of it cached.
		var buf bytes.Buffer
		exp := opt
		exp.Repeats, exp.Client.Seed, exp.Batch = 1, 9, &judge.Batch{Export: &buf}
		if _, err := judge.Run(ctx, w, exp); err != nil {
			t.Fatal(err)
		}
		reads = append(reads, int(w.runs.Load()))
		reports, states, exports = append(reports, reps), append(states, judgeState(t, w.Warehouse)), append(exports, buf.Bytes())
	}
	if reports[0][0].Cached+reports[0][2].Cached == 0 || reports[0][0].Sent == 0 {
		t.Fatalf("reports %+v: the test needs answers sent and identical inputs", reports[0])
	}
	for i := 1; i < len(keeps); i++ {
		if !reflect.DeepEqual(reports[0], reports[i]) {
			t.Errorf("KeepBytes %d: the reports differ\nnone: %+v\nthis: %+v", keeps[i], reports[0], reports[i])
		}
		if !reflect.DeepEqual(states[0], states[i]) || sent[i] != sent[0] {
			t.Errorf("KeepBytes %d: %d requests against %d, or other answers and judgments", keeps[i], sent[i], sent[0])
		}
		if len(exports[0]) == 0 || !bytes.Equal(exports[0], exports[i]) {
			t.Errorf("KeepBytes %d: the batch export differs (%d and %d bytes)", keeps[i], len(exports[i]), len(exports[0]))
		}
	}
	// The events read by the live run and the export: with every item
	// kept, each run's once a judge run (planning); with none, also for
	// each ask (two metrics, two repeats) and for each metric's export.
	if all, none := reads[2], reads[0]; all != 2*nRuns || !(none > reads[1] && reads[1] > all) {
		t.Errorf("runs whose events were read: %d with none kept, %d with some, %d with all (%d runs)", none, reads[1], all, nRuns)
	}
}
