package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// MetricsOutput lays metric estimates out: as a wide table (a row per
// group, a column per metric, intervals beside the means) with footnotes
// (how the intervals were made, each warning once, naming the groups it is
// about unless it is about all), or as one record per group and metric in
// JSON and CSV (docs/json.md).
func MetricsOutput(format string, by []string, res []analysis.GroupEstimate) (*Result, []string) {
	if Wide(format) {
		var metrics []string
		seen := map[string]bool{}
		for _, r := range res {
			if !seen[r.Metric] {
				seen[r.Metric] = true
				metrics = append(metrics, r.Metric)
			}
		}
		t := &Result{Columns: append(append([]string(nil), by...), "runs", "clusters")}
		for _, m := range metrics {
			t.Columns = append(t.Columns, m)
		}
		// A warning is printed once, naming the groups it is about unless
		// it is about all of them.
		var warnings []string
		wgroups := map[string][]string{}
		groups := 0
		for i := 0; i < len(res); i += len(metrics) {
			groups++
			row := []any{}
			var label []string
			for _, d := range by {
				row = append(row, res[i].Group[d])
				label = append(label, d+"="+res[i].Group[d])
			}
			// Runs: the most any run metric has (scenario-level metrics,
			// such as pass@k, count scenarios).
			runs := 0
			for j := range metrics {
				if !res[i+j].Has(analysis.CaveatScenarioLevel) {
					runs = max(runs, res[i+j].NRuns)
				}
			}
			row = append(row, runs, res[i].Clusters)
			for j := range metrics {
				r := res[i+j]
				row = append(row, fmt.Sprintf("%s [%s, %s]", Num(r.Value, r.Metric), Num(r.Lo, r.Metric), Num(r.Hi, r.Metric)))
				for _, w := range r.Warnings {
					msg := r.Metric + ": " + w
					if _, ok := wgroups[msg]; !ok {
						warnings = append(warnings, msg)
					}
					wgroups[msg] = append(wgroups[msg], strings.Join(label, " "))
				}
			}
			t.Rows = append(t.Rows, row)
		}
		for i, msg := range warnings {
			if g := wgroups[msg]; len(g) < groups && len(by) > 0 {
				warnings[i] = msg + " (" + strings.Join(g, "; ") + ")"
			}
		}
		var foot []string
		if len(res) > 0 {
			// The bootstrap of the bootstrapped metrics, and each metric
			// whose interval is of another kind (a Wilson interval has no
			// resamples) named apart.
			var boot *analysis.GroupEstimate
			other := map[string]string{}
			for i := range res {
				if r := &res[i]; r.Resamples > 0 {
					if boot == nil {
						boot = r
					}
				} else if r.Method == "wilson" {
					other[r.Metric] = fmt.Sprintf("%s: %g%% Wilson score interval", r.Metric, 100*r.Level)
				}
			}
			var line string
			if boot != nil {
				line = fmt.Sprintf("mean [%g%% %s interval], cluster bootstrap over scenarios, %d resamples, seed %d",
					100*boot.Level, boot.Method, boot.Resamples, boot.Seed)
			}
			var names []string
			for _, m := range metrics {
				if o, ok := other[m]; ok {
					names = append(names, o)
				}
			}
			if len(names) > 0 {
				if line == "" {
					line = "mean [interval]"
				}
				line += "; " + strings.Join(names, "; ")
			}
			foot = append(foot, line)
			sort.Strings(warnings)
			for _, w := range warnings {
				foot = append(foot, "warning: "+w)
			}
		}
		return t, foot
	}
	t := &Result{Columns: []string{"group", "metric", "n_runs", "n_clusters", "mean", "ci_low", "ci_high", "level", "ci_method", "resamples", "seed", "warnings"}}
	for _, r := range res {
		var group any = r.Group
		warn := WarningsCell(format, r.Warnings)
		if format == "csv" {
			parts := make([]string, 0, len(by))
			for _, d := range by {
				parts = append(parts, d+"="+r.Group[d])
			}
			group = strings.Join(parts, ";")
		}
		t.Rows = append(t.Rows, []any{group, r.Metric, r.NRuns, r.Clusters, r.Value, r.Lo, r.Hi, r.Level, r.Method, r.Resamples, r.Seed, warn})
	}
	return t, nil
}

