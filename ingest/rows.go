package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// LoadRuns reads every run with its active tasks and judgments, sorted by
// run id. Where one judge judged an item under several prompt versions,
// the last version (in text order) is used.
func (w *Warehouse) LoadRuns(ctx context.Context) ([]RunRow, error) {
	return w.LoadRunsWith(ctx, nil, false)
}

// LoadRunsWith is LoadRuns that calls visit with each run (and its index),
// in order, once its tasks and judgments are read, and, with dropTasks,
// then lets them go: a caller that needs only what it computes from them
// (the metric values) holds a few runs' tasks at a time, at most a batch.
//
// It reads the stored run inputs (inputs.go) while they are fresh, else
// the tables.
func (w *Warehouse) LoadRunsWith(ctx context.Context, visit func(i int, r *RunRow), dropTasks bool) ([]RunRow, error) {
	return w.loadRuns(ctx, visit, dropTasks, w.inputsFresh(ctx), loadBatch)
}

// loadRunsFromTables is LoadRunsWith from the tables alone.
func (w *Warehouse) loadRunsFromTables(ctx context.Context, visit func(i int, r *RunRow), dropTasks bool) ([]RunRow, error) {
	return w.loadRuns(ctx, visit, dropTasks, false, loadBatch)
}

// loadRuns reads the runs' tasks and judgments batch runs at a time.
func (w *Warehouse) loadRuns(ctx context.Context, visit func(i int, r *RunRow), dropTasks, useInputs bool, batch int) ([]RunRow, error) {
	// As many runs as the table holds, allocated once: growing the slice
	// run by run copied it a score of times (a hint, not a bound: the
	// query's rows are appended whatever their number).
	var n int
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
		return nil, err
	}
	runs := make([]RunRow, 0, n)
	byID := make(map[string]int, n)
	in := interner{}
	// run_view's columns from its tables, scenarios joined once for the
	// domain and the TA window, in no order: they are sorted below.
	err := w.scan(ctx, `SELECT r.run_id, r.config_id, r.model, coalesce(r.family, ''), coalesce(r.size_b, 0), r.harness, r.effort,
		r.scenario, coalesce(s.domain, ''), r.persona, coalesce(p.persona_group, ''), r.rep,
		s.ta_window_start IS NOT NULL
		FROM runs r LEFT JOIN scenarios s USING (scenario) LEFT JOIN personas p ON p.scenario = r.scenario AND p.persona = r.persona`, func(rows *sql.Rows) error {
		var r RunRow
		var b [9]sql.RawBytes // names that repeat from run to run: interned
		if err := rows.Scan(&r.RunID, &b[0], &b[1], &b[2], &r.SizeB, &b[3], &b[4], &b[5],
			&b[6], &b[7], &b[8], &r.Rep, &r.HasTAWindow); err != nil {
			return err
		}
		r.ConfigID, r.Model, r.Family, r.Harness, r.Effort = in.of(b[0]), in.of(b[1]), in.of(b[2]), in.of(b[3]), in.of(b[4])
		r.Scenario, r.Domain, r.Persona, r.PersonaGroup = in.of(b[5]), in.of(b[6]), in.of(b[7]), in.of(b[8])
		byID[r.RunID] = len(runs)
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Tasks and judgments a slice of runs at a time: the driver holds a
	// whole query result in memory, so one query over every judgment would
	// hold them all twice. Names repeat on every row: interned.
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].RunID < runs[b].RunID })
	for i := range runs {
		byID[runs[i].RunID] = i
	}
	// Where each run's stored inputs are in run_inputs (rowid; -1: none):
	// a batch's are read by that span, which DuckDB finds from the row
	// groups' bounds, where a span of run ids made it compare every id
	// of the table (ids share their first 8 bytes, all its string bounds
	// keep), once per batch: 117 times at --scale 100. (Not joined to the
	// runs' query: under the report's 128 MB pool, that join ran out of
	// memory at --scale 100.) A lake's tables are views, without rowids:
	// it reads by run id.
	var rowids []int64
	if useInputs && !w.Lake {
		rowids = make([]int64, len(runs))
		for i := range rowids {
			rowids[i] = -1
		}
		if err := w.scan(ctx, `SELECT run_id, rowid FROM run_inputs`, func(rows *sql.Rows) error {
			var id sql.RawBytes
			var rowid int64
			if err := rows.Scan(&id, &rowid); err != nil {
				return err
			}
			if i, found := byID[string(id)]; found {
				rowids[i] = rowid
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	// With dropTasks, a run's tasks are gone once it is visited, and the
	// memory they took is handed out again as soon as every run decoded so
	// far has been visited: runs are visited as their stored inputs arrive
	// when they arrive in order, which they usually do, so the arena holds
	// a run or two rather than a batch (a batch's tasks, 2,000 runs, took
	// 9 MB of fresh memory, and each fresh page costs a fault;
	// docs/benchmarks.md). Otherwise every run has its own.
	var arena *inputsArena
	var decoded []bool
	if dropTasks {
		arena = &inputsArena{}
		decoded = make([]bool, min(batch, len(runs)))
	}
	visitRun := func(i int) {
		if visit != nil {
			visit(i, &runs[i])
		}
		if dropTasks {
			runs[i].Tasks, runs[i].TA = nil, nil
		}
	}
	for lo := 0; lo < len(runs); lo += batch {
		hi := min(lo+batch, len(runs)) - 1
		next := lo // the first run of the batch not yet visited
		ok := false
		if useInputs {
			var span []int64
			if rowids != nil {
				span = rowSpan(rowids[lo : hi+1])
			}
			var ready func(i int)
			if arena != nil {
				clear(decoded)
				pending := 0 // decoded, not yet visited
				ready = func(i int) {
					if decoded[i-lo] {
						return // a second row for the run: loadInputs fails the batch
					}
					decoded[i-lo] = true
					pending++
					for next <= hi && decoded[next-lo] {
						visitRun(next)
						next++
						pending--
					}
					if pending == 0 {
						arena.reuse()
					}
				}
			}
			var err error
			if rowids == nil || span != nil {
				if ok, err = w.loadInputs(ctx, runs, byID, lo, hi, in, arena, span, ready); err != nil {
					return nil, err
				}
			}
		}
		if !ok {
			// The runs visited already had what the tables hold (the stored
			// inputs were fresh); the batch is read again for the rest.
			if err := w.loadTasksAndJudgments(ctx, runs, byID, runs[lo].RunID, runs[hi].RunID, in, nil); err != nil {
				return nil, err
			}
			for i := lo; i < next; i++ {
				runs[i].Tasks, runs[i].TA = nil, nil
			}
		}
		for i := next; i <= hi; i++ {
			visitRun(i)
		}
		if arena != nil {
			arena.reuse() // the batch's tasks are gone
		}
	}
	return runs, nil
}

// LoadRunTasks reads one run's active tasks and judgments into r, as
// LoadRuns gives them: for a viewer that keeps the runs without their
// tasks and reads a run's when its page is asked.
func (w *Warehouse) LoadRunTasks(ctx context.Context, r *RunRow) error {
	runs := []RunRow{{RunID: r.RunID}}
	if w.inputsFresh(ctx) {
		ok, err := w.loadInputs(ctx, runs, map[string]int{r.RunID: 0}, 0, 0, interner{}, nil, nil, nil)
		if err != nil {
			return err
		}
		if ok {
			r.Tasks, r.TA = runs[0].Tasks, runs[0].TA
			return nil
		}
	}
	if err := w.loadTasksAndJudgments(ctx, runs, map[string]int{r.RunID: 0}, r.RunID, r.RunID, interner{}, nil); err != nil {
		return err
	}
	r.Tasks, r.TA = runs[0].Tasks, runs[0].TA
	return nil
}

// rowSpan is the first and last of rowids, nil when one is -1 (a run
// without stored inputs).
func rowSpan(rowids []int64) []int64 {
	lo, hi := rowids[0], rowids[0]
	for _, r := range rowids {
		if r < 0 {
			return nil
		}
		lo, hi = min(lo, r), max(hi, r)
	}
	return []int64{lo, hi}
}

// loadBatch is how many runs' tasks and judgments LoadRuns reads at once.
const loadBatch = 2000

// ratingBatch is how many ratings EachRating reads at once (a variable
// for the tests).
var ratingBatch = 20_000

// interner gives one copy of each distinct string read.
type interner map[string]string

func (in interner) of(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// loadTasksAndJudgments fills the active tasks and the judgments of the
// runs with ids in [from, to]; spans, when given, holds where in the
// tables all their rows lie.
func (w *Warehouse) loadTasksAndJudgments(ctx context.Context, runs []RunRow, byID map[string]int, from, to string, in interner, spans *rowSpans) error {
	bound := func(t int, col string) (string, []any) {
		if spans == nil {
			return "", []any{from, to}
		}
		return ` AND ` + col + ` >= ? AND ` + col + ` < ?`, []any{from, to, spans[t][0], spans[t][1]}
	}
	taskBound, taskArgs := bound(0, "o.rowid")
	judgmentBound, judgmentArgs := bound(1, "rowid")
	taskIdx := map[[2]string]int{}
	// Depths and rule scores: as rescoring settled them (task_scores),
	// else as logged.
	err := w.scan(ctx, `SELECT o.run_id, o.task, coalesce(ts.weight, 1),
		CASE WHEN sc.run_id IS NULL THEN o.rule_evidence ELSE sc.effective_evidence END,
		CASE WHEN sc.run_id IS NULL THEN o.rule_outputs ELSE sc.effective_outputs END,
		CASE WHEN sc.run_id IS NULL THEN o.rule_constraints ELSE sc.effective_constraints END,
		coalesce(sc.effective_expected, o.expected_depth, ''), coalesce(sc.effective_chosen, o.chosen_depth, '')
		FROM task_outcomes o JOIN runs r USING (run_id)
		LEFT JOIN task_specs ts ON ts.scenario = r.scenario AND ts.task = o.task
		LEFT JOIN task_scores sc ON sc.run_id = o.run_id AND sc.task = o.task
		WHERE o.active AND o.run_id BETWEEN ? AND ?`+taskBound+` ORDER BY o.run_id, coalesce(ts.ordinal, 0), o.task`, func(rows *sql.Rows) error {
		var run, task, expected, chosen sql.RawBytes
		var t TaskRow
		var rules [3]sql.NullFloat64
		if err := rows.Scan(&run, &task, &t.Weight, &rules[0], &rules[1], &rules[2], &expected, &chosen); err != nil {
			return err
		}
		t.Task, t.Expected, t.Chosen = in.of(task), in.of(expected), in.of(chosen)
		for i, r := range rules {
			t.Rules[i], t.RuleSet[i] = r.Float64, r.Valid
		}
		i, ok := byID[string(run)]
		if !ok {
			return nil
		}
		taskIdx[[2]string{runs[i].RunID, t.Task}] = len(runs[i].Tasks)
		runs[i].Tasks = append(runs[i].Tasks, t)
		return nil
	}, taskArgs...)
	if err != nil {
		return err
	}
	// Each judge's latest judgment of an item: the first of its prompt
	// versions in descending order, the rows of one item being adjacent.
	// Chosen here rather than by a window in the query (row_number() over
	// the item, latest = 1): at --scale 100 the window took a batch's
	// query from 0.22 to 0.75 s for the same rows, its cost set by the
	// table's size (0.29 s for as many rows at --scale 10).
	//
	// Each metric's scores come in five columns (s1–s5, the metric's
	// components in order; TA's CQ and the repeats' "both" may be NULL),
	// not one column per component of every metric: at --scale 100 the
	// rebuild reads 12.3 million judgments, and each value read costs a
	// conversion through database/sql whether it holds a score or not.
	var last, key []byte // the previous row's item and this one's: run, task, metric, judge
	return w.scan(ctx, `SELECT run_id, task, metric, judge,
		CASE metric WHEN 'tc' THEN coalesce(correctness, 'NaN') WHEN 'ta' THEN coalesce(ta_now, 'NaN') WHEN 'trj' THEN coalesce(understandability, 'NaN') END,
		CASE metric WHEN 'tc' THEN coalesce(grounding, 'NaN') WHEN 'ta' THEN coalesce(ta_later, 'NaN') WHEN 'trj' THEN coalesce(competence, 'NaN') END,
		CASE metric WHEN 'tc' THEN coalesce(completeness, 'NaN') WHEN 'ta' THEN ta_cq WHEN 'trj' THEN coalesce(reliability, 'NaN') END,
		CASE metric WHEN 'tc' THEN coalesce(artifact_quality, 'NaN') WHEN 'trj' THEN coalesce(attachment, 'NaN')
			WHEN 'ta' THEN CASE WHEN file_id = 0 THEN TRY_CAST(json_extract(extra, '$.both') AS DOUBLE) END END,
		CASE metric WHEN 'trj' THEN coalesce(faith, 'NaN') END,
		CASE WHEN starts_with(metric, 'custom.') THEN json_extract(extra, '$.scores')::VARCHAR END
		FROM judgments WHERE run_id BETWEEN ? AND ?`+judgmentBound+`
		ORDER BY run_id, task, metric, judge, prompt DESC`, func(rows *sql.Rows) error {
		var run, task, metric, judge, custom sql.RawBytes
		var sv [5]any // float64, or nil
		if err := rows.Scan(&run, &task, &metric, &judge, &sv[0], &sv[1], &sv[2], &sv[3], &sv[4], &custom); err != nil {
			return err
		}
		key = appendItemKey(key[:0], run, task, metric, judge)
		if bytes.Equal(key, last) {
			return nil // an earlier prompt version of the item just read
		}
		last, key = key, last
		if custom != nil {
			return addCustom(runs, byID, taskIdx, in, run, task, metric, judge, custom)
		}
		var v [5]float64
		var set [5]bool
		for i, x := range sv {
			v[i], set[i] = x.(float64)
		}
		i, ok := byID[string(run)]
		if !ok {
			return nil
		}
		r := &runs[i]
		name := in.of(judge)
		switch string(metric) {
		case "ta":
			r.TA = append(r.TA, TAJudgment{Judge: name, Now: v[0], Later: v[1], CQ: v[2], HasCQ: set[2], Both: v[3], HasBoth: set[3]})
		case "tc", "trj":
			ti, ok := taskIdx[[2]string{r.RunID, in.of(task)}]
			if !ok {
				return nil // a judgment of an inactive task: not in the metrics
			}
			t := &r.Tasks[ti]
			if string(metric) == "tc" {
				t.TC = append(t.TC, TCJudgment{Judge: name, Correctness: v[0], Grounding: v[1], Completeness: v[2], ArtifactQ: v[3]})
			} else {
				t.TRJ = append(t.TRJ, TRJJudgment{Judge: name, Scores: v})
			}
		}
		return nil
	}, judgmentArgs...)
}

// appendItemKey appends a judgment's item to b as one byte string, its
// parts length-prefixed.
func appendItemKey(b, run, task, metric, judge []byte) []byte {
	for _, p := range [][]byte{run, task, metric, judge} {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// addCustom adds a judgment of a user rubric to its run, or to its task
// (an inactive task's is not in the metrics).
func addCustom(runs []RunRow, byID map[string]int, taskIdx map[[2]string]int, in interner, run, task, metric, judge, scores []byte) error {
	i, ok := byID[string(run)]
	if !ok {
		return nil
	}
	j := CustomJudgment{Metric: in.of(metric), Judge: in.of(judge)}
	if err := json.Unmarshal(scores, &j.Scores); err != nil {
		return fmt.Errorf("judgment of %s by %s on run %s: scores: %w", metric, judge, run, err)
	}
	r := &runs[i]
	if len(task) == 0 {
		r.Custom = append(r.Custom, j)
		return nil
	}
	if ti, ok := taskIdx[[2]string{r.RunID, in.of(task)}]; ok {
		r.Tasks[ti].Custom = append(r.Tasks[ti].Custom, j)
	}
	return nil
}

// scanStrings reads a query's one text column.
func (w *Warehouse) scanStrings(ctx context.Context, q string, args ...any) ([]string, error) {
	var out []string
	err := w.scan(ctx, q, func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}, args...)
	return out, err
}

func (w *Warehouse) scan(ctx context.Context, q string, fn func(*sql.Rows) error, args ...any) error {
	rows, err := w.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("reading the warehouse: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("reading the warehouse: %w", err)
		}
	}
	return rows.Err()
}

// ConfigID names a configuration: "model | harness | effort".
func ConfigID(model, harness, effort string) string { return runlog.ConfigID(model, harness, effort) }

// ConfigKey names a configuration as a path-safe slug.
func ConfigKey(model, harness, effort string) string { return runlog.ConfigKey(model, harness, effort) }

// LoadRatings reads every human rating, in file and line order, then the
// answers of the annotation queues (not their tutorial items).
func (w *Warehouse) LoadRatings(ctx context.Context) ([]RatingRow, error) {
	var out []RatingRow
	err := w.EachRating(ctx, func(g *RatingRow) { out = append(out, *g) })
	return out, err
}

// EachRating calls fn with every human rating, in LoadRatings' order,
// holding none of them: the row passed is reused. The driver holds a
// query's whole result, so the ratings are read ratingBatch at a time,
// each batch after the last one's place in the order.
func (w *Warehouse) EachRating(ctx context.Context, fn func(*RatingRow)) error {
	in := interner{}
	var g RatingRow
	var file, line, rowid int64 = -1, 0, 0
	// A lake's views have no rowid to order ties by: when (file, line)
	// is unique, as ingest writes it, batches keyed by it alone; else one
	// batch (which at --scale 100 ran out of the report's 128MB).
	tie, batch := "rowid", ratingBatch
	if w.Lake {
		tie = "0"
		var unique bool
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) = count(DISTINCT (file_id, coalesce(src_line::BIGINT, 9223372036854775807))) FROM ratings`).Scan(&unique); err != nil {
			return fmt.Errorf("reading the warehouse: %w", err)
		}
		if !unique {
			batch = math.MaxInt
		}
	}
	for {
		n := 0
		// The batch is chosen from the ratings alone, then joined.
		err := w.scan(ctx, `WITH g AS (SELECT *, `+tie+` AS rid, coalesce(src_line::BIGINT, 9223372036854775807) AS sl FROM ratings
				WHERE file_id > ? OR (file_id = ? AND (sl > ? OR (sl = ? AND rid > ?)))
				ORDER BY file_id, sl, rid LIMIT `+strconv.Itoa(batch)+`)
			SELECT g.rater, g.question, g.value, coalesce(g.run_id, ''), coalesce(g.task, ''), coalesce(g.item, ''),
			coalesce(g.day, 0), coalesce(g.condition, ''), coalesce(r.scenario, ''), coalesce(r.config_id, ''),
			coalesce(f.path, ''), coalesce(g.src_line, 0), g.file_id, g.sl, g.rid
			FROM g LEFT JOIN runs r USING (run_id) LEFT JOIN ingested_files f ON f.file_id = g.file_id
			ORDER BY g.file_id, g.sl, g.rid`, func(rows *sql.Rows) error {
			var b [9]sql.RawBytes // names that repeat from rating to rating: interned
			if err := rows.Scan(&b[0], &b[1], &g.Value, &b[2], &b[3], &b[4], &g.Day, &b[5],
				&b[6], &b[7], &b[8], &g.Line, &file, &line, &rowid); err != nil {
				return err
			}
			g.Rater, g.Question, g.RunID, g.Task, g.Item = in.of(b[0]), in.of(b[1]), in.of(b[2]), in.of(b[3]), in.of(b[4])
			g.Condition, g.Scenario, g.ConfigID, g.File = in.of(b[5]), in.of(b[6]), in.of(b[7]), in.of(b[8])
			fn(&g)
			n++
			return nil
		}, file, file, line, line, rowid)
		if err != nil {
			return err
		}
		if n < batch {
			break
		}
	}
	// The answers given in gymlens serve's annotation queues.
	q, err := w.queueRatings(ctx)
	for i := range q {
		fn(&q[i])
	}
	return err
}

// Inputs lists the files ingested, in the order they were loaded.
func (w *Warehouse) Inputs(ctx context.Context) ([]InputFile, error) {
	var out []InputFile
	// A superseded file read again is listed once.
	err := w.scan(ctx, `SELECT path, sha256, size_bytes, format, records::VARCHAR FROM ingested_files
		WHERE NOT superseded OR sha256 NOT IN (SELECT sha256 FROM ingested_files WHERE NOT superseded) ORDER BY file_id`, func(rows *sql.Rows) error {
		var f InputFile
		var rec string
		if err := rows.Scan(&f.Path, &f.SHA256, &f.Size, &f.Format, &rec); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(rec), &f.Records); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// JudgeVersions lists the judges and prompt versions of the judgments.
func (w *Warehouse) JudgeVersions(ctx context.Context) ([]JudgeVersion, error) {
	var out []JudgeVersion
	err := w.scan(ctx, `SELECT judge, prompt, metric, count(*) FROM judgments GROUP BY ALL ORDER BY ALL`, func(rows *sql.Rows) error {
		var v JudgeVersion
		if err := rows.Scan(&v.Judge, &v.Prompt, &v.Metric, &v.Judgments); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// LoadPARERuns reads every PARE and Meta-ARE run, sorted by run id.
func (w *Warehouse) LoadPARERuns(ctx context.Context) ([]PARERun, error) {
	var runs []PARERun
	byID := map[string]int{}
	err := w.scan(ctx, `SELECT run_id, source, scenario, config_id, coalesce(skip_reason, ''), coalesce(capability, ''), coalesce(app_set, ''),
		coalesce(tool_noise, false), coalesce(env_noise, false), coalesce(llm_calls, 0), coalesce(prompt_tokens + completion_tokens, 'NaN'::DOUBLE),
		CASE WHEN has_exception THEN 'NaN'::DOUBLE WHEN validation = 'Valid' THEN 1 WHEN validation = 'Invalid' THEN 0 ELSE 'NaN'::DOUBLE END
		FROM pare_runs ORDER BY run_id`, func(rows *sql.Rows) error {
		var r PARERun
		if err := rows.Scan(&r.RunID, &r.Source, &r.Scenario, &r.ConfigID, &r.Skip, &r.Capability, &r.AppSet, &r.ToolNoise, &r.EnvNoise,
			&r.LLMCalls, &r.Tokens, &r.Success); err != nil {
			return err
		}
		byID[r.RunID] = len(runs)
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT run_id, t, actor, coalesce(function, ''), coalesce(operation, ''), coalesce(proactive_mode, ''), coalesce(turn, -1)
		FROM pare_events ORDER BY run_id, seq`, func(rows *sql.Rows) error {
		var id string
		var e PAREEvent
		if err := rows.Scan(&id, &e.T, &e.Actor, &e.Function, &e.Operation, &e.Mode, &e.Turn); err != nil {
			return err
		}
		if i, ok := byID[id]; ok {
			runs[i].Events = append(runs[i].Events, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT run_id, final_decision, coalesce(proposal_t, 'NaN'::DOUBLE), coalesce(decision_t, 'NaN'::DOUBLE)
		FROM decision_points ORDER BY run_id, sample_id`, func(rows *sql.Rows) error {
		var id string
		var d PAREDecision
		if err := rows.Scan(&id, &d.Final, &d.ProposalT, &d.DecisionT); err != nil {
			return err
		}
		if i, ok := byID[id]; ok {
			runs[i].Decisions = append(runs[i].Decisions, d)
		}
		return nil
	})
	return runs, err
}

// PARETextLimit is the most characters of an event's argument, result
// or message text, or of a proposal, that PARETexts reads (a result can
// be a mailbox).
const PARETextLimit = 4000

// PARETexts reads what a PARE run's events and proposals say, in the
// orders of LoadPARERuns (nil texts for a run not there).
func (w *Warehouse) PARETexts(ctx context.Context, id string) (*PARETexts, error) {
	out := &PARETexts{}
	err := w.scan(ctx, `SELECT left(coalesce(args->>'content', ''), ?), left(coalesce(CAST(args AS VARCHAR), ''), ?),
		left(coalesce(return_value, exception, ''), ?) FROM pare_events WHERE run_id = ? ORDER BY seq`, func(rows *sql.Rows) error {
		var e PAREEventText
		if err := rows.Scan(&e.Text, &e.Args, &e.Result); err != nil {
			return err
		}
		out.Events = append(out.Events, e)
		return nil
	}, PARETextLimit, PARETextLimit, PARETextLimit, id)
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT left(coalesce(proposal, ''), ?) FROM decision_points WHERE run_id = ? ORDER BY sample_id`, func(rows *sql.Rows) error {
		var p string
		if err := rows.Scan(&p); err != nil {
			return err
		}
		out.Proposals = append(out.Proposals, p)
		return nil
	}, PARETextLimit, id)
	return out, err
}

// LoadPARESamples reads the PARE samples, with their annotations, sorted
// by sample id; annotations of samples not ingested are returned apart.
func (w *Warehouse) LoadPARESamples(ctx context.Context) ([]PARESampleRow, int, error) {
	var out []PARESampleRow
	idx := map[string]int{}
	err := w.scan(ctx, `SELECT sample_id, any_value(user_agent_decision), coalesce(any_value(correct_decision), '')
		FROM pare_samples GROUP BY sample_id ORDER BY sample_id`, func(rows *sql.Rows) error {
		var s PARESampleRow
		if err := rows.Scan(&s.SampleID, &s.Simulated, &s.Correct); err != nil {
			return err
		}
		s.Humans = map[string]string{}
		idx[s.SampleID] = len(out)
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	orphans := 0
	err = w.scan(ctx, `SELECT sample_id, annotator, human_decision FROM pare_annotations ORDER BY file_id, src_line`, func(rows *sql.Rows) error {
		var id, who, d string
		if err := rows.Scan(&id, &who, &d); err != nil {
			return err
		}
		if i, ok := idx[id]; ok {
			out[i].Humans[who] = d
		} else {
			orphans++
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	// The decisions given in gymlens serve's PARE queues.
	err = w.scan(ctx, `SELECT i.sample_id, a.annotator, a.choice FROM annotation_answers a
		JOIN annotation_items i ON i.queue = a.queue AND i.item = a.item JOIN annotation_queues q ON q.queue = a.queue
		WHERE q.kind = 'pare' AND NOT i.tutorial AND a.choice IS NOT NULL ORDER BY a.queue, i.position, a.annotator`, func(rows *sql.Rows) error {
		var id, who, d string
		if err := rows.Scan(&id, &who, &d); err != nil {
			return err
		}
		if i, ok := idx[id]; ok {
			out[i].Humans[who] = d
		}
		return nil
	})
	return out, orphans, err
}

// LoadPAREResults reads the result rows, sorted by result id.
func (w *Warehouse) LoadPAREResults(ctx context.Context) ([]PAREResultRow, error) {
	var out []PAREResultRow
	err := w.scan(ctx, `SELECT r.result_id, r.source, r.scenario, r.config_id, r.status, coalesce(r.run_number, -1), coalesce(r.success, 'NaN'::DOUBLE),
		coalesce(r.run_id, ''), coalesce(r.run_duration, 'NaN'::DOUBLE), coalesce(r.job_duration, 'NaN'::DOUBLE),
		coalesce(r.proposal_count::DOUBLE, 'NaN'), coalesce(r.acceptance_count::DOUBLE, 'NaN'), coalesce(r.read_only_actions::DOUBLE, 'NaN'),
		coalesce(r.write_actions::DOUBLE, 'NaN'), coalesce(r.number_of_turns::DOUBLE, 'NaN'),
		coalesce(r.proposal_rate, 'NaN'::DOUBLE), coalesce(r.acceptance_rate, 'NaN'::DOUBLE),
		coalesce(r.capability, ''), coalesce(r.phase, ''), r.tool_failure_probability, r.env_events_per_minute, f.path, r.src_line
		FROM pare_results r JOIN ingested_files f USING (file_id) ORDER BY r.result_id`, func(rows *sql.Rows) error {
		var x PAREResultRow
		var tfp sql.NullFloat64
		var epm sql.NullInt64
		if err := rows.Scan(&x.ResultID, &x.Source, &x.Scenario, &x.ConfigID, &x.Status, &x.RunNumber, &x.Success, &x.RunID,
			&x.RunDuration, &x.JobDuration, &x.Counts[0], &x.Counts[1], &x.Counts[2], &x.Counts[3], &x.Counts[4],
			&x.ProposalRate, &x.AcceptanceRate, &x.Capability, &x.Phase, &tfp, &epm, &x.File, &x.Line); err != nil {
			return err
		}
		res := pare.Result{Source: x.Source, Phase: x.Phase}
		if tfp.Valid {
			res.ToolFailure = &tfp.Float64
		}
		if epm.Valid {
			n := int(epm.Int64)
			res.EnvEvents = &n
		}
		x.Noise = res.NoiseClass()
		out = append(out, x)
		return nil
	})
	return out, err
}

// LoadPAREReports reads the summary reports, in file and line order.
func (w *Warehouse) LoadPAREReports(ctx context.Context) ([]PAREReportRow, error) {
	var out []PAREReportRow
	err := w.scan(ctx, `SELECT r.source, r.kind, r.section, r.config_id, r.stats::VARCHAR, f.path, r.src_line
		FROM pare_reports r JOIN ingested_files f USING (file_id) ORDER BY r.file_id, r.src_line, r.section`, func(rows *sql.Rows) error {
		var x PAREReportRow
		var raw string
		if err := rows.Scan(&x.Source, &x.Kind, &x.Section, &x.ConfigID, &raw, &x.File, &x.Line); err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return err
		}
		x.Stats = map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				x.Stats[k] = f
			}
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

// Steps lists what made the warehouse's content: the ingests that read
// files (options and files, in order), the rescoring and the judge's
// calls, grouped by judge, model, prompt version and parameters. No time
// is included: the same steps give the same list.
func (w *Warehouse) Steps(ctx context.Context) (*Steps, error) {
	s := &Steps{Ingests: []IngestStep{}, Scores: []ScoreStep{}, Judge: []JudgeStep{}}
	at := map[int]int{}
	err := w.scan(ctx, `SELECT i.ingest_id, coalesce(i.options::VARCHAR, '{}'), i.records, i.rejected, f.path
		FROM ingests i JOIN ingested_files f USING (ingest_id) ORDER BY i.ingest_id, f.file_id`, func(rows *sql.Rows) error {
		var id int
		var opts, path string
		var rec, rej int64
		if err := rows.Scan(&id, &opts, &rec, &rej, &path); err != nil {
			return err
		}
		k, ok := at[id]
		if !ok {
			st := IngestStep{Ingest: id, Records: rec, Rejected: rej}
			if err := json.Unmarshal([]byte(opts), &st.Options); err != nil {
				return fmt.Errorf("ingest %d: options: %w", id, err)
			}
			k, at[id] = len(s.Ingests), len(s.Ingests)
			s.Ingests = append(s.Ingests, st)
		}
		s.Ingests[k].Files = append(s.Ingests[k].Files, path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT prefer, count(*) FROM task_scores GROUP BY ALL ORDER BY ALL`, func(rows *sql.Rows) error {
		var st ScoreStep
		if err := rows.Scan(&st.Prefer, &st.Tasks); err != nil {
			return err
		}
		s.Scores = append(s.Scores, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT c.judge, c.model, c.prompt, coalesce(any_value(r.digest), ''), c.params, count(*), count(*) FILTER (WHERE c.status = 'valid')
		FROM judge_calls c LEFT JOIN judge_rubrics r USING (prompt) GROUP BY c.judge, c.model, c.prompt, c.params ORDER BY ALL`, func(rows *sql.Rows) error {
		var st JudgeStep
		if err := rows.Scan(&st.Judge, &st.Model, &st.Prompt, &st.PromptSHA256, &st.Params, &st.Calls, &st.Valid); err != nil {
			return err
		}
		s.Judge = append(s.Judge, st)
		return nil
	})
	return s, err
}

// DataDate is the latest time the runs record (their ends, else their
// starts); zero when no run records one.
func (w *Warehouse) DataDate(ctx context.Context) (time.Time, error) {
	var t sql.NullTime
	err := w.db.QueryRowContext(ctx, `SELECT max(coalesce(end_t, start_t)) FROM runs`).Scan(&t)
	if err != nil || !t.Valid {
		return time.Time{}, err
	}
	return t.Time, nil
}
