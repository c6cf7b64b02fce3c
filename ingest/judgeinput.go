package ingest

import (
	"context"
	"database/sql"
	"math"
)

// JudgeHeads returns the runs after run id after ("": from the first),
// at most n of them (n ≤ 0: every one), in run order, each with its
// active tasks and what identifies its content, without its events: the
// judge reads a slice of runs at a time.
func (w *Warehouse) JudgeHeads(ctx context.Context, after string, n int) ([]*JudgeRun, error) {
	limit := int64(n)
	if n <= 0 {
		limit = math.MaxInt64
	}
	var runs []*JudgeRun
	byID := map[string]*JudgeRun{}
	// The same texts (scenarios, personas, rubrics, task names) recur in
	// every run: each is held once.
	texts := map[string]string{}
	one := func(p *string) {
		if t, ok := texts[*p]; ok {
			*p = t
		} else {
			texts[*p] = *p
		}
	}
	err := w.scan(ctx, `SELECT r.run_id, r.scenario, coalesce(r.domain, ''), coalesce(r.scenario_title, ''), r.persona,
		coalesce(r.persona_group, ''), coalesce(r.persona_label, ''), s.ta_window_start, s.ta_window_end,
		coalesce(s.ta_urgent, ''), coalesce(s.ta_deferrable, ''), rr.content_hash, coalesce(s.content_hash, 0)
		FROM run_view r JOIN runs rr USING (run_id) LEFT JOIN scenarios s ON s.scenario = r.scenario
		WHERE r.run_id > ? ORDER BY r.run_id LIMIT ?`, func(rows *sql.Rows) error {
		r := &JudgeRun{}
		var ws, we sql.NullTime
		if err := rows.Scan(&r.RunID, &r.Scenario, &r.Domain, &r.ScenarioTitle, &r.Persona, &r.PersonaGroup, &r.PersonaLabel,
			&ws, &we, &r.TAUrgent, &r.TADeferable, &r.RunHash, &r.ScenarioHash); err != nil {
			return err
		}
		if ws.Valid && we.Valid {
			r.TAStart, r.TAEnd = &ws.Time, &we.Time
		}
		for _, p := range []*string{&r.Scenario, &r.Domain, &r.ScenarioTitle, &r.Persona, &r.PersonaGroup, &r.PersonaLabel, &r.TAUrgent, &r.TADeferable} {
			one(p)
		}
		runs = append(runs, r)
		byID[r.RunID] = r
		return nil
	}, after, limit)
	if err != nil || len(runs) == 0 {
		return runs, err
	}
	err = w.scan(ctx, `SELECT o.run_id, o.task, coalesce(sc.effective_chosen, o.chosen_depth, ''), o.final_seq, coalesce(ts.rubric::VARCHAR, '')
		FROM task_outcomes o JOIN runs r USING (run_id)
		LEFT JOIN task_specs ts ON ts.scenario = r.scenario AND ts.task = o.task
		LEFT JOIN task_scores sc ON sc.run_id = o.run_id AND sc.task = o.task
		WHERE o.active AND o.run_id BETWEEN ? AND ? ORDER BY o.run_id, coalesce(ts.ordinal, 0), o.task`, func(rows *sql.Rows) error {
		var id string
		var t JudgeTask
		var fs sql.NullInt64
		if err := rows.Scan(&id, &t.Task, &t.Chosen, &fs, &t.Rubric); err != nil {
			return err
		}
		if fs.Valid {
			t.FinalSeq = &fs.Int64
		}
		one(&t.Task)
		one(&t.Chosen)
		one(&t.Rubric)
		if r := byID[id]; r != nil {
			r.Tasks = append(r.Tasks, t)
		}
		return nil
	}, runs[0].RunID, runs[len(runs)-1].RunID)
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// ScanJudgeEvents fills in the events of each of runs (which must be in run
// order, as JudgeHeads gives them) and calls fn with it, one run at a time,
// in that order; a run without events is given too. The events are
// dropped again after fn returns.
func (w *Warehouse) ScanJudgeEvents(ctx context.Context, runs []*JudgeRun, fn func(*JudgeRun) error) error {
	// A batch of runs at a time: the driver holds a query's whole result
	// in memory, and every event of a large warehouse is gigabytes.
	for lo := 0; lo < len(runs); lo += eventBatch {
		if err := w.scanJudgeEvents(ctx, runs[lo:min(lo+eventBatch, len(runs))], fn); err != nil {
			return err
		}
	}
	return nil
}

// eventBatch is how many runs' events ScanJudgeEvents reads at once.
const eventBatch = 400

func (w *Warehouse) scanJudgeEvents(ctx context.Context, runs []*JudgeRun, fn func(*JudgeRun) error) error {
	if len(runs) == 0 {
		return nil
	}
	q := `SELECT run_id, seq, t, actor, kind, coalesce(task, ''), coalesce(text, ''), coalesce(tool, ''),
		coalesce(args::VARCHAR, ''), coalesce(CASE WHEN json_type(result) = 'VARCHAR' THEN result->>'$' ELSE result::VARCHAR END, ''), visible
		FROM events WHERE run_id BETWEEN ? AND ? AND run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, seq`
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	// The range lets DuckDB skip the row groups of other runs (a large
	// warehouse's events are scanned a slice at a time).
	args := []any{runs[0].RunID, runs[len(runs)-1].RunID, ids}
	next := 0 // the next run to give to fn
	var cur *JudgeRun
	give := func(r *JudgeRun) error {
		err := fn(r)
		r.Events = nil
		return err
	}
	// upTo gives fn every run before id that has no events.
	upTo := func(id string) error {
		for next < len(runs) && runs[next].RunID < id {
			if err := give(runs[next]); err != nil {
				return err
			}
			next++
		}
		return nil
	}
	skip := ""
	err := w.scan(ctx, q, func(rows *sql.Rows) error {
		var id string
		var e JudgeEvent
		if err := rows.Scan(&id, &e.Seq, &e.T, &e.Actor, &e.Kind, &e.Task, &e.Text, &e.Tool, &e.Args, &e.Result, &e.Visible); err != nil {
			return err
		}
		if cur != nil && cur.RunID == id {
			cur.Events = append(cur.Events, e)
			return nil
		}
		if id == skip {
			return nil
		}
		if cur != nil {
			if err := give(cur); err != nil {
				return err
			}
			cur = nil
		}
		if err := upTo(id); err != nil {
			return err
		}
		if next < len(runs) && runs[next].RunID == id {
			cur = runs[next]
			next++
			cur.Events = append(cur.Events, e)
		} else {
			skip = id // not asked for
		}
		return nil
	}, args...)
	if err != nil {
		return err
	}
	if cur != nil {
		if err := give(cur); err != nil {
			return err
		}
	}
	for ; next < len(runs); next++ {
		if err := give(runs[next]); err != nil {
			return err
		}
	}
	return nil
}
