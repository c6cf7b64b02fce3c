package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// AgreementSection turns agreement statistics into a section: wide (one row per
// score, "value [lo, hi]" cells) for text, long otherwise.
func AgreementSection(name, title, format string, stats []analysis.AgreementStat) Section {
	if Wide(format) {
		var scores, cols []string
		cells := map[[2]string]string{}
		ns := map[string]int{}
		for _, s := range stats {
			if _, ok := ns[s.Score]; !ok {
				scores = append(scores, s.Score)
				ns[s.Score] = s.N
			}
			if !slices.Contains(cols, s.Stat) {
				cols = append(cols, s.Stat)
			}
			cells[[2]string{s.Score, s.Stat}] = EstimateCell(s.Estimate)
		}
		t := &Result{Columns: append([]string{"score", "n"}, cols...)}
		for _, sc := range scores {
			row := []any{sc, ns[sc]}
			for _, c := range cols {
				row = append(row, cells[[2]string{sc, c}])
			}
			t.Rows = append(t.Rows, row)
		}
		return Section{Name: name, Title: title, Table: t}
	}
	return Section{Name: name, Title: title, Table: AgreementLong(format, stats)}
}

// AgreementColumns are the columns of agreement statistics in JSON and CSV.
var AgreementColumns = []string{"score", "statistic", "value", "ci_low", "ci_high", "n", "n_clusters", "ci_method", "level", "resamples", "seed", "warnings"}

// AgreementLong lays agreement statistics out one per row.
func AgreementLong(format string, stats []analysis.AgreementStat) *Result {
	t := &Result{Columns: AgreementColumns}
	for _, s := range stats {
		t.Rows = append(t.Rows, []any{s.Score, s.Stat, s.Value, s.Lo, s.Hi, s.N, s.Clusters, "bootstrap-" + s.Method, s.Level,
			s.Resamples, s.Seed, WarningsCell(format, s.Warnings)})
	}
	return t
}

// WarningsCell is a list of warnings as a JSON array, or one CSV cell.
func WarningsCell(format string, w []string) any {
	if format == "csv" {
		return strings.Join(w, "; ")
	}
	if w == nil {
		return []string{}
	}
	return w
}

// EstimateCell is an estimate as text: value [lo, hi] to three decimals,
// or NaN with its last warning.
func EstimateCell(e analysis.Estimate) string {
	if math.IsNaN(e.Value) {
		if len(e.Warnings) > 0 {
			return "NaN (" + e.Warnings[len(e.Warnings)-1] + ")"
		}
		return "NaN"
	}
	if math.IsNaN(e.Lo) {
		return fmt.Sprintf("%.3f", e.Value)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", e.Value, e.Lo, e.Hi)
}
