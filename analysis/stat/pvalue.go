package stat

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// A comparison's interval and its p-value read one quantile function of
// the bootstrap distribution, so that the test and the interval printed
// beside it are one procedure (docs/statistics.md, "p-values").
//
// Between the second smallest and the second largest of B replicates
// (levels 1/(B−1) to (B−2)/(B−1)) it is R's type 7; beyond them, where
// type 7 would run out at the extreme replicate, it goes on as a normal
// tail with the replicates' standard deviation s:
//
//	Q(p) = x₍₂₎ + s·(Φ⁻¹(p) − Φ⁻¹(1/(B−1)))          for p < 1/(B−1),
//	Q(p) = x₍B−1₎ + s·(Φ⁻¹(p) − Φ⁻¹((B−2)/(B−1)))    for p > (B−2)/(B−1).
//
// With 10,000 replicates and ten scenarios a 95% interval reads levels
// near 0.009, far inside; the tails matter to intervals at extreme levels
// (or from 2 or 3 clusters, whose expanded levels are tiny) and to
// p-values far below 1/B, which Holm over hundreds of pairs needs. With
// fewer than 4 replicates the quantile function is type 7 alone. The
// intervals of estimates without a p-value (means, rates, agreement) stay
// type 7 alone, within the replicates: a normal tail would carry a rate's
// interval past 100%.

// tailed says whether B replicates get normal tails.
func tailed(b int) bool { return b >= 4 }

// tailQuantiles is Quantiles7 (ps ascending, x reordered), with the
// normal tails above when tails is set. zs, when not nil, are the levels'
// normal scores Φ⁻¹(p), which a tail reads instead (a level such as the
// expanded one with two clusters, Φ(−90), is 0 in floating point; its
// score is not).
func tailQuantiles(x []float64, ps, zs []float64, tails bool) []float64 {
	b := len(x)
	if !tails || !tailed(b) {
		return Quantiles7(x, ps...)
	}
	qc := 1 / float64(b-1)
	central := make([]float64, len(ps))
	tail := false
	for i, p := range ps {
		central[i] = p
		switch {
		case p < qc:
			central[i], tail = qc, true
		case p > 1-qc:
			central[i], tail = 1-qc, true
		}
	}
	out := Quantiles7(x, central...)
	if !tail {
		return out
	}
	s := SD(x)
	for i, p := range ps {
		if p != central[i] {
			z := portableQuantile(p)
			if zs != nil {
				z = zs[i]
			}
			out[i] += float64(s * (z - portableQuantile(central[i])))
		}
	}
	return out
}

// tailQuantile is one quantile of sorted replicates at level p, of normal
// score z, with the normal tails above when tails is set; sd is called
// for their standard deviation when a tail needs it.
func tailQuantile(p, z float64, sorted []float64, sd func() float64, tails bool) float64 {
	b := len(sorted)
	if !tails || !tailed(b) || math.IsNaN(p) {
		return Quantile7(p, sorted)
	}
	qc := 1 / float64(b-1)
	switch {
	case p < qc:
		return sorted[1] + float64(sd()*(z-portableQuantile(qc)))
	case p > 1-qc:
		return sorted[b-2] + float64(sd()*(z-portableQuantile(1-qc)))
	}
	return Quantile7(p, sorted)
}

// zeroScores are the normal scores of the levels where the quantile
// function of the replicates (in any order) meets 0: lo = Φ⁻¹(sup{p :
// Q(p) ≤ 0}) and hi = Φ⁻¹(inf{p : Q(p) ≥ 0}). An interval's lower end
// Q(p) is above 0 exactly when Φ⁻¹(p) > lo, its upper end Q(1 − p) below 0
// exactly when Φ⁻¹(1 − p) < hi. An infinite score: Q stays on one side of
// 0. One pass, no sorting: only the replicates next to 0, the second
// smallest and the second largest, and the spread are read.
func zeroScores(reps []float64) (lo, hi float64) {
	b := len(reps)
	var nle, nlt int // replicates ≤ 0, < 0
	maxLE, maxLT, minGT, minGE := math.Inf(-1), math.Inf(-1), math.Inf(1), math.Inf(1)
	small := [2]float64{math.Inf(1), math.Inf(1)}   // the two smallest
	large := [2]float64{math.Inf(-1), math.Inf(-1)} // the two largest
	for _, v := range reps {
		if v <= 0 {
			nle++
			maxLE = max(maxLE, v)
		} else {
			minGT = min(minGT, v)
		}
		if v < 0 {
			nlt++
			maxLT = max(maxLT, v)
		} else {
			minGE = min(minGE, v)
		}
		if v < small[1] {
			small[1] = v
			if v < small[0] {
				small[0], small[1] = v, small[0]
			}
		}
		if v > large[1] {
			large[1] = v
			if v > large[0] {
				large[0], large[1] = v, large[0]
			}
		}
	}
	first, last := 0, b-1 // the order statistics type 7 reads; beyond them the tails
	xFirst, xLast := small[0], large[0]
	var s float64
	if tailed(b) {
		first, last = 1, b-2
		xFirst, xLast = small[1], large[1]
		s = SD(reps)
	}
	// Where a tail meets 0: the end replicate x at score z goes on as
	// x + s·(score − z). Without tails or spread the quantile function
	// stays at x, on one side of 0 (inf: the score if it does not meet 0).
	tail := func(x, z, inf float64) float64 {
		if !tailed(b) || s == 0 {
			return inf
		}
		return Portable(float64(z - x/s))
	}
	qc := 1 / float64(b-1)
	zFirst, zLast := portableQuantile(qc), portableQuantile(1-qc) // read when tailed
	// The score where the step from order statistic i (value x) to i + 1
	// (value y) meets 0.
	step := func(i int, x, y float64) float64 {
		return portableQuantile(float64(float64(i)+(0-x)/(y-x)) / float64(b-1))
	}
	switch {
	case nle <= first: // x₍first₎ > 0
		lo = tail(xFirst, zFirst, math.Inf(-1))
	case nle > last: // x₍last₎ ≤ 0
		lo = tail(xLast, zLast, math.Inf(1))
	default: // the last replicate at or below 0, before one above it
		lo = step(nle-1, maxLE, minGT)
	}
	switch {
	case nlt > last: // x₍last₎ < 0
		hi = tail(xLast, zLast, math.Inf(1))
	case nlt <= first: // x₍first₎ ≥ 0
		hi = tail(xFirst, zFirst, math.Inf(-1))
	default: // the first replicate at or above 0, after one below it
		hi = step(nlt-1, maxLT, minGE)
	}
	return lo, hi
}

