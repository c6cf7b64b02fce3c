package reports

import (
	"fmt"

	"github.com/gymlens/gymlens/analysis"
)

// VarianceTable lays variance components out: a row per metric and term,
// its variance and share with their intervals, and a row per metric for
// the ICC and the design effect.
func VarianceTable(vcs []*analysis.VarianceComponents) *Table {
	t := &Table{Name: "variance", Caption: "Where the variance comes from: each term's variance and share of the total",
		Keys: []string{"Metric", "Term"}, Columns: []Column{{Header: "Variance", Digits: 2}, {Header: "Share", Digits: 2}}}
	for _, vc := range vcs {
		for _, term := range vc.Terms {
			v, s := term.Variance, term.Share
			t.Rows = append(t.Rows, Row{Keys: []string{vc.Metric, term.Term},
				Cells: []Value{{V: v.Value, Lo: v.Lo, Hi: v.Hi, CI: true}, {V: s.Value, Lo: s.Lo, Hi: s.Hi, CI: true}}})
		}
		t.Rows = append(t.Rows, Row{Keys: []string{vc.Metric, "ICC; design effect"},
			Cells: []Value{{V: vc.ICC.Value, Lo: vc.ICC.Lo, Hi: vc.ICC.Hi, CI: true}, {V: vc.DesignEffect.Value, Lo: vc.DesignEffect.Lo, Hi: vc.DesignEffect.Hi, CI: true}}})
	}
	if len(vcs) > 0 {
		vc := vcs[0]
		t.Notes = append(t.Notes, fmt.Sprintf("%s, %d configurations × %d scenarios × %d personas × %d repetitions; the last row of each metric: the ICC of a configuration's runs within a scenario, and the design effect. ",
			vc.Method, vc.Configs, vc.Scenarios, vc.Personas, vc.Repetitions)+BootstrapNote(vc.ICC, "scenarios"))
	}
	return t
}

// PowerTable lays the minimum detectable effects out, a row per metric.
func PowerTable(ps []analysis.PowerResult) *Table {
	t := &Table{Name: "power", Caption: "The smallest difference between two configurations the design detects",
		Keys: []string{"Metric"}, Columns: []Column{{Header: "SE of a difference", Digits: 2}, {Header: "MDE", Digits: 2}}}
	for _, p := range ps {
		t.Rows = append(t.Rows, Row{Keys: []string{p.Metric}, Cells: []Value{{V: p.SE}, {V: p.MDE}}})
	}
	if len(ps) > 0 {
		p := ps[0]
		t.Notes = append(t.Notes, fmt.Sprintf("A paired comparison on %d scenarios × %d personas × %d repetitions; the paired t-test over scenarios at level %g (two-sided) with power %g, exact by the noncentral t.",
			p.Scenarios, p.Personas, p.Repetitions, p.Alpha, p.Power))
	}
	return t
}

// RankTable lays ranks out: a row per metric and configuration (best
// first), its value, its rank with the rank interval, P(best), and its
// letters.
func RankTable(byMetric [][]RankRow) *Table {
	t := &Table{Name: "rank", Caption: "How sure the ranks are: rank intervals, P(best), and letters (configurations sharing one are not significantly different)",
		Keys: []string{"Metric", "Configuration", "Letters"}, Columns: []Column{{Header: "Value", Digits: 2}, {Header: "Rank", Digits: 0}, {Header: "P(best)", Digits: 2}}}
	for _, rs := range byMetric {
		for _, r := range rs {
			t.Rows = append(t.Rows, Row{Keys: []string{r.Metric, r.Config, r.Letters},
				Cells: []Value{{V: r.Value}, {V: float64(r.Rank), Lo: float64(r.RankLo), Hi: float64(r.RankHi), CI: true}, {V: r.PBest}}})
		}
	}
	if len(byMetric) > 0 && len(byMetric[0]) > 0 {
		r := byMetric[0][0]
		t.Notes = append(t.Notes, fmt.Sprintf("Rank 1: the highest; its interval: the resampled ranks' quantiles; %d resamples of %d scenarios drawn once for every configuration. Letters: paired cluster bootstrap of every pair, Holm-adjusted.",
			r.Resamples, r.Clusters))
	}
	return t
}
