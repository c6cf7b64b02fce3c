package stat

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ClusterSlope is the least-squares slope of y on x (with an intercept)
// from data in clusters, kept as five sums per cluster so that a
// resample's slope and variance cost O(clusters).
type ClusterSlope struct {
	// per[c]: n, Σa, Σb, Σa², Σab over cluster c's points, with a = x − x̄
	// and b = y − ȳ centred on the means of all the points.
	per [][5]float64
}

// NewClusterSlope keeps the sums of the points (x[i], y[i]) of cluster
// cluster[i], below clusters.
func NewClusterSlope(x, y []float64, cluster []int, clusters int) *ClusterSlope {
	mx, my := Mean(x), Mean(y)
	per := make([][5]float64, clusters)
	for i := range x {
		a, b := x[i]-mx, y[i]-my
		c := &per[cluster[i]]
		c[0]++
		c[1] += a
		c[2] += b
		c[3] += float64(a * a)
		c[4] += float64(a * b)
	}
	return &ClusterSlope{per: per}
}

// Fit is the slope of the points with cluster c counted w[c] times, and
// its cluster-robust variance (CR0, each copy of a cluster a cluster of
// its own):
//
//	β = Sxy / Sxx,  V = Σ_c w_c u_c² / Sxx²,  u_c = Σ_{i∈c} (x_i − x̄_w)(e_i),
//
// x̄_w, Sxx, Sxy the weighted mean and sums of squares and products, e_i
// the residual of point i from the weighted fit. Both NaN when there are
// fewer than 2 points or x does not vary (Sxx ≤ 10⁻¹² · N·Σa²: only
// rounding is left of it). V is NaN when the points come from one
// cluster (drawn once or more): its residuals are orthogonal to x, so V
// would be 0 but for rounding.
func (s *ClusterSlope) Fit(w []float64) (beta, v float64) {
	var t [5]float64
	for c, wc := range w {
		if wc != 0 {
			for q := range t {
				t[q] += float64(wc * s.per[c][q])
			}
		}
	}
	n := t[0]
	vxx := float64(n*t[3]) - float64(t[1]*t[1]) // n·Sxx
	if n < 2 || !(vxx > 1e-12*float64(n*t[3])) {
		return math.NaN(), math.NaN()
	}
	beta = (float64(n*t[4]) - float64(t[1]*t[2])) / vxx
	ma, mb := t[1]/n, t[2]/n
	var ss float64
	drawn := 0
	for c, wc := range w {
		if wc == 0 || s.per[c][0] == 0 {
			continue
		}
		drawn++
		p := &s.per[c]
		// u_c = Σ (a − ā)(b − b̄ − β(a − ā)) from the cluster's sums.
		cross := p[4] - float64(ma*p[2]) - float64(mb*p[1]) + float64(float64(p[0]*ma)*mb)
		sq := p[3] - float64(2*float64(ma*p[1])) + float64(float64(p[0]*ma)*ma)
		u := cross - float64(beta*sq)
		ss += float64(wc * float64(u*u))
	}
	if drawn < 2 {
		return beta, math.NaN()
	}
	sxx := vxx / n
	return beta, ss / float64(sxx*sxx)
}

// ClusterRobustT is the interval of ClusterSlope.Interval: the slope ±
// Student's t quantile times its cluster-robust (CR1) standard error.
const ClusterRobustT = "cluster-robust-t"

// Interval is the slope of the points with its cluster-robust t interval
// at level and the two-sided p-value of "the slope is 0" that inverts it
// (p < 1 − level exactly when the interval excludes 0):
//
//	se = √(G/(G−1) · V),  β ± t_{1−α/2, G−1} · se,  p = 2·T_{G−1}(−|β|/se),
//
// V Fit's CR0 variance and G the clusters with a point (CR1, with the
// t reference of G − 1 degrees of freedom: Cameron and Miller, "A
// practitioner's guide to cluster-robust inference", 2015). The estimate
// has no resamples and no seed. NaN interval and p, with the reason, when
// the slope is undefined, there are fewer than 2 clusters with a point or
// the standard error is 0.
func (s *ClusterSlope) Interval(level float64) (Estimate, float64) {
	if level <= 0 || level >= 1 {
		level = DefaultBootstrap.Level
	}
	ones := make([]float64, len(s.per))
	g := 0
	for c := range ones {
		ones[c] = 1
		if s.per[c][0] > 0 {
			g++
		}
	}
	beta, v := s.Fit(ones)
	est := Estimate{Value: beta, Lo: math.NaN(), Hi: math.NaN(), Method: ClusterRobustT, Level: level, Clusters: g}
	if g < 5 {
		est.Warn(CaveatInterval, fmt.Sprintf("%d clusters: interval unreliable", g))
	}
	p := math.NaN()
	switch {
	case g < 2:
		est.Warn(CaveatInterval, "fewer than 2 clusters: no interval")
	case math.IsNaN(beta):
		est.Warn(CaveatInterval, "no interval: statistic undefined")
	case !(v > 0):
		est.Warn(CaveatInterval, "no interval: the slope's cluster-robust variance is 0")
	default:
		df := float64(g - 1)
		se := math.Sqrt(float64(float64(g)/df) * v)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		q := Portable(t.Quantile(1 - float64((1-level)/2)))
		est.Lo, est.Hi = beta-float64(q*se), beta+float64(q*se)
		p = Portable(min(1, 2*t.CDF(-math.Abs(beta)/se)))
	}
	explainNullInterval(&est)
	return est, p
}
