package reports

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// WriteScoreReport writes what rescoring found: a line and the
// disagreements per field, then examples, as text; one record per field in
// JSON and CSV.
func WriteScoreReport(w io.Writer, format string, rep *analysis.ScoreReport) error {
	if format != "table" {
		t := &Result{Columns: []string{"tasks", "prefer", "field", "disagreements"}}
		for _, f := range analysis.DisagreementFields {
			t.Rows = append(t.Rows, []any{rep.Tasks, rep.Prefer, f, rep.Counts[f]})
		}
		return WriteResult(w, format, t)
	}
	total := rep.Disagreements()
	fmt.Fprintf(w, "scored %s active tasks; %d disagreements between logged and derived values; the metrics use the %s values\n",
		Thousands(int64(rep.Tasks)), total, rep.Prefer)
	t := &Result{Columns: []string{"field", "disagreements"}}
	for _, f := range analysis.DisagreementFields {
		t.Rows = append(t.Rows, []any{f, rep.Counts[f]})
	}
	if err := WriteResult(w, "table", t); err != nil {
		return err
	}
	if len(rep.Examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		x := &Result{Columns: []string{"run", "task", "field", "logged", "derived"}}
		for _, d := range rep.Examples {
			x.Rows = append(x.Rows, []any{d.RunID, d.Task, d.Field, d.Logged, d.Derived})
		}
		return WriteResult(w, "table", x)
	}
	return nil
}

// Thousands writes n with commas between groups of three digits.
func Thousands(n int64) string { return rows.Thousands(n) }

// Rescore rescores the warehouse w, named name, from its trajectories
// (analysis.Rescore); a warehouse without active tasks is named.
func Rescore(ctx context.Context, w analysis.ScoreStore, name string, preferDerived bool, examples int) (*analysis.ScoreReport, error) {
	rep, err := analysis.Rescore(ctx, w, preferDerived, examples)
	if errors.Is(err, analysis.ErrNoActiveTasks) {
		return nil, fmt.Errorf("warehouse %s has no active tasks to score", name)
	}
	return rep, err
}

// ScoredStore is a warehouse that says whether its scores are current.
type ScoredStore interface {
	analysis.ScoreStore
	Scored(ctx context.Context) (bool, error)
}

// RescoreOnce rescores w unless its scores are current and nothing was
// ingested since (ingested false), and says in a line what it did.
func RescoreOnce(ctx context.Context, w ScoredStore, ingested bool) (string, error) {
	scored, err := w.Scored(ctx)
	if err != nil {
		return "", err
	}
	if scored && !ingested {
		return "scores: kept from the earlier run (nothing new was ingested); `gymlens score` rescores and lists the disagreements", nil
	}
	rep, err := analysis.Rescore(ctx, w, false, 0)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("rescored %s active tasks from their trajectories: %d disagree with the logged values "+
		"(planted by the sample; `gymlens score` lists them)", Thousands(int64(rep.Tasks)), rep.Disagreements()), nil
}
