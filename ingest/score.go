package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// LoadScenarioSpecs reads every scenario's tools and task specs.
func (w *Warehouse) LoadScenarioSpecs(ctx context.Context) (map[string]*ScenarioSpec, error) {
	specs := map[string]*ScenarioSpec{}
	get := func(id string) *ScenarioSpec {
		s := specs[id]
		if s == nil {
			s = &ScenarioSpec{Tools: map[string]string{}, Tasks: map[string]TaskSpecRow{}}
			specs[id] = s
		}
		return s
	}
	if err := w.scan(ctx, `SELECT scenario, tool, depth_class FROM scenario_tools`, func(rows *sql.Rows) error {
		var s, t, d string
		if err := rows.Scan(&s, &t, &d); err != nil {
			return err
		}
		get(s).Tools[t] = d
		return nil
	}); err != nil {
		return nil, err
	}
	if err := w.scan(ctx, `SELECT scenario, task, after_approval, coalesce(after_denial, ''), rubric::VARCHAR FROM task_specs`, func(rows *sql.Rows) error {
		var s, t, aa, ad string
		var rub sql.NullString
		if err := rows.Scan(&s, &t, &aa, &ad, &rub); err != nil {
			return err
		}
		spec := TaskSpecRow{ExpectedDepth: map[string]string{}, AfterApproval: aa, AfterDenial: ad}
		if rub.Valid {
			spec.Rubric = []byte(rub.String)
		}
		get(s).Tasks[t] = spec
		return nil
	}); err != nil {
		return nil, err
	}
	err := w.scan(ctx, `SELECT scenario, task, persona, depth FROM task_expected_depths`, func(rows *sql.Rows) error {
		var s, t, p, d string
		if err := rows.Scan(&s, &t, &p, &d); err != nil {
			return err
		}
		if spec, ok := get(s).Tasks[t]; ok {
			spec.ExpectedDepth[p] = d
		}
		return nil
	})
	return specs, err
}

// ScanScoreTasks calls fn with every active task and its credited records,
// one at a time, in run and task order: memory holds one task.
func (w *Warehouse) ScanScoreTasks(ctx context.Context, fn func(*ScoreTask) error) error {
	// A range of runs at a time: the driver holds a query's whole result
	// in memory, and every credited event of a large warehouse is a lot.
	ids, err := w.scanStrings(ctx, `SELECT run_id FROM runs ORDER BY run_id`)
	if err != nil {
		return err
	}
	for lo := 0; lo < len(ids); lo += scoreBatch {
		if err := w.scanScoreTasks(ctx, ids[lo], ids[min(lo+scoreBatch, len(ids))-1], fn); err != nil {
			return err
		}
	}
	return nil
}

// scoreBatch is how many runs' tasks and events ScanScoreTasks reads at
// once. Each query also scans the row groups whose run ids share their
// first eight bytes with the range's (DuckDB's bounds of a string
// column), a cost that grows with the warehouse: 500 runs took 0.18–0.21 s
// at --scale 10 and 0.23–0.41 s at --scale 100, 2,000 runs 0.56–0.74 s at
// both (docs/benchmarks.md).
const scoreBatch = 2000

