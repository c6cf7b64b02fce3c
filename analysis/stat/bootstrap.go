package stat

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval methods.
const (
	Percentile = "percentile"
	// Expanded is Hesterberg's expanded percentile interval: the percentile
	// interval taken at the levels where a normal interval would reach as
	// far as a t interval with the small-sample factor √(n/(n−1)), n the
	// number of clusters. With few clusters the plain percentile interval
	// is too narrow (with 10 scenarios it covers about 89% of the time for
	// a nominal 95%: gymlens-bench coverage); the expanded one is not.
	Expanded = "expanded-percentile"
	BCa      = "bca"
)

// Methods lists the interval methods.
var Methods = []string{Expanded, Percentile, BCa}

// DefaultBootstrap holds gymlens's opinionated defaults in one place: the
// expanded percentile interval rather than the plain one, because the
// paper's designs have about ten scenarios (docs/statistics.md).
var DefaultBootstrap = BootstrapOptions{Resamples: 10000, Level: 0.95, Method: Expanded, Seed: 1}

// BootstrapOptions tunes ClusterBootstrap.
type BootstrapOptions struct {
	Resamples int     // number of resamples; 0 means 10,000
	Level     float64 // confidence level; 0 means 0.95
	Method    string  // Percentile or BCa
	Seed      uint64
	Workers   int // 0 means GOMAXPROCS; the results do not depend on it
	// TwoLevel makes the metrics' bootstrap two-level: each resample
	// draws the scenarios, then the runs within every scenario drawn
	// (analysis.Summarize; other statistics resample clusters alone).
	TwoLevel bool
}

