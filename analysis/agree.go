package analysis

import (
	"fmt"
	"math"
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

// AlphaData is reliability data made ready for Krippendorff's α: each
// pairable unit (one rated by two raters or more) as counts over the
// distinct values, so that α can be recomputed quickly for any weighting
// of the units (a bootstrap resample).
type AlphaData struct {
	Level    string
	Values   []float64 // the distinct values, ascending
	Units    int       // units given
	Pairable int       // units with two values or more
	N        int       // values in pairable units
	units    []alphaUnit
	ratio    []float64 // the ratio metric between distinct values, V×V
}

type alphaUnit struct {
	idx    []int32   // distinct value positions
	cnt    []float64 // how often each occurs in the unit
	m      float64   // values in the unit
	d      float64   // Σ_{c,k} n_uc n_uk δ_ck / (m − 1), for a fixed metric
	s1, s2 float64   // Σ v and Σ v², centred, for the interval metric
}

// NewAlphaData prepares units (each the values its raters gave, missing
// ones left out) for α at a level of measurement.
func NewAlphaData(units [][]float64, level string) (*AlphaData, error) {
	if err := CheckLevel(level); err != nil {
		return nil, err
	}
	a := &AlphaData{Level: level, Units: len(units)}
	snapped := make([][]float64, len(units))
	for i, u := range units {
		snapped[i] = snapTies(u) // values equal to TiePrecision are one value
	}
	units = snapped
	var all []float64
	var sum float64
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		for _, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("value %v is not a number", v)
			}
			if level == Ratio && v < 0 {
				return nil, fmt.Errorf("value %v: the ratio level needs values ≥ 0", v)
			}
			all = append(all, v)
			sum += v
		}
		a.Pairable++
	}
	a.N = len(all)
	sort.Float64s(all)
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			a.Values = append(a.Values, v)
		}
	}
	pos := make(map[float64]int32, len(a.Values))
	for i, v := range a.Values {
		pos[v] = int32(i)
	}
	centre := 0.0
	if a.N > 0 {
		centre = sum / float64(a.N)
	}
	if level == Ratio {
		V := len(a.Values)
		a.ratio = make([]float64, V*V)
		for i, c := range a.Values {
			for j, k := range a.Values {
				if c+k > 0 {
					a.ratio[i*V+j] = ((c - k) / (c + k)) * ((c - k) / (c + k))
				}
			}
		}
	}
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		var x alphaUnit
		x.m = float64(len(u))
		seen := map[int32]int{}
		for _, v := range u {
			p := pos[v]
			if k, ok := seen[p]; ok {
				x.cnt[k]++
			} else {
				seen[p] = len(x.idx)
				x.idx = append(x.idx, p)
				x.cnt = append(x.cnt, 1)
			}
			c := v - centre
			x.s1 += c
			x.s2 += c * c
		}
		switch level {
		case Nominal:
			var sq float64
			for _, n := range x.cnt {
				sq += n * n
			}
			x.d = (x.m*x.m - sq) / (x.m - 1)
		case Interval:
			x.d = 2 * (x.m*x.s2 - x.s1*x.s1) / (x.m - 1)
			if x.d < 0 {
				x.d = 0
			}
		case Ratio:
			V := len(a.Values)
			for i, ci := range x.idx {
				for j, cj := range x.idx {
					x.d += x.cnt[i] * x.cnt[j] * a.ratio[int(ci)*V+int(cj)]
				}
			}
			x.d /= x.m - 1
		}
		a.units = append(a.units, x)
	}
	return a, nil
}

