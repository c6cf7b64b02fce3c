package analysis

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// ratedItem is one run or task rated by humans on one question.
type ratedItem struct {
	run, task int32        // in the RunSet, and in the run's tasks (-1 for run-level questions)
	ratings   []raterValue // by rater, each rater's in the order given
}

// raterValue is a rating of an item.
type raterValue struct {
	rater string
	v     float64
}

// add appends a rating by rater and says whether the rater had rated
// the item before.
func (it *ratedItem) add(rater string, v float64) (again bool) {
	k := it.after(rater)
	again = k > 0 && it.ratings[k-1].rater == rater
	it.ratings = slices.Insert(it.ratings, k, raterValue{rater, v})
	return again
}

// after is the place past the rater's ratings.
func (it *ratedItem) after(rater string) int {
	k, _ := slices.BinarySearchFunc(it.ratings, rater, func(x raterValue, r string) int {
		if x.rater <= r {
			return -1
		}
		return 1
	})
	return k
}

// of are the rater's ratings of the item.
func (it *ratedItem) of(rater string) []float64 {
	lo, _ := slices.BinarySearchFunc(it.ratings, rater, func(x raterValue, r string) int { return strings.Compare(x.rater, r) })
	var out []float64
	for k := lo; k < len(it.ratings) && it.ratings[k].rater == rater; k++ {
		out = append(out, it.ratings[k].v)
	}
	return out
}

// judgeValue is the judge's score of the item (TaskScore or RunLabel).
func (it *ratedItem) judgeValue(runs RunSet, score, judge string) (float64, bool) {
	r := runs.Run(int(it.run))
	if it.task >= 0 {
		return TaskScore(&r.Tasks[it.task], score, judge)
	}
	return RunLabel(r, score, judge)
}

func (it *ratedItem) raters() []string {
	var out []string
	for k, g := range it.ratings {
		if k == 0 || g.rater != it.ratings[k-1].rater {
			out = append(out, g.rater)
		}
	}
	return out
}

// rating is each rater's value (the mean of repeated ratings).
func (it *ratedItem) rating(r string) float64 { return stat.Mean(it.of(r)) }

func (it *ratedItem) humanMean() float64 {
	var s float64
	for _, r := range it.raters() {
		s += it.rating(r)
	}
	return s / float64(len(it.raters()))
}

// HumanAgreement is the judges' agreement with the human raters, and the
// raters' own reliability.
type HumanAgreement struct {
	Judge      string          // the judge compared ("" for the judges' average)
	VsHumans   []AgreementStat // the judge (A) against the humans' mean rating (B), per question
	Conflation []AgreementStat // r(TR-J, TC) for the judge and r(trust, tc) for the humans; nil when not enough
	// Confusion counts, for each 1–5 question, each human rating (Human)
	// against the judge's score split onto the scale (Counts[j-1]: judge j).
	Confusion   []ConfusionRow
	Reliability []ReliabilityRow // per question and level (with Reliability asked for)
	Pairs       []RaterPairRow   // pairs of raters with 5 shared items or more
	PPI         []PPIRow         // the judge's mean corrected by the human labels
	Notes       []string         // ratings left out, and why
}

// ConfusionRow is one row of a question's confusion matrix.
type ConfusionRow struct {
	Question string
	Human    int
	Counts   [5]float64
}

// ReliabilityRow is the humans' agreement on one question at one level.
type ReliabilityRow struct {
	Question, Level string
	Alpha           Estimate // Krippendorff's α, interval from resampling items
	Fleiss, Percent float64  // Fleiss' κ, percent agreement
	Items, Raters   int
	Note            string // why α is NaN, or its warnings
}

// RaterPairRow is the quadratic-weighted κ of two raters on their shared items.
type RaterPairRow struct {
	Question, A, B string
	N              int
	Kappa          float64
}

// PPIRow is a question's prediction-powered mean.
type PPIRow struct {
	Question, Score string
	PPIResult
}

// HumanOptions say what CompareHumans computes.
type HumanOptions struct {
	Judge       string // one judge's scores instead of the judges' average
	Reliability bool   // the humans' own agreement too (α, Fleiss' κ, pairwise κ)
	// NoPairs leaves the pairwise κ out of Reliability: its pairs grow
	// with the square of an item's raters (a crowd on one item).
	NoPairs   bool
	Bootstrap BootstrapOptions
}

// CompareHumans pairs the human ratings with the judges' scores (or one
// judge's) on the runs given: every rating of a run or task whose
// question a judge answers (QuestionScore), each rater's repeated ratings
// of an item averaged; the resampling units are the scenarios holding
// rated items. Ratings of runs not given are left out.
func CompareHumans(runs []rows.RunRow, ratings []rows.RatingRow, o HumanOptions) (*HumanAgreement, error) {
	return CompareHumansOf(RunSlice(runs), RatingsOf(ratings), o)
}

