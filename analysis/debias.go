package analysis

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// PPIFewRated is the rated items per side below which a PPI-corrected
// difference carries a warning that its interval rests on few labels.
const PPIFewRated = 30

// DebiasJudges is the fewest judges CompareDebiased accepts: with fewer,
// dropping the judges of two compared families leaves none.
const DebiasJudges = 3

// DebiasedComparison is one paired difference B − A of a judged metric
// as measured (every judge) and leave-family-out (the judges of A's and
// B's model families dropped), and the judges' part in it: Bias =
// Measured − LeaveOut, all three from the same resamples.
type DebiasedComparison struct {
	A, B, Metric             string
	Dropped, Kept            []string
	Measured, LeaveOut, Bias Estimate
	PMeasured, PLeaveOut     float64
	// Change says how the conclusion changes once the judges are left
	// out ("" when it does not): an interval that excluded 0 and no
	// longer does, or the reverse.
	Change string
}

// PPIDifference is the difference B − A of the item mean of a score as
// the judges give it (Judge) and corrected by the human ratings
// (Corrected, prediction-powered): for each side the judges' mean over
// its items plus the mean of human − judges over its rated items, the
// scenarios resampled once for both sides.
type PPIDifference struct {
	A, B, Score                  string
	NA, NB, LabelledA, LabelledB int
	Judge, Corrected             Estimate
	P                            float64 // Corrected's interval inverted
}

// Debiased is what CompareDebiased finds.
type Debiased struct {
	Judges []string
	Rows   []DebiasedComparison
	PPI    []PPIDifference
	Notes  []string
}

// judgedMetric says whether a metric comes from judgments (leaving
// judges out can change it).
func judgedMetric(name string) bool {
	switch name {
	case "TR-D", "TC.evidence", "TC.outputs", "TC.constraints":
		return false
	}
	return true
}

// keepJudges is r with the judgments of the judges keep keeps.
func keepJudges(r *rows.RunRow, keep func(string) bool) rows.RunRow {
	out := *r
	out.TA = slices.DeleteFunc(slices.Clone(r.TA), func(j rows.TAJudgment) bool { return !keep(j.Judge) })
	out.Custom = slices.DeleteFunc(slices.Clone(r.Custom), func(j rows.CustomJudgment) bool { return !keep(j.Judge) })
	out.Tasks = make([]rows.TaskRow, len(r.Tasks))
	for i, t := range r.Tasks {
		t.TC = slices.DeleteFunc(slices.Clone(t.TC), func(j rows.TCJudgment) bool { return !keep(j.Judge) })
		t.TRJ = slices.DeleteFunc(slices.Clone(t.TRJ), func(j rows.TRJJudgment) bool { return !keep(j.Judge) })
		t.Custom = slices.DeleteFunc(slices.Clone(t.Custom), func(j rows.CustomJudgment) bool { return !keep(j.Judge) })
		out.Tasks[i] = t
	}
	return out
}