func (o BootstrapOptions) WithDefaults() BootstrapOptions {
	if o.Resamples <= 0 {
		o.Resamples = DefaultBootstrap.Resamples
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = DefaultBootstrap.Level
	}
	if o.Method == "" {
		o.Method = DefaultBootstrap.Method
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Estimate is a statistic with its uncertainty and what it rests on.
type Estimate struct {
	Value     float64 // the statistic on the data as observed
	Lo, Hi    float64 // the interval; NaN when it cannot be had (see Warnings)
	Method    string
	Level     float64
	Resamples int
	Seed      uint64
	Clusters  int
	// Warnings say in words what the estimate rests on or lacks; Kinds[i]
	// says what Warnings[i] is about (a missing entry: nothing in
	// particular), so that code acts on the kind, never on the words.
	Warnings []string
	Kinds    []Caveat
}

// Caveat is what a warning is about.
type Caveat uint8

const (
	// CaveatInterval: the interval is missing, unreliable, degenerate or
	// not a bootstrap one.
	CaveatInterval Caveat = 1 << iota
	// CaveatOneCluster: one scenario, its runs resampled as independent.
	CaveatOneCluster
	// CaveatScenarioLevel: n counts scenarios, not runs.
	CaveatScenarioLevel
)

// Warn adds a warning of kind k.
func (e *Estimate) Warn(k Caveat, text string) {
	for len(e.Kinds) < len(e.Warnings) {
		e.Kinds = append(e.Kinds, 0)
	}
	e.Warnings, e.Kinds = append(e.Warnings, text), append(e.Kinds, k)
}

// Has says whether a warning of a kind in k is there.
func (e *Estimate) Has(k Caveat) bool {
	for _, c := range e.Kinds {
		if c&k != 0 {
			return true
		}
	}
	return false
}

// Drop takes out the warnings of the kinds in k.
func (e *Estimate) Drop(k Caveat) {
	var w []string
	var kinds []Caveat
	for i, t := range e.Warnings {
		var c Caveat
		if i < len(e.Kinds) {
			c = e.Kinds[i]
		}
		if c&k == 0 {
			w, kinds = append(w, t), append(kinds, c)
		}
	}
	e.Warnings, e.Kinds = w, kinds
}

// Statistics computes k statistics from cluster weights: w[c] is how many
// times cluster c was drawn (all 1 for the data as observed, one 0 for a
// jackknife sample). It writes them to out, which has length k. It must
// not keep w or out, and must compute each statistic exactly as the point
// estimate is computed.
type Statistics func(w []float64, out []float64)

// ClusterBootstrap resamples clusters with replacement (as many as there
// are) and returns, for each of k statistics, its value and its interval.
// All k statistics are computed on the same draws, so differences between
// them are paired. Resample b draws from a generator seeded by (Seed, b):
// the results are the same whatever the number of workers.
//
// Percentile intervals are the α/2 and 1−α/2 quantiles (type 7) of the
// replicates. BCa intervals correct them for bias (the share of
// replicates below the estimate) and acceleration (from the jackknife that
// leaves out one cluster at a time), as Efron (1987) and scipy's bootstrap.
func ClusterBootstrap(clusters, k int, stat Statistics, opt BootstrapOptions) []Estimate {
	est, _ := ClusterBootstrapReplicates(clusters, k, stat, opt)
	return est
}

// ClusterBootstrapReplicates is ClusterBootstrap that also returns the
// replicates, resample-major (b*k + j); nil when there are fewer than two
// clusters.
func ClusterBootstrapReplicates(clusters, k int, stat Statistics, opt BootstrapOptions) ([]Estimate, []float64) {
	return ClusterBootstrapIndexed(clusters, k, func(_ int, w, out []float64) { stat(w, out) }, opt)
}

// IndexedStatistics is Statistics told which resample it computes (b from
// 0; -1 for the point estimate and the jackknife), for a statistic that
// draws more than clusters in each resample: the judge's noise
// (analysis.JudgeNoise), a second stage seeded by b.
type IndexedStatistics func(b int, w []float64, out []float64)

// ClusterBootstrapIndexed is ClusterBootstrapReplicates for a statistic
// that is told its resample.
func ClusterBootstrapIndexed(clusters, k int, istat IndexedStatistics, opt BootstrapOptions) ([]Estimate, []float64) {
	return bootstrap(clusters, nil, 0, k, istat, opt, false)
}

// ClusterBootstrapGrouped is ClusterBootstrap for a statistic that tells
// clusters apart only by their group: group[c], below groups, is cluster
// c's, and the statistic is handed the groups' weights (w[g] the draws
// that fell in group g; w has length groups). Clusters whose data are the
// same make a group, so the statistic sums one term per group instead of
// one per cluster. The resamples draw the clusters as ClusterBootstrap
// does, the same clusters for the same seed, and no array as long as the
// clusters is written in a resample; BCa's jackknife computes one value
// per group rather than one per cluster. The results are those of
// ClusterBootstrap with a statistic that first sums its weights by group.
// (The draws themselves cost as much: with percentile intervals it is no
// faster, with BCa much faster; docs/benchmarks.md.)
func ClusterBootstrapGrouped(group []int32, groups, k int, stat Statistics, opt BootstrapOptions) []Estimate {
	est, _ := bootstrap(len(group), group, groups, k, func(_ int, w, out []float64) { stat(w, out) }, opt, false)
	return est
}

// bootstrap is ClusterBootstrapIndexed, or with group ClusterBootstrapGrouped;
// tails: intervals read the normal tails of pvalue.go (ClusterBootstrapTested).
func bootstrap(clusters int, group []int32, groups, k int, istat IndexedStatistics, opt BootstrapOptions, tails bool) ([]Estimate, []float64) {
	stat := func(w, out []float64) { istat(-1, w, out) }
	opt = opt.WithDefaults()
	est := make([]Estimate, k)
	// The data as observed: each cluster once, or each group as many times
	// as it has clusters.
	var ones []float64
	if group != nil {
		ones = make([]float64, groups)
		for _, g := range group {
			ones[g]++
		}
	} else {
		ones = slices.Repeat([]float64{1}, clusters)
	}
	point := make([]float64, k)
	stat(ones, point)
	for j := range est {
		est[j] = Estimate{Value: point[j], Lo: math.NaN(), Hi: math.NaN(), Method: opt.Method, Level: opt.Level,
			Resamples: opt.Resamples, Seed: opt.Seed, Clusters: clusters}
		if clusters < 5 {
			est[j].Warn(CaveatInterval, fmt.Sprintf("%d clusters: interval unreliable", clusters))
		}
	}
	if clusters < 2 {
		for j := range est {
			est[j].Warn(CaveatInterval, "fewer than 2 clusters: no interval")
		}
		return est, nil
	}
	reps := replicates(clusters, group, groups, k, istat, opt)
	var jack [][]float64
	if opt.Method == BCa {
		if group != nil {
			jack = groupedJackknife(group, ones, k, stat)
		} else {
			jack = Jackknife(clusters, k, stat)
		}
	}
	col := make([]float64, 0, opt.Resamples)
	for j := range est {
		col = col[:0]
		least, most := math.Inf(1), math.Inf(-1)
		for b := 0; b < opt.Resamples; b++ {
			if v := reps[b*k+j]; !math.IsNaN(v) {
				col = append(col, v)
				least, most = min(least, v), max(most, v)
			}
		}
		if dropped := opt.Resamples - len(col); dropped > 0 {
			est[j].Warn(0, fmt.Sprintf("statistic undefined in %d of %d resamples (left out)", dropped, opt.Resamples))
		}
		if len(col) < 2 || math.IsNaN(est[j].Value) {
			est[j].Warn(CaveatInterval, "no interval: statistic undefined")
			continue
		}
		if least == most {
			est[j].Warn(CaveatInterval, "every resample gives the same value: the interval has zero width")
		}
		switch opt.Method {
		case BCa:
			sort.Float64s(col)
			jk := make([]float64, clusters)
			for i := range jk {
				jk[i] = jack[i][j]
			}
			lo, hi, warn := bcaInterval(est[j].Value, col, jk, opt.Level, tails)
			est[j].Lo, est[j].Hi = lo, hi
			if warn != "" {
				est[j].Warn(CaveatInterval, warn)
			}
		case Expanded:
			est[j].Lo, est[j].Hi = expandedInterval(col, opt.Level, clusters, tails)
		default:
			est[j].Lo, est[j].Hi = percentileInterval(col, opt.Level, tails)
		}
	}
	for j := range est {
		explainNullInterval(&est[j])
	}
	return est, reps
}

// explainNullInterval makes sure that an estimate without an interval
// says why: every path that leaves Lo or Hi NaN should have said so, and
// this is the net under them.
func explainNullInterval(e *Estimate) {
	if !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) {
		return
	}
	if e.Has(CaveatInterval) {
		return
	}
	if math.IsNaN(e.Value) {
		e.Warn(CaveatInterval, "no interval: the statistic is undefined")
		return
	}
	e.Warn(CaveatInterval, "no interval: the interval's end points are undefined")
}

// Replicates returns the k statistics of each of opt.Resamples cluster
// resamples, resample-major (b*k + j). Work is split among workers by
// resample; each resample's draws depend only on (Seed, b).
func Replicates(clusters, k int, stat Statistics, opt BootstrapOptions) []float64 {
	return replicates(clusters, nil, 0, k, func(_ int, w, out []float64) { stat(w, out) }, opt)
}

// replicates draws the resamples: w holds each cluster's draws, or with
// group each group's.
func replicates(clusters int, group []int32, groups, k int, stat IndexedStatistics, opt BootstrapOptions) []float64 {
	opt = opt.WithDefaults()
	out := make([]float64, opt.Resamples*k)
	var wg sync.WaitGroup
	chunk := (opt.Resamples + opt.Workers - 1) / opt.Workers
	for wk := 0; wk < opt.Workers; wk++ {
		lo, hi := wk*chunk, min(opt.Resamples, (wk+1)*chunk)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := rand.NewPCG(0, 0)
			n := uint64(clusters)
			if group != nil {
				w := make([]float64, groups)
				// Four rows of counts, filled in turn, so that draws of the
				// same group do not wait on each other's increment (with a
				// few groups, most draws would); summed into w after.
				cnt := make([]int32, 4*groups)
				for b := lo; b < hi; b++ {
					src.Seed(opt.Seed, uint64(b))
					clear(cnt)
					i := 0
					for ; i+4 <= clusters; i += 4 {
						cnt[group[drawN(src, n)]]++
						cnt[groups+int(group[drawN(src, n)])]++
						cnt[2*groups+int(group[drawN(src, n)])]++
						cnt[3*groups+int(group[drawN(src, n)])]++
					}
					for ; i < clusters; i++ {
						cnt[group[drawN(src, n)]]++
					}
					for g := range w {
						w[g] = float64(cnt[g] + cnt[groups+g] + cnt[2*groups+g] + cnt[3*groups+g])
					}
					stat(b, w, out[b*k:(b+1)*k])
				}
				return
			}
			w := make([]float64, clusters)
			if clusters >= countBytesFrom {
				cnt := make([]uint8, clusters)
				var over []uint64
				for b := lo; b < hi; b++ {
					src.Seed(opt.Seed, uint64(b))
					over = countDraws(src, n, cnt, over[:0])
					weights(w, cnt, over)
					stat(b, w, out[b*k:(b+1)*k])
				}
				return
			}
			for b := lo; b < hi; b++ {
				src.Seed(opt.Seed, uint64(b))
				clear(w)
				for range clusters {
					w[drawN(src, n)]++
				}
				stat(b, w, out[b*k:(b+1)*k])
			}
		}()
	}
	wg.Wait()
	return out
}

