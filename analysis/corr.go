package analysis

import (
	"math"

	"github.com/gymlens/gymlens/analysis/stat"
)

// Correlation levels and methods.
const (
	RunLevel    = "run"
	ConfigLevel = "config"
	PearsonR    = "pearson"
	SpearmanR   = "spearman"
)

// CorrResult is one correlation between two metrics at one level.
type CorrResult struct {
	X, Y, Level, Method string
	R                   float64
	N                   int
	P                   float64 // two-sided, from Student's t with n−2 df
	FisherLo, FisherHi  float64 // Fisher-z interval at the bootstrap's level
	Estimate                    // R with its cluster-bootstrap interval
}

// WeightedPearson is Pearson's r of (x, y) with each pair counted w times.
func WeightedPearson(x, y, w []float64) float64 {
	var sw, mx, my float64
	for i := range x {
		sw += w[i]
		mx += float64(w[i] * x[i])
		my += float64(w[i] * y[i])
	}
	if sw == 0 {
		return math.NaN()
	}
	mx, my = mx/sw, my/sw
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += float64(w[i] * dx * dy)
		sxx += float64(w[i] * dx * dx)
		syy += float64(w[i] * dy * dy)
	}
	if sxx <= 0 || syy <= 0 {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, sxy/math.Sqrt(sxx*syy)))
}

// weightedRanks writes to r the mid-ranks of x in the sample where x[i]
// occurs w[i] times: the ranks of that expanded sample, ties averaged.
// order sorts x ascending.
func weightedRanks(x, w []float64, order []int, r []float64) {
	var below float64
	for a := 0; a < len(order); {
		b, tied := a, 0.0
		for b < len(order) && x[order[b]] == x[order[a]] {
			tied += w[order[b]]
			b++
		}
		mid := below + float64((tied+1)/2)
		for k := a; k < b; k++ {
			r[order[k]] = mid
		}
		below += tied
		a = b
	}
}

// Correlations computes Pearson and Spearman correlations between every
// pair of the given metrics (positions in AllMetrics): at run level,
// pooled over all runs given, and at configuration level, between the
// configurations' means. Each has its p-value, a Fisher-z interval and a
// cluster-bootstrap interval (scenarios resampled, both levels and every
// pair recomputed from the same draws).
//
// All pairs share one bootstrap: a resample's configuration means of a
// metric are computed, and ranked, once for every pair they enter. (The
// draws of resample b depend on the seed and b alone, so this gives the
// intervals one bootstrap per pair would.)
func Correlations(values [][]float64, scenario, config []string, metrics []int, opt BootstrapOptions) []CorrResult {
	return correlations(values, scenario, config, metrics, func(m int) string { return MetricName(metrics[m]) }, opt)
}

// CorrelationsNamed is Correlations of the columns of values, named by
// names (column i is names[i]): for values that are not registered
// metrics, such as Inspect's scorers.
func CorrelationsNamed(values [][]float64, scenario, config, names []string, opt BootstrapOptions) []CorrResult {
	metrics := make([]int, len(names))
	for i := range metrics {
		metrics[i] = i
	}
	return correlations(values, scenario, config, metrics, func(m int) string { return names[m] }, opt)
}