func (w *Warehouse) scanScoreTasks(ctx context.Context, from, to string, fn func(*ScoreTask) error) error {
	var cur *ScoreTask
	err := w.scan(ctx, `SELECT o.run_id, r.scenario, r.persona, o.task, coalesce(o.expected_depth, ''), coalesce(o.chosen_depth, ''),
		o.rules_logged, o.rule_evidence, o.rule_outputs, o.rule_constraints,
		e.seq, e.actor, e.kind, coalesce(e.tool, ''), coalesce(e.depth, ''), coalesce(e.decision, ''), coalesce(e.text, ''), coalesce(e.args::VARCHAR, '')
		FROM task_outcomes o JOIN runs r USING (run_id)
		LEFT JOIN events e ON e.run_id = o.run_id AND e.task = o.task
		WHERE o.active AND o.run_id BETWEEN ? AND ? ORDER BY o.run_id, o.task, e.seq`, func(rows *sql.Rows) error {
		var t ScoreTask
		var seq sql.NullInt64
		var ev ScoreEvent
		var actor, kind sql.NullString
		if err := rows.Scan(&t.RunID, &t.Scenario, &t.Persona, &t.Task, &t.LoggedExpected, &t.LoggedChosen, &t.RulesLogged,
			&t.LoggedRules[0], &t.LoggedRules[1], &t.LoggedRules[2], &seq, &actor, &kind, &ev.Tool, &ev.Depth, &ev.Decision, &ev.Text, &ev.Args); err != nil {
			return err
		}
		if cur == nil || cur.RunID != t.RunID || cur.Task != t.Task {
			if cur != nil {
				if err := fn(cur); err != nil {
					return err
				}
			}
			cur = &t
		}
		if seq.Valid {
			ev.Seq, ev.Actor, ev.Kind = seq.Int64, actor.String, kind.String
			cur.Events = append(cur.Events, ev)
		}
		return nil
	}, from, to)
	if err != nil {
		return err
	}
	if cur != nil {
		return fn(cur)
	}
	return nil
}

// Personas reads every scenario's personas (name, group, label), in
// scenario and name order.
func (w *Warehouse) Personas(ctx context.Context) ([]rows.Persona, error) {
	rs, err := w.db.QueryContext(ctx, `SELECT s.scenario, p.key, coalesce(p.value->>'group', ''), coalesce(p.value->>'label', '')
		FROM scenarios s, json_each(s.spec->'personas') p ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []rows.Persona
	for rs.Next() {
		var p rows.Persona
		if err := rs.Scan(&p.Scenario, &p.Name, &p.Group, &p.Label); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rs.Err()
}

// Scored says whether rescoring results are stored.
func (w *Warehouse) Scored(ctx context.Context) (bool, error) {
	var n int64
	err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM task_scores LIMIT 1)`).Scan(&n)
	return n > 0, err
}

// WriteScores replaces the rescoring results by scores, in one
// transaction.
func (w *Warehouse) WriteScores(ctx context.Context, scores []TaskScore) error {
	return w.ReplaceScores(ctx, func(emit func(TaskScore) error) error {
		for _, s := range scores {
			if err := emit(s); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReplaceScores replaces the rescoring results, in one transaction, by
// those produce emits as it computes them: nothing holds them all (3.3
// million tasks at --scale 100). When produce fails the stored ones stay.
func (w *Warehouse) ReplaceScores(ctx context.Context, produce func(emit func(TaskScore) error) error) error {
	if w.ReadOnly {
		return ErrReadOnly
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if _, err := conn.ExecContext(ctx, invalidateInputs); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "DELETE FROM task_scores"); err != nil {
		return err
	}
	now := time.Now().UTC()
	err = conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", "task_scores")
		if err != nil {
			return err
		}
		err = produce(func(s TaskScore) error {
			return a.AppendRow(s.RunID, s.Task, s.DerivedExpected, s.DerivedChosen,
				floatOrNil(s.DerivedRules[0]), floatOrNil(s.DerivedRules[1]), floatOrNil(s.DerivedRules[2]),
				s.EffectiveExpected, s.EffectiveChosen,
				floatOrNil(s.EffectiveRules[0]), floatOrNil(s.EffectiveRules[1]), floatOrNil(s.EffectiveRules[2]), s.Prefer, now)
		})
		if err != nil {
			a.Close()
			return err
		}
		return a.Close()
	})
	if err != nil {
		return fmt.Errorf("writing the scores: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	if err := w.RefreshRunInputs(ctx); err != nil {
		return fmt.Errorf("the scores are written, but %w (the analyses read the tables meanwhile)", err)
	}
	return nil
}
