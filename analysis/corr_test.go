package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

// Weighted ranks are the ranks of the sample with each value repeated as
// often as its weight says.
func TestWeightedRanksAreExpandedRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 2 + r.IntN(12)
		x := make([]float64, n)
		w := make([]float64, n)
		var expanded []float64
		for i := range x {
			x[i] = float64(r.IntN(5)) // many ties
			w[i] = float64(r.IntN(3))
			for range int(w[i]) {
				expanded = append(expanded, x[i])
			}
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		for i := 1; i < n; i++ {
			for j := i; j > 0 && x[order[j]] < x[order[j-1]]; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		got := make([]float64, n)
		weightedRanks(x, w, order, got)
		er := stat.Ranks(expanded)
		k := 0
		for i := range x {
			for range int(w[i]) {
				if er[k] != got[i] {
					t.Fatalf("x %v w %v: rank of %v is %v, expanded %v", x, w, x[i], got[i], er[k])
				}
				k++
			}
		}
	}
}

func TestCorrelationsPointValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var values [][]float64
	var scen, conf []string
	for c := 0; c < 6; c++ {
		for s := 0; s < 10; s++ {
			for rep := 0; rep < 3; rep++ {
				v := make([]float64, numMetrics)
				for i := range v {
					v[i] = math.NaN()
				}
				skill := float64(c) + r.NormFloat64()
				v[mTC] = 50 + 5*skill + r.NormFloat64()*3
				v[mTRJ] = 3 + 0.2*skill + r.NormFloat64()*0.3
				if rep == 2 && s == 0 {
					v[mTRJ] = math.NaN() // a run without TR-J
				}
				values = append(values, v)
				scen = append(scen, string(rune('a'+s)))
				conf = append(conf, string(rune('A'+c)))
			}
		}
	}
	res := Correlations(values, scen, conf, []int{mTC, mTRJ}, BootstrapOptions{Resamples: 400, Seed: 3})
	if len(res) != 4 {
		t.Fatalf("%d results", len(res))
	}
	var x, y []float64
	means := map[string][2]float64{}
	counts := map[string][2]float64{}
	for i, v := range values {
		if !math.IsNaN(v[mTRJ]) {
			x, y = append(x, v[mTC]), append(y, v[mTRJ])
		}
		m, n := means[conf[i]], counts[conf[i]]
		m[0], n[0] = m[0]+v[mTC], n[0]+1
		if !math.IsNaN(v[mTRJ]) {
			m[1], n[1] = m[1]+v[mTRJ], n[1]+1
		}
		means[conf[i]], counts[conf[i]] = m, n
	}
	var cx, cy []float64
	for _, c := range []string{"A", "B", "C", "D", "E", "F"} {
		cx, cy = append(cx, means[c][0]/counts[c][0]), append(cy, means[c][1]/counts[c][1])
	}
	near(t, "run pearson", res[0].R, stat.Pearson(x, y), 1e-12)
	near(t, "run spearman", res[1].R, stat.Spearman(x, y), 1e-12)
	near(t, "config pearson", res[2].R, stat.Pearson(cx, cy), 1e-12)
	near(t, "config spearman", res[3].R, stat.Spearman(cx, cy), 1e-12)
	if res[0].N != len(x) || res[2].N != 6 || res[0].Level != RunLevel || res[3].Method != SpearmanR {
		t.Errorf("n %d, %d; %+v", res[0].N, res[2].N, res[3])
	}
	near(t, "p", res[0].P, stat.CorrelationPValue(res[0].R, res[0].N), 0)
	for _, c := range res {
		if !(c.Lo <= c.R && c.R <= c.Hi) || (math.Abs(c.R) < 1 && !(c.FisherLo < c.R && c.R < c.FisherHi)) {
			t.Errorf("%s %s: r %v outside [%v, %v] or Fisher [%v, %v]", c.Level, c.Method, c.R, c.Lo, c.Hi, c.FisherLo, c.FisherHi)
		}
	}
}

