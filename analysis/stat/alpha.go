package stat

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// AlphaData is reliability data made ready for Krippendorff's α: each
// pairable unit (one rated by two raters or more) as counts over the
// distinct values, so that α can be recomputed for any weighting of the
// units (a bootstrap resample) in time linear in the number of values,
// whatever the level and however many distinct values there are.
//
// With n_c the pooled count of value c (each pairable unit's values
// counted by the unit's weight), n = Σ n_c, and for unit u with m_u
// values of which n_uc equal c,
//
//	α   = 1 − (n − 1) D_o / D_e
//	D_o = Σ_u Σ_{c,k} n_uc n_uk δ(c, k) / (m_u − 1)
//	D_e = Σ_{c,k} n_c n_k δ(c, k)
//
// (Krippendorff 2011). D_o is a sum over units, each a few values; D_e
// is computed without its V × V double sum: nominal n² − Σ n_c²;
// interval 2(n Σ n_c v_c² − (Σ n_c v_c)²); ordinal, whose δ(c, k) is
// (M_k − M_c)² with M_c = Σ_{g<c} n_g + n_c/2 the value's mid-rank, the
// interval form on M; ratio, whose δ(c, k) = 1 − 4ck/(c + k)², as
// n² − n_0² − 4 Σ_{c,k>0} n_c n_k ck/(c + k)² where the last sum uses
// 1/a² = ∫ e^{2t − a e^t} dt by the trapezoidal rule in t, exact to
// about 1e-13 of D_e (see ratioSum).
type AlphaData struct {
	Level    string
	Values   []float64 // the distinct values, ascending
	Units    int       // units given
	Pairable int       // units with two values or more
	N        int       // values in pairable units
	// units are the distinct pairable units (their sorted values), pat
	// the one of each pairable unit and count how many units each is: on
	// a scale of a few points most units repeat one of a few dozen, so a
	// weighting costs one add per unit and the sums one term per distinct
	// unit.
	units   []alphaUnit
	pat     []int32
	count   []float64
	ratio   *ratioSum // the ratio level's D_e
	scratch sync.Pool // *alphaScratch
}

type alphaUnit struct {
	idx    []int32   // distinct value positions
	cnt    []float64 // how often each occurs in the unit
	m      float64   // values in the unit
	d      float64   // Σ_{c,k} n_uc n_uk δ_ck / (m − 1), for a metric fixed by the values (not ordinal)
	s1, s2 float64   // Σ v and Σ v², centred, for the interval metric
}

// alphaGroups lets NewAlphaData group repeated units (off in a test that
// compares both ways).
var alphaGroups = true

// NewAlphaData prepares units (each the values its raters gave, missing
// ones left out) for α at a level of measurement. Values equal to
// TiePrecision are one value.
func NewAlphaData(units [][]float64, level string) (*AlphaData, error) {
	if err := CheckLevel(level); err != nil {
		return nil, err
	}
	a := &AlphaData{Level: level, Units: len(units)}
	var all []float64
	var sum float64
	pairable := make([][]float64, 0, len(units))
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		su := SnapTies(u)
		for _, v := range su {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("value %v is not a number", v)
			}
			if level == Ratio && v < 0 {
				return nil, fmt.Errorf("value %v: the ratio level needs values ≥ 0", v)
			}
			all = append(all, v)
			sum += v
		}
		pairable = append(pairable, su)
	}
	a.Pairable = len(pairable)
	a.N = len(all)
	sort.Float64s(all)
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			a.Values = append(a.Values, v)
		}
	}
	centre := 0.0
	if a.N > 0 {
		centre = sum / float64(a.N)
	}
	a.pat = make([]int32, len(pairable))
	seen := map[string]int32{}
	var key []byte
	for ui, u := range pairable {
		// A unit is its values sorted: the same values, the same unit.
		slices.Sort(u)
		key = key[:0]
		for _, v := range u {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(v))
		}
		if p, ok := seen[string(key)]; ok {
			a.pat[ui] = p
			a.count[p]++
			continue
		}
		p := int32(len(a.units))
		seen[string(key)] = p
		a.pat[ui] = p
		a.count = append(a.count, 1)
		a.units = append(a.units, alphaUnit{})
		x := &a.units[p]
		x.m = float64(len(u))
		for _, v := range u {
			p := int32(sort.SearchFloat64s(a.Values, v))
			if k := slices.Index(x.idx, p); k >= 0 {
				x.cnt[k]++
			} else {
				x.idx = append(x.idx, p)
				x.cnt = append(x.cnt, 1)
			}
			c := v - centre
			x.s1 += c
			x.s2 += float64(c * c)
		}
		// The unit's own disagreement, from its pairs of distinct values.
		switch level {
		case Nominal, Interval, Ratio:
			var d float64
			for i, ci := range x.idx {
				for j := i + 1; j < len(x.idx); j++ {
					d += float64(2 * x.cnt[i] * x.cnt[j] * a.delta(a.Values[ci], a.Values[x.idx[j]]))
				}
			}
			x.d = d / (x.m - 1)
		}
	}
	if !alphaGroups || len(a.units) > len(pairable)/2 {
		// Few units repeat (continuous values): one term per unit, in
		// their order, is cheaper than the grouping.
		per := make([]alphaUnit, len(pairable))
		for ui, p := range a.pat {
			per[ui] = a.units[p]
		}
		a.units, a.pat, a.count = per, nil, slices.Repeat([]float64{1}, len(pairable))
	}
	if level == Ratio {
		a.ratio = newRatioSum(a.Values, a.units)
	}
	V := len(a.Values)
	P := len(a.units)
	a.scratch.New = func() any {
		return &alphaScratch{nc: make([]float64, V), mid: make([]float64, V), pw: make([]float64, P)}
	}
	return a, nil
}