// CompareHumansOf is CompareHumans of a RunSet and a sequence of ratings
// (PackedRatings.All, or RatingsOf a slice), which it walks once per
// question.
func CompareHumansOf(runs RunSet, ratings iter.Seq[*rows.RatingRow], o HumanOptions) (*HumanAgreement, error) {
	opt, judge, reliability := o.Bootstrap, o.Judge, o.Reliability
	if judge != "" {
		if err := CheckJudge(nil, judge, JudgesOf(runs)...); err != nil {
			return nil, err
		}
	}
	runByID := map[string]int{}
	for i := range runs.Len() {
		runByID[runs.Run(i).RunID] = i
	}
	// The questions a judge answers that rate a run given.
	asked := map[string]bool{}
	for g := range ratings {
		if score, _, _ := QuestionScore(g.Question); g.RunID != "" && score != "" {
			if _, ok := runByID[g.RunID]; ok {
				asked[g.Question] = true
			}
		}
	}
	questions := sortedKeys(asked)
	// gather reads the ratings of question q, by item: each question's
	// items are held while it is computed, not every question's at once.
	inactive, repeated := 0, 0
	gather := func(q string) map[string]*ratedItem {
		items := map[string]*ratedItem{}
		_, scale, isTask := QuestionScore(q)
		for g := range ratings {
			if g.Question != q || g.RunID == "" {
				continue // a study rating, or another question
			}
			ri, ok := runByID[g.RunID]
			if !ok {
				continue // a run --where leaves out
			}
			r := runs.Run(ri)
			task := int32(-1)
			key := g.RunID
			if isTask {
				for k := range r.Tasks {
					if r.Tasks[k].Task == g.Task {
						task = int32(k)
					}
				}
				if task < 0 {
					inactive++
					continue
				}
				key += "\x00" + g.Task
			}
			it := items[key]
			if it == nil {
				it = &ratedItem{run: int32(ri), task: task}
				items[key] = it
			}
			if it.add(g.Rater, g.Value*scale) {
				repeated++
			}
		}
		return items
	}
	conf := Index{}
	for i := range runs.Len() {
		conf.Of(runs.Run(i).ConfigID)
	}
	kept := map[string]map[string]*ratedItem{} // tc and trust, for the conflation
	rated := 0
	var vsStats []AgreementStat
	h := &HumanAgreement{Judge: judge}
	for _, q := range questions {
		score, _, _ := QuestionScore(q)
		items := map[string]map[string]*ratedItem{q: gather(q)}
		if len(items[q]) == 0 {
			continue
		}
		rated += len(items[q])
		if q == "tc" || q == "trust" {
			kept[q] = items[q]
		}
		keys := sortedKeys(items[q])
		// The resampling units are the scenarios that hold rated items
		// (numbered in item order, so that runs nobody rated change
		// nothing), not every scenario of the runs selected.
		scen := Index{}
		p := Paired{Score: q + " ~ " + score, Configs: len(conf)}
		kp := Paired{Score: q + " ~ " + score}
		integer := true
		var units [][]float64
		var labelled, labelledJudge []float64
		for _, k := range keys {
			it := items[q][k]
			var unit []float64
			for _, r := range it.raters() {
				unit = append(unit, it.rating(r))
				for _, v := range it.of(r) {
					if v != math.Round(v) || v < 1 || v > 5 {
						integer = false
					}
				}
			}
			units = append(units, unit)
			jv, ok := it.judgeValue(runs, score, judge)
			if !ok {
				continue
			}
			h := it.humanMean()
			run := runs.Run(int(it.run))
			scenario := run.Scenario
			p.Add(jv, h, scen.Of(scenario), conf.Of(run.ConfigID))
			labelled, labelledJudge = append(labelled, h), append(labelledJudge, jv)
			// κ needs the judge's score on the 1–5 scale: the nearest point,
			// or half on each neighbour for a score half-way between two.
			cats, ws := SplitToScale(jv, 5)
			for _, r := range it.raters() {
				for _, v := range it.of(r) {
					for c := range cats {
						kp.A = append(kp.A, v)
						kp.B = append(kp.B, cats[c])
						kp.Weight = append(kp.Weight, ws[c])
						kp.Cluster = append(kp.Cluster, scen.Of(scenario))
					}
				}
			}
		}
		p.Clusters, kp.Clusters = len(scen), len(scen)
		if len(p.A) > 0 {
			vsStats = append(vsStats, ContinuousAgreement(p, AgreementOptions{Kendall: true}, opt)...)
			if integer {
				s, c := KappaAgreement(kp, Quadratic, opt)
				vsStats = append(vsStats, s)
				// A 5×5 matrix: human rating (rows) by judge score (columns).
				m := [6][6]float64{}
				for i, h := range c.Categories {
					for j, jv := range c.Categories {
						m[int(h)][int(jv)] += c.Counts[i][j]
					}
				}
				for hv := 1; hv <= 5; hv++ {
					row := ConfusionRow{Question: q, Human: hv}
					for j := 1; j <= 5; j++ {
						row.Counts[j-1] = m[hv][j]
					}
					h.Confusion = append(h.Confusion, row)
				}
			}
			// The judge's mean over the items nobody rated, corrected by the
			// human labels of the rated ones.
			var unlabelled []float64
			for i := range runs.Len() {
				r := runs.Run(i)
				if _, _, isTask := QuestionScore(q); isTask {
					for k := range r.Tasks {
						if _, rated := items[q][r.RunID+"\x00"+r.Tasks[k].Task]; rated {
							continue
						}
						if v, ok := TaskScore(&r.Tasks[k], score, judge); ok {
							unlabelled = append(unlabelled, v)
						}
					}
				} else if _, rated := items[q][r.RunID]; !rated {
					if v, ok := RunLabel(r, score, judge); ok {
						unlabelled = append(unlabelled, v)
					}
				}
			}
			pp := PPIMean(unlabelled, labelled, labelledJudge, opt.Level)
			h.PPI = append(h.PPI, PPIRow{Question: q, Score: score, PPIResult: pp})
		}
		if !reliability {
			continue
		}
		// The humans' own reliability.
		levels := []string{Interval}
		if integer {
			levels = append(levels, Ordinal)
		}
		for _, lv := range levels {
			est, raters, n, reason := alphaEstimate(units, lv, items[q], opt)
			f := stat.NewFleissData(units)
			h.Reliability = append(h.Reliability, ReliabilityRow{Question: q, Level: lv, Alpha: est, Fleiss: f.Kappa(nil),
				Percent: 100 * f.Agreement(nil), Items: n, Raters: raters, Note: reason})
		}
		if o.NoPairs {
			continue
		}
		for _, pr := range raterPairs(items[q], keys) {
			h.Pairs = append(h.Pairs, RaterPairRow{Question: q, A: pr.a, B: pr.b, N: len(pr.x), Kappa: pr.kappa})
		}
	}
	if rated == 0 {
		return nil, NoDataf("no human rating of a run or task in the runs selected has a judge counterpart (questions: tc, tc.<diagnostic>, trust, trj.<construct>, ta, ta.now, ta.later)")
	}
	var notes []string
	if inactive > 0 {
		notes = append(notes, fmt.Sprintf("%d ratings of tasks that are not active in their run are left out", inactive))
	}
	if repeated > 0 {
		notes = append(notes, fmt.Sprintf("%d ratings repeat a rater's rating of the same item and question: each rater's ratings of an item are averaged", repeated))
	}
	h.VsHumans, h.Conflation, h.Notes = vsStats, conflation(runs, kept, judge, opt), notes
	return h, nil
}

