package reports

import "github.com/gymlens/gymlens/analysis"

// HumanSections lay out the judges' agreement with the humans (agree
// --human): the judge against the humans' mean, the confusion matrices,
// the humans' reliability and rater pairs, the conflation check and the
// prediction-powered means.
func HumanSections(h *analysis.HumanAgreement, format string) []Section {
	confusion := &Result{Columns: []string{"question", "human", "judge_1", "judge_2", "judge_3", "judge_4", "judge_5"}}
	for _, c := range h.Confusion {
		row := []any{c.Question, c.Human}
		for _, n := range c.Counts {
			row = append(row, n)
		}
		confusion.Rows = append(confusion.Rows, row)
	}
	reliab := &Result{Columns: []string{"question", "level", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high",
		"fleiss_kappa", "percent_agreement", "n_items", "n_raters", "note"}}
	for _, r := range h.Reliability {
		reliab.Rows = append(reliab.Rows, []any{r.Question, r.Level, r.Alpha.Value, r.Alpha.Lo, r.Alpha.Hi, r.Fleiss, r.Percent, r.Items, r.Raters, r.Note})
	}
	pairs := &Result{Columns: []string{"question", "rater_a", "rater_b", "n", "weighted_kappa"}}
	for _, p := range h.Pairs {
		pairs.Rows = append(pairs.Rows, []any{p.Question, p.A, p.B, p.N, p.Kappa})
	}
	ppi := &Result{Columns: []string{"question", "score", "n", "labelled", "judge_mean", "judge_ci_low", "judge_ci_high",
		"human_mean", "human_ci_low", "human_ci_high", "rectifier", "corrected", "corrected_ci_low", "corrected_ci_high", "note"}}
	for _, r := range h.PPI {
		pp := r.PPIResult
		ppi.Rows = append(ppi.Rows, []any{r.Question, r.Score, pp.N, pp.Labelled, pp.JudgeMean, pp.JudgeLo, pp.JudgeHi,
			pp.HumanMean, pp.HumanLo, pp.HumanHi, pp.Rectifier, pp.Corrected, pp.CorrectedLo, pp.CorrectedHi, pp.Warning})
	}
	secs := []Section{
		AgreementSection("judge_human", JudgeLabel(h.Judge)+" (A) against the humans' mean rating (B), per question", format, h.VsHumans),
		{Name: "confusion", Title: "Confusion of each human rating (rows) with the judge's score rounded to the scale (1–5 questions)", Table: confusion},
		{Name: "human_reliability", Title: "Human–human reliability (α interval: bootstrap over items)", Table: reliab},
		{Name: "human_pairs", Title: "Pairwise quadratic-weighted κ between raters (pairs with 5 shared items or more)", Table: pairs},
	}
	if h.Conflation != nil {
		secs = append(secs, AgreementSection("conflation", "Conflation check: r between trust and task capability, judge vs humans (difference = human − judge)", format, h.Conflation))
	}
	return append(secs, Section{Name: "ppi", Title: "Judge mean corrected by the human labels (prediction-powered inference, normal intervals)", Table: ppi})
}
