package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

// The slope and its cluster-robust variance, for the data as observed and
// for resamples that repeat and leave out clusters, equal numpy's
// regression and sandwich on the points written out; the cluster-robust
// t interval at four levels and its p-value equal scipy's
// (analysis/testdata/make_slope_refs.py).
func TestClusterSlopeAgainstNumpy(t *testing.T) {
	var refs struct {
		Cases []struct {
			Kind            string
			Clusters        int
			X, Y            []float64
			Cluster         []int
			Weights         [][]float64
			Slope, Variance []float64
			Intervals       map[string][2]float64
			P               float64
		}
	}
	load(t, "testdata/slope_refs.json", &refs)
	if len(refs.Cases) < 3 {
		t.Fatalf("%d cases", len(refs.Cases))
	}
	for i, c := range refs.Cases {
		s := stat.NewClusterSlope(c.X, c.Y, c.Cluster, c.Clusters)
		for k, w := range c.Weights {
			beta, v := s.Fit(w)
			what := fmt.Sprintf("case %d (%s), weights %v", i, c.Kind, w)
			near(t, what+": slope", beta, c.Slope[k], 1e-12*math.Max(1, math.Abs(c.Slope[k])))
			near(t, what+": variance", v, c.Variance[k], 1e-10*c.Variance[k])
		}
		if len(c.Intervals) < 4 {
			t.Fatalf("case %d: %d intervals", i, len(c.Intervals))
		}
		for lv, want := range c.Intervals {
			level, _ := strconv.ParseFloat(lv, 64)
			est, p := s.Interval(level)
			what := fmt.Sprintf("case %d (%s), level %s", i, c.Kind, lv)
			// gonum's and scipy's t quantiles differ by a few 1e-9.
			width := want[1] - want[0]
			near(t, what+": lower end", est.Lo, want[0], 1e-8*width)
			near(t, what+": upper end", est.Hi, want[1], 1e-8*width)
			near(t, what+": p", p, c.P, 1e-8*c.P)
			if est.Method != stat.ClusterRobustT || est.Level != level || math.Abs(est.Value-c.Slope[0]) > 1e-12 {
				t.Errorf("%s: %+v", what, est)
			}
		}
	}
	// x that does not vary has no slope.
	s := stat.NewClusterSlope([]float64{2, 2, 2}, []float64{1, 2, 3}, []int{0, 1, 1}, 2)
	if b, v := s.Fit([]float64{1, 1}); !math.IsNaN(b) || !math.IsNaN(v) {
		t.Errorf("constant x: %v %v", b, v)
	}
}

// slopeCase is a slope with clusters of 1 to 8 points and a cluster
// effect.
func slopeCase(r *rand.Rand, clusters int, slope float64) *stat.ClusterSlope {
	var x, y []float64
	var cl []int
	for c := range clusters {
		u := r.NormFloat64() * 0.5
		for range 1 + r.IntN(8) {
			xi := r.Float64() * 6
			x, y, cl = append(x, xi), append(y, u+slope*xi+r.NormFloat64()), append(cl, c)
		}
	}
	return stat.NewClusterSlope(x, y, cl, clusters)
}

// The slope's p-value inverts its interval: p < α exactly when the
// interval at level 1 − α excludes 0, at five levels down to Holm's
// 0.05/325, from 3 to 40 clusters.
func TestSlopePValueInvertsTheInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 2))
	levels := []float64{0.8, 0.9, 0.95, 0.99, 1 - 0.05/325}
	checked, rejected := 0, 0
	for d := range 200 {
		n := []int{3, 5, 10, 20, 40}[d%5]
		s := slopeCase(r, n, []float64{0, 0, 0.1, 0.3}[d%4])
		for _, level := range levels {
			est, p := s.Interval(level)
			if math.IsNaN(est.Lo) || math.IsNaN(p) {
				t.Fatalf("dataset %d: %+v, p %v", d, est, p)
			}
			excludes := est.Lo > 0 || est.Hi < 0
			if (p < 1-level) != excludes {
				t.Errorf("dataset %d (%d clusters), level %g: p = %.6g but the interval [%.6g, %.6g]", d, n, level, p, est.Lo, est.Hi)
			}
			checked++
			if excludes {
				rejected++
			}
		}
	}
	if rejected < 100 || checked-rejected < 100 {
		t.Errorf("%d of %d intervals exclude 0: one side barely checked", rejected, checked)
	}
}

// No interval where the slope has no spread to be read from, with the
// reason.
func TestSlopeIntervalWithoutVariance(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		cl   []int
		want string
	}{
		{[]float64{1, 2, 3}, []float64{1, 2, 4}, []int{0, 0, 0}, "fewer than 2 clusters"},
		{[]float64{1, 1, 1, 1}, []float64{1, 2, 4, 3}, []int{0, 0, 1, 1}, "statistic undefined"},
		{[]float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, []int{0, 0, 1, 1}, "cluster-robust variance is 0"},
	} {
		est, p := stat.NewClusterSlope(c.x, c.y, c.cl, 2).Interval(0.95)
		if !math.IsNaN(est.Lo) || !math.IsNaN(p) || !est.Has(stat.CaveatInterval) ||
			!slices.ContainsFunc(est.Warnings, func(w string) bool { return strings.Contains(w, c.want) }) {
			t.Errorf("%v %v: %+v, p %v; want a warning %q", c.x, c.y, est, p, c.want)
		}
	}
}
