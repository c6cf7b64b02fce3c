package ingest

import (
	"context"
	"fmt"
)

// Query runs read-only SQL and returns the column names and rows. The
// warehouse must have been opened read-only; external file access is
// switched off for the session, so a query cannot read or write files.
func (w *Warehouse) Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error) {
	if !w.ReadOnly {
		return nil, nil, fmt.Errorf("query needs a warehouse opened read-only")
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	for _, s := range []string{"SET enable_external_access = false", "SET lock_configuration = true"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return nil, nil, err
		}
	}
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

// Counts returns the number of rows of each data table, for summaries.
func (w *Warehouse) Counts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range []string{"scenarios", "runs", "events", "task_outcomes", "judgments", "ratings"} {
		var n int64
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return nil, err
		}
		out[t] = n
	}
	var n int64
	if err := w.db.QueryRowContext(ctx, `SELECT count(DISTINCT config_id) FROM runs`).Scan(&n); err != nil {
		return nil, err
	}
	out["configurations"] = n
	return out, nil
}

// Summary is one row per configuration: its runs, events, active tasks and
// judgments.
func (w *Warehouse) Summary(ctx context.Context) ([]string, [][]any, error) {
	q := `SELECT r.config_id AS configuration, count(*) AS runs,
	        sum(e.n) AS events, sum(t.n) AS active_tasks, sum(j.n) AS judgments
	      FROM runs r
	      LEFT JOIN (SELECT run_id, count(*) AS n FROM events GROUP BY ALL) e USING (run_id)
	      LEFT JOIN (SELECT run_id, count(*) AS n FROM task_outcomes WHERE active GROUP BY ALL) t USING (run_id)
	      LEFT JOIN (SELECT run_id, count(*) AS n FROM judgments GROUP BY ALL) j USING (run_id)
	      GROUP BY ALL ORDER BY configuration`
	rows, err := w.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols := []string{"configuration", "runs", "events", "active_tasks", "judgments"}
	var out [][]any
	for rows.Next() {
		var c string
		var n, ev, at, j int64
		var evN, atN, jN *int64
		if err := rows.Scan(&c, &n, &evN, &atN, &jN); err != nil {
			return nil, nil, err
		}
		if evN != nil {
			ev = *evN
		}
		if atN != nil {
			at = *atN
		}
		if jN != nil {
			j = *jN
		}
		out = append(out, []any{c, n, ev, at, j})
	}
	return cols, out, rows.Err()
}
