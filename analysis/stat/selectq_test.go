package stat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Quantiles7 by selection gives the sorted slice's Quantile7 exactly: on
// continuous values, on values with many ties (a bootstrap of a mean of
// 0/1 outcomes), already sorted or reversed, tiny and large, at the
// percentile interval's levels and the ends.
func TestQuantiles7BySelectionIsSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	gens := map[string]func(i, n int) float64{
		"continuous": func(_, _ int) float64 { return r.NormFloat64() },
		"ties":       func(_, _ int) float64 { return float64(r.IntN(7)) / 6 },
		"sorted":     func(i, _ int) float64 { return float64(i) },
		"reversed":   func(i, n int) float64 { return float64(n - i) },
		"constant":   func(_, _ int) float64 { return 0.25 },
		"sawtooth":   func(i, _ int) float64 { return float64(i % 97) },
		"heavy":      func(_, _ int) float64 { return 1 / (r.Float64() + 1e-300) },
	}
	levels := [][]float64{{0.025, 0.975}, {0.05, 0.95}, {0, 1}, {0.5, 0.5}, {0.0001, 0.9999}, {0.3}, {0.975, 0.025}}
	checked := 0
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 17, 100, 1001, 4095, 4096, 10000, 20011} {
			x := make([]float64, n)
			for i := range x {
				x[i] = gen(i, n)
			}
			sorted := slices.Clone(x)
			slices.Sort(sorted)
			for _, ps := range levels {
				got := Quantiles7(slices.Clone(x), ps...)
				for i, p := range ps {
					want := Quantile7(p, sorted)
					if got[i] != want && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
						t.Fatalf("%s, n=%d, p=%v: %v by selection, %v by sorting", name, n, p, got[i], want)
					}
					checked++
				}
			}
		}
	}
	if got := Quantiles7(nil, 0.5); !math.IsNaN(got[0]) {
		t.Errorf("no values: %v", got)
	}
	if checked < 400 {
		t.Errorf("%d quantiles checked", checked)
	}
}

// On 10,000 continuous replicates the windows find the interval's order
// statistics in one pass (the case they are for), without reordering x;
// on ties they give way to the selection.
func TestQuantilesByWindowsOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, 10000)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	before := slices.Clone(x)
	a := ExpandedAlpha(0.95, 10)
	got, ok := quantilesByWindows(x, []float64{a, 1 - a})
	if !ok {
		t.Fatal("the windows missed on continuous values")
	}
	if !slices.Equal(x, before) {
		t.Error("the windows reordered x")
	}
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	if got[0] != Quantile7(a, sorted) || got[1] != Quantile7(1-a, sorted) {
		t.Errorf("windows %v, sorting %v %v", got, Quantile7(a, sorted), Quantile7(1-a, sorted))
	}
	for i := range x {
		x[i] = float64(r.IntN(3))
	}
	if _, ok := quantilesByWindows(x, []float64{0.025, 0.975}); ok {
		t.Error("three values: the windows should give way to the selection")
	}
}

func BenchmarkPercentileOf10000(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 10000)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	work := make([]float64, len(x))
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			copy(work, x)
			PercentileInterval(work, 0.95)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			copy(work, x)
			slices.Sort(work)
			Quantile7(0.025, work)
			Quantile7(0.975, work)
		}
	})
}

// drawN gives math/rand/v2's IntN from the same source, draw for draw:
// bounds small and large, powers of two, and bounds where rejection is
// common (just above a power of two, near 2⁶³).
// Counting the draws a byte a cluster gives the counts a float64 a
// cluster gives, past 255 too (one cluster of 1,000 draws; two; draws
// of 70,000 and of 300 clusters), and the bootstrap's replicates are
// the same whichever way it counts (countBytesFrom 0 or never).
func TestCountDrawsAsFloats(t *testing.T) {
	for _, c := range []struct{ n, draws int }{{1, 1000}, {2, 1000}, {3, 700}, {70000, 70000}, {300, 300}} {
		a, b := rand.NewPCG(7, uint64(c.n)), rand.NewPCG(7, uint64(c.n))
		want := make([]float64, c.draws)
		for range c.draws {
			want[drawN(a, uint64(c.n))]++
		}
		cnt := make([]uint8, c.draws)
		over := countDraws(b, uint64(c.n), cnt, nil)
		got := make([]float64, c.draws)
		weights(got, cnt, over)
		if !slices.Equal(got, want) {
			t.Errorf("%d draws of %d clusters: the counts differ (%d past 255)", c.draws, c.n, len(over))
		}
		if c.draws >= 256*c.n && len(over) == 0 {
			t.Errorf("%d draws of %d clusters: no count past 255", c.draws, c.n)
		}
	}
	defer func(n int) { countBytesFrom = n }(countBytesFrom)
	var reps [2][]float64
	for i, from := range []int{1 << 62, 0} {
		countBytesFrom = from
		_, reps[i] = ClusterBootstrapReplicates(3000, 2, func(w, out []float64) {
			out[0], out[1] = 0, 0
			for c, x := range w {
				out[0] += x * float64(c%7)
				out[1] += x * x
			}
		}, BootstrapOptions{Resamples: 64, Seed: 11})
	}
	if !slices.Equal(reps[0], reps[1]) {
		t.Error("the replicates differ with the draws counted a byte a cluster")
	}
}

func TestDrawNIsIntN(t *testing.T) {
	bounds := []uint64{1, 2, 3, 7, 10, 64, 100, 2340, 58961, 1<<32 + 1, 1 << 40, 3 << 61, 1<<63 - 1, 1<<62 + 1}
	for _, n := range bounds {
		a, b := rand.NewPCG(5, n), rand.NewPCG(5, n)
		r := rand.New(a)
		for i := range 20000 {
			if got, want := drawN(b, n), uint64(r.IntN(int(n))); got != want {
				t.Fatalf("n %d, draw %d: %d, IntN %d", n, i, got, want)
			}
		}
	}
}

// The resamples of an item bootstrap (each item its own cluster) at the
// sizes of the sample corpus and of --scale 10 and 100: drawing and
// counting dominate, the statistic (a weighted mean) being one pass.
func BenchmarkItemBootstrap(b *testing.B) {
	for _, n := range []int{2340, 23400, 234000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i % 3)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				ClusterBootstrap(n, 1, func(w, out []float64) {
					var s, t float64
					for i, wi := range w {
						s, t = s+wi*x[i], t+wi
					}
					out[0] = s / t
				}, BootstrapOptions{Resamples: 200, Seed: 1, Workers: 1})
			}
		})
	}
}
