package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// ratedItem is one run or task rated by humans on one question.
type ratedItem struct {
	run     *ingest.RunRow
	task    *ingest.TaskRow // nil for run-level questions
	byRater map[string][]float64
}

func (it *ratedItem) raters() []string { return sortedKeys(it.byRater) }

// rating is each rater's value (the mean of repeated ratings).
func (it *ratedItem) rating(r string) float64 { return analysis.Mean(it.byRater[r]) }

func (it *ratedItem) humanMean() float64 {
	var s float64
	for _, r := range it.raters() {
		s += it.rating(r)
	}
	return s / float64(len(it.byRater))
}

// humanAgreement is what `agree --human` reports.
type humanAgreement struct {
	judge                         string
	vsStats, conflation           []analysis.AgreementStat
	confusion, reliab, pairs, ppi *reports.Result
	notes                         []string
}

// compareHumans pairs the human ratings with the judges (or --judge) on the
// runs --where keeps; reliability adds the humans' own agreement (α with
// its intervals, Fleiss' κ, pairwise κ), which the tables do not show.
func compareHumans(src *source, reliability bool) (*humanAgreement, error) {
	cmd, opt := src.cmd, src.opt
	runs, err := src.selected()
	if err != nil {
		return nil, err
	}
	judge := cmd.String("judge")
	if err := analysis.CheckJudge(runs, judge); err != nil {
		return nil, err
	}
	ratings, err := src.humanRatings()
	if err != nil {
		return nil, err
	}
	runByID := map[string]*ingest.RunRow{}
	for i := range runs {
		runByID[runs[i].RunID] = &runs[i]
	}
	// Ratings of runs and tasks, by question and item, in a stable order.
	items := map[string]map[string]*ratedItem{}
	var notes []string
	inactive, repeated := 0, 0
	seen := map[[4]string]bool{}
	for _, g := range ratings {
		score, scale, isTask := analysis.QuestionScore(g.Question)
		if g.RunID == "" || score == "" {
			continue // a study rating, or a question no judge answers: see `gymlens human`
		}
		r := runByID[g.RunID]
		if r == nil {
			continue // a run --where leaves out
		}
		it := &ratedItem{run: r, byRater: map[string][]float64{}}
		key := g.RunID
		if isTask {
			for k := range r.Tasks {
				if r.Tasks[k].Task == g.Task {
					it.task = &r.Tasks[k]
				}
			}
			if it.task == nil {
				inactive++
				continue
			}
			key += "\x00" + g.Task
		}
		if items[g.Question] == nil {
			items[g.Question] = map[string]*ratedItem{}
		}
		if old := items[g.Question][key]; old != nil {
			it = old
		} else {
			items[g.Question][key] = it
		}
		k4 := [4]string{g.Question, key, g.Rater}
		if seen[k4] {
			repeated++
		}
		seen[k4] = true
		it.byRater[g.Rater] = append(it.byRater[g.Rater], g.Value*scale)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no human rating of a run or task in the runs selected has a judge counterpart (questions: tc, tc.<diagnostic>, trust, trj.<construct>, ta, ta.now, ta.later)")
	}
	if inactive > 0 {
		notes = append(notes, fmt.Sprintf("%d ratings of tasks that are not active in their run are left out", inactive))
	}
	if repeated > 0 {
		notes = append(notes, fmt.Sprintf("%d ratings repeat a rater's rating of the same item and question: each rater's ratings of an item are averaged", repeated))
	}
	var questions []string
	for q := range items {
		questions = append(questions, q)
	}
	sort.Strings(questions)
	conf := analysis.Index{}
	for i := range runs {
		conf.Of(runs[i].ConfigID)
	}
	judgeValue := func(it *ratedItem, score string) (float64, bool) {
		if it.task != nil {
			return analysis.TaskScore(it.task, score, judge)
		}
		return analysis.RunLabel(it.run, score, judge)
	}
	var vsStats []analysis.AgreementStat
	confusion := &reports.Result{Columns: []string{"question", "human", "judge_1", "judge_2", "judge_3", "judge_4", "judge_5"}}
	reliab := &reports.Result{Columns: []string{"question", "level", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high",
		"fleiss_kappa", "percent_agreement", "n_items", "n_raters", "note"}}
	pairs := &reports.Result{Columns: []string{"question", "rater_a", "rater_b", "n", "weighted_kappa"}}
	ppi := &reports.Result{Columns: []string{"question", "score", "n", "labelled", "judge_mean", "judge_ci_low", "judge_ci_high",
		"human_mean", "human_ci_low", "human_ci_high", "rectifier", "corrected", "corrected_ci_low", "corrected_ci_high", "note"}}
	for _, q := range questions {
		score, _, _ := analysis.QuestionScore(q)
		keys := sortedKeys(items[q])
		// The resampling units are the scenarios that hold rated items
		// (numbered in item order, so that runs nobody rated change
		// nothing), not every scenario of the runs selected.
		scen := analysis.Index{}
		p := analysis.Paired{Score: q + " ~ " + score, Configs: len(conf)}
		kp := analysis.Paired{Score: q + " ~ " + score}
		integer := true
		var units [][]float64
		var labelled, labelledJudge []float64
		for _, k := range keys {
			it := items[q][k]
			var unit []float64
			for _, r := range it.raters() {
				unit = append(unit, it.rating(r))
				for _, v := range it.byRater[r] {
					if v != math.Round(v) || v < 1 || v > 5 {
						integer = false
					}
				}
			}
			units = append(units, unit)
			jv, ok := judgeValue(it, score)
			if !ok {
				continue
			}
			h := it.humanMean()
			p.Add(jv, h, scen.Of(it.run.Scenario), conf.Of(it.run.ConfigID))
			labelled, labelledJudge = append(labelled, h), append(labelledJudge, jv)
			// κ needs the judge's score on the 1–5 scale: the nearest point,
			// or half on each neighbour for a score half-way between two.
			cats, ws := analysis.SplitToScale(jv, 5)
			for _, r := range it.raters() {
				for _, v := range it.byRater[r] {
					for c := range cats {
						kp.A = append(kp.A, v)
						kp.B = append(kp.B, cats[c])
						kp.Weight = append(kp.Weight, ws[c])
						kp.Cluster = append(kp.Cluster, scen.Of(it.run.Scenario))
					}
				}
			}
		}
		p.Clusters, kp.Clusters = len(scen), len(scen)
		if len(p.A) > 0 {
			vsStats = append(vsStats, analysis.ContinuousAgreement(p, analysis.AgreementOptions{Kendall: true}, opt)...)
			if integer {
				s, c := analysis.KappaAgreement(kp, analysis.Quadratic, opt)
				vsStats = append(vsStats, s)
				// A 5×5 matrix: human rating (rows) by judge score (columns).
				m := [6][6]float64{}
				for i, h := range c.Categories {
					for j, jv := range c.Categories {
						m[int(h)][int(jv)] += c.Counts[i][j]
					}
				}
				for h := 1; h <= 5; h++ {
					row := []any{q, h}
					for j := 1; j <= 5; j++ {
						row = append(row, m[h][j])
					}
					confusion.Rows = append(confusion.Rows, row)
				}
			}
			// The judge's mean over the items nobody rated, corrected by the
			// human labels of the rated ones.
			var unlabelled []float64
			for i := range runs {
				r := &runs[i]
				if _, _, isTask := analysis.QuestionScore(q); isTask {
					for k := range r.Tasks {
						if _, rated := items[q][r.RunID+"\x00"+r.Tasks[k].Task]; rated {
							continue
						}
						if v, ok := analysis.TaskScore(&r.Tasks[k], score, judge); ok {
							unlabelled = append(unlabelled, v)
						}
					}
				} else if _, rated := items[q][r.RunID]; !rated {
					if v, ok := analysis.RunLabel(r, score, judge); ok {
						unlabelled = append(unlabelled, v)
					}
				}
			}
			pp := analysis.PPIMean(unlabelled, labelled, labelledJudge, opt.Level)
			ppi.Rows = append(ppi.Rows, []any{q, score, pp.N, pp.Labelled, pp.JudgeMean, pp.JudgeLo, pp.JudgeHi,
				pp.HumanMean, pp.HumanLo, pp.HumanHi, pp.Rectifier, pp.Corrected, pp.CorrectedLo, pp.CorrectedHi, pp.Warning})
		}
		if !reliability {
			continue
		}
		// The humans' own reliability.
		levels := []string{analysis.Interval}
		if integer {
			levels = append(levels, analysis.Ordinal)
		}
		for _, lv := range levels {
			est, raters, n, reason := alphaEstimate(units, lv, items[q], opt)
			f := analysis.NewFleissData(units)
			reliab.Rows = append(reliab.Rows, []any{q, lv, est.Value, est.Lo, est.Hi, f.Kappa(nil), 100 * f.Agreement(nil), n, raters, reason})
		}
		for _, pr := range raterPairs(items[q], keys) {
			pairs.Rows = append(pairs.Rows, []any{q, pr.a, pr.b, len(pr.x), pr.kappa})
		}
	}
	return &humanAgreement{judge: judge, vsStats: vsStats, conflation: conflation(items, judge, opt),
		confusion: confusion, reliab: reliab, pairs: pairs, ppi: ppi, notes: notes}, nil
}

