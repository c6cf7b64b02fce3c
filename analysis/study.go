package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/gymlens/gymlens/analysis/stat"
)

// StudyRating is one participant's rating at a checkpoint day under a
// condition (one letter per phase, e.g. AMA: appropriate, misaligned,
// appropriate).
type StudyRating struct {
	Participant, Question, Condition string
	Day                              int
	Value                            float64
}

// StudyStat is one estimate of the human-study analyses.
type StudyStat struct {
	Kind      string // over_days, transition, acceptance, acceptance_difference
	Question  string
	Condition string // a condition, a transition (A→M) or a difference (AAA − MMM)
	Day       int    // over_days only
	N         int    // participants contributing
	Estimate
}

// Study estimates, with participants as the resampling unit: each
// question's mean by condition and checkpoint day; the mean change from
// one checkpoint to the next by transition type (the letters of the two
// phases); and the acceptance question's rate by condition (in percent)
// with the paired difference between every two conditions. A participant's
// repeated ratings of one cell are averaged first.
func Study(ratings []StudyRating, acceptance string, opt BootstrapOptions) ([]StudyStat, []string, error) {
	if len(ratings) == 0 {
		return nil, nil, NoDataf("no study rating (a rating with a day and a condition) in the warehouse")
	}
	parts := Index{}
	type cellKey struct {
		q, c string
		day  int
	}
	cells := map[cellKey]map[int][]float64{} // → participant → values
	for _, r := range ratings {
		k := cellKey{r.Question, r.Condition, r.Day}
		if cells[k] == nil {
			cells[k] = map[int][]float64{}
		}
		p := parts.Of(r.Participant)
		cells[k][p] = append(cells[k][p], r.Value)
	}
	P := len(parts)
	var keys []cellKey
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.q != b.q {
			return a.q < b.q
		}
		if a.c != b.c {
			return a.c < b.c
		}
		return a.day < b.day
	})
	// Every statistic is Σ_p w_p sum_p / Σ_p w_p count_p, or a difference
	// of two of them.
	var sums, counts [][]float64
	var out []StudyStat
	add := func(s StudyStat, sum, cnt []float64) int {
		n := 0
		for _, c := range cnt {
			if c > 0 {
				n++
			}
		}
		s.N = n
		out = append(out, s)
		sums, counts = append(sums, sum), append(counts, cnt)
		return len(out) - 1
	}
	cellMean := map[cellKey][]float64{} // per participant, NaN-free only where present
	for _, k := range keys {
		sum, cnt := make([]float64, P), make([]float64, P)
		m := make([]float64, P)
		has := make([]bool, P)
		for p, vs := range cells[k] {
			m[p], has[p] = stat.Mean(vs), true
			sum[p], cnt[p] = m[p], 1
		}
		cellMean[k] = m
		for p := range m {
			if !has[p] {
				m[p] = nan
			}
		}
		if k.q == acceptance {
			continue
		}
		add(StudyStat{Kind: "over_days", Question: k.q, Condition: k.c, Day: k.day}, sum, cnt)
	}
	// Transitions: between consecutive checkpoint days of a condition
	// whose letters match its days.
	var notes []string
	type trKey struct{ q, t string }
	trSum, trCnt := map[trKey][]float64{}, map[trKey][]float64{}
	daysOf := map[[2]string][]int{}
	for _, k := range keys {
		daysOf[[2]string{k.q, k.c}] = append(daysOf[[2]string{k.q, k.c}], k.day)
	}
	var trKeys []trKey
	for qc, days := range daysOf {
		q, c := qc[0], qc[1]
		if q == acceptance {
			continue
		}
		if len(c) != len(days) {
			notes = append(notes, fmt.Sprintf("condition %q has %d letters but %d checkpoint days for %s: no transitions from it", c, len(c), len(days), q))
			continue
		}
		for i := 1; i < len(days); i++ {
			t := trKey{q, fmt.Sprintf("%c→%c", c[i-1], c[i])}
			if trSum[t] == nil {
				trSum[t], trCnt[t] = make([]float64, P), make([]float64, P)
				trKeys = append(trKeys, t)
			}
			a, b := cellMean[cellKey{q, c, days[i-1]}], cellMean[cellKey{q, c, days[i]}]
			for p := 0; p < P; p++ {
				if a[p] == a[p] && b[p] == b[p] { // both present
					trSum[t][p] += b[p] - a[p]
					trCnt[t][p]++
				}
			}
		}
	}
	sort.Slice(trKeys, func(i, j int) bool {
		if trKeys[i].q != trKeys[j].q {
			return trKeys[i].q < trKeys[j].q
		}
		return trKeys[i].t < trKeys[j].t
	})
	for _, t := range trKeys {
		add(StudyStat{Kind: "transition", Question: t.q, Condition: t.t}, trSum[t], trCnt[t])
	}
	// Acceptance by condition (over days), and paired differences.
	var accIdx []int
	var accConds []string
	for _, k := range keys {
		if k.q != acceptance {
			continue
		}
		if len(accConds) == 0 || accConds[len(accConds)-1] != k.c {
			accConds = append(accConds, k.c)
			accIdx = append(accIdx, add(StudyStat{Kind: "acceptance", Question: k.q, Condition: k.c}, make([]float64, P), make([]float64, P)))
		}
		i := accIdx[len(accIdx)-1]
		for p, v := range cellMean[k] {
			if v == v {
				sums[i][p] += float64(100 * v)
				counts[i][p]++
			}
		}
	}
	for i := range accIdx {
		n := 0
		for _, c := range counts[accIdx[i]] {
			if c > 0 {
				n++
			}
		}
		out[accIdx[i]].N = n
	}
	type diff struct{ a, b int }
	var diffs []diff
	base := len(out)
	for i := 0; i < len(accIdx); i++ {
		for j := i + 1; j < len(accIdx); j++ {
			diffs = append(diffs, diff{accIdx[i], accIdx[j]})
			out = append(out, StudyStat{Kind: "acceptance_difference", Question: acceptance,
				Condition: accConds[i] + " − " + accConds[j], N: min(out[accIdx[i]].N, out[accIdx[j]].N)})
		}
	}
	if len(accIdx) == 0 && acceptance != "" {
		notes = append(notes, fmt.Sprintf("no %q rating: no acceptance rates", acceptance))
	}
	statFn := func(w, res []float64) {
		for i := range sums {
			var s, c float64
			for p, wp := range w {
				s += float64(wp * sums[i][p])
				c += float64(wp * counts[i][p])
			}
			res[i] = nan
			if c > 0 {
				res[i] = s / c
			}
		}
		for k, d := range diffs {
			res[base+k] = res[d.a] - res[d.b]
		}
	}
	est := stat.ClusterBootstrap(P, len(out), statFn, opt)
	for i := range out {
		out[i].Estimate = est[i]
	}
	sort.Strings(notes)
	return out, notes, nil
}

// Index numbers strings in order of first sight.
type Index map[string]int

// Of is the number of s, given it now if it has none.
func (ix Index) Of(s string) int {
	if i, ok := ix[s]; ok {
		return i
	}
	ix[s] = len(ix)
	return ix[s]
}

var nan = math.NaN()
