package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/gymlens/gymlens/ingest/rows"
)

// LoadInspectRaters reads what agreement on Inspect samples compares:
// the evaluations, their samples and scores, each judge's latest
// judgment of each sample on each rubric (judge --source inspect), and
// the human ratings of samples (ratings with a sample_id), in a fixed
// order.
func (w *Warehouse) LoadInspectRaters(ctx context.Context) (*rows.InspectRaters, error) {
	d, err := w.LoadInspect(ctx)
	if err != nil {
		return nil, err
	}
	out := &rows.InspectRaters{Evals: d.Evals, Scores: d.Scores}
	if err := w.scan(ctx, `SELECT eval_id, sample_id, epoch FROM inspect_samples ORDER BY ALL`, func(rs *sql.Rows) error {
		var s rows.InspectSampleRef
		if err := rs.Scan(&s.EvalID, &s.SampleID, &s.Epoch); err != nil {
			return err
		}
		out.Samples = append(out.Samples, s)
		return nil
	}); err != nil {
		return nil, err
	}
	// A judge's latest prompt version of each rubric, as the metrics take
	// it.
	if err := w.scan(ctx, `SELECT run_id, judge, metric, (extra->'$.scores')::VARCHAR FROM (
			SELECT *, row_number() OVER (PARTITION BY run_id, task, metric, judge ORDER BY prompt DESC) AS k FROM judgments
			WHERE starts_with(run_id, ?) AND starts_with(metric, ?) AND (extra->'$.scores') IS NOT NULL)
		WHERE k = 1 ORDER BY run_id, metric, judge`, func(rs *sql.Rows) error {
		var key, sc string
		var j rows.InspectJudgment
		if err := rs.Scan(&key, &j.Judge, &j.Metric, &sc); err != nil {
			return err
		}
		var ok bool
		if j.EvalID, j.SampleID, j.Epoch, ok = rows.ParseInspectSampleKey(key); !ok {
			return fmt.Errorf("judgment of %s by %s under %q: not the key of an Inspect sample", j.Metric, j.Judge, key)
		}
		if err := json.Unmarshal([]byte(sc), &j.Scores); err != nil {
			return fmt.Errorf("judgment of %s by %s on %s: scores: %w", j.Metric, j.Judge, key, err)
		}
		out.Judgments = append(out.Judgments, j)
		return nil
	}, rows.InspectKeyPrefix, CustomMetricPrefix); err != nil {
		return nil, err
	}
	// The ingest checked each rating of a sample (runlog's inspectRating):
	// a task, a sample id (text, or a number written as JSON), an epoch.
	err = w.scan(ctx, `SELECT coalesce(g.task, ''),
			CASE WHEN json_type(g.extra->'$.sample_id') = 'VARCHAR' THEN g.extra->>'$.sample_id' ELSE (g.extra->'$.sample_id')::VARCHAR END,
			coalesce(TRY_CAST(g.extra->>'$.epoch' AS INTEGER), 0), coalesce(g.extra->>'$.config', ''), coalesce(g.extra->>'$.eval', ''),
			g.rater, g.question, g.value, coalesce(f.path, ''), coalesce(g.src_line, 0)
		FROM ratings g LEFT JOIN ingested_files f USING (file_id)
		WHERE (g.extra->'$.sample_id') IS NOT NULL ORDER BY g.file_id, g.src_line`, func(rs *sql.Rows) error {
		var r rows.InspectRating
		if err := rs.Scan(&r.Task, &r.SampleID, &r.Epoch, &r.Config, &r.EvalID, &r.Rater, &r.Question, &r.Value, &r.File, &r.Line); err != nil {
			return err
		}
		out.Ratings = append(out.Ratings, r)
		return nil
	})
	return out, err
}
