package ingest

import (
	"context"
	"database/sql"

	"github.com/gymlens/gymlens/ingest/rows"
)

// LoadInspectCosts reads each Inspect sample's tokens and times per
// epoch, in (evaluation, sample, epoch) order.
func (w *Warehouse) LoadInspectCosts(ctx context.Context) ([]rows.InspectCost, error) {
	var out []rows.InspectCost
	err := w.scan(ctx, `SELECT eval_id, sample_id, epoch, total_tokens, input_tokens, output_tokens, total_time, working_time
		FROM inspect_samples ORDER BY eval_id, sample_id, epoch`, func(r *sql.Rows) error {
		var c rows.InspectCost
		var tt, it, ot sql.NullInt64
		var tot, work sql.NullFloat64
		if err := r.Scan(&c.EvalID, &c.SampleID, &c.Epoch, &tt, &it, &ot, &tot, &work); err != nil {
			return err
		}
		c.TotalTokens, c.InputTokens, c.OutputTokens, c.HasTokens = float64(tt.Int64), float64(it.Int64), float64(ot.Int64), tt.Valid
		c.TotalTime, c.HasTotalTime = tot.Float64, tot.Valid
		c.WorkingTime, c.HasWorkingTime = work.Float64, work.Valid
		out = append(out, c)
		return nil
	})
	return out, err
}
