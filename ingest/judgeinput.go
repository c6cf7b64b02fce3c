package ingest

import (
	"context"
	"database/sql"
	"time"
)

// JudgeRun is one run with what judge inputs are built from. It carries
// no model, harness or configuration: judges must not see them.
type JudgeRun struct {
	RunID                 string // for the warehouse only; never put in a prompt
	Scenario, Domain      string
	ScenarioTitle         string
	Persona, PersonaGroup string
	PersonaLabel          string
	TAStart, TAEnd        *time.Time
	TAUrgent, TADeferable string
	Tasks                 []JudgeTask // active tasks
	Events                []JudgeEvent
}

// JudgeTask is an active task.
type JudgeTask struct {
	Task, Chosen string
	FinalSeq     *int64
	Rubric       string // JSON, "" when none
}

// JudgeEvent is one trajectory record.
type JudgeEvent struct {
	Seq                                 int64
	T                                   time.Time
	Actor, Kind, Task, Text, Tool, Args string
	Result                              string
	Visible                             bool
}

// ScanJudgeRuns calls fn with each run, its active tasks and its events,
// one run at a time, in run order.
func (w *Warehouse) ScanJudgeRuns(ctx context.Context, fn func(*JudgeRun) error) error {
	runs := map[string]*JudgeRun{}
	err := w.scan(ctx, `SELECT r.run_id, r.scenario, coalesce(r.domain, ''), coalesce(r.scenario_title, ''), r.persona,
		coalesce(r.persona_group, ''), coalesce(r.persona_label, ''), s.ta_window_start, s.ta_window_end,
		coalesce(s.ta_urgent, ''), coalesce(s.ta_deferrable, '')
		FROM run_view r LEFT JOIN scenarios s USING (scenario)`, func(rows *sql.Rows) error {
		r := &JudgeRun{}
		var ws, we sql.NullTime
		if err := rows.Scan(&r.RunID, &r.Scenario, &r.Domain, &r.ScenarioTitle, &r.Persona, &r.PersonaGroup, &r.PersonaLabel,
			&ws, &we, &r.TAUrgent, &r.TADeferable); err != nil {
			return err
		}
		if ws.Valid && we.Valid {
			r.TAStart, r.TAEnd = &ws.Time, &we.Time
		}
		runs[r.RunID] = r
		return nil
	})
	if err != nil {
		return err
	}
	err = w.scan(ctx, `SELECT o.run_id, o.task, coalesce(sc.effective_chosen, o.chosen_depth, ''), o.final_seq, coalesce(ts.rubric::VARCHAR, '')
		FROM task_outcomes o JOIN runs r USING (run_id)
		LEFT JOIN task_specs ts ON ts.scenario = r.scenario AND ts.task = o.task
		LEFT JOIN task_scores sc ON sc.run_id = o.run_id AND sc.task = o.task
		WHERE o.active ORDER BY o.run_id, coalesce(ts.ordinal, 0), o.task`, func(rows *sql.Rows) error {
		var id string
		var t JudgeTask
		var fs sql.NullInt64
		if err := rows.Scan(&id, &t.Task, &t.Chosen, &fs, &t.Rubric); err != nil {
			return err
		}
		if fs.Valid {
			t.FinalSeq = &fs.Int64
		}
		if r := runs[id]; r != nil {
			r.Tasks = append(r.Tasks, t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var cur *JudgeRun
	err = w.scan(ctx, `SELECT run_id, seq, t, actor, kind, coalesce(task, ''), coalesce(text, ''), coalesce(tool, ''),
		coalesce(args::VARCHAR, ''), coalesce(CASE WHEN json_type(result) = 'VARCHAR' THEN result->>'$' ELSE result::VARCHAR END, ''), visible
		FROM events ORDER BY run_id, seq`, func(rows *sql.Rows) error {
		var id string
		var e JudgeEvent
		if err := rows.Scan(&id, &e.Seq, &e.T, &e.Actor, &e.Kind, &e.Task, &e.Text, &e.Tool, &e.Args, &e.Result, &e.Visible); err != nil {
			return err
		}
		if cur == nil || cur.RunID != id {
			if cur != nil {
				if err := fn(cur); err != nil {
					return err
				}
				delete(runs, cur.RunID)
			}
			cur = runs[id]
			if cur == nil {
				cur = &JudgeRun{RunID: id}
			}
		}
		cur.Events = append(cur.Events, e)
		return nil
	})
	if err != nil {
		return err
	}
	if cur != nil {
		if err := fn(cur); err != nil {
			return err
		}
		delete(runs, cur.RunID)
	}
	return nil
}
