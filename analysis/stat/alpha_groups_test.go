package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Units that repeat (a 1–5 scale, two to four raters) are summed once per
// distinct unit, times how often a resample draws them: α and every
// resample's α agree with the unit-by-unit sums to 1e-13 at each level,
// with no unit left out and none counted twice (a resample that draws
// one unit thrice).
func TestAlphaGroupsRepeatedUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	units := make([][]float64, 3000)
	for i := range units {
		base := 1 + r.IntN(5)
		for k := 0; k < 2+r.IntN(3); k++ {
			units[i] = append(units[i], float64(min(5, max(1, base+r.IntN(3)-1))))
		}
	}
	for _, level := range []string{Nominal, Ordinal, Interval, Ratio} {
		grouped, err := NewAlphaData(units, level)
		if err != nil {
			t.Fatal(err)
		}
		alphaGroups = false
		plain, _ := NewAlphaData(units, level)
		alphaGroups = true
		if grouped.pat == nil || len(grouped.units) > 100 || plain.pat != nil {
			t.Fatalf("%s: %d distinct units of %d, grouped %v", level, len(grouped.units), grouped.Pairable, grouped.pat != nil)
		}
		w := make([]float64, grouped.Pairable)
		for trial := 0; trial < 20; trial++ {
			clear(w)
			for range w {
				w[r.IntN(len(w))]++
			}
			if trial == 0 {
				clear(w)
				w[7] = 3
				w[11] = 1
			}
			for _, ww := range [][]float64{nil, w} {
				g, p := grouped.Alpha(ww), plain.Alpha(ww)
				if math.Abs(g-p) > 1e-13*math.Max(1, math.Abs(p)) || math.IsNaN(g) != math.IsNaN(p) {
					t.Fatalf("%s, trial %d: grouped α %v, unit by unit %v", level, trial, g, p)
				}
			}
		}
	}
}

// A grouped bootstrap draws the clusters an ungrouped one draws: with a
// statistic of the groups' weights, whether the resample sums the
// clusters' weights by group itself or ClusterBootstrapGrouped hands
// them summed, every estimate and interval end is the same to the bit,
// for each interval method (BCa's jackknife included), and so is α's
// interval from its distinct units.
func TestGroupedBootstrapDrawsAsUngrouped(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	const clusters, groups = 997, 13
	group := make([]int32, clusters)
	x := make([]float64, groups)
	for i := range group {
		group[i] = int32(r.IntN(groups - 1)) // the last group is empty
	}
	for g := range x {
		x[g] = r.NormFloat64()
	}
	// A ratio of weighted sums, and a nonlinear function of the weights.
	grouped := func(w, out []float64) {
		var s, n, q float64
		for g, wg := range w {
			s += wg * x[g]
			n += wg
			q += wg * wg * float64(g%3)
		}
		out[0], out[1] = s/n, math.Sqrt(q)/n
	}
	sum := make([]float64, groups)
	plain := func(w, out []float64) {
		clear(sum)
		for c, wc := range w {
			sum[group[c]] += wc
		}
		grouped(sum, out)
	}
	for _, method := range Methods {
		opt := BootstrapOptions{Resamples: 499, Method: method, Seed: 3, Workers: 1}
		want := ClusterBootstrap(clusters, 2, plain, opt)
		opt.Workers = 3
		got := ClusterBootstrapGrouped(group, groups, 2, grouped, opt)
		for j := range want {
			if got[j].Value != want[j].Value || got[j].Lo != want[j].Lo || got[j].Hi != want[j].Hi || got[j].Clusters != clusters {
				t.Fatalf("%s, statistic %d: grouped %+v, ungrouped %+v", method, j, got[j], want[j])
			}
		}
		if want[0].Lo >= want[0].Hi || math.IsNaN(want[1].Lo) {
			t.Fatalf("%s: degenerate intervals %+v", method, want)
		}
	}

	units := make([][]float64, 2500)
	for i := range units {
		base := 1 + r.IntN(5)
		for k := 0; k < 2+r.IntN(2); k++ {
			units[i] = append(units[i], float64(min(5, max(1, base+r.IntN(3)-1))))
		}
	}
	for _, level := range []string{Interval, Ordinal} {
		a, err := NewAlphaData(units, level)
		if err != nil {
			t.Fatal(err)
		}
		group, n := a.Groups()
		if group == nil || n > 60 {
			t.Fatalf("%s: %d groups", level, n)
		}
		for _, method := range Methods {
			opt := BootstrapOptions{Resamples: 300, Method: method, Seed: 5}
			want := ClusterBootstrap(a.Pairable, 1, func(w, out []float64) { out[0] = a.Alpha(w) }, opt)[0]
			got := ClusterBootstrapGrouped(group, n, 1, func(w, out []float64) { out[0] = a.AlphaOfGroups(w) }, opt)[0]
			if got.Value != want.Value || got.Lo != want.Lo || got.Hi != want.Hi {
				t.Fatalf("%s, %s: grouped α %+v, unit by unit %+v", level, method, got, want)
			}
		}
	}
}