// Differences are paired by scenario: a set compared with itself differs
// by exactly zero in every resample; a shifted copy by exactly the shift.
func TestCompareIsPaired(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var values [][]float64
	var scen []string
	var a, b, c []int
	for s := 0; s < 10; s++ {
		for rep := 0; rep < 3; rep++ {
			v := make([]float64, numMetrics)
			for i := range v {
				v[i] = math.NaN()
			}
			v[mTC] = 40 + 10*float64(s) + r.NormFloat64()*5
			w := append([]float64(nil), v...)
			w[mTC] += 2.5
			values = append(values, v, w)
			scen = append(scen, string(rune('a'+s)), string(rune('a'+s)))
			a = append(a, len(values)-2)
			b = append(b, len(values)-1)
		}
		c = append(c, len(values)-1)
	}
	res := Compare([]Pair{{A: "a", B: "a", RunsA: a, RunsB: a}, {A: "a", B: "a+2.5", RunsA: a, RunsB: b}, {A: "a", B: "c", RunsA: a, RunsB: c}},
		values, scen, []int{mTC}, BootstrapOptions{Resamples: 1000, Seed: 1})
	if res[0].Value != 0 || res[0].Lo != 0 || res[0].Hi != 0 || res[0].P != 1 {
		t.Errorf("self: %+v", res[0])
	}
	near(t, "shift", res[1].Value, 2.5, 1e-9)
	near(t, "shift lo", res[1].Lo, 2.5, 1e-9)
	near(t, "shift hi", res[1].Hi, 2.5, 1e-9)
	// Every replicate is 2.5 (to rounding): the interval excludes 0 at every
	// level, and the p-value is as small as the normal tail makes it.
	if res[1].P > 1e-12 {
		t.Errorf("shift p = %v, want below 1e-12", res[1].P)
	}
	near(t, "means", res[2].Value, res[2].MeanB-res[2].MeanA, 1e-12)
	ps := []float64{res[0].P, res[1].P, res[2].P}
	h, bh := stat.Holm(ps), stat.BenjaminiHochberg(ps)
	for i := range res {
		if res[i].PHolm != h[i] || res[i].PBH != bh[i] {
			t.Errorf("adjusted p of pair %d: %v %v, want %v %v", i, res[i].PHolm, res[i].PBH, h[i], bh[i])
		}
	}
}

// The fast run-level matrix agrees with the general computation.
func TestRunCorrelationMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var values [][]float64
	var scen []string
	for s := 0; s < 8; s++ {
		for k := 0; k < 12; k++ {
			v := make([]float64, numMetrics)
			for i := range v {
				v[i] = math.NaN()
			}
			v[mTC] = r.NormFloat64() + float64(s)
			v[mTA] = v[mTC]*0.5 + r.NormFloat64()
			if k != 3 {
				v[mTRD] = v[mTA] + r.NormFloat64()
			}
			values = append(values, v)
			scen = append(scen, string(rune('a'+s)))
		}
	}
	opt := BootstrapOptions{Resamples: 500, Seed: 2, Method: Percentile}
	fast := RunCorrelationMatrix(values, scen, []int{mTC, mTA, mTRD}, opt)
	conf := make([]string, len(values))
	slow := Correlations(values, scen, conf, []int{mTC, mTA, mTRD}, opt)
	for p := range fast {
		s := slow[4*p] // run level, Pearson
		near(t, "r", fast[p].R, s.R, 1e-9)
		near(t, "lo", fast[p].Lo, s.Lo, 1e-9)
		near(t, "hi", fast[p].Hi, s.Hi, 1e-9)
		if fast[p].N != s.N || fast[p].X != s.X || fast[p].Y != s.Y {
			t.Errorf("pair %d: %+v vs %+v", p, fast[p], s)
		}
	}
}
