package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// LoadInspect reads the Inspect evaluations, their scores, stored
// results and reductions, each in a fixed order.
func (w *Warehouse) LoadInspect(ctx context.Context) (*rows.InspectData, error) {
	d := &rows.InspectData{}
	if err := w.scan(ctx, `SELECT e.eval_id, e.task, e.config_id, e.model, e.harness, e.effort, e.status, coalesce(e.incomplete, ''),
		coalesce(e.epochs, 1), coalesce(e.reducers, ''), e.has_results, f.path
		FROM inspect_evals e JOIN ingested_files f USING (file_id) ORDER BY e.eval_id`, func(r *sql.Rows) error {
		var e rows.InspectEval
		var red string
		if err := r.Scan(&e.EvalID, &e.Task, &e.ConfigID, &e.Model, &e.Harness, &e.Effort, &e.Status, &e.Incomplete, &e.Epochs, &red, &e.HasResults, &e.File); err != nil {
			return err
		}
		if red != "" {
			e.Reducers = strings.Split(red, ",")
		}
		d.Evals = append(d.Evals, e)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := w.scan(ctx, `SELECT eval_id, sample_id, epoch, scorer, coalesce(key, ''), metric, value FROM inspect_scores
		ORDER BY eval_id, scorer, key NULLS FIRST, sample_id, epoch`, func(r *sql.Rows) error {
		var s rows.InspectScore
		var v sql.NullFloat64
		if err := r.Scan(&s.EvalID, &s.SampleID, &s.Epoch, &s.Scorer, &s.Key, &s.Metric, &v); err != nil {
			return err
		}
		s.Value, s.Valid = v.Float64, v.Valid
		d.Scores = append(d.Scores, s)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := w.scan(ctx, `SELECT eval_id, score, coalesce(scorer, ''), coalesce(reducer, ''), metric, value, coalesce(CAST(params AS VARCHAR), '{}')
		FROM inspect_results ORDER BY eval_id, score, reducer NULLS FIRST, metric`, func(r *sql.Rows) error {
		var s rows.InspectResult
		var v sql.NullFloat64
		if err := r.Scan(&s.EvalID, &s.Score, &s.Scorer, &s.Reducer, &s.Metric, &v, &s.Params); err != nil {
			return err
		}
		s.Value = v.Float64
		if !v.Valid {
			s.Value = math.NaN()
		}
		d.Results = append(d.Results, s)
		return nil
	}); err != nil {
		return nil, err
	}
	err := w.scan(ctx, `SELECT eval_id, scorer, coalesce(reducer, ''), sample_id, coalesce(key, ''), value FROM inspect_reductions
		ORDER BY eval_id, scorer, reducer NULLS FIRST, key NULLS FIRST, sample_id`, func(r *sql.Rows) error {
		var s rows.InspectReduction
		var v sql.NullFloat64
		if err := r.Scan(&s.EvalID, &s.Scorer, &s.Reducer, &s.SampleID, &s.Key, &v); err != nil {
			return err
		}
		s.Value, s.Valid = v.Float64, v.Valid
		d.Reductions = append(d.Reductions, s)
		return nil
	})
	return d, err
}

// LoadInspectMeta reads, for each sample of each evaluation, the values
// of fields of its metadata as text, in (evaluation, sample) order; its
// epochs share one metadata, the least value is taken where they do not.
// The field names reach DuckDB only as bound JSON paths.
func (w *Warehouse) LoadInspectMeta(ctx context.Context, fields []string) ([]rows.InspectSampleMeta, error) {
	var cols strings.Builder
	args := make([]any, len(fields))
	for i, f := range fields {
		fmt.Fprintf(&cols, ", min(json_extract_string(metadata, ?))")
		args[i] = `$."` + f + `"`
	}
	var out []rows.InspectSampleMeta
	err := w.scan(ctx, `SELECT eval_id, sample_id`+cols.String()+` FROM inspect_samples GROUP BY ALL ORDER BY ALL`, func(r *sql.Rows) error {
		m := rows.InspectSampleMeta{Values: make([]string, len(fields))}
		vs := make([]sql.NullString, len(fields))
		dest := []any{&m.EvalID, &m.SampleID}
		for i := range vs {
			dest = append(dest, &vs[i])
		}
		if err := r.Scan(dest...); err != nil {
			return err
		}
		for i, v := range vs {
			m.Values[i] = rows.Absent
			if v.Valid {
				m.Values[i] = v.String
			}
		}
		out = append(out, m)
		return nil
	}, args...)
	return out, err
}
