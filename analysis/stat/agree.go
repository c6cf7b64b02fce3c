package stat

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Levels of measurement for Krippendorff's α.
const (
	Nominal  = "nominal"
	Ordinal  = "ordinal"
	Interval = "interval"
	Ratio    = "ratio"
)

// Levels lists the levels of measurement.
var Levels = []string{Nominal, Ordinal, Interval, Ratio}

// CheckLevel says whether level is a level of measurement.
func CheckLevel(level string) error {
	for _, l := range Levels {
		if l == level {
			return nil
		}
	}
	return fmt.Errorf("level: expected one of %s, found %q", strings.Join(Levels, ", "), level)
}

// categories returns the distinct values of xs, ascending (xs snapped to
// TiePrecision by the caller).
func categories(xs ...[]float64) []float64 {
	var all []float64
	for _, x := range xs {
		all = append(all, x...)
	}
	sort.Float64s(all)
	var out []float64
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Confusion is the table of two raters' paired values: Counts[i][j] pairs
// with a = Categories[i] and b = Categories[j].
type Confusion struct {
	Categories []float64
	Counts     [][]float64
	N          float64
}

// ConfusionMatrix counts paired values a[i], b[i], pair i counted w[i]
// times (nil: once).
func ConfusionMatrix(a, b, w []float64) Confusion {
	a, b = SnapTies(a), SnapTies(b)
	cats := categories(a, b)
	pos := make(map[float64]int, len(cats))
	for i, c := range cats {
		pos[c] = i
	}
	c := Confusion{Categories: cats, Counts: make([][]float64, len(cats))}
	for i := range c.Counts {
		c.Counts[i] = make([]float64, len(cats))
	}
	for i := range a {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		c.Counts[pos[a[i]]][pos[b[i]]] += wi
		c.N += wi
	}
	return c
}

// Kappa weightings.
const (
	Unweighted = ""
	Linear     = "linear"
	Quadratic  = "quadratic"
)

// Kappa is Cohen's κ of the table (weighting Unweighted), or the weighted
// κ with disagreement weights |i − j| (Linear) or (i − j)² (Quadratic)
// between category values, scaled to [0, 1]. For equally spaced
// categories that is what sklearn's cohen_kappa_score computes from
// category positions. NaN when the chance agreement is complete.
func (c Confusion) Kappa(weighting string) float64 {
	K := len(c.Categories)
	if c.N == 0 || K == 0 {
		return math.NaN()
	}
	row, col := make([]float64, K), make([]float64, K)
	for i := range c.Counts {
		for j, v := range c.Counts[i] {
			row[i] += v
			col[j] += v
		}
	}
	span := c.Categories[K-1] - c.Categories[0]
	wt := func(i, j int) float64 {
		if i == j {
			return 0
		}
		d := math.Abs(c.Categories[i]-c.Categories[j]) / span
		switch weighting {
		case Linear:
			return d
		case Quadratic:
			return d * d
		}
		return 1
	}
	var obs, exp float64
	for i := 0; i < K; i++ {
		for j := 0; j < K; j++ {
			w := wt(i, j)
			obs += float64(w * c.Counts[i][j])
			exp += w * row[i] * col[j] / c.N
		}
	}
	if exp <= 1e-12*c.N {
		return math.NaN()
	}
	return 1 - obs/exp
}

// CohenKappa is Cohen's κ of paired values, with the reason when NaN:
// unweighted, or weighted by |c − k| (Linear) or (c − k)² (Quadratic)
// between category values scaled to [0, 1], as Confusion.Kappa, but from
// the pairs and the marginals alone, so that continuous values with as
// many categories as values cost O(n log n) time and O(n) memory:
//
//	κ = 1 − Σ_i w(a_i, b_i) / (Σ_{c,k} r_c s_k w(c, k) / n)
//
// with r and s the two raters' counts per category; the expected sum is
// n² − Σ r_c s_c (unweighted), by prefix sums over the sorted categories
// (linear) or from the first two moments (quadratic).
func CohenKappa(a, b []float64, weighting string) (float64, string) {
	if len(a) == 0 {
		return math.NaN(), "no item rated by both"
	}
	if len(a) != len(b) {
		panic("analysis: CohenKappa: a and b differ in length")
	}
	a, b = SnapTies(a), SnapTies(b)
	cats := categories(a, b)
	K := len(cats)
	n := float64(len(a))
	span := cats[K-1] - cats[0]
	r, s := make([]float64, K), make([]float64, K)
	var obs float64
	for i := range a {
		ia, ib := sort.SearchFloat64s(cats, a[i]), sort.SearchFloat64s(cats, b[i])
		r[ia]++
		s[ib]++
		if ia == ib {
			continue
		}
		d := math.Abs(a[i]-b[i]) / span
		switch weighting {
		case Linear:
			obs += d
		case Quadratic:
			obs += float64(d * d)
		default:
			obs++
		}
	}
	var exp float64 // Σ_{c,k} r_c s_k w(c, k), divided by n below
	switch weighting {
	case Linear:
		// Σ_c r_c Σ_k s_k |v_c − v_k|, with the s-weighted count and sum of
		// the categories below c.
		var below, belowSum, total, totalSum float64
		for k := range cats {
			total += s[k]
			totalSum += float64(s[k] * cats[k])
		}
		for c := range cats {
			v := cats[c]
			exp += float64(r[c] * ((float64(v*below) - belowSum) + ((totalSum - belowSum - float64(s[c]*v)) - float64(v*(total-below-s[c])))))
			below += s[c]
			belowSum += float64(s[c] * v)
		}
		exp /= span
	case Quadratic:
		// Σ r_c s_k (v_c − v_k)² = n Σ r v² + n Σ s v² − 2 Σ r v Σ s v, centred.
		var ra, sa float64
		for c, v := range cats {
			ra += float64(r[c] * v)
			sa += float64(s[c] * v)
		}
		mid := (ra + sa) / (2 * n)
		var r1, r2, s1, s2 float64
		for c, v := range cats {
			x := v - mid
			r1 += float64(r[c] * x)
			r2 += float64(r[c] * x * x)
			s1 += float64(s[c] * x)
			s2 += float64(s[c] * x * x)
		}
		exp = (float64(n*r2) + float64(n*s2) - float64(2*r1*s1)) / (span * span)
	default:
		var diag float64
		for c := range cats {
			diag += float64(r[c] * s[c])
		}
		exp = float64(n*n) - diag
	}
	exp /= n
	if K < 2 || exp <= 1e-12*n {
		return math.NaN(), "both raters used one category only: κ is undefined"
	}
	return 1 - obs/exp, ""
}

// FleissData is items × raters ratings made ready for Fleiss' κ and
// percent agreement: per item the counts of the categories it holds
// (sparse: memory linear in the ratings, however many categories).
type FleissData struct {
	Categories []float64
	Items      int // items with two ratings or more
	idx        [][]int32
	counts     [][]float64
	m          []float64
}

// NewFleissData prepares units (each the values its raters gave, missing
// ones left out); units with fewer than two values are left out.
func NewFleissData(units [][]float64) *FleissData {
	var all [][]float64
	for _, u := range units {
		if len(u) >= 2 {
			all = append(all, SnapTies(u))
		}
	}
	f := &FleissData{Categories: categories(all...), Items: len(all)}
	for _, u := range all {
		var idx []int32
		var cnt []float64
		for _, v := range u {
			p := int32(sort.SearchFloat64s(f.Categories, v))
			if k := slices.Index(idx, p); k >= 0 {
				cnt[k]++
			} else {
				idx, cnt = append(idx, p), append(cnt, 1)
			}
		}
		f.idx, f.counts = append(f.idx, idx), append(f.counts, cnt)
		f.m = append(f.m, float64(len(u)))
	}
	return f
}

// Kappa is Fleiss' κ with item i counted w[i] times (nil: once). Items may
// have different numbers of raters: each item's agreement is the share of
// agreeing pairs among its raters, and the category shares pool all
// ratings; with the same number of raters everywhere this is Fleiss (1971).
func (f *FleissData) Kappa(w []float64) float64 {
	pbar, pe := f.agreement(w)
	if 1-pe <= 1e-12 {
		return math.NaN()
	}
	return (pbar - pe) / (1 - pe)
}

// Agreement is the mean over items of the share of agreeing rater pairs
// (the observed agreement of Fleiss' κ), item i counted w[i] times.
func (f *FleissData) Agreement(w []float64) float64 {
	pbar, _ := f.agreement(w)
	return pbar
}

func (f *FleissData) agreement(w []float64) (pbar, pe float64) {
	K := len(f.Categories)
	p := make([]float64, K)
	var items, total float64
	for i, cnt := range f.counts {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		if wi == 0 {
			continue
		}
		var sq float64
		for j, n := range cnt {
			sq += float64(n * n)
			p[f.idx[i][j]] += float64(wi * n)
		}
		m := f.m[i]
		pbar += wi * (sq - m) / (m * (m - 1))
		items += wi
		total += float64(wi * m)
	}
	if items == 0 {
		return math.NaN(), math.NaN()
	}
	pbar /= items
	for _, v := range p {
		pe += float64((v / total) * (v / total))
	}
	return pbar, pe
}

// KendallTauB is Kendall's τ-b of paired values, ties in either allowed,
// in O(n log n) (Knight 1966); NaN when either is constant.
func KendallTauB(x, y []float64) float64 {
	n := len(x)
	if n < 2 || len(y) != n {
		return math.NaN()
	}
	s, tiedX, tiedY, _ := KendallCounts(SnapTies(x), SnapTies(y))
	n0 := int64(n) * int64(n-1) / 2
	den := math.Sqrt(float64(n0-tiedX) * float64(n0-tiedY))
	if den == 0 {
		return math.NaN()
	}
	return float64(s) / den
}

// KendallCounts counts, over the pairs of (x, y)'s items, concordant
// minus discordant pairs (s), the pairs tied in x (tiedX, those tied in
// both included), in y (tiedY) and in both (tiedXY), in O(n log n)
// (Knight 1966): Kendall's τ-b is s / √((n₀ − tiedX)(n₀ − tiedY)).
func KendallCounts(x, y []float64) (s, tiedX, tiedY, tiedXY int64) {
	n := len(x)
	if n < 2 {
		return 0, 0, 0, 0
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		if x[idx[a]] != x[idx[b]] {
			return x[idx[a]] < x[idx[b]]
		}
		return y[idx[a]] < y[idx[b]]
	})
	pairs := func(t int64) int64 { return t * (t - 1) / 2 }
	for a := 0; a < n; {
		b := a
		for b < n && x[idx[b]] == x[idx[a]] {
			b++
		}
		tiedX += pairs(int64(b - a))
		for c := a; c < b; {
			d := c
			for d < b && y[idx[d]] == y[idx[c]] {
				d++
			}
			tiedXY += pairs(int64(d - c))
			c = d
		}
		a = b
	}
	// Sort the y's of that order, counting the swaps: the discordant pairs.
	ys := make([]float64, n)
	for i, k := range idx {
		ys[i] = y[k]
	}
	buf := make([]float64, n)
	swaps := mergeCount(ys, buf)
	for a := 0; a < n; {
		b := a
		for b < n && ys[b] == ys[a] {
			b++
		}
		tiedY += pairs(int64(b - a))
		a = b
	}
	return pairs(int64(n)) - tiedX - tiedY + tiedXY - 2*swaps, tiedX, tiedY, tiedXY
}

// mergeCount sorts v ascending and returns the number of inversions
// (pairs out of order, ties not counted).
func mergeCount(v, buf []float64) int64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	m := n / 2
	s := mergeCount(v[:m], buf[:m]) + mergeCount(v[m:], buf[m:])
	i, j, k := 0, m, 0
	for i < m && j < n {
		if v[j] < v[i] {
			buf[k] = v[j]
			s += int64(m - i)
			j++
		} else {
			buf[k] = v[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], v[i:m])
	copy(buf[k:], v[j:n])
	copy(v, buf[:n])
	return s
}
