package reports

import (
	"context"
	"fmt"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectStore is what the Inspect commands read (the warehouse
// satisfies it).
type InspectStore interface {
	LoadInspect(ctx context.Context) (*rows.InspectData, error)
}

// inspectData reads the Inspect evaluations of the warehouse.
func (x *Exec) inspectData(ctx context.Context) (*rows.InspectData, error) {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return nil, err
	}
	s, ok := w.(InspectStore)
	if !ok {
		return nil, analysis.Optionf("--source inspect: %s holds no Inspect tables", x.Name)
	}
	d, err := s.LoadInspect(ctx)
	if err != nil {
		return nil, err
	}
	if len(d.Evals) == 0 {
		return nil, analysis.NoDataf("no Inspect evaluation in %s (ingest .eval or .json logs first)", x.Name)
	}
	return d, nil
}

// InspectMeansResult lays out each scorer's mean per configuration and
// task, with its interval and warnings.
func InspectMeansResult(ms []analysis.InspectMean) *Result {
	r := &Result{Columns: []string{"config", "task", "metric", "samples", "values", "mean", "ci_low", "ci_high", "ci_method", "warnings"}}
	for _, m := range ms {
		r.Rows = append(r.Rows, []any{m.Config, m.Task, m.Metric, m.Samples, m.Values, m.Value, m.Lo, m.Hi, m.Method, joinWarnings(m.Warnings)})
	}
	return r
}

func joinWarnings(w []string) string {
	s := ""
	for i, x := range w {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// InspectReconcileResult lists every stored metric with its status:
// equal, differs, or cannot (not recomputed, with why).
func InspectReconcileResult(cs []analysis.InspectCheck) *Result {
	r := &Result{Columns: []string{"eval", "task", "config", "score", "reducer", "metric", "stored", "recomputed", "samples", "status", "note"}}
	for _, c := range cs {
		var rec any = c.Recomputed
		if c.Status == "cannot" {
			rec = nil
		}
		r.Rows = append(r.Rows, []any{c.EvalID, c.Task, c.Config, c.Score, c.Reducer, c.Metric, c.Stored, rec, c.N, c.Status, c.Note})
	}
	return r
}

// InspectReconcileLine says in one line how the stored metrics fared.
func InspectReconcileLine(cs []analysis.InspectCheck) string {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Status]++
	}
	return fmt.Sprintf("Inspect: %d stored metrics: %d equal, %d differ, %d not recomputed", len(cs), n["equal"], n["differs"], n["cannot"])
}

func (x *Exec) reconcileInspect(ctx context.Context) error {
	d, err := x.inspectData(ctx)
	if err != nil {
		return err
	}
	cs := analysis.ReconcileInspect(d)
	if x.Format == "table" {
		fmt.Fprintln(x.Out, InspectReconcileLine(cs))
	}
	if err := WriteResult(x.Out, x.Format, InspectReconcileResult(cs)); err != nil {
		return err
	}
	differ := 0
	for _, c := range cs {
		if c.Status == "differs" {
			differ++
		}
	}
	if x.Bool("strict") && differ > 0 {
		return fmt.Errorf("reconcile --strict: %d stored metrics differ", differ)
	}
	return nil
}

func (x *Exec) metricsInspect(ctx context.Context) error {
	d, err := x.inspectData(ctx)
	if err != nil {
		return err
	}
	boot, err := x.Bootstrap()
	if err != nil {
		return err
	}
	ms, err := analysis.InspectMeans(d, x.String("reducer"), boot)
	if err != nil {
		return err
	}
	return WriteResult(x.Out, x.Format, InspectMeansResult(ms))
}