// CompareOutput lays paired comparisons out: a table with the difference
// and its interval, p-values raw, Holm and BH, and a footnote; or one
// record per comparison in JSON and CSV.
func CompareOutput(format string, res []analysis.Comparison) (*Result, []string) {
	// Inspect's comparisons are paired by sample and carry the per-sample
	// correlation: a column of its own, and the foot says so.
	bySample := len(res) > 0 && res[0].R != nil
	r := func(c analysis.Comparison) any {
		if c.R == nil || math.IsNaN(*c.R) {
			return nil
		}
		if Wide(format) {
			return fmt.Sprintf("%.2f", *c.R)
		}
		return *c.R
	}
	if Wide(format) {
		t := &Result{Columns: []string{"A", "B", "metric", "A mean", "B mean", "B − A", "p", "p (Holm)", "p (BH)"}}
		if bySample {
			t.Columns = append(t.Columns, "r")
		}
		for _, c := range res {
			row := []any{c.A, c.B, c.Metric, Num(c.MeanA, c.Metric), Num(c.MeanB, c.Metric),
				fmt.Sprintf("%s [%s, %s]", Signed(c.Value, c.Metric), Signed(c.Lo, c.Metric), Signed(c.Hi, c.Metric)),
				PValue(c.P), PValue(c.PHolm), PValue(c.PBH)}
			if bySample {
				row = append(row, r(c))
			}
			t.Rows = append(t.Rows, row)
		}
		var foot []string
		if len(res) > 0 {
			over := "scenarios"
			if bySample {
				over = "samples (each sample's epochs averaged); r: the correlation of A's and B's per-sample scores"
			}
			foot = append(foot, fmt.Sprintf("B − A [%g%% %s interval], paired cluster bootstrap over %s, %d resamples, seed %d",
				100*res[0].Level, res[0].Method, over, res[0].Resamples, res[0].Seed))
		}
		return t, foot
	}
	t := &Result{Columns: []string{"a", "b", "metric", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "level", "ci_method",
		"p", "p_holm", "p_bh", "n_runs_a", "n_runs_b", "n_clusters", "resamples", "seed", "warnings"}}
	if bySample {
		t.Columns = append(t.Columns, "r_samples")
	}
	for _, c := range res {
		warn := WarningsCell(format, c.Warnings)
		row := []any{c.A, c.B, c.Metric, c.MeanA, c.MeanB, c.Value, c.Lo, c.Hi, c.Level, c.Method,
			c.P, c.PHolm, c.PBH, c.NA, c.NB, c.Clusters, c.Resamples, c.Seed, warn}
		if bySample {
			row = append(row, r(c))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// VarianceSections lay variance components out: a row per metric and
// term, then a row per metric with the design, the ICC and the design
// effect.
func VarianceSections(format string, vcs []*analysis.VarianceComponents) []Section {
	terms := &Result{Columns: []string{"metric", "term", "variance", "variance_low", "variance_high", "share", "share_low", "share_high"}}
	design := &Result{Columns: []string{"metric", "method", "configs", "scenarios", "personas", "repetitions", "icc", "icc_low", "icc_high",
		"design_effect", "design_effect_low", "design_effect_high"}}
	cell := func(x float64) any {
		if Wide(format) {
			return fmt.Sprintf("%.3f", x)
		}
		return x
	}
	grouped := len(vcs) > 0 && vcs[0].Group != nil
	if grouped { // --by: the group first, as metrics writes it
		terms.Columns, design.Columns = append([]string{"group"}, terms.Columns...), append([]string{"group"}, design.Columns...)
	}
	lead := func(vc *analysis.VarianceComponents, row []any) []any {
		if grouped {
			return append([]any{groupText(vc.Group)}, row...)
		}
		return row
	}
	for _, vc := range vcs {
		for _, t := range vc.Terms {
			terms.Rows = append(terms.Rows, lead(vc, []any{vc.Metric, t.Term, cell(t.Variance.Value), cell(t.Variance.Lo), cell(t.Variance.Hi),
				cell(t.Share.Value), cell(t.Share.Lo), cell(t.Share.Hi)}))
		}
		design.Rows = append(design.Rows, lead(vc, []any{vc.Metric, vc.Method, vc.Configs, vc.Scenarios, vc.Personas, vc.Repetitions,
			cell(vc.ICC.Value), cell(vc.ICC.Lo), cell(vc.ICC.Hi), cell(vc.DesignEffect.Value), cell(vc.DesignEffect.Lo), cell(vc.DesignEffect.Hi)}))
	}
	return []Section{{Name: "components", Title: "Variance components (share: of their sum)", Table: terms},
		{Name: "design", Title: "The design, the correlation of a configuration's runs within a scenario, and the design effect", Table: design}}
}

// RankOutput lays ranks out: a row per configuration, best first.
func RankOutput(format string, res []RankRow, opt analysis.BootstrapOptions) (*Result, []string) {
	t := &Result{Columns: []string{"config", "metric", "n_runs", "value", "rank", "rank_low", "rank_high", "p_best", "tied_with_best", "letters", "resamples", "n_clusters"}}
	for _, r := range res {
		var value, p any = r.Value, r.PBest
		if Wide(format) {
			value, p = Num(r.Value, r.Metric), fmt.Sprintf("%.3f", r.PBest)
		}
		t.Rows = append(t.Rows, []any{r.Config, r.Metric, r.NRuns, value, r.Rank, r.RankLo, r.RankHi, p, r.TiedWithBest, r.Letters, r.Resamples, r.Clusters})
	}
	var foot []string
	if len(res) > 0 && Wide(format) {
		foot = append(foot, fmt.Sprintf("rank 1: the highest; %g%% rank interval: the resampled ranks' quantiles; %d resamples of %d scenarios, drawn once for every configuration, seed %d; "+
			"letters: configurations sharing one are not significantly different at α = %.3g (paired cluster bootstrap, Holm over all pairs)",
			100*opt.Level, res[0].Resamples, res[0].Clusters, opt.Seed, 1-opt.Level))
	}
	return t, foot
}

// CorrOutput lays correlations out: a table with the Fisher-z and
// bootstrap intervals and a footnote, or one record per pair in JSON and
// CSV.
func CorrOutput(format string, res []analysis.CorrResult) (*Result, []string) {
	if Wide(format) {
		t := &Result{Columns: []string{"x", "y", "level", "method", "r", "n", "p", "Fisher-z", "bootstrap"}}
		for _, c := range res {
			t.Rows = append(t.Rows, []any{c.X, c.Y, c.Level, c.Method, fmt.Sprintf("%.3f", c.R), c.N, PValue(c.P),
				fmt.Sprintf("[%.3f, %.3f]", c.FisherLo, c.FisherHi), fmt.Sprintf("[%.3f, %.3f]", c.Lo, c.Hi)})
		}
		var foot []string
		if len(res) > 0 {
			foot = append(foot, fmt.Sprintf("%g%% intervals; bootstrap: %s, clusters = scenarios, %d resamples, seed %d",
				100*res[0].Estimate.Level, res[0].Estimate.Method, res[0].Resamples, res[0].Seed))
		}
		return t, foot
	}
	t := &Result{Columns: []string{"x", "y", "level", "method", "r", "n", "p", "ci_low", "ci_high", "ci_method",
		"fisher_low", "fisher_high", "level_ci", "resamples", "seed", "n_clusters", "warnings"}}
	for _, c := range res {
		warn := WarningsCell(format, c.Warnings)
		t.Rows = append(t.Rows, []any{c.X, c.Y, c.Level, c.Method, c.R, c.N, c.P, c.Lo, c.Hi, "bootstrap-" + c.Estimate.Method,
			c.FisherLo, c.FisherHi, c.Estimate.Level, c.Resamples, c.Seed, c.Clusters, warn})
	}
	return t, nil
}

// Num is a metric value as text, to the decimals the metric registry gives
// it ("–" for NaN).
func Num(x float64, metric string) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', Decimals(metric), 64)
}

// Signed is Num with a + before a positive difference.
func Signed(x float64, metric string) string {
	s := Num(x, metric)
	if x > 0 {
		return "+" + s
	}
	return s
}

// PValue is a p-value as text, three decimals without the leading zero
// (<.001 below).
func PValue(p float64) string {
	if p < 0.001 {
		return "<.001"
	}
	return strings.TrimPrefix(fmt.Sprintf("%.3f", p), "0")
}

// Decimals are the decimals a metric is shown with (analysis.Registry; 1
// for a name it does not know).
func Decimals(metric string) int {
	if m, ok := analysis.MetricNamed(metric); ok {
		return m.Decimals
	}
	if strings.HasPrefix(metric, "inspect.") { // Inspect's scores: mostly 0–1
		return 3
	}
	return 1
}
