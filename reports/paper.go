package reports

import (
	"fmt"
	"math"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// The paper's tables, built from analysis results: nothing here computes a
// statistic, it only lays results out.

// digits is how many decimals a metric is shown with: TR-J and its
// constructs (1–5) two, the percent and 0–100 scales one.

var dimHeaders = map[string]string{"model": "Model", "harness": "Harness", "effort": "Effort", "config": "Configuration",
	"scenario": "Scenario", "domain": "Domain", "persona": "Persona", "persona_group": "Persona group", "family": "Family",
	"size": "Size (B)"}

// BootstrapNote says how the intervals of estimates were made.
func BootstrapNote(e analysis.Estimate, unit string) string {
	return fmt.Sprintf("%g%% cluster-bootstrap intervals (%s), %d resamples of %s, seed %d.",
		100*e.Level, e.Method, e.Resamples, unit, e.Seed)
}

// MetricTable lays out metric estimates (one per group and metric, as
// analysis.Summarize gives them) with a row per group, keyed by dims, and
// a column per metric, followed by the group's number of runs.
func MetricTable(name, caption string, res []analysis.GroupEstimate, dims, metrics []string) *Table {
	t := &Table{Name: name, Caption: caption}
	for _, d := range dims {
		h := dimHeaders[d]
		if h == "" {
			h = d
		}
		t.Keys = append(t.Keys, h)
	}
	for _, m := range metrics {
		t.Columns = append(t.Columns, Column{Header: m, Digits: Decimals(m), Higher: true})
	}
	t.Columns = append(t.Columns, Column{Header: "Runs", Digits: 0})
	type rowAt struct {
		row  *Row
		runs int
	}
	var order []string
	rows := map[string]*rowAt{}
	col := map[string]int{}
	for j, m := range metrics {
		col[m] = j
	}
	var warned []string
	seen := map[string]bool{}
	for _, r := range res {
		j, ok := col[r.Metric]
		if !ok {
			continue
		}
		var keys []string
		for _, d := range dims {
			keys = append(keys, r.Group[d])
		}
		k := strings.Join(keys, "\x00")
		ra := rows[k]
		if ra == nil {
			ra = &rowAt{row: &Row{Keys: keys, Cells: make([]Value, len(metrics)+1)}}
			for i := range ra.row.Cells {
				ra.row.Cells[i] = Value{V: nan()}
			}
			rows[k] = ra
			order = append(order, k)
		}
		ra.row.Cells[j] = Value{V: r.Value, Lo: r.Lo, Hi: r.Hi, CI: true}
		if r.NRuns > ra.runs {
			ra.runs = r.NRuns
		}
		for _, w := range r.Warnings {
			msg := strings.Join(keys, " ") + " " + r.Metric + ": " + w
			if !seen[msg] {
				seen[msg] = true
				warned = append(warned, msg)
			}
		}
	}
	for _, k := range order {
		ra := rows[k]
		ra.row.Cells[len(metrics)] = Value{V: float64(ra.runs)}
		t.Rows = append(t.Rows, *ra.row)
	}
	if len(res) > 0 {
		t.Notes = append(t.Notes, "Means over runs; TC and its components 0–100, TA, TR-D and their parts in percent, TR-J 1–5. "+
			BootstrapNote(res[0].Estimate, "scenarios")+" Best value per column in bold, second underlined.")
	}
	if len(warned) > 0 {
		n := len(warned)
		if n > 5 {
			warned = append(warned[:5], fmt.Sprintf("and %d more", n-5))
		}
		t.Notes = append(t.Notes, "Warnings: "+strings.Join(warned, "; ")+".")
	}
	return t
}

// CorrelationTable lays out correlations (analysis.Correlations): a row per
// pair of metrics, Pearson and Spearman at run and configuration level.
func CorrelationTable(res []analysis.CorrResult) *Table {
	t := &Table{Name: "correlations", Caption: "Correlations between the metrics, at run level and between configuration means",
		Keys: []string{"X", "Y"}}
	cols := [][2]string{{analysis.RunLevel, analysis.PearsonR}, {analysis.RunLevel, analysis.SpearmanR},
		{analysis.ConfigLevel, analysis.PearsonR}, {analysis.ConfigLevel, analysis.SpearmanR}}
	for _, c := range cols {
		h := map[string]string{analysis.PearsonR: "r", analysis.SpearmanR: "ρ"}[c[1]]
		t.Columns = append(t.Columns, Column{Header: h + " (" + c[0] + ")", Digits: 2})
	}
	idx := map[[2]string]int{}
	for _, r := range res {
		k := [2]string{r.X, r.Y}
		i, ok := idx[k]
		if !ok {
			i = len(t.Rows)
			idx[k] = i
			row := Row{Keys: []string{r.X, r.Y}, Cells: make([]Value, len(cols))}
			for j := range row.Cells {
				row.Cells[j] = Value{V: nan()}
			}
			t.Rows = append(t.Rows, row)
		}
		for j, c := range cols {
			if c[0] == r.Level && c[1] == r.Method {
				t.Rows[i].Cells[j] = Value{V: r.R, Lo: r.Lo, Hi: r.Hi, CI: true}
			}
		}
	}
	if len(res) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("n = %d runs (run level), %d configurations (configuration level). ", res[0].N, res[len(res)-1].N)+
			BootstrapNote(res[0].Estimate, "scenarios"))
	}
	return t
}

