package ingest

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The stored run inputs give LoadRuns exactly what the tables give, after
// each kind of write: an ingest, a rescoring, the judge's answers (stale
// until rebuilt), an ingest of ratings alone (still fresh), and an
// upgrade from the schema before them (stale until rebuilt). The page
// packs, kept by the same rule, go stale with them (but for the rebuild of
// the run inputs) and give the pages the tables give once rebuilt.
func TestRunInputsGiveWhatTheTablesGive(t *testing.T) {
	_, dir := sampleCopy(t, sampleKind{seed: 5, configs: 1}) // the corpus alone, read: one configuration, 90 runs
	path := filepath.Join(t.TempDir(), "w.duckdb")
	open := func(opt OpenOptions) *Warehouse {
		t.Helper()
		w, err := Open(ctx, path, opt)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// pages: whether the page packs, which come from the same tables and
	// which each step refreshes, should still be fresh.
	same := func(w *Warehouse, step string, fresh, pages bool) []RunRow {
		t.Helper()
		if got := w.RunInputsFresh(ctx); got != fresh {
			t.Fatalf("%s: run inputs fresh %v, want %v", step, got, fresh)
		}
		pagePacksGiveTheTables(t, w, step, pages)
		tables := loadRunsGivesTheTables(t, w, step)
		r := RunRow{RunID: tables[1].RunID}
		r.Custom = tables[1].Custom // not read by LoadRunTasks
		if err := w.LoadRunTasks(ctx, &r); err != nil || !sameTasks(&r, &tables[1]) {
			t.Fatalf("%s: LoadRunTasks gives other tasks than the tables (%v)", step, err)
		}
		return tables
	}

	// Written at the schema before the inputs: none, until a writing
	// command upgrades it and closes.
	w := open(OpenOptions{SchemaVersion: inputsSchema - 1})
	if _, err := w.Ingest(ctx, []string{filepath.Join(dir, "scenarios"), filepath.Join(dir, "runs")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = open(OpenOptions{})
	same(w, "upgraded", false, false)
	if err := w.RefreshRunInputs(ctx); err != nil { // as the next ingest, score or judge does
		t.Fatal(err)
	}
	runs := same(w, "upgraded, rebuilt", true, true)
	w.Close()
	os.Remove(path)
	w = open(OpenOptions{})
	if _, err := w.Ingest(ctx, []string{filepath.Join(dir, "scenarios"), filepath.Join(dir, "runs")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if fresh := same(w, "ingest of runs", true, false); !sameRuns(fresh, runs) {
		t.Fatal("an upgraded warehouse's runs differ from a new one's")
	}
	if _, err := w.Ingest(ctx, []string{filepath.Join(dir, "judgments")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	runs = same(w, "ingest of judgments", true, false)
	if len(runs[0].Tasks) == 0 || len(runs[0].Tasks[0].TC) == 0 || len(runs[0].TA) == 0 {
		t.Fatalf("the sample's first run has no judged tasks or TA: %+v", runs[0])
	}

	// A rescoring: every task's depths and rules as settled.
	if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error {
		one := 1.0
		return emit(TaskScore{RunID: runs[0].RunID, Task: runs[0].Tasks[0].Task, EffectiveExpected: "noop", EffectiveChosen: "execute",
			EffectiveRules: [3]*float64{&one, nil, &one}, Prefer: "derived"})
	}); err != nil {
		t.Fatal(err)
	}
	runs = same(w, "score", true, false)
	if task := runs[0].Tasks[0]; task.Expected != "noop" || task.Chosen != "execute" || task.RuleSet != [3]bool{true, false, true} {
		t.Fatalf("the rescored task reads %+v", task)
	}

	// The judge's answers: the answered run's inputs are gone at once
	// (its batch read from the tables), until rebuilt (judge.Run does
	// when it ends; TestSlicesChangeNothing checks).
	if err := w.SaveJudgeCalls(ctx, []JudgeCall{{Model: "m", Params: "{}", Prompt: "v9", InputHash: "h", Judge: "judge-new",
		RunID: runs[0].RunID, Task: runs[0].Tasks[0].Task, Metric: "tc", Valid: true,
		Scores: map[string]float64{"correctness": 0.25, "grounding": 1, "completeness": math.Inf(1)}}}); err != nil {
		t.Fatal(err)
	}
	runs = same(w, "judge", true, false)
	if !slices.ContainsFunc(runs[0].Tasks[0].TC, func(j TCJudgment) bool { return j.Judge == "judge-new" && j.Correctness == 0.25 }) {
		t.Fatalf("the new judgment is not read: %+v", runs[0].Tasks[0].TC)
	}
	w.Close()
	w = open(OpenOptions{ReadOnly: true})
	same(w, "judge, opened again", true, true)
	w.Close()
	w = open(OpenOptions{})
	if err := w.RefreshRunInputs(ctx); err != nil {
		t.Fatal(err)
	}
	same(w, "judge, rebuilt", true, true)
	w.Close()

	// Ratings alone leave them fresh.
	w = open(OpenOptions{})
	if _, err := w.Ingest(ctx, []string{filepath.Join(dir, "ratings")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	same(w, "ingest of ratings", true, true)
	w.Close()
}

// After a write of a few runs, the rebuild encodes those runs alone and
// leaves every other run's stored inputs as they were: an ingest of a new
// run, the judge's answers about one run. An ingest that replaces a
// scenario, whose task weights every run of it holds, rebuilds them all.
// Each time LoadRuns still gives what the tables give.
func TestRunInputsRebuiltForTheRunsWritten(t *testing.T) {
	w, dir := samplePath(t, 0)
	ids := runIDs(t, w)
	stored := func() map[string]string {
		t.Helper()
		_, m := storedInputs(t, w)
		return m
	}
	set := func(id, inputs string) {
		t.Helper()
		if _, err := w.db.ExecContext(ctx, `UPDATE run_inputs SET inputs = ? WHERE run_id = ?`, []byte(inputs), id); err != nil {
			t.Fatal(err)
		}
	}
	agree := func(step string) {
		t.Helper()
		if !w.RunInputsFresh(ctx) {
			t.Fatalf("%s: the run inputs are not fresh", step)
		}
		loadRunsGivesTheTables(t, w, step)
	}
	// A marked run: its stored inputs replaced by those of a run without
	// tasks, which a rebuild of it would overwrite.
	marked := ids[len(ids)/2]
	mark := string(encodeInputs(nil, &RunRow{}))
	before := stored()
	if len(before) != len(ids) || before[marked] == mark {
		t.Fatalf("%d stored inputs for %d runs", len(before), len(ids))
	}
	rebuilt := func(step string, want bool) {
		t.Helper()
		now := stored()
		if len(now) != len(runIDs(t, w)) {
			t.Fatalf("%s: %d stored inputs for %d runs", step, len(now), len(runIDs(t, w)))
		}
		if got := now[marked] != mark; got != want {
			t.Fatalf("%s: the marked run rebuilt %v, want %v", step, got, want)
		}
		if !want {
			set(marked, before[marked]) // as it was, and is: its tables did not change
		}
		agree(step)
	}

	// An ingest of one new run.
	files, _ := filepath.Glob(filepath.Join(dir, "runs", "*.jsonl"))
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	first := ids[0]
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"run_id":"`+first+`"`) {
			lines = append(lines, strings.Replace(l, `"run_id":"`+first+`"`, `"run_id":"zz-added"`, 1))
		}
	}
	if len(lines) < 3 {
		t.Fatalf("run %s: %d lines in %s", first, len(lines), files[0])
	}
	added := filepath.Join(t.TempDir(), "added.jsonl")
	if err := os.WriteFile(added, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set(marked, mark)
	if _, err := w.Ingest(ctx, []string{added}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored()["zz-added"]; !ok {
		t.Fatal("the added run has no stored inputs")
	}
	rebuilt("ingest of a new run", false)

	// The same run again with a task fewer, replacing it.
	var fewer []string
	dropped := false
	for _, l := range lines {
		if !dropped && strings.Contains(l, `"type":"task"`) {
			dropped = true
			continue
		}
		fewer = append(fewer, l)
	}
	if err := os.WriteFile(added, []byte(strings.Join(fewer, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	was := stored()["zz-added"]
	set(marked, mark)
	if _, err := w.Ingest(ctx, []string{added}, IngestOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if !dropped || stored()["zz-added"] == was {
		t.Fatal("the replaced run's stored inputs are as before")
	}
	rebuilt("a run replaced", false)

	// The judge's answer about one run: that run's inputs dropped at
	// once, rebuilt alone.
	set(marked, mark)
	if err := w.SaveJudgeCalls(ctx, []JudgeCall{{Model: "m", Params: "{}", Prompt: "v9", InputHash: "h", Judge: "judge-new",
		RunID: first, Metric: "ta", Valid: true, Scores: map[string]float64{"now": 1, "later": 0}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored()[first]; ok {
		t.Fatal("the answered run's stored inputs are kept")
	}
	if err := w.RefreshRunInputs(ctx); err != nil {
		t.Fatal(err)
	}
	rebuilt("judge", false)
	runs, _ := w.LoadRuns(ctx)
	if !slices.ContainsFunc(runs[0].TA, func(j TAJudgment) bool { return j.Judge == "judge-new" }) {
		t.Fatal("the judge's answer is not read")
	}

	// A scenario replaced, one weight changed: every run rebuilt.
	specs, _ := filepath.Glob(filepath.Join(dir, "scenarios", "*.yaml"))
	spec, err := os.ReadFile(specs[0])
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(spec), "weight: 1\n", "weight: 7\n", 1)
	if changed == string(spec) {
		t.Fatalf("%s has no weight 1", specs[0])
	}
	scen := filepath.Join(t.TempDir(), filepath.Base(specs[0]))
	if err := os.WriteFile(scen, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	set(marked, mark)
	if _, err := w.Ingest(ctx, []string{scen}, IngestOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	rebuilt("a scenario replaced", true)
	runs, _ = w.LoadRuns(ctx)
	if !slices.ContainsFunc(runs, func(r RunRow) bool {
		return slices.ContainsFunc(r.Tasks, func(k TaskRow) bool { return k.Weight == 7 })
	}) {
		t.Fatal("the changed weight is not read")
	}
}

// storedInputs reads run_inputs: its run ids in the order the rows were
// written, and each run's stored value.
func storedInputs(t *testing.T, w *Warehouse) (ids []string, inputs map[string]string) {
	t.Helper()
	inputs = map[string]string{}
	if err := w.scan(ctx, `SELECT run_id, inputs FROM run_inputs ORDER BY rowid`, func(rs *sql.Rows) error {
		var id string
		var b []byte
		err := rs.Scan(&id, &b)
		ids = append(ids, id)
		inputs[id] = string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids, inputs
}

// loadRunsGivesTheTables checks that LoadRuns (the stored inputs where
// fresh) gives the runs the tables give, and returns those.
func loadRunsGivesTheTables(t *testing.T, w *Warehouse, step string) []RunRow {
	t.Helper()
	stored, err := w.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := w.loadRunsFromTables(ctx, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 || !sameRuns(stored, tables) {
		t.Fatalf("%s: LoadRuns gives other runs than the tables (%d runs)", step, len(tables))
	}
	// A few runs at a time, and all at once, each run visited and then
	// let go (the metric values' reading): runs are visited in order, each
	// once, as their stored inputs arrive, and the memory of their tasks
	// is handed out again; a batch's stored inputs are read by their rows'
	// span, however the rows lie.
	visitedLikeTheTables(t, w, step, tables, 7)
	visitedLikeTheTables(t, w, step, tables, len(tables))
	if w.inputsFresh(ctx) {
		// Fresh, every batch is read from its rows' span, not the tables.
		rowid := map[string]int64{}
		if err := w.scan(ctx, `SELECT run_id, rowid FROM run_inputs`, func(rs *sql.Rows) error {
			var id string
			var r int64
			err := rs.Scan(&id, &r)
			rowid[id] = r
			return err
		}); err != nil {
			t.Fatal(err)
		}
		runs := stripped(tables)
		byID := map[string]int{}
		spans := make([]int64, len(runs))
		for i, r := range runs {
			byID[r.RunID], spans[i] = i, -1
			if v, found := rowid[r.RunID]; found {
				spans[i] = v
			}
		}
		for lo := 0; lo < len(runs); lo += 7 {
			hi := min(lo+7, len(runs)) - 1
			span := rowSpan(spans[lo : hi+1])
			if span == nil { // a run without stored inputs (the judge's)
				for i := lo; i <= hi; i++ {
					runs[i] = tables[i]
				}
				continue
			}
			if ok, err := w.loadInputs(ctx, runs, byID, lo, hi, interner{}, nil, span, nil); !ok || err != nil {
				t.Fatalf("%s: runs %d to %d not read from their rows' span (%v)", step, lo, hi, err)
			}
		}
		if !sameRuns(runs, tables) {
			t.Fatalf("%s: the rows' spans give other runs than the tables", step)
		}
	}
	return tables
}

// visitedLikeTheTables checks that LoadRunsWith with dropTasks, batch
// runs at a time, visits every run once, in order, with the tasks the
// tables give, and leaves the runs the tables give without their tasks.
func visitedLikeTheTables(t *testing.T, w *Warehouse, step string, tables []RunRow, batch int) {
	t.Helper()
	var order []int
	visited := make([]string, len(tables))
	dropped, err := w.loadRuns(ctx, func(i int, r *RunRow) {
		order = append(order, i)
		visited[i] = string(encodeInputs(nil, r))
	}, true, w.inputsFresh(ctx), batch)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range order {
		if i != k {
			t.Fatalf("%s, %d runs a batch: visit %d is of run %d", step, batch, k, i)
		}
	}
	if len(order) != len(tables) {
		t.Fatalf("%s, %d runs a batch: %d visits of %d runs", step, batch, len(order), len(tables))
	}
	for i := range tables {
		if visited[i] != string(encodeInputs(nil, &tables[i])) {
			t.Fatalf("%s, %d runs a batch: run %s visited with other tasks than the tables give", step, batch, tables[i].RunID)
		}
	}
	if !sameRuns(dropped, stripped(tables)) {
		t.Fatalf("%s, %d runs a batch: LoadRunsWith(dropTasks) gives other runs than the tables", step, batch)
	}
}

// stripped is runs without their tasks and TA, as LoadRunsWith leaves
// them with dropTasks.
func stripped(runs []RunRow) []RunRow {
	out := slices.Clone(runs)
	for i := range out {
		out[i].Tasks, out[i].TA = nil, nil
	}
	return out
}

// sameRuns compares runs as DeepEqual would, but with NaNs (missing
// scores) equal to themselves: the tasks and judgments by their encoding,
// which TestRunInputsRoundTrip checks keeps every bit.
func sameRuns(a, b []RunRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !sameTasks(&x, &y) {
			return false
		}
		x.Tasks, x.TA, x.Custom, y.Tasks, y.TA, y.Custom = nil, nil, nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func sameTasks(a, b *RunRow) bool {
	return string(encodeInputs(nil, a)) == string(encodeInputs(nil, b))
}

// The stored inputs' numbers decode as binary.Uvarint reads them, at
// every length and wherever they lie (with ten bytes after them or
// fewer), and what it refuses is refused.
func TestInputsNumbersAsUvarint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases [][]byte
	for k := range 64 {
		for _, v := range []uint64{1<<k - 1, 1 << k, 1<<k + 1} {
			cases = append(cases, binary.AppendUvarint(nil, v))
		}
	}
	cases = append(cases, binary.AppendUvarint(nil, math.MaxUint64), []byte{0x80, 0x00}, []byte{0xff, 0xff, 0x7f})
	for range 20000 { // any bytes, the continuation bit set often
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.Uint32())
			if rng.IntN(4) > 0 {
				b[i] |= 0x80
			}
		}
		cases = append(cases, b)
	}
	for _, c := range cases {
		for _, tail := range [][]byte{nil, {5}, bytes.Repeat([]byte{0x81}, 12)} {
			b := append(slices.Clip(c), tail...)
			want, n := binary.Uvarint(b)
			d := inputsDecoder{b: b}
			got := d.uint()
			if n <= 0 {
				if d.err == nil {
					t.Fatalf("% x: read %d, where Uvarint refuses it", b, got)
				}
				continue
			}
			if d.err != nil || got != want || d.i != n {
				t.Fatalf("% x: %d after %d bytes (%v), want %d after %d", b, got, d.i, d.err, want, n)
			}
		}
	}
}

// What encodeInputs writes decodes to the same run, floats to the bit;
// every shorter prefix of it is refused, never a panic.
func TestRunInputsRoundTrip(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000001)
	r := RunRow{
		Tasks: []TaskRow{
			{Task: "a", Weight: 1, Rules: [3]float64{0.1, math.NaN(), 1}, RuleSet: [3]bool{true, false, true}, Expected: "suggest", Chosen: "noop",
				TC:     []TCJudgment{{Judge: "j1", Correctness: 0.3, Grounding: math.Inf(-1), Completeness: math.Copysign(0, -1), ArtifactQ: nan}},
				TRJ:    []TRJJudgment{{Judge: "j2", Scores: [5]float64{1, 2, 3, 4, 5}}, {Judge: "j1", Scores: [5]float64{math.MaxFloat64, math.SmallestNonzeroFloat64}}},
				Custom: []CustomJudgment{{Metric: "custom.x", Judge: "j1", Scores: map[string]float64{"b": 2, "a": 1}}, {Metric: "custom.x", Judge: "j2"}}},
			{Task: "b", Weight: 0.5, Expected: "", Chosen: "suggest"},
		},
		TA:     []TAJudgment{{Judge: "j1", Now: 1, Later: 0, CQ: 4, HasCQ: true}, {Judge: "j2", Both: 0.5, HasBoth: true}},
		Custom: []CustomJudgment{{Metric: "custom.y", Judge: "j2", Scores: map[string]float64{}}},
	}
	b := encodeInputs(nil, &r)
	var got RunRow
	if _, err := decodeInputs(b, &got, interner{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	bits := func(v float64) uint64 { return math.Float64bits(v) }
	if bits(got.Tasks[0].TC[0].ArtifactQ) != bits(nan) || bits(got.Tasks[0].TC[0].Completeness) != bits(math.Copysign(0, -1)) {
		t.Errorf("floats not kept to the bit: %v", got.Tasks[0].TC[0])
	}
	// NaN ≠ NaN: compare the rest with the NaNs replaced.
	got.Tasks[0].TC[0].ArtifactQ, r.Tasks[0].TC[0].ArtifactQ = 7, 7
	got.Tasks[0].Rules[1], r.Tasks[0].Rules[1] = 7, 7
	if !reflect.DeepEqual(got, r) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, r)
	}
	if got.Custom[0].Scores == nil || got.Tasks[0].Custom[1].Scores != nil {
		t.Error("an empty score map and a nil one are not told apart")
	}
	for n := range len(b) {
		var x RunRow
		if _, err := decodeInputs(b[:n], &x, interner{}, nil, nil); err == nil {
			t.Fatalf("a prefix of %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decodeInputs(append(b, 0), &got, interner{}, nil, nil); err == nil {
		t.Error("a trailing byte was not refused")
	}
	// Decoded into an arena's reused memory, a run without judgments
	// keeps none of the last run's; two runs decoded before a reuse do
	// not share their tasks.
	var a inputsArena
	bare := RunRow{Tasks: []TaskRow{{Task: "a", Weight: 1}, {Task: "b"}, {Task: "c", Chosen: "noop"}}}
	for k := range 6 {
		var x, y RunRow
		if _, err := decodeInputs(b, &x, interner{}, nil, &a); err != nil {
			t.Fatal(err)
		}
		if k%2 == 1 {
			a.reuse() // y in x's memory
		}
		if _, err := decodeInputs(encodeInputs(nil, &bare), &y, interner{}, nil, &a); err != nil {
			t.Fatal(err)
		}
		if k%2 == 0 {
			_ = append(x.Tasks, TaskRow{Task: "appended"}) // never into y's
			_ = append(x.TA, TAJudgment{Judge: "appended"})
		}
		if !reflect.DeepEqual(y, bare) || k%2 == 0 && string(encodeInputs(nil, &x)) != string(b) {
			t.Fatalf("decoded in an arena:\n%+v\n%+v", x, y)
		}
		a.reuse()
	}
}

// A rebuild of the run inputs marks them fresh only if no writer ran
// while it was under way (the writer deleted the "building" row); the
// same rule the page packs' rebuild follows (TestPagePacksAreRead).
func TestRebuildDuringAWriteStaysStale(t *testing.T) {
	w, _ := samplePath(t, 0)
	conn, err := w.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, write := range []bool{false, true} {
		if err := startRebuild(ctx, conn, "run_inputs", "run_inputs"); err != nil {
			t.Fatal(err)
		}
		if w.RunInputsFresh(ctx) {
			t.Fatal("the run inputs are fresh while they are rebuilt")
		}
		if write { // the judge's answers: they leave the inputs stale (judge.Run rebuilds them when it ends)
			ids := runIDs(t, w)
			if err := w.SaveJudgeCalls(ctx, []JudgeCall{{Model: "m", Params: "{}", Prompt: "v9", InputHash: "h", Judge: "judge-new",
				RunID: ids[0], Metric: "ta", Valid: true, Scores: map[string]float64{"now": 1, "later": 0}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := endRebuild(ctx, conn, "run_inputs", inputsFormat); err != nil {
			t.Fatal(err)
		}
		if got := w.RunInputsFresh(ctx); got == write {
			t.Errorf("a writer during the rebuild %v: fresh %v after it", write, got)
		}
	}
	// And the rebuild itself ends fresh.
	if err := w.RefreshRunInputs(ctx); err != nil || !w.RunInputsFresh(ctx) {
		t.Fatalf("rebuilt: fresh %v (%v)", w.RunInputsFresh(ctx), err)
	}
}

// TestLatestPromptVersionAsTheWindowChoseIt: the tables' read keeps, of a
// judge's judgments of one item under several prompt versions, the last
// version in text order ("v10" before "v9"), as the window the query used
// to take did; the reference here is that window.
func TestLatestPromptVersionAsTheWindowChoseIt(t *testing.T) {
	db, _ := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A third of the items get a later version, another third an earlier
	// one, some items both; each with other scores.
	for _, q := range []string{
		`INSERT INTO judgments SELECT * REPLACE (prompt || 'z' AS prompt, correctness + 10 AS correctness, competence + 10 AS competence, ta_now + 10 AS ta_now)
			FROM judgments WHERE hash(run_id, task, judge) % 3 = 0`,
		`INSERT INTO judgments SELECT * REPLACE ('' AS prompt, correctness + 20 AS correctness, competence + 20 AS competence, ta_now + 20 AS ta_now)
			FROM judgments WHERE hash(run_id, task, judge) % 3 <> 1 AND prompt NOT LIKE '%z'`,
		`INSERT INTO judgments SELECT * REPLACE ('v10' AS prompt, correctness + 30 AS correctness, competence + 30 AS competence, ta_now + 30 AS ta_now)
			FROM judgments WHERE hash(run_id, task, judge) % 5 = 0 AND prompt = ''`,
		`INSERT INTO judgments SELECT * REPLACE ('v9' AS prompt, correctness + 40 AS correctness, competence + 40 AS competence, ta_now + 40 AS ta_now)
			FROM judgments WHERE hash(run_id, task, judge) % 5 = 0 AND prompt = ''`,
		invalidateInputs,
	} {
		if _, err := w.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	type item struct{ run, task, metric, judge string }
	want := map[item]float64{}
	err = w.scan(ctx, `SELECT run_id, task, metric, judge, CASE metric WHEN 'tc' THEN correctness WHEN 'trj' THEN competence ELSE ta_now END
		FROM (SELECT *, row_number() OVER (PARTITION BY run_id, task, metric, judge ORDER BY prompt DESC) AS latest FROM judgments)
		WHERE latest = 1 AND metric IN ('tc', 'trj', 'ta')
		AND (metric = 'ta' OR (run_id, task) IN (SELECT (run_id, task) FROM task_outcomes WHERE active))`, func(rows *sql.Rows) error {
		var it item
		var v float64
		if err := rows.Scan(&it.run, &it.task, &it.metric, &it.judge, &v); err != nil {
			return err
		}
		want[it] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := w.loadRunsFromTables(ctx, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[item]float64{}
	n := 0
	for _, r := range runs {
		for _, j := range r.TA {
			got[item{r.RunID, "", "ta", j.Judge}] = j.Now
			n++
		}
		for _, task := range r.Tasks {
			for _, j := range task.TC {
				got[item{r.RunID, task.Task, "tc", j.Judge}] = j.Correctness
				n++
			}
			for _, j := range task.TRJ {
				got[item{r.RunID, task.Task, "trj", j.Judge}] = j.Scores[1]
				n++
			}
		}
	}
	later := 0
	for it, v := range want {
		if g, ok := got[it]; !ok || g != v {
			t.Fatalf("%+v: read %v (%v), the window's latest version has %v", it, g, ok, v)
		}
		if v >= 10 {
			later++
		}
	}
	if n != len(want) || len(got) != len(want) || later < len(want)/4 {
		t.Errorf("%d judgments read (%d items), the window keeps %d (%d of a later version)", n, len(got), len(want), later)
	}
}

// A rebuild reads the tables a window of runs at a time: any window size
// stores the same bytes, in run order, as one window of every run. A
// window that fails to read fails the rebuild, which then leaves the
// inputs stale.
func TestRebuildInWindows(t *testing.T) {
	w, _ := samplePath(t, 0)
	stored := func() ([]string, map[string]string) {
		t.Helper()
		return storedInputs(t, w)
	}
	rebuild := func(batch int) error {
		t.Helper()
		old := refreshBatch
		refreshBatch = batch
		defer func() { refreshBatch = old }()
		if _, err := w.db.ExecContext(ctx, invalidateInputs); err != nil {
			t.Fatal(err)
		}
		return w.RefreshRunInputs(ctx)
	}
	if err := rebuild(1 << 20); err != nil {
		t.Fatal(err)
	}
	loadRunsGivesTheTables(t, w, "one window") // read within the rows' spans, as without
	wantIDs, want := stored()
	if len(want) != len(runIDs(t, w)) || !slices.IsSorted(wantIDs) {
		t.Fatalf("%d inputs stored for %d runs, in order %v", len(want), len(runIDs(t, w)), slices.IsSorted(wantIDs))
	}
	for _, batch := range []int{1, 7, 13} {
		if err := rebuild(batch); err != nil {
			t.Fatal(err)
		}
		ids, got := stored()
		if !slices.Equal(ids, wantIDs) || !reflect.DeepEqual(got, want) {
			t.Fatalf("windows of %d runs: other inputs stored", batch)
		}
		if !w.RunInputsFresh(ctx) {
			t.Fatal("not fresh after the rebuild")
		}
	}
	// A run's judgment written after every other row (as the judge
	// writes): its window's span reaches the end of the table.
	late := wantIDs[len(wantIDs)/2]
	if _, err := w.db.ExecContext(ctx, `INSERT INTO judgments SELECT * REPLACE ('judge-late' AS judge, 0 AS file_id, NULL AS src_line)
		FROM judgments WHERE run_id = ? AND metric = 'tc' LIMIT 1`, late); err != nil {
		t.Fatal(err)
	}
	if err := rebuild(7); err != nil {
		t.Fatal(err)
	}
	if _, got := stored(); !strings.Contains(got[late], "judge-late") || got[wantIDs[0]] != want[wantIDs[0]] {
		t.Fatal("the late judgment is not read, or another run changed")
	}
	loadRunsGivesTheTables(t, w, "a late judgment")
	// A rubric judgment whose scores do not decode, in a late window.
	bad := wantIDs[len(wantIDs)-20]
	if _, err := w.db.ExecContext(ctx, `INSERT INTO judgments SELECT * REPLACE ('custom.bad' AS metric, '{"scores": "bad"}' AS extra)
		FROM judgments WHERE run_id = ? LIMIT 1`, bad); err != nil {
		t.Fatal(err)
	}
	err := rebuild(7)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a window that does not read: %v", err)
	}
	if w.RunInputsFresh(ctx) {
		t.Fatal("fresh after a failed rebuild")
	}
}

// A batch whose span holds a second row for one of its runs is read
// again from the tables, and the runs visited before the second row came
// are not visited again: every run once, in order, with the tables' tasks.
func TestVisitsSurviveABatchReadAgain(t *testing.T) {
	path, _ := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tables, err := w.loadRunsFromTables(ctx, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// The last row again, at the end: its run's rowid is now the new one,
	// so its batch's span holds both.
	if _, err := w.DB().Exec(`INSERT INTO run_inputs SELECT * FROM run_inputs WHERE rowid = (SELECT max(rowid) FROM run_inputs)`); err != nil {
		t.Fatal(err)
	}
	if !w.inputsFresh(ctx) {
		t.Fatal("the run inputs are stale")
	}
	visitedLikeTheTables(t, w, "a second row", tables, 7)
	visitedLikeTheTables(t, w, "a second row", tables, len(tables))
}
