package reports

import (
	"context"
	"fmt"
	"slices"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectStore is what the Inspect commands read (the warehouse
// satisfies it).
type InspectStore interface {
	LoadInspect(ctx context.Context) (*rows.InspectData, error)
	LoadInspectMeta(ctx context.Context, fields []string) ([]rows.InspectSampleMeta, error)
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

// inspectInputs refuses the parameters that do not apply to the command
// on Inspect runs, then reads the Inspect evaluations and the bootstrap's
// options.
func (x *Exec) inspectInputs(ctx context.Context, command string, refused ...string) (*rows.InspectData, analysis.BootstrapOptions, error) {
	if err := x.refuseForInspect(command, refused...); err != nil {
		return nil, analysis.BootstrapOptions{}, err
	}
	d, err := x.inspectData(ctx)
	if err != nil {
		return nil, analysis.BootstrapOptions{}, err
	}
	boot, err := x.Bootstrap()
	return d, boot, err
}

// InspectMeansResult lays out each scorer's mean per configuration and
// task, with its interval and warnings: a column meta.FIELD for each
// field of by, and with a cluster field the clusters resampled.
func InspectMeansResult(ms []analysis.InspectMean, by []string, cluster string) *Result {
	cols := []string{"config", "task"}
	for _, f := range by {
		cols = append(cols, "meta."+f)
	}
	cols = append(cols, "metric", "samples", "values")
	if cluster != "" {
		cols = append(cols, "clusters")
	}
	r := &Result{Columns: append(cols, "mean", "ci_low", "ci_high", "ci_method", "warnings")}
	for _, m := range ms {
		row := []any{m.Config, m.Task}
		for _, g := range m.Groups {
			row = append(row, g)
		}
		row = append(row, m.Metric, m.Samples, m.Values)
		if cluster != "" {
			row = append(row, m.Clusters)
		}
		r.Rows = append(r.Rows, append(row, m.Value, m.Lo, m.Hi, m.Method, joinWarnings(m.Warnings)))
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
	d, boot, err := x.inspectInputs(ctx, "metrics", "where", "metrics", "judge", "two-level", "judge-noise")
	if err != nil {
		return err
	}
	by, cluster, err := analysis.InspectMetaFields(x.Split("by"), x.String("cluster"))
	if err != nil {
		return err
	}
	o := analysis.InspectMeansOptions{Reducer: x.String("reducer"), By: by, Cluster: cluster}
	if len(by) > 0 || cluster != "" {
		fields := by
		if cluster != "" {
			fields = append(slices.Clone(by), cluster)
		}
		w, err := x.Warehouse(ctx)
		if err != nil {
			return err
		}
		if o.Meta, err = w.(InspectStore).LoadInspectMeta(ctx, fields); err != nil {
			return err
		}
	}
	ms, err := analysis.InspectMeansWith(d, o, boot)
	if err != nil {
		return err
	}
	if cluster != "" {
		x.note("the clusters resampled are the values of meta.%s within each task, not the samples", cluster)
	}
	return WriteResult(x.Out, x.Format, InspectMeansResult(ms, by, cluster))
}