func agreeHuman(ctx context.Context, e *env, cmd *cli.Command, format string, w *ingest.Warehouse) error {
	src, err := newSource(ctx, cmd, w)
	if err != nil {
		return err
	}
	opt := src.opt
	h, err := compareHumans(src, true)
	if err != nil {
		return err
	}
	secs := []reports.Section{
		statTable("judge_human", judgeLabel(h.judge)+" (A) against the humans' mean rating (B), per question", format, h.vsStats),
		{Name: "confusion", Title: "Confusion of each human rating (rows) with the judge's score rounded to the scale (1–5 questions)", Table: h.confusion},
		{Name: "human_reliability", Title: "Human–human reliability (α interval: bootstrap over items)", Table: h.reliab},
		{Name: "human_pairs", Title: "Pairwise quadratic-weighted κ between raters (pairs with 5 shared items or more)", Table: h.pairs},
	}
	if h.conflation != nil {
		secs = append(secs, statTable("conflation", "Conflation check: r between trust and task capability, judge vs humans (difference = human − judge)", format, h.conflation))
	}
	secs = append(secs, reports.Section{Name: "ppi", Title: "Judge mean corrected by the human labels (prediction-powered inference, normal intervals)", Table: h.ppi})
	if err := reports.WriteSections(e.stdout, format, secs); err != nil {
		return err
	}
	footer(e, cmd, format, h.notes, opt, "scenarios")
	return nil
}