// countBytesFrom is the number of clusters from which the draws are
// counted a byte a cluster (countDraws): 512 KB of float64 counts, the
// size of a core's second-level cache on many machines. Below it the
// counts go straight into the weights, which is faster there
// (BenchmarkItemBootstrap).
var countBytesFrom = 1 << 16

// countDraws draws len(cnt) clusters of n and counts them in cnt (which
// it clears first) modulo 256, appending to over the cluster of each
// draw that took its count past 255: a cluster's count is its cnt plus
// 256 for each time over names it. A byte a cluster holds the counts of
// an item bootstrap's 234,000 items (--scale 100) in 234 KB, where
// float64s took 1.9 MB and their increments, CPU-profiled in agree
// --self, 23 times as long as at --scale 10 for 10 times the draws
// (docs/benchmarks.md). Fewer than 256 clusters never pass 255.
func countDraws(src *rand.PCG, n uint64, cnt []uint8, over []uint64) []uint64 {
	clear(cnt)
	for range cnt {
		c := drawN(src, n)
		cnt[c]++
		if cnt[c] == 0 {
			over = append(over, c)
		}
	}
	return over
}

// weights sets w to the counts countDraws left in cnt and over.
func weights(w []float64, cnt []uint8, over []uint64) {
	for c, x := range cnt {
		w[c] = float64(x)
	}
	for _, c := range over {
		w[c] += 256
	}
}

