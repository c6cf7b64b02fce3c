package reports

import (
	"cmp"
	"context"
	"fmt"
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

// designBy breaks the study-design commands down: one design per group.
var designBy = Param{Name: "by", Default: "", Usage: "one design per group of `DIMS` (as in gymlens metrics: harness, model, effort, persona_group, …)"}

// designSource is the --source of the study-design commands.
var designSource = Param{Name: "source", Default: "gym", Usage: "`RUNS` to analyse: gym (Proactivity-Gym), pare (PARE and Meta-ARE: configurations × scenarios × repetitions, no personas) or inspect (Inspect AI: configurations × samples × epochs, per task and scorer)"}

// variance is the variance components of the metrics asked for (point
// estimates alone for power), from the Proactivity-Gym runs or, with
// --source pare, the PARE runs (PAREDesign), and the bootstrap used.
func (x *Exec) variance(ctx context.Context, pointOnly bool) ([]*analysis.VarianceComponents, analysis.BootstrapOptions, error) {
	switch x.String("source") {
	case "gym":
		ds, err := x.Dataset(ctx, KeepValues)
		if err != nil {
			return nil, analysis.BootstrapOptions{}, err
		}
		vcs, err := ds.Variance(pointOnly, x.Split("by")...)
		return vcs, ds.Bootstrap(), err
	case "pare":
		if x.String("by") != "" {
			return nil, analysis.BootstrapOptions{}, analysis.Optionf("--by: not with --source pare (select with --where)")
		}
		opt, units, err := x.pare(ctx)
		if err != nil {
			return nil, opt.Bootstrap, err
		}
		metrics := opt.Metrics
		if len(metrics) == 0 {
			metrics = []string{"success"}
		}
		boot := opt.Bootstrap
		if pointOnly {
			boot.Resamples = -1
		}
		var out []*analysis.VarianceComponents
		for _, m := range metrics {
			runs, values, err := analysis.PAREDesign(units, opt, m)
			if err != nil {
				return nil, opt.Bootstrap, x.noPARE(err)
			}
			vc, err := analysis.VarianceOf(runs, values, 0, boot)
			if err != nil {
				return nil, opt.Bootstrap, fmt.Errorf("%s: %w", m, err)
			}
			vc.Metric = m
			out = append(out, vc)
		}
		return out, opt.Bootstrap, nil
	}
	return nil, analysis.BootstrapOptions{}, analysis.Optionf("--source: expected gym, pare or inspect, found %q", x.String("source"))
}

// pareRanks ranks the PARE configurations on --metric (success unless
// named) as Dataset.Ranks ranks the Proactivity-Gym ones (RankConfigs).
func (x *Exec) pareRanks(ctx context.Context) ([]RankRow, error) {
	opt, units, err := x.pare(ctx)
	if err != nil {
		return nil, err
	}
	metric := "success"
	if x.IsSet("metric") {
		metric = x.String("metric")
	}
	runs, values, err := analysis.PAREDesign(units, opt, metric)
	if err != nil {
		return nil, x.noPARE(err)
	}
	groups, err := analysis.GroupRuns(runs, []string{"config"}, nil)
	if err != nil {
		return nil, err
	}
	scen := make([]string, len(runs))
	for i, r := range runs {
		scen[i] = r.Scenario
	}
	res := RankConfigs(groups, values, scen, 0, opt.Bootstrap)
	for i := range res {
		res[i].Metric = metric
	}
	return res, nil
}