func judgeLabel(j string) string {
	if j == "" {
		return "The judges' average"
	}
	return "Judge " + j
}

func sortedKeys[T any](m map[string]T) []string { return slices.Sorted(maps.Keys(m)) }

// alphaEstimate is Krippendorff's α with an interval from resampling the
// pairable units, the number of raters and units, and the reason when NaN.
func alphaEstimate(units [][]float64, level string, items map[string]*ratedItem, opt analysis.BootstrapOptions) (analysis.Estimate, int, int, string) {
	raters := map[string]bool{}
	for _, it := range items {
		for r := range it.byRater {
			raters[r] = true
		}
	}
	est, reason := alphaWithInterval(units, level, opt)
	return est, len(raters), len(units), reason
}

func alphaWithInterval(units [][]float64, level string, opt analysis.BootstrapOptions) (analysis.Estimate, string) {
	a, err := analysis.NewAlphaData(units, level)
	if err != nil {
		return analysis.Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, err.Error()
	}
	if r := a.Reason(); r != "" {
		return analysis.Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, r
	}
	est := analysis.ClusterBootstrap(a.Pairable, 1, func(w, out []float64) { out[0] = a.Alpha(w) }, opt)
	return est[0], strings.Join(est[0].Warnings, "; ")
}

type raterPair struct {
	a, b  string
	x, y  []float64
	kappa float64
}

func raterPairs(items map[string]*ratedItem, keys []string) []raterPair {
	m := map[[2]string]*raterPair{}
	for _, k := range keys {
		it := items[k]
		rs := it.raters()
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				key := [2]string{rs[i], rs[j]}
				p := m[key]
				if p == nil {
					p = &raterPair{a: rs[i], b: rs[j]}
					m[key] = p
				}
				p.x, p.y = append(p.x, it.rating(rs[i])), append(p.y, it.rating(rs[j]))
			}
		}
	}
	var out []raterPair
	for _, p := range m {
		if len(p.x) < 5 {
			continue
		}
		p.kappa, _ = analysis.CohenKappa(p.x, p.y, analysis.Quadratic)
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].a != out[j].a {
			return out[i].a < out[j].a
		}
		return out[i].b < out[j].b
	})
	return out
}

// conflation compares how strongly trust tracks capability for the judge
// (r between its TR-J and TC) and for the humans (r between their trust
// and tc ratings), on the tasks rated on both.
func conflation(items map[string]map[string]*ratedItem, judge string, opt analysis.BootstrapOptions) []analysis.AgreementStat {
	scen := analysis.Index{} // the scenarios holding the items compared
	trust, tc := items["trust"], items["tc"]
	if trust == nil || tc == nil {
		return nil
	}
	var jx, jy, hx, hy []float64
	var cl []int
	for _, k := range sortedKeys(trust) {
		a, b := trust[k], tc[k]
		if b == nil || a.task == nil {
			continue
		}
		jt, ok1 := analysis.TaskScore(a.task, "TRJ", judge)
		jc, ok2 := analysis.TaskScore(a.task, "TC.diagnostics", judge)
		if !ok1 || !ok2 {
			continue
		}
		jx, jy = append(jx, jc), append(jy, jt)
		hx, hy = append(hx, b.humanMean()), append(hy, a.humanMean())
		cl = append(cl, scen.Of(a.run.Scenario))
	}
	if len(jx) < 3 {
		return nil
	}
	est := analysis.CorrDifference(jx, jy, hx, hy, cl, len(scen), opt)
	var stats []analysis.AgreementStat
	for i, name := range []string{"r_judge", "r_human", "difference"} {
		stats = append(stats, analysis.AgreementStat{Score: "r(TR-J, TC)", Stat: name, N: len(jx), Estimate: est[i]})
	}
	return stats
}