// AgreementTable lays out agreement statistics: a row per score, a column
// per statistic.
func AgreementTable(name, caption string, stats []analysis.AgreementStat, unit string) *Table {
	t := &Table{Name: name, Caption: caption, Keys: []string{"Score"}}
	col := map[string]int{}
	row := map[string]int{}
	for _, s := range stats {
		if _, ok := col[s.Stat]; !ok {
			col[s.Stat] = len(t.Columns)
			d := 2
			if strings.HasPrefix(s.Stat, "rate") || s.Stat == analysis.StatAgreement {
				d = 1
			}
			t.Columns = append(t.Columns, Column{Header: statHeaders[s.Stat], Digits: d})
		}
	}
	t.Columns = append(t.Columns, Column{Header: "n", Digits: 0})
	for _, s := range stats {
		i, ok := row[s.Score]
		if !ok {
			i = len(t.Rows)
			row[s.Score] = i
			r := Row{Keys: []string{s.Score}, Cells: make([]Value, len(t.Columns))}
			for j := range r.Cells {
				r.Cells[j] = Value{V: nan()}
			}
			t.Rows = append(t.Rows, r)
		}
		t.Rows[i].Cells[col[s.Stat]] = Value{V: s.Value, Lo: s.Lo, Hi: s.Hi, CI: true}
		if !ok { // n: the items of the score's first statistic
			t.Rows[i].Cells[len(t.Columns)-1] = Value{V: float64(s.N)}
		}
	}
	if len(stats) > 0 {
		t.Notes = append(t.Notes, BootstrapNote(stats[0].Estimate, unit))
	}
	return t
}

var statHeaders = map[string]string{
	analysis.StatMeanA: "Mean A", analysis.StatMeanB: "Mean B", analysis.StatDelta: "Δ (B − A)", analysis.StatMAE: "MAE",
	analysis.StatPearson: "Pearson r", analysis.StatSpearman: "Spearman ρ", analysis.StatKendall: "Kendall τ-b",
	analysis.StatWeightedKappa: "Weighted κ", analysis.StatConfigPearson: "Pearson r", analysis.StatConfigSpearman: "Spearman ρ",
	analysis.StatRateA: "Rate A (%)", analysis.StatRateB: "Rate B (%)", analysis.StatAgreement: "Agreement (%)",
	analysis.StatKappa: "Cohen's κ", "r_judge": "r (judge)", "r_human": "r (humans)", "difference": "Difference",
}

func nan() float64 { return math.NaN() }
