package analysis

import (
	"math"

	"github.com/gymlens/gymlens/analysis/stat"
)

// Comparison is the difference B − A of one metric between two sets of
// runs (two configurations), on the same resampled scenarios.
type Comparison struct {
	A, B, Metric string
	MeanA, MeanB float64
	Estimate     // the difference B − A with its interval
	// P is the two-sided p-value of "no difference" that inverts the
	// interval (stat.IntervalPValue): P < 1 − Level exactly when the
	// interval excludes 0.
	P          float64
	PHolm, PBH float64 // adjusted across the comparisons of the same metric
	NA, NB     int     // runs with a value, in A and in B
	// R, when set, is the correlation of A's and B's paired scores
	// (CompareInspect: per sample).
	R *float64
}

// Pair names two run sets to compare.
type Pair struct {
	A, B         string
	RunsA, RunsB []int
}

// Compare estimates, for each pair and metric, the difference of means
// B − A. One resample draws scenarios once for every pair and metric, so
// each difference is paired by scenario: a scenario drawn twice counts
// twice on both sides. Each p-value is the smallest α whose 1 − α
// interval excludes 0 (stat.IntervalPValue), adjusted by Holm and by Benjamini–Hochberg
// across the pairs, metric by metric.
func Compare(pairs []Pair, values [][]float64, scenario []string, metrics []int, opt BootstrapOptions) []Comparison {
	names := make([]string, len(metrics))
	for j, m := range metrics {
		names[j] = MetricName(m)
	}
	return compare(pairs, values, scenario, metrics, names, opt)
}

// CompareNamed is Compare for values whose columns are named by names
// (another benchmark's metrics, such as PARE's).
func CompareNamed(pairs []Pair, values [][]float64, scenario []string, names []string, opt BootstrapOptions) []Comparison {
	cols := make([]int, len(names))
	for j := range cols {
		cols[j] = j
	}
	return compare(pairs, values, scenario, cols, names, opt)
}

func compare(pairs []Pair, values [][]float64, scenario []string, metrics []int, names []string, opt BootstrapOptions) []Comparison {
	cell := func(i, m int) (float64, float64, bool) {
		x := values[i][metrics[m]]
		return x, 1, !math.IsNaN(x)
	}
	return compareCells(pairs, cell, scenario, len(metrics), names, nil, opt)
}

// CompareRatios is CompareNamed for ratios of sums: metric m of a set of
// runs is scale[m] · Σ num[i][m] / Σ den[i][m] over its runs with both
// (PARE's pooled rates), compared B − A on the same resampled scenarios.
func CompareRatios(pairs []Pair, num, den [][]float64, scenario []string, names []string, scale []float64, opt BootstrapOptions) []Comparison {
	cell := func(i, m int) (float64, float64, bool) {
		a, b := num[i][m], den[i][m]
		return a, b, !math.IsNaN(a) && !math.IsNaN(b)
	}
	return compareCells(pairs, cell, scenario, len(names), names, scale, opt)
}

// SummarizeRatios is SummarizeNamed for ratios of sums: metric m of a
// group is scale[m] · Σ num[i][m] / Σ den[i][m] over its runs with both,
// with a cluster bootstrap over the scenarios of those runs (a resample
// adds each drawn scenario's sums as often as it is drawn).
func SummarizeRatios(groups []Group, num, den [][]float64, scenario []string, names []string, scale []float64, opt BootstrapOptions) []GroupEstimate {
	var out []GroupEstimate
	for _, g := range groups {
		for m, name := range names {
			cl := map[string]int{}
			var nums, dens []float64
			runs := 0
			for _, i := range g.Runs {
				a, b := num[i][m], den[i][m]
				if math.IsNaN(a) || math.IsNaN(b) {
					continue
				}
				runs++
				c, ok := cl[scenario[i]]
				if !ok {
					c = len(nums)
					cl[scenario[i]] = c
					nums, dens = append(nums, 0), append(dens, 0)
				}
				nums[c] += a
				dens[c] += b
			}
			statFn := func(w, out []float64) {
				var n, d float64
				for c := range w {
					n += float64(w[c] * nums[c])
					d += float64(w[c] * dens[c])
				}
				out[0] = math.NaN()
				if d > 0 {
					out[0] = scale[m] * n / d
				}
			}
			var e Estimate
			if len(nums) == 0 {
				o := opt.WithDefaults()
				e = Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Method: o.Method, Level: o.Level, Resamples: o.Resamples,
					Seed: o.Seed, Warnings: []string{"no run has this metric"}}
			} else {
				e = stat.ClusterBootstrap(len(nums), 1, statFn, opt)[0]
			}
			out = append(out, GroupEstimate{Group: g.Key, Metric: name, NRuns: runs, Estimate: e})
		}
	}
	return out
}

