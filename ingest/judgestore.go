package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// JudgeCall is one answered judge request.
type JudgeCall struct {
	Model, Params, Prompt, InputHash string
	Judge, RunID, Task, Metric       string
	Valid                            bool
	Reason, Answer                   string
	InputTokens, OutputTokens        int64
	CostUSD                          *float64
	Attempts                         int
	Latency                          time.Duration
	// For valid answers: the scores by warehouse column name, and what
	// goes to judgments.
	Scores   map[string]float64
	Reasons  string
	Evidence any
}

// JudgeCacheKeys returns the input hashes already answered by model with
// these parameters and prompt version (valid or not).
func (w *Warehouse) JudgeCacheKeys(ctx context.Context, model, params, prompt string) (map[string]bool, error) {
	out := map[string]bool{}
	rows, err := w.db.QueryContext(ctx, `SELECT input_hash FROM judge_calls WHERE model = ? AND params = ? AND prompt = ?`, model, params, prompt)
	if err != nil {
		return nil, fmt.Errorf("reading the judge cache: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out[h] = true
	}
	return out, rows.Err()
}

var scoreColumns = []string{"correctness", "grounding", "completeness", "artifact_quality", "ta_now", "ta_later", "ta_cq",
	"understandability", "competence", "reliability", "attachment", "faith"}

// SaveJudgeCall stores one answer at once, in its own transaction, so that
// an interrupted run keeps every answer it got. A valid answer replaces the
// judgment with the same key.
func (w *Warehouse) SaveJudgeCall(ctx context.Context, c JudgeCall) error {
	if w.ReadOnly {
		return ErrReadOnly
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	status := "invalid"
	if c.Valid {
		status = "valid"
	}
	var cost any
	if c.CostUSD != nil {
		cost = *c.CostUSD
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM judge_calls WHERE model = ? AND params = ? AND prompt = ? AND input_hash = ? AND judge = ?`,
		c.Model, c.Params, c.Prompt, c.InputHash, c.Judge); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO judge_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Model, c.Params, c.Prompt, c.InputHash, c.Judge, c.RunID, c.Task, c.Metric, status, nullIfEmpty(c.Reason), nullIfEmpty(c.Answer),
		c.InputTokens, c.OutputTokens, cost, c.Attempts, float64(c.Latency.Microseconds())/1000, time.Now().UTC()); err != nil {
		return fmt.Errorf("saving a judgment: %v", err)
	}
	if c.Valid {
		if _, err := tx.ExecContext(ctx, `DELETE FROM judgments WHERE run_id = ? AND task = ? AND metric = ? AND judge = ? AND prompt = ?`,
			c.RunID, c.Task, c.Metric, c.Judge, c.Prompt); err != nil {
			return err
		}
		vals := make([]any, len(scoreColumns))
		for i, k := range scoreColumns {
			if v, ok := c.Scores[k]; ok {
				vals[i] = v
			}
		}
		ev, _ := json.Marshal(c.Evidence)
		args := append([]any{c.RunID, c.Task, c.Metric, c.Judge, c.Prompt}, vals...)
		args = append(args, c.Reasons, string(ev))
		if _, err := tx.ExecContext(ctx, `INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, NULL, 0, NULL)`, args...); err != nil {
			return fmt.Errorf("saving a judgment: %v", err)
		}
	}
	return tx.Commit()
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// JudgeCosts sums tokens and cost per judge over the calls stored.
func (w *Warehouse) JudgeCosts(ctx context.Context) ([]string, [][]any, error) {
	q := `SELECT judge, model, count(*) AS calls, count(*) FILTER (WHERE status = 'invalid') AS invalid,
		sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
		CASE WHEN count(cost_usd) = count(*) THEN sum(cost_usd) END AS cost_usd
		FROM judge_calls GROUP BY ALL ORDER BY ALL`
	rows, err := w.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		var judge, model string
		var calls, invalid int64
		var in, outT sql.NullInt64
		var cost sql.NullFloat64
		if err := rows.Scan(&judge, &model, &calls, &invalid, &in, &outT, &cost); err != nil {
			return nil, nil, err
		}
		var c any = "unknown"
		if cost.Valid {
			c = cost.Float64
		}
		out = append(out, []any{judge, model, calls, invalid, in.Int64, outT.Int64, c})
	}
	return cols, out, rows.Err()
}
