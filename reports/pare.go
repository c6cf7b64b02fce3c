package reports

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// PAREReport recomputes, from the ingested result rows, the statistics
// PARE's combined_result.json (per configuration) and Meta-ARE's
// benchmark_stats.json (per model and capability, and global) give.
func PAREReport(results []rows.PAREResultRow) *Result {
	type section struct{ source, config, part string }
	var order []section
	sel := map[section][]rows.PAREResultRow{}
	add := func(s section, r rows.PAREResultRow) {
		if _, ok := sel[s]; !ok {
			order = append(order, s)
		}
		sel[s] = append(sel[s], r)
	}
	for _, r := range results {
		if r.Source == "are" {
			add(section{"are", r.ConfigID, analysis.CapabilityKey(&r)}, r)
			add(section{"are", r.ConfigID, "global"}, r)
			continue
		}
		add(section{"pare", r.ConfigID, ""}, r)
	}
	slices.SortStableFunc(order, func(a, b section) int {
		return strings.Compare(a.source+"\x00"+a.config+"\x00"+a.part, b.source+"\x00"+b.config+"\x00"+b.part)
	})
	keys := map[string]bool{}
	stats := make([]map[string]float64, len(order))
	for i, s := range order {
		stats[i] = analysis.SectionStats(sel[s], s.source, s.part)
		for k := range stats[i] {
			keys[k] = true
		}
	}
	cols := []string{"source", "config", "section"}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	res := &Result{Columns: append(cols, names...)}
	for i, s := range order {
		row := []any{s.source, s.config, s.part}
		for _, k := range names {
			if v, ok := stats[i][k]; ok {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}

// PAREStore is what the PARE analyses read: the warehouse.
type PAREStore interface {
	LoadPARERuns(ctx context.Context) ([]rows.PARERun, error)
	LoadPAREResults(ctx context.Context) ([]rows.PAREResultRow, error)
	LoadPAREReports(ctx context.Context) ([]rows.PAREReportRow, error)
}

// PAREUnits reads the PARE and Meta-ARE runs, traces joined to their
// result rows (analysis.JoinPARE).
func PAREUnits(ctx context.Context, s PAREStore) ([]analysis.PAREUnit, error) {
	runs, results, err := loadPARE(ctx, s)
	if err != nil {
		return nil, err
	}
	return analysis.JoinPARE(runs, results), nil
}

// loadPARE reads the traces' runs and the result rows.
func loadPARE(ctx context.Context, s PAREStore) ([]rows.PARERun, []rows.PAREResultRow, error) {
	runs, err := s.LoadPARERuns(ctx)
	if err != nil {
		return nil, nil, err
	}
	results, err := s.LoadPAREResults(ctx)
	return runs, results, err
}

// Reconcile compares what PARE and Meta-ARE stored with what gymlens
// recomputes from the traces and result rows (analysis.Reconcile).
func Reconcile(ctx context.Context, s PAREStore) (*analysis.Reconciliation, error) {
	runs, results, err := loadPARE(ctx, s)
	if err != nil {
		return nil, err
	}
	reps, err := s.LoadPAREReports(ctx)
	if err != nil {
		return nil, err
	}
	return analysis.Reconcile(runs, results, reps), nil
}

// PAREAgreementResult lays out the agreement on PARE's annotation samples:
// a row per statistic with its n and what it compares (or why it is NaN).
func PAREAgreementResult(pa *analysis.PAREHumanAgreement) *Result {
	return &Result{Columns: []string{"statistic", "value", "n", "note"}, Rows: [][]any{
		{"majority_accuracy", pa.Accuracy, pa.Compared, "percent of samples where the simulated user's decision is the humans' majority (or the answer key)"},
		{"cohen_kappa", pa.Kappa, pa.Compared, cmp.Or(pa.KappaWhy, "simulated user against the humans' majority")},
		{"fleiss_kappa", pa.Fleiss, pa.Annotated, cmp.Or(pa.FleissWhy, "among the annotators")},
		{"krippendorff_alpha", pa.Alpha, pa.Annotated, cmp.Or(pa.AlphaWhy, "nominal, among the annotators")},
	}}
}