// correlations is Correlations with the metrics' names given by their
// positions in metrics.
func correlations(values [][]float64, scenario, config []string, metrics []int, name func(int) string, opt BootstrapOptions) []CorrResult {
	opt = opt.WithDefaults()
	cl := map[string]int{}
	cfg := map[string]int{}
	for i := range values {
		if _, ok := cl[scenario[i]]; !ok {
			cl[scenario[i]] = len(cl)
		}
		if _, ok := cfg[config[i]]; !ok {
			cfg[config[i]] = len(cfg)
		}
	}
	nc, ns, nm := len(cfg), len(cl), len(metrics)
	// Configuration level: per metric, configuration and scenario, the
	// sums and counts of the metric, so that means can be reweighted by
	// cluster.
	sum, cnt := make([][]float64, nm), make([][]float64, nm)
	for m, mi := range metrics {
		sum[m], cnt[m] = make([]float64, nc*ns), make([]float64, nc*ns)
		for i, v := range values {
			if x := v[mi]; !math.IsNaN(x) {
				j := cfg[config[i]]*ns + cl[scenario[i]]
				sum[m][j] += x
				cnt[m][j]++
			}
		}
	}
	var pairs []corrPair
	for a := 0; a < nm; a++ {
		for b := a + 1; b < nm; b++ {
			pairs = append(pairs, runPair(values, scenario, cl, metrics[a], metrics[b], a, b))
		}
	}
	type scratch struct {
		mean       [][]float64 // per metric, per configuration: NaN without runs
		rank       [][]float64 // per metric: ranks of its defined means, or nil
		cx, cy, cw []float64
		rk         []stat.Ranker // per metric, and one for pairs' own subsets
		nz         []int         // the clusters a resample draws
	}
	pool := make(chan *scratch, opt.Workers+1)
	get := func() *scratch {
		select {
		case s := <-pool:
			return s
		default:
		}
		s := &scratch{mean: make([][]float64, nm), rank: make([][]float64, nm), cx: make([]float64, nc), cy: make([]float64, nc),
			cw: make([]float64, nc), rk: make([]stat.Ranker, nm+2), nz: make([]int, 0, ns)}
		for m := range s.mean {
			s.mean[m] = make([]float64, nc)
		}
		return s
	}
	statFn := func(wc, res []float64) {
		s := get()
		defer func() { pool <- s }()
		// The clusters drawn: a term of a cluster not drawn adds a zero,
		// which leaves every sum as it is.
		nz := s.nz[:0]
		for sc, w := range wc {
			if w != 0 {
				nz = append(nz, sc)
			}
		}
		s.nz = nz
		for m := range metrics {
			for c := 0; c < nc; c++ {
				var sa, na float64
				row, crow := sum[m][c*ns:(c+1)*ns], cnt[m][c*ns:(c+1)*ns]
				for _, sc := range nz {
					sa += float64(wc[sc] * row[sc])
					na += float64(wc[sc] * crow[sc])
				}
				s.mean[m][c] = math.NaN()
				if na > 0 {
					s.mean[m][c] = sa / na
				}
			}
			s.rank[m] = nil
		}
		// defined returns the ranks of metric m's defined means, ranked at
		// the first need.
		defined := func(m int) []float64 {
			if s.rank[m] == nil {
				k := 0
				for _, v := range s.mean[m] {
					if !math.IsNaN(v) {
						s.cx[k] = v
						k++
					}
				}
				s.rank[m] = s.rk[m].Ranks(s.cx[:k])
			}
			return s.rank[m]
		}
		for p, pr := range pairs {
			out := res[4*p : 4*p+4]
			var t [6]float64
			for _, c := range nz {
				w := wc[c]
				for k := range t {
					t[k] += float64(w * pr.cs[c][k])
				}
			}
			out[0] = math.NaN()
			vx, vy := float64(t[0]*t[3])-float64(t[1]*t[1]), float64(t[0]*t[4])-float64(t[2]*t[2])
			if t[0] > 0 && vx > 1e-12*t[0]*t[3] && vy > 1e-12*t[0]*t[4] {
				out[0] = math.Max(-1, math.Min(1, (float64(t[0]*t[5])-float64(t[1]*t[2]))/math.Sqrt(vx*vy)))
			}
			out[1] = pr.sp.rho(wc)
			ma, mb := s.mean[pr.a], s.mean[pr.b]
			k, onlyA, onlyB := 0, false, false
			for c := 0; c < nc; c++ {
				da, db := !math.IsNaN(ma[c]), !math.IsNaN(mb[c])
				onlyA, onlyB = onlyA || (da && !db), onlyB || (db && !da)
				if da && db {
					s.cx[k], s.cy[k], s.cw[k] = ma[c], mb[c], 1
					k++
				}
			}
			out[2] = WeightedPearson(s.cx[:k], s.cy[:k], s.cw[:k])
			if !onlyA && !onlyB {
				// The pair's configurations are each metric's: their ranks
				// are the metric's (ranked after the means are read, as
				// defined reuses cx).
				out[3] = stat.Pearson(defined(pr.a), defined(pr.b))
			} else {
				rx := s.rk[nm].Ranks(s.cx[:k])
				out[3] = stat.Pearson(rx, s.rk[nm+1].Ranks(s.cy[:k]))
			}
		}
	}
	est := stat.ClusterBootstrap(ns, 4*len(pairs), statFn, opt)
	var out []CorrResult
	for p, pr := range pairs {
		// n at configuration level: configurations with both means.
		nConf := 0
		for c := 0; c < nc; c++ {
			var na, nb float64
			for sc := 0; sc < ns; sc++ {
				na += cnt[pr.a][c*ns+sc]
				nb += cnt[pr.b][c*ns+sc]
			}
			if na > 0 && nb > 0 {
				nConf++
			}
		}
		for j, lv := range [][2]string{{RunLevel, PearsonR}, {RunLevel, SpearmanR}, {ConfigLevel, PearsonR}, {ConfigLevel, SpearmanR}} {
			n := pr.n
			if lv[0] == ConfigLevel {
				n = nConf
			}
			e := est[4*p+j]
			lo, hi := stat.FisherZInterval(e.Value, n, opt.Level)
			out = append(out, CorrResult{X: name(pr.a), Y: name(pr.b), Level: lv[0], Method: lv[1], R: e.Value, N: n,
				P: stat.CorrelationPValue(e.Value, n), FisherLo: lo, FisherHi: hi, Estimate: e})
		}
	}
	return out
}