// CompareDebiased compares each pair (its runs are places in runs) on the
// judged metrics among metrics, as measured and leave-family-out, and,
// where ratings hold human ratings of its items, the prediction-powered
// difference of each rated score. It needs DebiasJudges judges or more,
// and a family in fam for every judge and for the two models of each pair.
//
// For pair (A, B) and metric m, with v(r) a run's value from every judge
// and u(r) from the judges whose family is neither A's model's nor B's:
//
//	Measured = mean_B v − mean_A v,  LeaveOut = mean_B u − mean_A u,
//	Bias     = Measured − LeaveOut,
//
// each mean over the side's runs that have the value, the scenarios drawn
// once per resample for all three.
func CompareDebiased(pairs []Pair, runs RunSet, metrics []int, fam Families, ratings iter.Seq[*rows.RatingRow], opt BootstrapOptions) (*Debiased, error) {
	opt = opt.WithDefaults()
	judges := JudgesOf(runs)
	if len(judges) < DebiasJudges {
		return nil, NoDataf("--debias: leaving out the judges of the two compared families needs %d judges or more; the runs have %d (%s)",
			DebiasJudges, len(judges), strings.Join(judges, ", "))
	}
	jfam := map[string]string{}
	for _, j := range judges {
		f, err := fam.of("judge", j)
		if err != nil {
			return nil, err
		}
		jfam[j] = f
	}
	var judged []int
	for _, m := range metrics {
		if judgedMetric(MetricName(m)) {
			judged = append(judged, m)
		}
	}
	res := &Debiased{Judges: judges}
	if len(judged) < len(metrics) {
		res.Notes = append(res.Notes, "metrics from no judgment (TR-D, TC's rule-based parts) are the same whichever judges are left out: not shown")
	}
	nm := len(judged)
	scen := Index{}
	// sums[((p*nm+m)*2+side)*2+kind][cluster]: kind 0 every judge, 1 the judges kept.
	type cell struct{ sum, cnt []float64 }
	cells := make([]cell, len(pairs)*nm*4)
	kept := make([][]string, len(pairs))
	dropped := make([][]string, len(pairs))
	type valued struct {
		all, kept []float64
		cluster   int
	}
	vals := make([][2][]valued, len(pairs))
	for p, pr := range pairs {
		var fams []string
		for _, set := range [][]int{pr.RunsA, pr.RunsB} {
			if len(set) == 0 {
				continue
			}
			f, err := fam.of("agent model", runs.Run(set[0]).Model)
			if err != nil {
				return nil, err
			}
			fams = append(fams, f)
		}
		for _, j := range judges {
			if slices.Contains(fams, jfam[j]) {
				dropped[p] = append(dropped[p], j)
			} else {
				kept[p] = append(kept[p], j)
			}
		}
		keep := func(j string) bool { return slices.Contains(kept[p], j) }
		for s, set := range [][]int{pr.RunsA, pr.RunsB} {
			for _, i := range set {
				r := runs.Run(i)
				all, _ := RunValues(r, "")
				k := keepJudges(r, keep)
				lfo, _ := RunValues(&k, "")
				vals[p][s] = append(vals[p][s], valued{all: all, kept: lfo, cluster: scen.Of(r.Scenario)})
			}
		}
	}
	ns := len(scen)
	for q := range cells {
		cells[q] = cell{make([]float64, ns), make([]float64, ns)}
	}
	at := func(p, m, s, kind int) *cell { return &cells[((p*nm+m)*2+s)*2+kind] }
	for p := range pairs {
		for s := 0; s < 2; s++ {
			for _, v := range vals[p][s] {
				for m, col := range judged {
					for kind, x := range []float64{v.all[col], v.kept[col]} {
						if !math.IsNaN(x) {
							c := at(p, m, s, kind)
							c.sum[v.cluster] += x
							c.cnt[v.cluster]++
						}
					}
				}
			}
		}
	}
	mean := func(w []float64, c *cell) float64 {
		var s, n float64
		for q, wq := range w {
			if wq != 0 {
				s += float64(wq * c.sum[q])
				n += float64(wq * c.cnt[q])
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return s / n
	}
	statFn := func(w, out []float64) {
		for p := range pairs {
			for m := range nm {
				d0 := mean(w, at(p, m, 1, 0)) - mean(w, at(p, m, 0, 0))
				d1 := mean(w, at(p, m, 1, 1)) - mean(w, at(p, m, 0, 1))
				o := out[(p*nm+m)*3:]
				o[0], o[1], o[2] = d0, d1, d0-d1
			}
		}
	}
	est, ps := stat.ClusterBootstrapTested(ns, len(pairs)*nm*3, statFn, opt)
	for p, pr := range pairs {
		for m, col := range judged {
			q := (p*nm + m) * 3
			row := DebiasedComparison{A: pr.A, B: pr.B, Metric: MetricName(col), Dropped: dropped[p], Kept: kept[p],
				Measured: est[q], LeaveOut: est[q+1], Bias: est[q+2], PMeasured: ps[q], PLeaveOut: ps[q+1]}
			if len(kept[p]) == 0 {
				row.LeaveOut.Warn(0, "every judge is of one of the two families: none is left")
			}
			row.Change = conclusionChange(row.Measured, row.LeaveOut)
			res.Rows = append(res.Rows, row)
		}
	}
	if ratings != nil {
		ppi, notes := ppiDifferences(pairs, runs, ratings, opt)
		res.PPI, res.Notes = ppi, append(res.Notes, notes...)
	}
	return res, nil
}

// excludes0 says whether an interval lies wholly on one side of 0.
func excludes0(e Estimate) bool { return e.Lo > 0 || e.Hi < 0 }

// conclusionChange says how leaving judges out changes whether the
// difference's interval excludes 0.
func conclusionChange(measured, lfo Estimate) string {
	if math.IsNaN(lfo.Lo) || math.IsNaN(measured.Lo) {
		return ""
	}
	switch a, b := excludes0(measured), excludes0(lfo); {
	case a && !b:
		return "the measured difference excludes 0; with the two families' judges left out it no longer does"
	case !a && b:
		return "the measured difference does not exclude 0; with the two families' judges left out it does"
	case a && b && (measured.Value > 0) != (lfo.Value > 0):
		return "the difference changes sign once the two families' judges are left out"
	}
	return ""
}

// ppiDifferences are the prediction-powered differences of every pair on
// every bias score some rating of the pairs' items rates. For side s and
// score k, with f the judges' mean score of an item, the items I_s of the
// side's runs and L_s ⊂ I_s those humans rated (y their mean rating):
//
//	θ_s = mean_{I_s} f + mean_{L_s} (y − f),  Corrected = θ_B − θ_A,
//
// the scenarios resampled once for both sides (the labelled items must be
// a random sample of each side's items, as PPI assumes).
func ppiDifferences(pairs []Pair, runs RunSet, ratings iter.Seq[*rows.RatingRow], opt BootstrapOptions) ([]PPIDifference, []string) {
	human := humanItems(runs, ratings)
	var out []PPIDifference
	var notes []string
	for _, score := range BiasScores {
		h := human[score]
		if len(h) == 0 {
			continue
		}
		for _, pr := range pairs {
			scen := Index{}
			// per[side][cluster]: Σf, n, Σ(y − f), labelled.
			var per [2][][4]float64
			var n, lab [2]int
			grow := func(s, c int) {
				for len(per[s]) <= c {
					per[s] = append(per[s], [4]float64{})
				}
			}
			for s, set := range [][]int{pr.RunsA, pr.RunsB} {
				for _, i := range set {
					r := runs.Run(i)
					c := scen.Of(r.Scenario)
					item := func(ti int, f float64) {
						grow(0, c)
						grow(1, c)
						x := &per[s][c]
						x[0] += f
						x[1]++
						n[s]++
						if y, ok := h[[2]int{i, ti}]; ok {
							x[2] += y - f
							x[3]++
							lab[s]++
						}
					}
					if score == "TA" {
						if f, ok := RunLabel(r, score, ""); ok {
							item(-1, f)
						}
						continue
					}
					for ti := range r.Tasks {
						if f, ok := TaskScore(&r.Tasks[ti], score, ""); ok {
							item(ti, f)
						}
					}
				}
			}
			if lab[0]+lab[1] == 0 {
				continue
			}
			d := PPIDifference{A: pr.A, B: pr.B, Score: score, NA: n[0], NB: n[1], LabelledA: lab[0], LabelledB: lab[1]}
			if lab[0] == 0 || lab[1] == 0 {
				notes = append(notes, fmt.Sprintf("%s − %s, %s: human ratings of one side only (%d and %d items rated): no prediction-powered difference",
					pr.B, pr.A, score, lab[1], lab[0]))
				continue
			}
			ns := len(scen)
			statFn := func(w, o []float64) {
				var t [2][4]float64
				for s := range 2 {
					for c, wc := range w {
						if wc != 0 {
							for q := range 4 {
								t[s][q] += float64(wc * per[s][c][q])
							}
						}
					}
				}
				o[0], o[1] = math.NaN(), math.NaN()
				if t[0][1] == 0 || t[1][1] == 0 {
					return
				}
				o[0] = t[1][0]/t[1][1] - t[0][0]/t[0][1]
				if t[0][3] > 0 && t[1][3] > 0 {
					o[1] = o[0] + t[1][2]/t[1][3] - t[0][2]/t[0][3]
				}
			}
			est, ps := stat.ClusterBootstrapTested(ns, 2, statFn, opt)
			d.Judge, d.Corrected, d.P = est[0], est[1], ps[1]
			if lab[0] < PPIFewRated || lab[1] < PPIFewRated {
				d.Corrected.Warn(0, fmt.Sprintf("few items rated by humans (%d and %d): the correction's interval is wide and its coverage rests on them", lab[0], lab[1]))
			}
			out = append(out, d)
		}
	}
	return out, notes
}