// IntervalPValue is the two-sided p-value of "the statistic is 0" that
// inverts the intervals of method, read with the normal tails
// (ClusterBootstrapTested): the smallest α whose 1 − α interval, from the
// same replicates (in any order, no NaN), n clusters and, for BCa, the
// same estimate theta and jackknife values, excludes 0. So p < α exactly
// when that interval at level 1 − α excludes 0. With w the normal score
// of the level at which the quantile function meets 0 on the nearer side
// (zeroScores; w ≤ 0):
//
//	percentile: p = 2Φ(w)
//	expanded:   p = 2·T_{n−1}(w·√((n−1)/n))      (the expanded level α'/2 = Φ(−√(n/(n−1))·t_{1−α/2,n−1}) solved for α)
//	BCa:        p = 2Φ(ζ), ζ = v/(1 + a·v) − z₀, v = w − z₀  (BCa's level map solved for α, on each side)
//
// at most 1. NaN when there is no interval (fewer than 2 replicates or
// clusters, a BCa z₀ that is infinite).
func IntervalPValue(theta float64, reps, jack []float64, method string, n int) float64 {
	if len(reps) < 2 || n < 2 {
		return math.NaN()
	}
	lo, hi := zeroScores(reps)
	var p float64
	switch method {
	case BCa:
		z0, acc, _ := bcaParams(theta, reps, jack)
		if math.IsInf(z0, 0) || math.IsNaN(z0) {
			return math.NaN()
		}
		// side is the smaller α whose interval's end passes 0 on one side:
		// the end's adjusted level Φ(z₀ + f(z₀ + z)), f(y) = y/(1 − a·y),
		// increasing in z on BCa's branch, reaches score w at
		// z = f⁻¹(w − z₀) − z₀, f⁻¹(v) = v/(1 + a·v). Beyond f's range the
		// end stays on one side at every level.
		side := func(w float64, upper bool) float64 {
			if math.IsInf(w, 0) {
				if (w < 0) != upper {
					return 0
				}
				return 1
			}
			v := w - z0
			den := 1 + float64(acc*v)
			if den <= 0 {
				if (v < 0) != upper {
					return 0
				}
				return 1
			}
			zeta := v/den - z0
			if upper {
				zeta = -zeta
			}
			return 2 * Portable(distuv.UnitNormal.CDF(zeta))
		}
		p = min(side(lo, false), side(hi, true))
	default:
		w := min(lo, -hi)
		switch method {
		case Expanded:
			p = 2 * Portable(distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.CDF(float64(w*math.Sqrt(float64(n-1)/float64(n)))))
		default:
			p = 2 * Portable(distuv.UnitNormal.CDF(w))
		}
	}
	return Portable(min(1, p))
}

// ClusterBootstrapTested is ClusterBootstrap with, for each statistic,
// the p-value of "it is 0" that inverts its interval (IntervalPValue):
// p < 1 − Level exactly when the interval excludes 0. Its intervals read
// the normal tails beyond the second smallest and second largest
// replicate, as the p-values do.
func ClusterBootstrapTested(clusters, k int, stat Statistics, opt BootstrapOptions) ([]Estimate, []float64) {
	opt = opt.WithDefaults()
	est, reps := bootstrap(clusters, nil, 0, k, func(_ int, w, out []float64) { stat(w, out) }, opt, true)
	ps := make([]float64, k)
	for j := range ps {
		ps[j] = math.NaN()
	}
	if reps == nil {
		return est, ps
	}
	var jack [][]float64
	if opt.Method == BCa {
		jack = Jackknife(clusters, k, stat)
	}
	col := make([]float64, 0, opt.Resamples)
	jk := make([]float64, clusters)
	for j := range ps {
		col = col[:0]
		for b := 0; b < opt.Resamples; b++ {
			if v := reps[b*k+j]; !math.IsNaN(v) {
				col = append(col, v)
			}
		}
		if len(col) < 2 || math.IsNaN(est[j].Value) {
			continue
		}
		if jack != nil {
			for i := range jk {
				jk[i] = jack[i][j]
			}
		}
		ps[j] = IntervalPValue(est[j].Value, col, jk, opt.Method, clusters)
	}
	return est, ps
}