// delta is the metric of a fixed level between values c and k.
func (a *AlphaData) delta(c, k float64) float64 {
	switch a.Level {
	case Nominal:
		if c == k {
			return 0
		}
		return 1
	case Interval:
		return (c - k) * (c - k)
	case Ratio:
		if c+k == 0 {
			return 0
		}
		r := (c - k) / (c + k)
		return r * r
	}
	panic("analysis: delta of " + a.Level)
}

// Alpha is Krippendorff's α with pairable unit u counted w[u] times (nil:
// once each); NaN when it is undefined. Reason says why it would be.
func (a *AlphaData) Alpha(w []float64) float64 {
	sc := a.scratch.Get().(*alphaScratch)
	defer a.scratch.Put(sc)
	// Each distinct unit's weight: how often its units are drawn (whole
	// numbers, so exact in any order).
	pw := sc.pw
	switch {
	case w == nil:
		copy(pw, a.count)
	case a.pat == nil:
		pw = w
	default:
		clear(pw)
		for u, wu := range w {
			if wu != 0 {
				pw[a.pat[u]] += wu
			}
		}
	}
	return a.alpha(pw, sc)
}

// Groups are the distinct units: group[u] is pairable unit u's, among
// n. With them, AlphaOfGroups and stat.ClusterBootstrapGrouped resample
// the units without a weight per unit. Nil when the units are summed one
// by one (few repeat).
func (a *AlphaData) Groups() (group []int32, n int) {
	if a.pat == nil {
		return nil, 0
	}
	return a.pat, len(a.units)
}

// AlphaOfGroups is Alpha with the units' weights summed by group (Groups):
// w[g] is how often the units of group g are drawn. It equals Alpha of
// those weights unit by unit, to the bit.
func (a *AlphaData) AlphaOfGroups(w []float64) float64 {
	sc := a.scratch.Get().(*alphaScratch)
	defer a.scratch.Put(sc)
	return a.alpha(w, sc)
}

