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
// cluster-bootstrap interval (scenarios resampled, both levels recomputed
// from the same draws).
func Correlations(values [][]float64, scenario, config []string, metrics []int, opt BootstrapOptions) []CorrResult {
	opt = opt.WithDefaults()
	cl := map[string]int{}
	cfg := map[string]int{}
	var cfgNames []string
	for i := range values {
		if _, ok := cl[scenario[i]]; !ok {
			cl[scenario[i]] = len(cl)
		}
		if _, ok := cfg[config[i]]; !ok {
			cfg[config[i]] = len(cfg)
			cfgNames = append(cfgNames, config[i])
		}
	}
	var out []CorrResult
	for a := 0; a < len(metrics); a++ {
		for b := a + 1; b < len(metrics); b++ {
			ma, mb := metrics[a], metrics[b]
			out = append(out, pairCorrelations(values, scenario, config, cl, cfg, ma, mb, opt)...)
		}
	}
	return out
}

func pairCorrelations(values [][]float64, scenario, config []string, cl, cfg map[string]int, ma, mb int, opt BootstrapOptions) []CorrResult {
	// Run level: the runs with both values.
	var x, y []float64
	var clus []int
	for i, v := range values {
		if !math.IsNaN(v[ma]) && !math.IsNaN(v[mb]) {
			x, y = append(x, v[ma]), append(y, v[mb])
			clus = append(clus, cl[scenario[i]])
		}
	}
	// Configuration level: per configuration and scenario, the sums and
	// counts of each metric, so that means can be reweighted by cluster.
	nc, ns := len(cfg), len(cl)
	sumA, cntA := make([]float64, nc*ns), make([]float64, nc*ns)
	sumB, cntB := make([]float64, nc*ns), make([]float64, nc*ns)
	for i, v := range values {
		c, s := cfg[config[i]], cl[scenario[i]]
		if !math.IsNaN(v[ma]) {
			sumA[c*ns+s] += v[ma]
			cntA[c*ns+s]++
		}
		if !math.IsNaN(v[mb]) {
			sumB[c*ns+s] += v[mb]
			cntB[c*ns+s]++
		}
	}
	// Spearman's ρ of each resample from per-cluster polynomials when the
	// clusters are few (see spearman in agreement.go).
	sp := newSpearman(stat.SnapTies(x), stat.SnapTies(y), clus, len(cl))
	// Pearson's r of each resample from per-cluster sums of the values
	// centred on their means: O(clusters) per resample.
	mx, my := stat.Mean(x), stat.Mean(y)
	cs := make([][6]float64, len(cl)) // n, Σx, Σy, Σx², Σy², Σxy
	for i, c := range clus {
		a, b := x[i]-mx, y[i]-my
		cs[c][0]++
		cs[c][1] += a
		cs[c][2] += b
		cs[c][3] += float64(a * a)
		cs[c][4] += float64(b * b)
		cs[c][5] += float64(a * b)
	}
	// Per-worker scratch space is not shared: the statistic allocates its
	// buffers once per call site through a pool keyed by goroutine-free
	// slices below.
	type scratch struct {
		cx, cy, cw []float64
		rx, ry     stat.Ranker
	}
	pool := make(chan *scratch, opt.Workers+1)
	get := func() *scratch {
		select {
		case s := <-pool:
			return s
		default:
			return &scratch{cx: make([]float64, nc), cy: make([]float64, nc), cw: make([]float64, nc)}
		}
	}
	statFn := func(wc, res []float64) {
		s := get()
		defer func() { pool <- s }()
		var t [6]float64
		for c, w := range wc {
			for k := range t {
				t[k] += float64(w * cs[c][k])
			}
		}
		res[0] = math.NaN()
		vx, vy := float64(t[0]*t[3])-float64(t[1]*t[1]), float64(t[0]*t[4])-float64(t[2]*t[2])
		if t[0] > 0 && vx > 1e-12*t[0]*t[3] && vy > 1e-12*t[0]*t[4] {
			res[0] = math.Max(-1, math.Min(1, (float64(t[0]*t[5])-float64(t[1]*t[2]))/math.Sqrt(vx*vy)))
		}
		res[1] = sp.rho(wc)
		k := 0
		for c := 0; c < nc; c++ {
			var sa, na, sb, nb float64
			for sc, w := range wc {
				sa += float64(w * sumA[c*ns+sc])
				na += float64(w * cntA[c*ns+sc])
				sb += float64(w * sumB[c*ns+sc])
				nb += float64(w * cntB[c*ns+sc])
			}
			if na > 0 && nb > 0 {
				s.cx[k], s.cy[k], s.cw[k] = sa/na, sb/nb, 1
				k++
			}
		}
		res[2] = WeightedPearson(s.cx[:k], s.cy[:k], s.cw[:k])
		res[3] = stat.Pearson(s.rx.Ranks(s.cx[:k]), s.ry.Ranks(s.cy[:k]))
	}
	est := stat.ClusterBootstrap(len(cl), 4, statFn, opt)
	// n at configuration level: configurations with both means.
	nConf := 0
	for c := 0; c < nc; c++ {
		var na, nb float64
		for sc := 0; sc < ns; sc++ {
			na += cntA[c*ns+sc]
			nb += cntB[c*ns+sc]
		}
		if na > 0 && nb > 0 {
			nConf++
		}
	}
	var out []CorrResult
	for j, lv := range [][2]string{{RunLevel, PearsonR}, {RunLevel, SpearmanR}, {ConfigLevel, PearsonR}, {ConfigLevel, SpearmanR}} {
		n := len(x)
		if lv[0] == ConfigLevel {
			n = nConf
		}
		r := est[j].Value
		lo, hi := stat.FisherZInterval(r, n, opt.Level)
		out = append(out, CorrResult{X: MetricName(ma), Y: MetricName(mb), Level: lv[0], Method: lv[1], R: r, N: n,
			P: stat.CorrelationPValue(r, n), FisherLo: lo, FisherHi: hi, Estimate: est[j]})
	}
	return out
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
