// Package analysis computes gymlens's numbers: the 3T metrics, the cluster
// bootstrap, correlations, paired comparisons and agreement statistics.
// It works on typed Go values and knows nothing of files, images or
// terminals.
package stat

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"
)

// TiePrecision is the precision to which values are rounded before they
// are ranked, tied or counted as categories: two scores equal in exact
// arithmetic but summed in different orders (90 and 89.99999999999999)
// are one value, so rank statistics, κ, α and agreement do not depend on
// the order of the inputs. Scores are given to far fewer decimals.
const TiePrecision = 1e-9

// SnapTie rounds v to TiePrecision (NaN and infinities as they are):
// round(v·10⁹)/10⁹, the double nearest to a multiple of 10⁻⁹.
func SnapTie(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return math.Round(v*1e9) / 1e9
}

// SnapTies is x with every value rounded by SnapTie, in a new slice.
func SnapTies(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = SnapTie(v)
	}
	return out
}

// Quantile7 returns the p-quantile of sorted x by R's type 7 (numpy's
// "linear", the default of both): with h = (n−1)p, the value at ⌊h⌋ plus
// (h−⌊h⌋) of the step to the next. x must be sorted ascending; NaN when x
// is empty.
func Quantile7(p float64, x []float64) float64 {
	n := len(x)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	if p <= 0 {
		return x[0]
	}
	if p >= 1 {
		return x[n-1]
	}
	h := float64(float64(n-1) * p)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= n {
		return x[n-1]
	}
	return x[i] + float64((h-lo)*(x[i+1]-x[i]))
}

// Mean is the arithmetic mean Σ xᵢ / n, NaN for no values.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// WeightedMean is Σ wᵢxᵢ / Σ wᵢ; nil weights mean equal weights.
func WeightedMean(x, w []float64) float64 {
	if w == nil {
		return Mean(x)
	}
	if len(w) != len(x) {
		panic("analysis: WeightedMean: weights and values differ in length")
	}
	var s, sw float64
	for i, v := range x {
		s += float64(w[i] * v)
		sw += w[i]
	}
	if sw == 0 {
		return math.NaN()
	}
	return s / sw
}

// SD is the sample standard deviation √(Σ (xᵢ − x̄)² / (n − 1)).
func SD(x []float64) float64 {
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	m := Mean(x)
	var s float64
	for _, v := range x {
		s += float64((v - m) * (v - m))
	}
	return math.Sqrt(s / float64(n-1))
}

// Pearson is the product-moment correlation of x and y,
//
//	r = Σ (xᵢ − x̄)(yᵢ − ȳ) / √(Σ (xᵢ − x̄)² Σ (yᵢ − ȳ)²),
//
// NaN when either is constant or there are fewer than two pairs.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("analysis: Pearson: x and y differ in length")
	}
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	mx, my := Mean(x), Mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += float64(dx * dy)
		sxx += float64(dx * dx)
		syy += float64(dy * dy)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	r := sxy / math.Sqrt(sxx*syy)
	return math.Max(-1, math.Min(1, r))
}

// Ranks returns the ranks of x (1-based), ties (equal to TiePrecision)
// given the mean of the ranks they span.
func Ranks(x []float64) []float64 {
	var k Ranker // buffers of its own: the slice is the caller's
	return k.Ranks(x)
}

// Ranker computes Ranks into buffers of its own, reused from call to
// call: for a statistic that ranks a few values in each of ten thousand
// resamples. It starts from the order of the previous call's values, so
// values that change little from call to call (a resample's means) are
// ranked in about one pass; the ranks depend on the values alone. Not for
// concurrent use.
type Ranker struct {
	snap, r []float64
	idx     []int // a permutation of 0..len(idx)-1: the last call's order
}

// Ranks are Ranks(x), in a slice valid until the next call.
func (k *Ranker) Ranks(x []float64) []float64 {
	n := len(x)
	if cap(k.r) < n {
		k.snap, k.r = make([]float64, n), make([]float64, n)
	}
	s, r := k.snap[:n], k.r[:n]
	nan := false
	for i, v := range x {
		s[i] = SnapTie(v)
		nan = nan || v != v
	}
	if len(k.idx) != n {
		k.idx = make([]int, n)
		for i := range k.idx {
			k.idx[i] = i
		}
	}
	idx := k.idx
	switch {
	case nan:
		// NaNs first, each a rank of its own in their order in x.
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s[a], s[b]) })
	case !insertionSort(idx, s, 4*n+16):
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(s[a], s[b]) })
	}
	for i := 0; i < n; {
		j := i
		for j+1 < n && s[idx[j+1]] == s[idx[i]] {
			j++
		}
		avg := float64(float64(i+j)/2) + 1
		for m := i; m <= j; m++ {
			r[idx[m]] = avg
		}
		i = j + 1
	}
	return r
}