// compareCells compares ratios of cluster sums: cell(i, m) gives run i's
// numerator and denominator of metric m (a value and 1 for a mean), and
// whether it has them; scale, when not nil, multiplies metric m.
func compareCells(pairs []Pair, cell func(i, m int) (float64, float64, bool), scenario []string, nm int, names []string, scale []float64,
	opt BootstrapOptions) []Comparison {
	opt = opt.WithDefaults()
	cl := map[string]int{}
	for _, p := range pairs {
		for _, set := range [][]int{p.RunsA, p.RunsB} {
			for _, i := range set {
				if _, ok := cl[scenario[i]]; !ok {
					cl[scenario[i]] = len(cl)
				}
			}
		}
	}
	ns := len(cl)
	// sums[side][pair][metric][cluster], flattened.
	idx := func(side, p, m, c int) int { return ((side*len(pairs)+p)*nm+m)*ns + c }
	sum := make([]float64, 2*len(pairs)*nm*ns)
	cnt := make([]float64, len(sum))
	nA := make([]int, len(pairs)*nm)
	nB := make([]int, len(pairs)*nm)
	for p, pr := range pairs {
		for side, set := range [][]int{pr.RunsA, pr.RunsB} {
			for _, i := range set {
				c := cl[scenario[i]]
				for m := range nm {
					if x, d, ok := cell(i, m); ok {
						sum[idx(side, p, m, c)] += x
						cnt[idx(side, p, m, c)] += d
						if side == 0 {
							nA[p*nm+m]++
						} else {
							nB[p*nm+m]++
						}
					}
				}
			}
		}
	}
	mean := func(w []float64, side, p, m int) float64 {
		var s, n float64
		// The cell's clusters, one slice each: the loop runs thousands of
		// times a resample.
		at := idx(side, p, m, 0)
		cs, cn := sum[at:at+len(w)], cnt[at:at+len(w)]
		for c, wc := range w {
			s += float64(wc * cs[c])
			n += float64(wc * cn[c])
		}
		if n == 0 {
			return math.NaN()
		}
		if scale != nil {
			return scale[m] * s / n
		}
		return s / n
	}
	k := len(pairs) * nm
	statFn := func(w, out []float64) {
		for p := range pairs {
			for m := 0; m < nm; m++ {
				out[p*nm+m] = mean(w, 1, p, m) - mean(w, 0, p, m)
			}
		}
	}
	est, ps := stat.ClusterBootstrapTested(ns, k, statFn, opt)
	ones := make([]float64, ns)
	for i := range ones {
		ones[i] = 1
	}
	out := make([]Comparison, 0, k)
	for p, pr := range pairs {
		for m := range nm {
			j := p*nm + m
			out = append(out, Comparison{A: pr.A, B: pr.B, Metric: names[m], MeanA: mean(ones, 0, p, m), MeanB: mean(ones, 1, p, m),
				Estimate: est[j], P: ps[j], PHolm: math.NaN(), PBH: math.NaN(), NA: nA[j], NB: nB[j]})
		}
	}
	// Adjust across pairs, per metric.
	for m := 0; m < nm; m++ {
		var ps []float64
		var at []int
		for p := range pairs {
			if j := p*nm + m; !math.IsNaN(out[j].P) {
				ps, at = append(ps, out[j].P), append(at, j)
			}
		}
		holm, bh := stat.Holm(ps), stat.BenjaminiHochberg(ps)
		for i, j := range at {
			out[j].PHolm, out[j].PBH = holm[i], bh[i]
		}
	}
	return out
}
