package analysis

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/gymlens/gymlens/analysis/stat"
)

// RankEstimate is how sure a configuration's rank on a metric is: its
// estimate and rank, an interval for the rank, and how often it is the
// best, over resamples that draw the same scenarios for every
// configuration (a joint cluster bootstrap).
type RankEstimate struct {
	Config string
	Metric string
	NRuns  int
	Value  float64 // the estimate (as Summarize's)
	// Rank is 1 for the highest value (ties share the better rank);
	// RankLo and RankHi are the α/2 and 1 − α/2 quantiles of the ranks in
	// the resamples (order statistics: whole ranks).
	Rank, RankLo, RankHi int
	// PBest is the share of resamples in which the configuration ranks
	// first (a tie for first counts for each tied).
	PBest     float64
	Resamples int
	Clusters  int
}

// Ranks ranks the groups (configurations) on one metric (a place in the
// values' rows), higher first, with rank intervals and P(best) from a joint
// cluster bootstrap: each resample draws the scenarios once, and every
// group's mean is computed on that draw (a group weighs the scenarios it
// has). Groups without a value are left out. The estimates come back best
// first.
func Ranks(groups []Group, values [][]float64, scenario []string, metric int, opt BootstrapOptions) []RankEstimate {
	opt = opt.WithDefaults()
	cl := map[string]int{}
	for _, g := range groups {
		for _, i := range g.Runs {
			if _, ok := cl[scenario[i]]; !ok {
				cl[scenario[i]] = len(cl)
			}
		}
	}
	k := len(groups)
	// sum[c*k+g], cnt[c*k+g]: group g's values in cluster c.
	sum := make([]float64, len(cl)*k)
	cnt := make([]float64, len(cl)*k)
	nruns := make([]int, k)
	for g, grp := range groups {
		for _, i := range grp.Runs {
			if x := values[i][metric]; !math.IsNaN(x) {
				c := cl[scenario[i]]
				sum[c*k+g] += x
				cnt[c*k+g]++
				nruns[g]++
			}
		}
	}
	means := clusterMeans(sum, cnt, k)
	point := make([]float64, k)
	ones := make([]float64, len(cl))
	for i := range ones {
		ones[i] = 1
	}
	means(ones, point)
	var reps []float64
	if len(cl) >= 2 {
		reps = stat.Replicates(len(cl), k, means, opt)
	}
	var out []RankEstimate
	keep := []int{}
	for g := range groups {
		if !math.IsNaN(point[g]) {
			keep = append(keep, g)
		}
	}
	ranks := make([][]int, k)
	best := make([]int, k)
	b := 0
	if reps != nil {
		b = opt.Resamples
	}
	row := make([]float64, k)
	for r := 0; r < b; r++ {
		copy(row, reps[r*k:(r+1)*k])
		for _, g := range keep {
			if math.IsNaN(row[g]) {
				continue
			}
			rank := 1
			for _, h := range keep {
				if h != g && !math.IsNaN(row[h]) && row[h] > row[g] {
					rank++
				}
			}
			ranks[g] = append(ranks[g], rank)
			if rank == 1 {
				best[g]++
			}
		}
	}
	alpha := 1 - opt.Level
	for _, g := range keep {
		rank := 1
		for _, h := range keep {
			if h != g && point[h] > point[g] {
				rank++
			}
		}
		e := RankEstimate{Config: groups[g].Key["config"], Metric: MetricName(metric), NRuns: nruns[g], Value: point[g], Rank: rank, RankLo: rank, RankHi: rank,
			PBest: math.NaN(), Resamples: len(ranks[g]), Clusters: len(cl)}
		if n := len(ranks[g]); n > 0 {
			rs := slices.Clone(ranks[g])
			sort.Ints(rs)
			// The order statistics at α/2 and 1 − α/2 (the inverted
			// empirical distribution: whole ranks).
			lo := int(math.Ceil(alpha/2*float64(n))) - 1
			hi := int(math.Ceil((1-float64(alpha/2))*float64(n))) - 1
			e.RankLo, e.RankHi = rs[max(0, lo)], rs[min(n-1, max(0, hi))]
			e.PBest = float64(best[g]) / float64(n)
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rank != out[j].Rank {
			return out[i].Rank < out[j].Rank
		}
		return out[i].Config < out[j].Config
	})
	return out
}

// LetterDisplay is a compact letter display of groups (given best first):
// groups that share a letter are not significantly different, and two
// that are (different[{a, b}] or [{b, a}]) share none. It is Piepho's
// (2004) insert-and-absorb: one letter for all; for each pair found
// different, every letter holding both is split into one without each;
// a letter whose groups another letter holds too is dropped. Letters are
// then named a, b, … in the order of the best group each holds.
func LetterDisplay(groups []string, different map[[2]string]bool) []string {
	pos := map[string]int{}
	for i, g := range groups {
		pos[g] = i
	}
	all := make([]bool, len(groups))
	for i := range all {
		all[i] = true
	}
	cols := [][]bool{all}
	var pairs [][2]int
	for p, d := range different {
		i, okA := pos[p[0]]
		j, okB := pos[p[1]]
		if d && okA && okB && i != j {
			pairs = append(pairs, [2]int{min(i, j), max(i, j)})
		}
	}
	sort.Slice(pairs, func(a, b int) bool {
		if pairs[a][0] != pairs[b][0] {
			return pairs[a][0] < pairs[b][0]
		}
		return pairs[a][1] < pairs[b][1]
	})
	pairs = slices.Compact(pairs)
	subset := func(a, b []bool) bool { // a ⊆ b
		for i := range a {
			if a[i] && !b[i] {
				return false
			}
		}
		return true
	}
	for _, p := range pairs {
		var next [][]bool
		for _, c := range cols {
			if !c[p[0]] || !c[p[1]] {
				next = append(next, c)
				continue
			}
			x, y := slices.Clone(c), slices.Clone(c)
			x[p[0]], y[p[1]] = false, false
			next = append(next, x, y)
		}
		// Absorb: drop a letter held within another (the first of equals kept).
		cols = cols[:0]
		for i, c := range next {
			absorbed := false
			for j, o := range next {
				if i != j && subset(c, o) && (!subset(o, c) || j < i) {
					absorbed = true
					break
				}
			}
			if !absorbed {
				cols = append(cols, c)
			}
		}
	}
	first := func(c []bool) int { return slices.Index(c, true) }
	sort.SliceStable(cols, func(a, b int) bool { return first(cols[a]) < first(cols[b]) })
	out := make([]string, len(groups))
	for k, c := range cols {
		letter := string(rune('a' + k%26))
		if k >= 26 {
			letter += strconv.Itoa(k / 26)
		}
		for i, in := range c {
			if in {
				out[i] += letter
			}
		}
	}
	return out
}