// alpha is α of the distinct units' weights pw.
func (a *AlphaData) alpha(pw []float64, sc *alphaScratch) float64 {
	counts := a.Level == Nominal || a.Level == Ordinal
	var n, do, s1, s2 float64
	for u := range a.units {
		wu := pw[u]
		if wu == 0 {
			continue
		}
		x := &a.units[u]
		n += float64(wu * x.m)
		do += float64(wu * x.d)
		s1 += float64(wu * x.s1)
		s2 += float64(wu * x.s2)
		if counts {
			for i, c := range x.idx {
				sc.nc[c] += float64(wu * x.cnt[i])
			}
		}
	}
	if n <= 1 {
		clear(sc.nc)
		return math.NaN()
	}
	var de float64
	switch a.Level {
	case Nominal:
		var sq float64
		for i, v := range sc.nc {
			sq += float64(v * v)
			sc.nc[i] = 0
		}
		de = float64(n*n) - sq
	case Interval:
		de = 2 * (float64(n*s2) - float64(s1*s1))
	case Ratio:
		de = a.ratio.expected(pw, n)
	case Ordinal:
		// The values' mid-ranks in this weighting: δ(c, k) = (M_k − M_c)²,
		// so D_e = 2n Σ_c n_c (M_c − M̄)² and a unit's D_o is over its pairs.
		var cum, mean float64
		for i, v := range sc.nc {
			sc.mid[i] = cum + float64(v/2)
			cum += v
			mean += float64(v * sc.mid[i])
		}
		mean /= n
		for i, v := range sc.nc {
			if v != 0 {
				d := sc.mid[i] - mean
				de += float64(v * d * d)
				sc.nc[i] = 0
			}
		}
		de *= 2 * n
		do = 0
		for u := range a.units {
			wu := pw[u]
			if wu == 0 {
				continue
			}
			x := &a.units[u]
			var d float64
			for i, ci := range x.idx {
				for j := i + 1; j < len(x.idx); j++ {
					dm := sc.mid[x.idx[j]] - sc.mid[ci]
					d += float64(2 * x.cnt[i] * x.cnt[j] * dm * dm)
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

// alphaScratch is the per-call space of Alpha: the pooled counts (kept
// zeroed between calls), the mid-ranks and the distinct units' weights.
type alphaScratch struct{ nc, mid, pw []float64 }

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
// raters gave, missing ones left out) at a level of measurement,
//
//	α = 1 − D_o / D_e,
//
// D_o the observed disagreement within units (pairable values, each unit
// weighted 1/(m_u − 1)) and D_e the disagreement expected from all the
// values pooled, under the level's difference function δ (nominal,
// ordinal, interval, ratio: Krippendorff 2011); with the reason when it is
// NaN.
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

// ratioSum computes the ratio level's D_e = n² − n_0² − 4S with
// S = Σ_{c,k>0} g_c g_k / (c + k)², g_c = n_c·c, for any weighting of the
// units, without the V × V double sum. 1/a² = ∫_ℝ e^{2t} e^{−a e^t} dt, and
// the trapezoidal rule with step h on an integrand analytic in the strip
// |Im t| < π/2 errs by about e^{−π²/h}/cos²: with h = ¼ and the range cut
// where the tails are below 1e-16 of the integral, every 1/(c + k)² is
// exact to ~1e-13 relative, and
//
//	S ≈ h Σ_q e^{2t_q} F_q²,  F_q = Σ_c g_c e^{−c e^{t_q}},
//
// a sum of squares of linear functions of the unit weights: F_q(w) =
// Σ_u w_u G_uq. The U × Q matrix H = G·diag(√(h e^{2t_q})) is reduced once
// to its singular directions above 1e-10 of the largest (the dropped part
// of S is below 1e-20 of it), so that a resample costs U·r with r the
// numerical rank, a few dozen.
type ratioSum struct {
	zero  int       // position of the value 0 in Values, or -1
	units int       // U
	zeroW []float64 // per unit: its count of zeros
	proj  []float64 // U × r, row-major: unit u's coordinates, scaled by σ
	r     int
}

const ratioStep = 0.25

func newRatioSum(values []float64, units []alphaUnit) *ratioSum {
	rs := &ratioSum{zero: -1, units: len(units), zeroW: make([]float64, len(units))}
	if len(values) > 0 && values[0] == 0 {
		rs.zero = 0
	}
	var lo, hi float64 // the smallest and largest positive value
	for _, v := range values {
		if v > 0 {
			if lo == 0 {
				lo = v
			}
			hi = v
		}
	}
	for u := range units {
		for i, c := range units[u].idx {
			if int(c) == rs.zero {
				rs.zeroW[u] = units[u].cnt[i]
			}
		}
	}
	if hi == 0 {
		return rs // every value is 0
	}
	// t from where e^{2t}(2hi)² < 1e-16 to where 2lo·e^t > 41.
	t0 := math.Log(1e-8 / (2 * hi))
	t1 := math.Log(41 / (2 * lo))
	Q := int(math.Ceil((t1-t0)/ratioStep)) + 1
	U := len(units)
	H := mat.NewDense(U, Q, nil)
	for q := 0; q < Q; q++ {
		t := t0 + float64(float64(q)*ratioStep)
		s, scale := math.Exp(t), math.Sqrt(ratioStep)*math.Exp(t)
		for u := range units {
			var g float64
			for i, c := range units[u].idx {
				if v := values[c]; v > 0 {
					g += float64(units[u].cnt[i] * v * math.Exp(-v*s))
				}
			}
			H.Set(u, q, scale*g)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(H, mat.SVDThin) {
		panic("analysis: ratio level: SVD did not converge")
	}
	sv := svd.Values(nil)
	r := 0
	for r < len(sv) && sv[r] > 1e-10*sv[0] {
		r++
	}
	var P mat.Dense
	svd.UTo(&P)
	rs.r = r
	rs.proj = make([]float64, U*r)
	for u := 0; u < U; u++ {
		for j := 0; j < r; j++ {
			rs.proj[u*r+j] = P.At(u, j) * sv[j]
		}
	}
	return rs
}

// expected is D_e for unit weights w (nil: once each) with n values.
func (rs *ratioSum) expected(w []float64, n float64) float64 {
	f := make([]float64, rs.r)
	var n0 float64
	for u := 0; u < rs.units; u++ {
		wu := 1.0
		if w != nil {
			wu = w[u]
		}
		if wu == 0 {
			continue
		}
		n0 += float64(wu * rs.zeroW[u])
		row := rs.proj[u*rs.r : (u+1)*rs.r]
		for j, p := range row {
			f[j] += float64(wu * p)
		}
	}
	var s float64
	for _, v := range f {
		s += float64(v * v)
	}
	return float64(n*n) - float64(n0*n0) - float64(4*s)
}