// corrPair is one pair of metrics of Correlations.
type corrPair struct {
	a, b int // positions in the metrics
	n    int // runs with both values
	sp   *spearman
	cs   [][6]float64
}

// runPair gathers what a resample needs for the run-level correlations of
// metrics ma and mb (positions a and b): Spearman's ρ from per-cluster
// polynomials when the clusters are few (see spearman in agreement.go);
// Pearson's r from per-cluster sums of the values centred on their means,
// O(clusters) per resample.
func runPair(values [][]float64, scenario []string, cl map[string]int, ma, mb, a, b int) (p corrPair) {
	var x, y []float64
	var clus []int
	for i, v := range values {
		if !math.IsNaN(v[ma]) && !math.IsNaN(v[mb]) {
			x, y = append(x, v[ma]), append(y, v[mb])
			clus = append(clus, cl[scenario[i]])
		}
	}
	p.a, p.b, p.n = a, b, len(x)
	p.sp = newSpearman(stat.SnapTies(x), stat.SnapTies(y), clus, len(cl))
	mx, my := stat.Mean(x), stat.Mean(y)
	p.cs = make([][6]float64, len(cl)) // n, Σx, Σy, Σx², Σy², Σxy
	for i, c := range clus {
		dx, dy := x[i]-mx, y[i]-my
		p.cs[c][0]++
		p.cs[c][1] += dx
		p.cs[c][2] += dy
		p.cs[c][3] += float64(dx * dx)
		p.cs[c][4] += float64(dy * dy)
		p.cs[c][5] += float64(dx * dy)
	}
	return p
}

// RunCorrelationMatrix is the run-level Pearson correlation of every pair
// of the metrics, pooled over the runs given, with its cluster-bootstrap
// interval. Each scenario is summarised once by the sums that Pearson's r
// needs (n, Σx, Σy, Σxy, Σx², Σy² over its runs with both values), so a
// resample costs O(scenarios) per pair, whatever the number of runs.
func RunCorrelationMatrix(values [][]float64, scenario []string, metrics []int, opt BootstrapOptions) []CorrResult {
	opt = opt.WithDefaults()
	cl := map[string]int{}
	for i := range values {
		if _, ok := cl[scenario[i]]; !ok {
			cl[scenario[i]] = len(cl)
		}
	}
	ns := len(cl)
	type pair struct{ a, b int }
	var pairs []pair
	for a := 0; a < len(metrics); a++ {
		for b := a + 1; b < len(metrics); b++ {
			pairs = append(pairs, pair{metrics[a], metrics[b]})
		}
	}
	// sums[p][c][0..5]: n, Σx, Σy, Σxy, Σx², Σy².
	sums := make([][6]float64, len(pairs)*ns)
	ns2 := make([]int, len(pairs))
	for i, v := range values {
		c := cl[scenario[i]]
		for p, pr := range pairs {
			x, y := v[pr.a], v[pr.b]
			if math.IsNaN(x) || math.IsNaN(y) {
				continue
			}
			s := &sums[p*ns+c]
			s[0]++
			s[1] += x
			s[2] += y
			s[3] += float64(x * y)
			s[4] += float64(x * x)
			s[5] += float64(y * y)
			ns2[p]++
		}
	}
	statFn := func(w, out []float64) {
		for p := range pairs {
			var t [6]float64
			for c, wc := range w {
				if wc == 0 {
					continue
				}
				s := &sums[p*ns+c]
				for k := range t {
					t[k] += float64(wc * s[k])
				}
			}
			n := t[0]
			sxy := t[3] - t[1]*t[2]/n
			sxx := t[4] - t[1]*t[1]/n
			syy := t[5] - t[2]*t[2]/n
			if n < 2 || sxx <= 0 || syy <= 0 {
				out[p] = math.NaN()
				continue
			}
			out[p] = math.Max(-1, math.Min(1, sxy/math.Sqrt(sxx*syy)))
		}
	}
	est := stat.ClusterBootstrap(ns, len(pairs), statFn, opt)
	out := make([]CorrResult, len(pairs))
	for p, pr := range pairs {
		r := est[p].Value
		lo, hi := stat.FisherZInterval(r, ns2[p], opt.Level)
		out[p] = CorrResult{X: MetricName(pr.a), Y: MetricName(pr.b), Level: RunLevel, Method: PearsonR, R: r, N: ns2[p],
			P: stat.CorrelationPValue(r, ns2[p]), FisherLo: lo, FisherHi: hi, Estimate: est[p]}
	}
	return out
}