// drawN is rand.New(src).IntN(n) for 0 < n < 2⁶³: the same number, from
// the same draws of src (Lemire's multiply and reject, as math/rand/v2
// computes it, whose 32-bit path keeps the 64-bit path's sequence), without
// a call through the Source interface for every draw of every resample.
func drawN(src *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 {
		return src.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Jackknife returns the k statistics with each cluster left out in turn.
func Jackknife(clusters, k int, stat Statistics) [][]float64 {
	out := make([][]float64, clusters)
	w := make([]float64, clusters)
	for i := range out {
		for c := range w {
			w[c] = 1
		}
		w[i] = 0
		out[i] = make([]float64, k)
		stat(w, out[i])
	}
	return out
}

// groupedJackknife is Jackknife of a grouped statistic (counts: each
// group's clusters): leaving out any cluster of a group gives the same
// values, so each group's are computed once.
func groupedJackknife(group []int32, counts []float64, k int, stat Statistics) [][]float64 {
	byGroup := make([][]float64, len(counts))
	w := slices.Clone(counts)
	for g := range byGroup {
		if counts[g] == 0 {
			continue
		}
		w[g]--
		byGroup[g] = make([]float64, k)
		stat(w, byGroup[g])
		w[g]++
	}
	out := make([][]float64, len(group))
	for i, g := range group {
		out[i] = byGroup[g]
	}
	return out
}

// PercentileInterval is the percentile interval of replicates (no NaN),
// in any order: its two order statistics are selected (Quantiles7), which
// reorders reps.
func PercentileInterval(reps []float64, level float64) (lo, hi float64) {
	return percentileInterval(reps, level, false)
}

// percentileInterval is PercentileInterval, with the normal tails of
// pvalue.go when tails is set.
func percentileInterval(reps []float64, level float64, tails bool) (lo, hi float64) {
	a := float64((1 - level) / 2)
	q := tailQuantiles(reps, []float64{a, 1 - a}, nil, tails)
	return q[0], q[1]
}

// ExpandedPercentileInterval is the percentile interval of replicates at
// the expanded levels α'/2 = Φ(−√(n/(n−1))·t_{1−α/2, n−1}) (Hesterberg
// 2015, "What teachers should know about the bootstrap"); reps as for
// PercentileInterval.
func ExpandedPercentileInterval(reps []float64, level float64, n int) (lo, hi float64) {
	return expandedInterval(reps, level, n, false)
}

// expandedInterval is ExpandedPercentileInterval, with the normal tails
// of pvalue.go when tails is set.
func expandedInterval(reps []float64, level float64, n int, tails bool) (lo, hi float64) {
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	z := expandedScore(level, n)
	a := Portable(distuv.UnitNormal.CDF(z))
	q := tailQuantiles(reps, []float64{a, 1 - a}, []float64{z, -z}, tails)
	return q[0], q[1]
}

// ExpandedAlpha is the lower tail level α'/2 of the expanded percentile
// interval for n clusters.
func ExpandedAlpha(level float64, n int) float64 {
	return Portable(distuv.UnitNormal.CDF(expandedScore(level, n)))
}

// expandedScore is the normal score of ExpandedAlpha, −√(n/(n−1))·t_{1−α/2, n−1}.
func expandedScore(level float64, n int) float64 {
	t := Portable(distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - float64((1-level)/2)))
	return float64(-math.Sqrt(float64(n)/float64(n-1)) * t)
}

// BCaInterval is the bias-corrected and accelerated interval of the
// statistic theta from its sorted replicates and its jackknife values
// (Efron 1987), as scipy.stats.bootstrap computes it:
//
//	z₀ = Φ⁻¹((#{θ*_b < θ̂} + ½·#{θ*_b = θ̂}) / B)
//	a  = Σ(θ̄₍.₎ − θ₍ᵢ₎)³ / (6 (Σ(θ̄₍.₎ − θ₍ᵢ₎)²)^{3/2})
//	α₁ = Φ(z₀ + (z₀ + z_α) / (1 − a (z₀ + z_α)))
//
// and the R type-7 quantiles of the replicates at α₁ and α₂. A replicate
// equal to θ̂ (to TiePrecision) counts half below and half above it (R's
// boot counts it above, which biases z₀ for discrete statistics such as
// κ, rates and means of ratings, whose replicates often equal θ̂).
func BCaInterval(theta float64, sorted, jack []float64, level float64) (lo, hi float64, warning string) {
	return bcaInterval(theta, sorted, jack, level, false)
}

// bcaInterval is BCaInterval, with the normal tails of pvalue.go when
// tails is set.
func bcaInterval(theta float64, sorted, jack []float64, level float64, tails bool) (lo, hi float64, warning string) {
	z0, acc, warning := bcaParams(theta, sorted, jack)
	if math.IsInf(z0, 0) || math.IsNaN(z0) {
		return math.NaN(), math.NaN(), warning
	}
	a := float64((1 - level) / 2)
	// adj is the adjusted level of level q, and its normal score.
	adj := func(q float64) (float64, float64) {
		z := portableQuantile(q)
		score := z0 + (z0+z)/(1-float64(acc*(z0+z)))
		return Portable(distuv.UnitNormal.CDF(score)), Portable(score)
	}
	var s float64
	sd := func() float64 {
		if s == 0 {
			s = SD(sorted)
		}
		return s
	}
	pLo, zLo := adj(a)
	pHi, zHi := adj(1 - a)
	return tailQuantile(pLo, zLo, sorted, sd, tails), tailQuantile(pHi, zHi, sorted, sd, tails), warning
}

// bcaParams are BCa's bias correction z₀ and acceleration a (BCaInterval)
// from replicates in any order; z₀ infinite, with a warning, when every
// replicate lies on one side of the estimate.
func bcaParams(theta float64, reps, jack []float64) (z0, acc float64, warning string) {
	t := SnapTie(theta)
	var below, equal int
	for _, v := range reps {
		switch v := SnapTie(v); {
		case v < t:
			below++
		case v == t:
			equal++
		}
	}
	z0 = portableQuantile((float64(below) + float64(float64(equal)/2)) / float64(len(reps)))
	if math.IsInf(z0, 0) || math.IsNaN(z0) {
		return z0, 0, "no BCa interval: every replicate lies on one side of the estimate"
	}
	var mean float64
	for _, v := range jack {
		mean += v
	}
	mean /= float64(len(jack))
	var num, den float64
	for _, v := range jack {
		d := mean - v
		num += float64(d * d * d)
		den += float64(d * d)
	}
	if den > 0 {
		acc = Portable(num / (6 * math.Pow(den, 1.5)))
	} else {
		warning = "every jackknife value is the same: no acceleration (a = 0)"
	}
	return z0, acc, warning
}

// Check says what is wrong with the options as a user gave them, naming
// the flag (levelFlag names the confidence level's).
func (o BootstrapOptions) Check(levelFlag string) error {
	if o.Resamples < 100 {
		return fmt.Errorf("--resamples: expected at least 100, found %d", o.Resamples)
	}
	if o.Level <= 0 || o.Level >= 1 {
		return fmt.Errorf("--%s: expected a number between 0 and 1, found %g", levelFlag, o.Level)
	}
	if !slices.Contains(Methods, o.Method) {
		return fmt.Errorf("--ci: expected one of %s, found %q", strings.Join(Methods, ", "), o.Method)
	}
	return nil
}

func portableQuantile(p float64) float64 { return Portable(distuv.UnitNormal.Quantile(p)) }
