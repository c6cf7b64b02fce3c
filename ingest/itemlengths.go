package ingest

import (
	"context"
	"database/sql"
)

// ItemLengths are the lengths in characters of the items the judges read
// (judge.Items), counted as the characters of each record's text, tool
// arguments and result as the judge reads them (a string result without
// its quotes): kind "tc", a task's records up to its final turn;
// "trj", the records the user saw up to the task's final turn (visible
// records, the user's own, notifications); "ta", the records inside the
// scenario's decision window (task ""). They are kept by run as the
// judges' bias measures read them.
type ItemLengths struct {
	runs  map[string]int32 // run id → place in tasks
	ta    []float64        // by run place; -1: no window
	tasks []map[string][2]float64
}

// Length is the length of the item of kind (tc, trj, ta) of a run's task.
func (l *ItemLengths) Length(runID, kind, task string) (float64, bool) {
	i, ok := l.runs[runID]
	if !ok {
		return 0, false
	}
	switch kind {
	case "ta":
		return l.ta[i], l.ta[i] >= 0
	case "tc", "trj":
		v, ok := l.tasks[i][task]
		if !ok {
			return 0, false
		}
		if kind == "tc" {
			return v[0], true
		}
		return v[1], true
	}
	return 0, false
}

// LoadItemLengths counts every item's length (ItemLengths) in one pass
// of the warehouse's events per kind.
func (w *Warehouse) LoadItemLengths(ctx context.Context) (*ItemLengths, error) {
	l := &ItemLengths{runs: map[string]int32{}}
	place := func(id string) int32 {
		i, ok := l.runs[id]
		if !ok {
			i = int32(len(l.ta))
			l.runs[id] = i
			l.ta = append(l.ta, -1)
			l.tasks = append(l.tasks, nil)
		}
		return i
	}
	// As ScanJudgeEvents gives them to the judge: a result that is a JSON
	// string without its quotes.
	const chars = `length(coalesce(e.text, '')) + length(coalesce(e.args::VARCHAR, '')) +
		length(coalesce(CASE WHEN json_type(e.result) = 'VARCHAR' THEN e.result->>'$' ELSE e.result::VARCHAR END, ''))`
	err := w.scan(ctx, `SELECT o.run_id, o.task,
		coalesce(sum(`+chars+`) FILTER (WHERE e.task = o.task), 0),
		coalesce(sum(`+chars+`) FILTER (WHERE e.visible OR e.actor = 'user' OR (e.actor = 'env' AND e.kind = 'notification')), 0)
		FROM task_outcomes o JOIN events e ON e.run_id = o.run_id AND e.seq <= coalesce(o.final_seq, 9223372036854775807)
		WHERE o.active GROUP BY o.run_id, o.task ORDER BY o.run_id, o.task`, func(rows *sql.Rows) error {
		var id, task string
		var tc, trj float64
		if err := rows.Scan(&id, &task, &tc, &trj); err != nil {
			return err
		}
		i := place(id)
		if l.tasks[i] == nil {
			l.tasks[i] = map[string][2]float64{}
		}
		l.tasks[i][task] = [2]float64{tc, trj}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT r.run_id, coalesce(sum(`+chars+`), 0)
		FROM runs r JOIN scenarios s ON s.scenario = r.scenario
		LEFT JOIN events e ON e.run_id = r.run_id AND e.t BETWEEN s.ta_window_start AND s.ta_window_end
		WHERE s.ta_window_start IS NOT NULL AND s.ta_window_end IS NOT NULL GROUP BY r.run_id ORDER BY r.run_id`, func(rows *sql.Rows) error {
		var id string
		var n float64
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		l.ta[place(id)] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ItemLengthFunc is LoadItemLengths as the function the judges' bias
// measures read (reports.ItemLengthStore).
func (w *Warehouse) ItemLengthFunc(ctx context.Context) (func(runID, kind, task string) (float64, bool), error) {
	l, err := w.LoadItemLengths(ctx)
	if err != nil {
		return nil, err
	}
	return l.Length, nil
}