// insertionSort orders idx by s[idx[·]] (no NaNs) with at most so many
// moves; past them it stops, idx still a permutation, and reports false.
func insertionSort(idx []int, s []float64, moves int) bool {
	for i := 1; i < len(idx); i++ {
		j, v := i, idx[i]
		for j > 0 && s[v] < s[idx[j-1]] {
			if moves--; moves < 0 {
				idx[j] = v
				return false
			}
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = v
	}
	return true
}

// Spearman is Pearson's correlation of the ranks (ties, to TiePrecision,
// averaged).
func Spearman(x, y []float64) float64 { return Pearson(Ranks(x), Ranks(y)) }

// CorrelationPValue is the two-sided p-value of r from n pairs under no
// correlation, from Student's t with n−2 degrees of freedom (as scipy's
// pearsonr and spearmanr compute it).
func CorrelationPValue(r float64, n int) float64 {
	if n < 3 || math.IsNaN(r) {
		return math.NaN()
	}
	if math.Abs(r) >= 1 {
		return 0
	}
	df := float64(n - 2)
	t := r * math.Sqrt(df/(1-float64(r*r)))
	return Portable(2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t)))
}

// FisherZInterval is the confidence interval of a correlation r from n
// pairs at the given level, by Fisher's z: tanh(atanh r ± z_{1−α/2}/√(n−3)).
func FisherZInterval(r float64, n int, level float64) (lo, hi float64) {
	if n < 4 || math.IsNaN(r) {
		return math.NaN(), math.NaN()
	}
	z := Portable(math.Atanh(r))
	se := 1 / math.Sqrt(float64(n-3))
	q := ZQuantile(level)
	return Portable(math.Tanh(z - float64(q*se))), Portable(math.Tanh(z + float64(q*se)))
}

// Portable rounds x to 12 significant digits. It is applied to what comes
// out of a special function (normal and t quantiles and tails, atanh,
// tanh, a power by quadrature): Go's math and gonum may fuse a multiply
// and an add on arm64 and not on amd64, which moves the last bit or two,
// and 12 digits are well within those functions' accuracy, so a rounded
// value is the same bits on every machine (strconv's rounding is exact).
// Everything else the statistics compute is written free of fused
// operations (explicit float64 conversions around products), so it is
// bit-identical as it is.
func Portable(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return v
}

// ZQuantile is the normal quantile z_{1−α/2} of a two-sided level,
// Portable.
func ZQuantile(level float64) float64 {
	return Portable(distuv.UnitNormal.Quantile(1 - float64((1-level)/2)))
}

// Holm adjusts p-values for multiple comparisons by Holm's step-down
// method (R's p.adjust(p, "holm")): with p₍₁₎ ≤ … ≤ p₍ₙ₎, the adjusted
// p₍ᵢ₎ is max over j ≤ i of min(1, (n − j + 1) p₍ⱼ₎).
func Holm(p []float64) []float64 {
	n := len(p)
	idx := order(p, false)
	out := make([]float64, n)
	running := 0.0
	for k, i := range idx {
		v := math.Min(1, float64(n-k)*p[i])
		running = math.Max(running, v)
		out[i] = running
	}
	return out
}

// BenjaminiHochberg adjusts p-values to control the false discovery rate
// (R's p.adjust(p, "BH")): the adjusted p₍ᵢ₎ is min over j ≥ i of
// min(1, n p₍ⱼ₎ / j).
func BenjaminiHochberg(p []float64) []float64 {
	n := len(p)
	idx := order(p, true)
	out := make([]float64, n)
	running := 1.0
	for k, i := range idx {
		rank := n - k
		v := math.Min(1, float64(n)/float64(rank)*p[i])
		running = math.Min(running, v)
		out[i] = running
	}
	return out
}

// order returns the indexes of p sorted ascending (or descending).
func order(p []float64, desc bool) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if desc {
			return p[idx[a]] > p[idx[b]]
		}
		return p[idx[a]] < p[idx[b]]
	})
	return idx
}