// Alpha is Krippendorff's α with pairable unit u counted w[u] times (nil:
// once each); NaN when it is undefined. Reason says why it would be.
func (a *AlphaData) Alpha(w []float64) float64 {
	V := len(a.Values)
	weight := func(u int) float64 {
		if w == nil {
			return 1
		}
		return w[u]
	}
	var n, do float64
	nc := make([]float64, V)
	var s1, s2 float64
	for u := range a.units {
		wu := weight(u)
		if wu == 0 {
			continue
		}
		x := &a.units[u]
		n += wu * x.m
		if a.Level != Ordinal {
			do += wu * x.d
		}
		if a.Level == Interval {
			s1 += wu * x.s1
			s2 += wu * x.s2
			continue
		}
		for i, c := range x.idx {
			nc[c] += wu * x.cnt[i]
		}
	}
	if n <= 1 {
		return math.NaN()
	}
	var de float64
	switch a.Level {
	case Nominal:
		var sq float64
		for _, v := range nc {
			sq += v * v
		}
		de = n*n - sq
	case Interval:
		de = 2 * (n*s2 - s1*s1)
	case Ratio:
		for i := range nc {
			if nc[i] == 0 {
				continue
			}
			for j := range nc {
				de += nc[i] * nc[j] * a.ratio[i*V+j]
			}
		}
	case Ordinal:
		// δ_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², from the marginals of
		// this weighting.
		cum := make([]float64, V+1)
		for i, v := range nc {
			cum[i+1] = cum[i] + v
		}
		delta := func(c, k int) float64 {
			if c > k {
				c, k = k, c
			}
			d := cum[k+1] - cum[c] - (nc[c]+nc[k])/2
			return d * d
		}
		for i := range nc {
			if nc[i] == 0 {
				continue
			}
			for j := i + 1; j < V; j++ {
				if nc[j] != 0 {
					de += 2 * nc[i] * nc[j] * delta(i, j)
				}
			}
		}
		for u := range a.units {
			wu := weight(u)
			if wu == 0 {
				continue
			}
			x := &a.units[u]
			var d float64
			for i, ci := range x.idx {
				for j := i + 1; j < len(x.idx); j++ {
					d += 2 * x.cnt[i] * x.cnt[j] * delta(int(ci), int(x.idx[j]))
				}
			}
			do += wu * d / (x.m - 1)
		}
	}
	if de <= 1e-12*n*n {
		return math.NaN()
	}
	return 1 - (n-1)*do/de
}

// Reason says why α is undefined for these data, or "".
func (a *AlphaData) Reason() string {
	switch {
	case a.Pairable == 0:
		return "no unit was rated by two raters: α is undefined"
	case len(a.Values) < 2:
		return "every value is the same: no variation to agree on, α is undefined"
	}
	return ""
}

// KrippendorffAlpha is Krippendorff's α of units (each the values its
// raters gave, missing ones left out) at a level of measurement, with the
// reason when it is NaN.
func KrippendorffAlpha(units [][]float64, level string) (float64, string, error) {
	a, err := NewAlphaData(units, level)
	if err != nil {
		return math.NaN(), "", err
	}
	if r := a.Reason(); r != "" {
		return math.NaN(), r, nil
	}
	return a.Alpha(nil), "", nil
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
	a, b = snapTies(a), snapTies(b)
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
			obs += w * c.Counts[i][j]
			exp += w * row[i] * col[j] / c.N
		}
	}
	if exp <= 1e-12*c.N {
		return math.NaN()
	}
	return 1 - obs/exp
}

// CohenKappa is Cohen's κ of paired values, with the reason when NaN.
func CohenKappa(a, b []float64, weighting string) (float64, string) {
	if len(a) == 0 {
		return math.NaN(), "no item rated by both"
	}
	c := ConfusionMatrix(a, b, nil)
	k := c.Kappa(weighting)
	if math.IsNaN(k) {
		return k, "both raters used one category only: κ is undefined"
	}
	return k, ""
}

// FleissData is items × raters ratings made ready for Fleiss' κ and
// percent agreement: per item the counts of each category.
type FleissData struct {
	Categories []float64
	Items      int // items with two ratings or more
	counts     [][]float64
	m          []float64
}

// NewFleissData prepares units (each the values its raters gave, missing
// ones left out); units with fewer than two values are left out.
func NewFleissData(units [][]float64) *FleissData {
	var all [][]float64
	for _, u := range units {
		if len(u) >= 2 {
			all = append(all, snapTies(u))
		}
	}
	f := &FleissData{Categories: categories(all...), Items: len(all)}
	pos := map[float64]int{}
	for i, c := range f.Categories {
		pos[c] = i
	}
	for _, u := range all {
		cnt := make([]float64, len(f.Categories))
		for _, v := range u {
			cnt[pos[v]]++
		}
		f.counts = append(f.counts, cnt)
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
			sq += n * n
			p[j] += wi * n
		}
		m := f.m[i]
		pbar += wi * (sq - m) / (m * (m - 1))
		items += wi
		total += wi * m
	}
	if items == 0 {
		return math.NaN(), math.NaN()
	}
	pbar /= items
	for _, v := range p {
		pe += (v / total) * (v / total)
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
	x, y = snapTies(x), snapTies(y)
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
	var tiedX, tiedXY int64
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
	var tiedY int64
	for a := 0; a < n; {
		b := a
		for b < n && ys[b] == ys[a] {
			b++
		}
		tiedY += pairs(int64(b - a))
		a = b
	}
	n0 := pairs(int64(n))
	num := float64(n0-tiedX-tiedY+tiedXY) - 2*float64(swaps)
	den := math.Sqrt(float64(n0-tiedX) * float64(n0-tiedY))
	if den == 0 {
		return math.NaN()
	}
	return num / den
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