// alphaEstimate is Krippendorff's α with an interval from resampling the
// pairable units, the number of raters and units, and the reason when NaN.
func alphaEstimate(units [][]float64, level string, items map[string]*ratedItem, opt BootstrapOptions) (Estimate, int, int, string) {
	raters := map[string]bool{}
	for _, it := range items {
		for _, r := range it.raters() {
			raters[r] = true
		}
	}
	est, reason := AlphaWithInterval(units, level, opt)
	return est, len(raters), len(units), reason
}

// AlphaWithInterval is Krippendorff's α of units at level with a cluster
// bootstrap interval over the pairable units, and the reason when it is NaN
// (or the interval's warnings).
func AlphaWithInterval(units [][]float64, level string, opt BootstrapOptions) (Estimate, string) {
	a, err := stat.NewAlphaData(units, level)
	if err != nil {
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, err.Error()
	}
	if r := a.Reason(); r != "" {
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, r
	}
	var est []Estimate
	if group, n := a.Groups(); group != nil {
		est = stat.ClusterBootstrapGrouped(group, n, 1, func(w, out []float64) { out[0] = a.AlphaOfGroups(w) }, opt)
	} else {
		est = stat.ClusterBootstrap(a.Pairable, 1, func(w, out []float64) { out[0] = a.Alpha(w) }, opt)
	}
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
		p.kappa, _ = stat.CohenKappa(p.x, p.y, Quadratic)
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
func conflation(runs RunSet, items map[string]map[string]*ratedItem, judge string, opt BootstrapOptions) []AgreementStat {
	scen := Index{} // the scenarios holding the items compared
	trust, tc := items["trust"], items["tc"]
	if trust == nil || tc == nil {
		return nil
	}
	var jx, jy, hx, hy []float64
	var cl []int
	for _, k := range sortedKeys(trust) {
		a, b := trust[k], tc[k]
		if b == nil || a.task < 0 {
			continue
		}
		jt, ok1 := a.judgeValue(runs, "TRJ", judge)
		jc, ok2 := a.judgeValue(runs, "TC.diagnostics", judge)
		if !ok1 || !ok2 {
			continue
		}
		jx, jy = append(jx, jc), append(jy, jt)
		hx, hy = append(hx, b.humanMean()), append(hy, a.humanMean())
		cl = append(cl, scen.Of(runs.Run(int(a.run)).Scenario))
	}
	if len(jx) < 3 {
		return nil
	}
	est := CorrDifference(jx, jy, hx, hy, cl, len(scen), opt)
	var stats []AgreementStat
	for i, name := range []string{"r_judge", "r_human", "difference"} {
		stats = append(stats, AgreementStat{Score: "r(TR-J, TC)", Stat: name, N: len(jx), Estimate: est[i]})
	}
	return stats
}

func sortedKeys[T any](m map[string]T) []string { return slices.Sorted(maps.Keys(m)) }
