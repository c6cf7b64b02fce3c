package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// Query runs read-only SQL and returns the column names and rows (see
// QueryFunc, which streams them).
func (w *Warehouse) Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error) {
	var cols []string
	var out [][]any
	err := w.QueryFunc(ctx, query, func(c []string) error { cols = c; return nil },
		func(vals []any) error { out = append(out, append([]any(nil), vals...)); return nil }, args...)
	return cols, out, err
}

// QueryFunc runs one read-only SQL statement and calls head with the column
// names, then row with each row's values in order (the slice is reused:
// copy what you keep), so that a result of any size passes in bounded
// memory. Only read statements run — SELECT, WITH, VALUES, FROM,
// DESCRIBE, SHOW, SUMMARIZE, as DuckDB's parser classifies them; anything
// else (CALL, PRAGMA, SET, COPY, ATTACH, a second statement …) is refused
// before it runs. The warehouse must have been opened read-only; external
// file access is switched off for the session, so a query cannot read or
// write files.
func (w *Warehouse) QueryFunc(ctx context.Context, query string, head func(cols []string) error, row func(vals []any) error, args ...any) error {
	if !w.ReadOnly {
		return fmt.Errorf("query needs a warehouse opened read-only")
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A pooled connection may be locked down already, by an earlier query.
	var locked bool
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('lock_configuration')`).Scan(&locked); err != nil {
		return err
	}
	if !locked {
		// Results keep the query's order when they are paged (below). A
		// lake's views read its Parquet files: that folder, and no other,
		// stays readable.
		lock := []string{"SET preserve_insertion_order = true", "SET enable_external_access = false", "SET lock_configuration = true"}
		if w.Lake {
			abs, err := filepath.Abs(w.Path)
			if err != nil {
				return err
			}
			lock = append([]string{"SET allowed_directories = [" + sqlString(abs+string(filepath.Separator)) + "]"}, lock...)
		}
		for _, s := range lock {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return err
			}
		}
	}
	var external bool
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('enable_external_access')`).Scan(&external); err != nil || external {
		return fmt.Errorf("query: cannot switch off file access on this connection (%w)", err)
	}
	if err := checkReadStatement(ctx, conn, query); err != nil {
		return err
	}
	// The driver hands over a result only once DuckDB has materialised it
	// whole, in Go memory. So the result goes into a temporary table
	// inside DuckDB (held within its memory limit, spilled to disk past
	// it) and comes out a page at a time, in the query's order. The query
	// is one read statement (checked above), written on lines of its own
	// so that a trailing comment cannot swallow the parenthesis.
	page := "SELECT * FROM _gymlens_result WHERE rowid >= ? AND rowid < ? ORDER BY rowid"
	var n int64
	if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE _gymlens_result AS (\n"+query+"\n)", args...); err != nil {
		if !strings.Contains(err.Error(), "requires a SELECT clause") {
			return queryError(err)
		}
		// DESCRIBE, SHOW and SUMMARIZE cannot be a table's source; their
		// results are small: read them directly.
		page, args, n = query, nil, 0
	} else {
		defer conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS _gymlens_result")
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM _gymlens_result").Scan(&n); err != nil {
			return queryError(err)
		}
	}
	var vals, ptrs []any
	for lo := int64(0); lo == 0 || lo < n; lo += queryPage {
		pageArgs := []any{lo, lo + queryPage}
		if page == query {
			pageArgs = nil
		}
		rows, err := conn.QueryContext(ctx, page, pageArgs...)
		if err != nil {
			return queryError(err)
		}
		if lo == 0 {
			cols, err := rows.Columns()
			if err == nil {
				err = head(cols)
			}
			if err != nil {
				rows.Close()
				return err
			}
			vals, ptrs = make([]any, len(cols)), make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
		}
		for rows.Next() {
			clear(vals)
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return queryError(err)
			}
			for i, v := range vals {
				if d, ok := v.(duckdb.Decimal); ok {
					vals[i] = json.Number(d.String()) // exact, written as a number
				}
			}
			if err := row(vals); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return queryError(err)
		}
	}
	return nil
}

// queryPage is how many rows of a query's result are in Go memory at once.
const queryPage = 20000

// checkReadStatement lets through one statement that DuckDB's parser can
// serialise as a SELECT (an allow-list: json_serialize_sql refuses every
// other kind), checked before anything runs — the driver executes all but
// the last of several statements while preparing them.
func checkReadStatement(ctx context.Context, conn *sql.Conn, query string) error {
	var js string
	if err := conn.QueryRowContext(ctx, `SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`, query).Scan(&js); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	var parsed struct {
		Error      bool              `json:"error"`
		ErrorType  string            `json:"error_type"`
		Message    string            `json:"error_message"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(js), &parsed); err != nil {
		return fmt.Errorf("query: cannot read DuckDB's parse of the statement: %w", err)
	}
	switch {
	case parsed.Error && parsed.ErrorType == "parser":
		return fmt.Errorf("query: %s", oneLine(parsed.Message))
	case parsed.Error:
		return fmt.Errorf("query is read-only: only read statements are allowed (SELECT, WITH, VALUES, FROM, DESCRIBE, SHOW, SUMMARIZE); DuckDB says: %s", oneLine(parsed.Message))
	case len(parsed.Statements) != 1:
		return fmt.Errorf("query: expected one statement, found %d", len(parsed.Statements))
	}
	return nil
}

// queryError is a database error as one clear line.
func queryError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("query: %s", oneLine(err.Error()))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// DecisionTable is PARE's decision points as `gymlens decisions` shows
// them: sample, scenario, run, configuration, the decision and what led to
// it, and the seconds the user took.
func (w *Warehouse) DecisionTable(ctx context.Context) ([]string, [][]any, error) {
	return w.Query(ctx, `SELECT d.sample_id, r.scenario, r.run_number, r.config_id, d.decision_class,
		d.final_decision, d.context_calls, d.context_messages, d.input_messages,
		round(d.decision_t - d.proposal_t, 3) AS seconds_to_decide
		FROM decision_points d JOIN pare_runs r USING (run_id) ORDER BY d.sample_id, r.config_id`)
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
