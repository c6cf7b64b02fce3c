package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// MaxRunEvents bounds the events RunEvents returns for one run: a
// viewer's page, not an export.
const MaxRunEvents = 20000

// RunEvents reads a run's trajectory in order, at most MaxRunEvents
// events (none for a run not in the warehouse).
func (w *Warehouse) RunEvents(ctx context.Context, runID string) ([]rows.EventRow, error) {
	var events []rows.EventRow
	rs, err := w.db.QueryContext(ctx, `SELECT seq, t, actor, kind, coalesce(task, ''), coalesce(text, ''), coalesce(tool, ''),
		coalesce(depth, ''), coalesce(CAST(args AS VARCHAR), ''), coalesce(CAST(result AS VARCHAR), ''), ok,
		coalesce(decision, ''), coalesce(phase, ''), coalesce(ref, 0), visible
		FROM events WHERE run_id = ? ORDER BY seq LIMIT ?`, runID, MaxRunEvents)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var e rows.EventRow
		var t time.Time
		var ok sql.NullBool
		if err := rs.Scan(&e.Seq, &t, &e.Actor, &e.Kind, &e.Task, &e.Text, &e.Tool, &e.Depth, &e.Args, &e.Result, &ok,
			&e.Decision, &e.Phase, &e.Ref, &e.Visible); err != nil {
			return nil, err
		}
		e.T = t.UTC()
		if ok.Valid {
			b := ok.Bool
			e.OK = &b
		}
		events = append(events, e)
	}
	return events, rs.Err()
}

// SearchRuns returns the runs whose trajectory's text, tool calls or
// results contain q (case-insensitive, as plain text: q's % and _ match
// themselves).
func (w *Warehouse) SearchRuns(ctx context.Context, q string) (map[string]bool, error) {
	if strings.TrimSpace(q) == "" {
		return nil, fmt.Errorf("search: empty query")
	}
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
	rs, err := w.db.QueryContext(ctx, `SELECT DISTINCT run_id FROM events
		WHERE text ILIKE ?1 ESCAPE '\' OR tool ILIKE ?1 ESCAPE '\' OR CAST(args AS VARCHAR) ILIKE ?1 ESCAPE '\' OR CAST(result AS VARCHAR) ILIKE ?1 ESCAPE '\'`, pattern)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]bool{}
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rs.Err()
}
