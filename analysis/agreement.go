package analysis

import (
	"math"
	"slices"
	"sync"

	"github.com/gymlens/gymlens/analysis/stat"
)

// Paired holds two sources' scores of the same items (judge A and judge
// B, or a judge and the humans), with each item's cluster (its scenario,
// the resampling unit) and configuration.
type Paired struct {
	Score    string
	A, B     []float64
	Cluster  []int
	Clusters int
	Config   []int // -1: none; configuration-level statistics need it
	Configs  int
	// Weight counts item i Weight[i] times (nil: once each); only
	// KappaAgreement reads it, for an item split between two categories.
	Weight []float64
}

// Add appends an item scored a by one source and b by the other.
func (p *Paired) Add(a, b float64, cluster, config int) {
	p.A, p.B = append(p.A, a), append(p.B, b)
	p.Cluster, p.Config = append(p.Cluster, cluster), append(p.Config, config)
}

// Agreement statistics.
const (
	StatMeanA          = "mean_a"
	StatMeanB          = "mean_b"
	StatDelta          = "delta" // B − A
	StatMAE            = "mae"
	StatPearson        = "pearson"
	StatSpearman       = "spearman"
	StatKendall        = "kendall_tau_b"
	StatWeightedKappa  = "weighted_kappa"
	StatConfigPearson  = "config_pearson"
	StatConfigSpearman = "config_spearman"
	StatRateA          = "rate_a"
	StatRateB          = "rate_b"
	StatAgreement      = "percent_agreement"
	StatKappa          = "cohen_kappa"
)

// AgreementStat is one statistic of a pair of sources on one score.
type AgreementStat struct {
	Score, Stat string
	N           int // items (configurations for the configuration level)
	Estimate
}

// AgreementOptions chooses the optional statistics.
type AgreementOptions struct {
	Kendall     bool // Kendall's τ-b (costs a sort per resample)
	ConfigLevel bool // correlations of the configurations' means
}

// ContinuousAgreement compares two sources' continuous scores: both
// means, their difference, the mean absolute difference, Pearson's r and
// Spearman's ρ, and as asked Kendall's τ-b, weighted κ and the
// configuration-level correlations, each with a cluster-bootstrap
// interval from the same draws.
func ContinuousAgreement(p Paired, ao AgreementOptions, opt BootstrapOptions) []AgreementStat {
	opt = opt.WithDefaults()
	stats := []string{StatMeanA, StatMeanB, StatDelta, StatMAE, StatPearson, StatSpearman}
	if ao.Kendall {
		stats = append(stats, StatKendall)
	}
	if ao.ConfigLevel {
		stats = append(stats, StatConfigPearson, StatConfigSpearman)
	}
	n := len(p.A)
	ns := p.Clusters
	// Means, MAE and Pearson's r from per-cluster sums (of values centred
	// on the overall means): O(clusters) per resample.
	ma, mb := stat.Mean(p.A), stat.Mean(p.B)
	cs := make([][7]float64, ns) // n, Σa, Σb, Σ|b−a|, Σa², Σb², Σab
	for i := range p.A {
		a, b := p.A[i]-ma, p.B[i]-mb
		c := &cs[p.Cluster[i]]
		c[0]++
		c[1] += a
		c[2] += b
		c[3] += math.Abs(p.B[i] - p.A[i])
		c[4] += float64(a * a)
		c[5] += float64(b * b)
		c[6] += float64(a * b)
	}
	// Ranks and ties of values snapped to TiePrecision.
	sa, sb := stat.SnapTies(p.A), stat.SnapTies(p.B)
	sp := newSpearman(sa, sb, p.Cluster, ns)
	var kt *kendall
	if ao.Kendall {
		kt = newKendall(sa, sb, p.Cluster, ns)
	}
	var sumA, sumB, cnt []float64
	if ao.ConfigLevel {
		sumA, sumB, cnt = make([]float64, p.Configs*ns), make([]float64, p.Configs*ns), make([]float64, p.Configs*ns)
		for i := range p.A {
			if c := p.Config[i]; c >= 0 {
				sumA[c*ns+p.Cluster[i]] += p.A[i]
				sumB[c*ns+p.Cluster[i]] += p.B[i]
				cnt[c*ns+p.Cluster[i]]++
			}
		}
	}
	// Per-worker buffers for the configuration level.
	type scratch struct {
		cx, cy []float64
		rx, ry stat.Ranker
	}
	pool := sync.Pool{New: func() any { return &scratch{cx: make([]float64, 0, p.Configs), cy: make([]float64, 0, p.Configs)} }}
	statFn := func(wc, out []float64) {
		var t [7]float64
		for c, w := range wc {
			for k := range t {
				t[k] += float64(w * cs[c][k])
			}
		}
		for k := range out {
			out[k] = math.NaN()
		}
		if t[0] == 0 {
			return
		}
		out[0], out[1], out[2], out[3] = ma+t[1]/t[0], mb+t[2]/t[0], mb-ma+(t[2]-t[1])/t[0], t[3]/t[0]
		vxx, vyy := float64(t[0]*t[4])-float64(t[1]*t[1]), float64(t[0]*t[5])-float64(t[2]*t[2])
		if vxx > 1e-12*t[0]*t[4] && vyy > 1e-12*t[0]*t[5] {
			out[4] = math.Max(-1, math.Min(1, (float64(t[0]*t[6])-float64(t[1]*t[2]))/math.Sqrt(vxx*vyy)))
		}
		out[5] = sp.rho(wc)
		k := 6
		if ao.Kendall {
			out[k] = kt.tau(wc)
			k++
		}
		if ao.ConfigLevel {
			sc := pool.Get().(*scratch)
			defer pool.Put(sc)
			cx, cy := sc.cx[:0], sc.cy[:0]
			for c := 0; c < p.Configs; c++ {
				var a, b, m float64
				for s, ws := range wc {
					a += float64(ws * sumA[c*ns+s])
					b += float64(ws * sumB[c*ns+s])
					m += float64(ws * cnt[c*ns+s])
				}
				if m > 0 {
					cx, cy = append(cx, a/m), append(cy, b/m)
				}
			}
			out[k] = stat.Pearson(cx, cy)
			out[k+1] = stat.Pearson(sc.rx.Ranks(cx), sc.ry.Ranks(cy)) // stat.Spearman, into the worker's buffers
			sc.cx, sc.cy = cx, cy
		}
	}
	est := stat.ClusterBootstrap(p.Clusters, len(stats), statFn, opt)
	out := make([]AgreementStat, len(stats))
	configs := 0
	if ao.ConfigLevel {
		for c := 0; c < p.Configs; c++ {
			var m float64
			for s := 0; s < ns; s++ {
				m += cnt[c*ns+s]
			}
			if m > 0 {
				configs++
			}
		}
	}
	for j, s := range stats {
		out[j] = AgreementStat{Score: p.Score, Stat: s, N: n, Estimate: est[j]}
		if s == StatConfigPearson || s == StatConfigSpearman {
			out[j].N = configs
		}
		explainNaN(&out[j])
	}
	return out
}

// explainNaN adds the reason a statistic could not be had.
func explainNaN(s *AgreementStat) {
	if !math.IsNaN(s.Value) {
		return
	}
	why := "undefined"
	switch {
	case s.N == 0:
		why = "no item scored by both"
	case s.Stat == StatPearson || s.Stat == StatSpearman || s.Stat == StatKendall || s.Stat == StatConfigPearson || s.Stat == StatConfigSpearman:
		why = "fewer than two items, or one source's scores are constant: the correlation is undefined"
	case s.Stat == StatKappa || s.Stat == StatWeightedKappa:
		why = "both sources used one category only: κ is undefined"
	}
	s.Warn(0, why)
}

// binaryByCluster lets BinaryAgreement sum per cluster (off in a test
// that compares both ways).
var binaryByCluster = true

// BinaryAgreement compares two sources' 0/1 labels: both positive rates,
// their difference, the percent agreement and Cohen's κ, with
// cluster-bootstrap intervals.
func BinaryAgreement(p Paired, opt BootstrapOptions) []AgreementStat {
	stats := []string{StatRateA, StatRateB, StatDelta, StatAgreement, StatKappa}
	// With labels of 0 and 1 only, each item adds an integer times its
	// cluster's weight to each sum, so per-cluster sums give the same
	// sums (exact below 2⁵³) at O(clusters) a resample; other values are
	// summed item by item, in order.
	binary := binaryByCluster
	for i := range p.A {
		if (p.A[i] != 0 && p.A[i] != 1) || (p.B[i] != 0 && p.B[i] != 1) {
			binary = false
			break
		}
	}
	var per [][4]float64 // n, Σa, Σb, items on which a and b agree
	if binary {
		per = make([][4]float64, p.Clusters)
		for i := range p.A {
			c := &per[p.Cluster[i]]
			c[0]++
			c[1] += p.A[i]
			c[2] += p.B[i]
			if p.A[i] == p.B[i] {
				c[3]++
			}
		}
	}
	statFn := func(wc, out []float64) {
		var sw, sa, sb, agree float64
		if binary {
			for c, w := range wc {
				if w != 0 {
					sw += float64(w * per[c][0])
					sa += float64(w * per[c][1])
					sb += float64(w * per[c][2])
					agree += float64(w * per[c][3])
				}
			}
		} else {
			for i := range p.A {
				wi := wc[p.Cluster[i]]
				sw += wi
				sa += float64(wi * p.A[i])
				sb += float64(wi * p.B[i])
				if p.A[i] == p.B[i] {
					agree += wi
				}
			}
		}
		for k := range out {
			out[k] = math.NaN()
		}
		if sw == 0 {
			return
		}
		ra, rb := sa/sw, sb/sw
		po := agree / sw
		pe := float64(ra*rb) + float64((1-ra)*(1-rb))
		out[0], out[1], out[2], out[3] = 100*ra, 100*rb, 100*(rb-ra), 100*po
		if pe < 1-1e-12 {
			out[4] = (po - pe) / (1 - pe)
		}
	}
	est := stat.ClusterBootstrap(p.Clusters, len(stats), statFn, opt)
	out := make([]AgreementStat, len(stats))
	for j, s := range stats {
		out[j] = AgreementStat{Score: p.Score, Stat: s, N: len(p.A), Estimate: est[j]}
		explainNaN(&out[j])
	}
	return out
}

// spearman computes Spearman's ρ of (x, y) when every item of cluster c
// counts w[c] times. With few clusters it needs no pass over the items:
// an item's mid-rank in the reweighted sample is Σ_d w_d G_id (+ ½, which
// ρ ignores), where G_id counts the items of cluster d below it plus half
// those tied with it; so the sums Pearson's r needs are polynomials in w
// whose coefficients are computed once: O(clusters³) per resample. With
// many clusters it ranks the reweighted sample directly.
type spearman struct {
	x, y, w  []float64
	cluster  []int
	ox, oy   []int
	C        int
	fast     bool
	nc       []float64
	px, py   []float64 // C×C: Σ_{i∈c} G_id
	qxx, qyy []float64 // C×C×C: Σ_{i∈c} G_id G_ie for e ≥ d, doubled for e > d (symmetric in d, e)
	qxy      []float64 // C×C×C: Σ_{i∈c} G_id H_ie
}

const spearmanFastClusters = 24

func newSpearman(x, y []float64, cluster []int, C int) *spearman {
	s := &spearman{x: x, y: y, cluster: cluster, C: C, ox: sortedOrder(x), oy: sortedOrder(y)}
	if C > spearmanFastClusters {
		return s
	}
	s.fast = true
	n := len(x)
	gx, ix := s.g(x, s.ox)
	gy, iy := s.g(y, s.oy)
	s.ox, s.oy = nil, nil // only the slow path ranks again
	s.nc = make([]float64, C)
	s.px, s.py = make([]float64, C*C), make([]float64, C*C)
	s.qxx, s.qyy, s.qxy = make([]float64, C*C*C), make([]float64, C*C*C), make([]float64, C*C*C)
	// Items of one cluster in the same tie groups of x and of y add the
	// same terms: each such cell once, times its items. (G holds
	// multiples of ½, so while the sums stay below 2⁵³ they are exact and
	// the same in any order.)
	type cell struct {
		c      int
		rx, ry int32
		m      float64
	}
	var cells []cell
	at := map[[3]int32]int{}
	for i := 0; i < n; i++ {
		k := [3]int32{int32(cluster[i]), ix[i], iy[i]}
		j, ok := at[k]
		if !ok {
			j = len(cells)
			at[k] = j
			cells = append(cells, cell{c: cluster[i], rx: ix[i], ry: iy[i]})
		}
		cells[j].m++
	}
	for _, cl := range cells {
		c, m := cl.c, cl.m
		s.nc[c] += m
		a, b := gx[int(cl.rx)*C:(int(cl.rx)+1)*C], gy[int(cl.ry)*C:(int(cl.ry)+1)*C]
		for d := 0; d < C; d++ {
			s.px[c*C+d] += float64(m * a[d])
			s.py[c*C+d] += float64(m * b[d])
			base := (c*C + d) * C
			ma, mb := float64(m*a[d]), float64(m*b[d])
			for e := 0; e < C; e++ {
				if e >= d {
					s.qxx[base+e] += float64(ma * a[e])
					s.qyy[base+e] += float64(mb * b[e])
				}
				s.qxy[base+e] += float64(ma * b[e])
			}
		}
	}
	// The squares' sums are symmetric in (d, e): the terms below the
	// diagonal are added once, doubled, above it.
	for c := 0; c < C; c++ {
		for d := 0; d < C; d++ {
			for e := d + 1; e < C; e++ {
				s.qxx[(c*C+d)*C+e] *= 2
				s.qyy[(c*C+d)*C+e] *= 2
			}
		}
	}
	return s
}

// g returns G by tie group: row k (C values) is, for the k-th smallest
// distinct value of x and each cluster d, the items of d below it plus
// half of those equal to it; and the row of each item. Items with equal
// values share a row, so scores on a scale of a few points need a few
// rows, not one per item.
func (s *spearman) g(x []float64, order []int) (g []float64, row []int32) {
	C := s.C
	row = make([]int32, len(x))
	// One row of C values per distinct value of x: allocated once.
	distinct := 0
	for a := 0; a < len(order); a++ {
		if a == 0 || x[order[a]] != x[order[a-1]] {
			distinct++
		}
	}
	g = make([]float64, 0, distinct*C)
	below := make([]float64, C)
	eq := make([]float64, C)
	for a := 0; a < len(order); {
		b := a
		for b < len(order) && x[order[b]] == x[order[a]] {
			eq[s.cluster[order[b]]]++
			b++
		}
		k := int32(len(g) / C)
		for d := 0; d < C; d++ {
			g = append(g, below[d]+float64(eq[d]/2))
		}
		for j := a; j < b; j++ {
			row[order[j]] = k
		}
		for d := 0; d < C; d++ {
			below[d] += eq[d]
			eq[d] = 0
		}
		a = b
	}
	return g, row
}

func (s *spearman) rho(wc []float64) float64 {
	if !s.fast {
		n := len(s.x)
		w, rx, ry := make([]float64, n), make([]float64, n), make([]float64, n)
		for i, c := range s.cluster {
			w[i] = wc[c]
		}
		weightedRanks(s.x, w, s.ox, rx)
		weightedRanks(s.y, w, s.oy, ry)
		return WeightedPearson(rx, ry, w)
	}
	// Over the clusters drawn only, in a fixed order. Every term is a
	// multiple of ¼; while the sums stay below 2⁵³ (at the sample's scale)
	// they are exact in any grouping, beyond (295,092 items at --scale 10)
	// rounded, to about 1e-14 of ρ.
	C := s.C
	var nzBuf [spearmanFastClusters]int
	nz := nzBuf[:0]
	for c, w := range wc {
		if w != 0 {
			nz = append(nz, c)
		}
	}
	var S, sx, sy, sxx, syy, sxy float64
	for _, c := range nz {
		w := wc[c]
		S += float64(w * s.nc[c])
		for j, d := range nz {
			ww := w * wc[d]
			sx += float64(ww * s.px[c*C+d])
			sy += float64(ww * s.py[c*C+d])
			base := (c*C + d) * C
			var axx, ayy, axy float64
			for _, e := range nz[j:] {
				axx += float64(wc[e] * s.qxx[base+e])
				ayy += float64(wc[e] * s.qyy[base+e])
			}
			for _, e := range nz {
				axy += float64(wc[e] * s.qxy[base+e])
			}
			sxx += float64(ww * axx)
			syy += float64(ww * ayy)
			sxy += float64(ww * axy)
		}
	}
	vx, vy := float64(S*sxx)-float64(sx*sx), float64(S*syy)-float64(sy*sy)
	if vx <= 1e-12*S*sxx || vy <= 1e-12*S*syy {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, (float64(S*sxy)-float64(sx*sy))/math.Sqrt(vx*vy)))
}

// KappaAgreement is the (weighted) κ of two sources' categorical values,
// with its cluster-bootstrap interval, and the confusion matrix; pair i
// counts p.Weight[i] times (nil: once).
func KappaAgreement(p Paired, weighting string, opt BootstrapOptions) (AgreementStat, Confusion) {
	// One confusion table per cluster: a resample adds them up with its
	// weights, O(clusters × categories²) whatever the number of items.
	pa, pb := stat.SnapTies(p.A), stat.SnapTies(p.B)
	all := stat.ConfusionMatrix(pa, pb, p.Weight)
	K := len(all.Categories)
	pos := make(map[float64]int, K)
	for i, c := range all.Categories {
		pos[c] = i
	}
	per := make([][]float64, p.Clusters)
	for c := range per {
		per[c] = make([]float64, K*K)
	}
	n := 0.0
	for i := range pa {
		w := 1.0
		if p.Weight != nil {
			w = p.Weight[i]
		}
		per[p.Cluster[i]][pos[pa[i]]*K+pos[pb[i]]] += w
		n += w
	}
	statFn := func(wc, out []float64) {
		m := Confusion{Categories: all.Categories, Counts: make([][]float64, K)}
		for i := range m.Counts {
			m.Counts[i] = make([]float64, K)
		}
		for c, w := range wc {
			if w == 0 {
				continue
			}
			for i := 0; i < K; i++ {
				for j := 0; j < K; j++ {
					m.Counts[i][j] += float64(w * per[c][i*K+j])
				}
			}
			for _, v := range per[c] {
				m.N += float64(w * v)
			}
		}
		out[0] = m.Kappa(weighting)
	}
	name := StatKappa
	if weighting != Unweighted {
		name = StatWeightedKappa
	}
	est := stat.ClusterBootstrap(p.Clusters, 1, statFn, opt)
	s := AgreementStat{Score: p.Score, Stat: name, N: int(math.Round(n)), Estimate: est[0]}
	explainNaN(&s)
	return s, all
}

// kendall computes Kendall's τ-b of (x, y) when every item of cluster c
// counts w[c] times, without building that sample: the sums over pairs
// that τ-b needs are quadratic in the cluster weights, so their per
// cluster-pair coefficients are counted once (O(n²), or O(n log n) per
// resample by building the sample when n is large) and a resample costs
// O(clusters²). An item repeated w times adds w(w − 1)/2 pairs tied in
// both variables.
type kendall struct {
	x, y, n        []float64
	cluster        []int
	C              int
	fast           bool
	s, tx, ty, txy []float64 // C×C: over pairs i<j with c(i)=c, c(j)=d
}

const kendallFastItems = 8000

// kendallMaxClusters bounds the clusters whose pair tables a large sample
// is counted into (four C × C tables).
const kendallMaxClusters = 1024

// countByCluster fills the tables in O(C · n log n): the pairs within a
// cluster by Knight's count of its items, the pairs between clusters c
// and d as the count of their union less the two within. The counts are
// whole numbers, so τ-b comes out as the sample built and counted would
// give it, to the bit. Pairs between c and d go to (c, d), c < d: τ-b
// weighs (c, d) and (d, c) alike.
func (k *kendall) countByCluster() {
	xs, ys := make([][]float64, k.C), make([][]float64, k.C)
	for i, c := range k.cluster {
		xs[c], ys[c] = append(xs[c], k.x[i]), append(ys[c], k.y[i])
	}
	type counts struct{ s, tx, ty, txy int64 }
	within := make([]counts, k.C)
	for c := range k.C {
		s, tx, ty, txy := stat.KendallCounts(xs[c], ys[c])
		within[c] = counts{s, tx, ty, txy}
		k.s[c*k.C+c], k.tx[c*k.C+c], k.ty[c*k.C+c], k.txy[c*k.C+c] = float64(s), float64(tx), float64(ty), float64(txy)
	}
	for c := range k.C {
		for d := c + 1; d < k.C; d++ {
			if len(xs[c]) == 0 || len(xs[d]) == 0 {
				continue
			}
			s, tx, ty, txy := stat.KendallCounts(append(slices.Clip(xs[c]), xs[d]...), append(slices.Clip(ys[c]), ys[d]...))
			a, b := within[c], within[d]
			k.s[c*k.C+d] = float64(s - a.s - b.s)
			k.tx[c*k.C+d] = float64(tx - a.tx - b.tx)
			k.ty[c*k.C+d] = float64(ty - a.ty - b.ty)
			k.txy[c*k.C+d] = float64(txy - a.txy - b.txy)
		}
	}
}

func newKendall(x, y []float64, cluster []int, C int) *kendall {
	k := &kendall{x: x, y: y, cluster: cluster, C: C, n: make([]float64, C)}
	for _, c := range cluster {
		k.n[c]++
	}
	if len(x) > kendallFastItems && C > kendallMaxClusters {
		return k
	}
	k.fast = true
	k.s, k.tx, k.ty, k.txy = make([]float64, C*C), make([]float64, C*C), make([]float64, C*C), make([]float64, C*C)
	// Counted by cluster past a few hundred items when the clusters are
	// few (O(C · n log n) against n²/2 pairs: at 8,000 items in 10
	// clusters 40 × fewer steps); the counts are the same whole numbers.
	if len(x) > kendallFastItems || (len(x) > kendallPairItems && C <= kendallPairClusters) {
		k.countByCluster()
		return k
	}
	k.countPairs()
	return k
}

// Below kendallPairItems items, or with more than kendallPairClusters
// clusters, newKendall counts pair by pair.
const (
	kendallPairItems    = 512
	kendallPairClusters = 64
)

// countPairs fills the tables pair by pair: O(n²).
func (k *kendall) countPairs() {
	x, y, cluster, C := k.x, k.y, k.cluster, k.C
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			cd := cluster[i]*C + cluster[j]
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				k.tx[cd]++
				k.ty[cd]++
				k.txy[cd]++
			case dx == 0:
				k.tx[cd]++
			case dy == 0:
				k.ty[cd]++
			case (dx > 0) == (dy > 0):
				k.s[cd]++
			default:
				k.s[cd]--
			}
		}
	}
}

func (k *kendall) tau(wc []float64) float64 {
	if !k.fast {
		var x, y []float64
		for i := range k.x {
			for r := 0; r < int(wc[k.cluster[i]]); r++ {
				x, y = append(x, k.x[i]), append(y, k.y[i])
			}
		}
		return stat.KendallTauB(x, y)
	}
	var N, s, tx, ty, self float64
	for c, w := range wc {
		N += float64(w * k.n[c])
		self += float64(k.n[c] * w * (w - 1) / 2) // copies of one item: tied in both
		for d, v := range wc {
			ww := w * v
			s += float64(ww * k.s[c*k.C+d])
			tx += float64(ww * k.tx[c*k.C+d])
			ty += float64(ww * k.ty[c*k.C+d])
		}
	}
	n0 := float64(N * (N - 1) / 2)
	den := math.Sqrt((n0 - tx - self) * (n0 - ty - self))
	if N < 2 || den == 0 || math.IsNaN(den) {
		return math.NaN()
	}
	return s / den
}

func sortedOrder(x []float64) []int {
	o := make([]int, len(x))
	for i := range o {
		o[i] = i
	}
	// The generic stable sort: sort.SliceStable's algorithm without its
	// reflection, so the same order.
	slices.SortStableFunc(o, func(a, b int) int {
		switch xa, xb := x[a], x[b]; {
		case xa < xb:
			return -1
		case xb < xa:
			return 1
		}
		return 0
	})
	return o
}

// CorrDifference estimates Pearson's r between x and y for source A and
// for source B on the same items, and their difference (B − A), with
// cluster-bootstrap intervals from the same draws: the conflation check
// compares how strongly judged trust tracks capability for a judge and
// for humans.
func CorrDifference(xa, ya, xb, yb []float64, cluster []int, clusters int, opt BootstrapOptions) []Estimate {
	// The items' weights, a slice per worker at a time, not per resample.
	weights := sync.Pool{New: func() any { w := make([]float64, len(xa)); return &w }}
	statFn := func(wc, out []float64) {
		wp := weights.Get().(*[]float64)
		defer weights.Put(wp)
		w := *wp
		for i, c := range cluster {
			w[i] = wc[c]
		}
		out[0] = WeightedPearson(xa, ya, w)
		out[1] = WeightedPearson(xb, yb, w)
		out[2] = out[1] - out[0]
	}
	return stat.ClusterBootstrap(clusters, 3, statFn, opt)
}

// SplitToScale places a score v on the categories 1, 2, …, max: the
// nearest category with weight 1, or, when v lies exactly half-way between
// two (to TiePrecision), each of them with weight ½. A mean of two judges'
// 3 and 4 is neither a 3 nor a 4, and rounding every half up would move
// every such item up the scale; values outside [1, max] go to the nearest
// end.
func SplitToScale(v float64, max int) (cats []float64, weights []float64) {
	v = math.Max(1, math.Min(float64(max), stat.SnapTie(v)))
	lo := math.Floor(v)
	if v-lo == 0.5 {
		return []float64{lo, lo + 1}, []float64{0.5, 0.5}
	}
	return []float64{math.Round(v)}, []float64{1}
}

// PPIResult is a mean corrected with human labels by prediction-powered
// inference (Angelopoulos et al., Science 2023).
type PPIResult struct {
	N, Labelled              int     // items with a judge score; of them, with human labels
	JudgeMean                float64 // the judge's mean over all N items
	JudgeLo, JudgeHi         float64 // its normal interval
	HumanMean                float64 // the mean of the labels alone
	HumanLo, HumanHi         float64
	Rectifier                float64 // mean of human − judge on the labelled items
	Corrected                float64 // the judge's mean over the unlabelled items + Rectifier
	CorrectedLo, CorrectedHi float64
	Level                    float64
	Warning                  string // why Corrected is NaN, when it is
}

// PPIMean is the prediction-powered mean of a score (Angelopoulos et al.
// 2023, the mean estimator without power tuning): the judge's scores
// unlabelled on the N − n items no human rated, human labels y and the
// judge's scores fl on the n rated items,
//
//	θ̂ = mean(unlabelled) + mean(y − fl)
//	se = √(σ̂²(unlabelled)/(N − n) + σ̂²(y − fl)/n)
//
// with σ̂² dividing by the count (as the paper and ppi_py's ppi_mean_ci
// with lam = 1), and a normal interval. The two samples are disjoint, as
// the variance formula assumes; the labelled items must be a random
// sample of all the items. JudgeMean (over all N) and HumanMean (over the
// n labels) are the uncorrected means with classical normal intervals.
func PPIMean(unlabelled, y, fl []float64, level float64) PPIResult {
	if level <= 0 || level >= 1 {
		level = 0.95
	}
	if len(y) != len(fl) {
		panic("analysis: PPIMean: y and fl differ in length")
	}
	z := stat.ZQuantile(level)
	all := append(append([]float64(nil), unlabelled...), fl...)
	r := PPIResult{N: len(all), Labelled: len(y), Level: level}
	res := make([]float64, len(y))
	for i := range y {
		res[i] = y[i] - fl[i]
	}
	normal := func(x []float64) (m, lo, hi float64) {
		m, v := meanVar(x)
		se := math.Sqrt(v / float64(len(x)))
		return m, m - float64(z*se), m + float64(z*se)
	}
	r.JudgeMean, r.JudgeLo, r.JudgeHi = normal(all)
	r.HumanMean, r.HumanLo, r.HumanHi = normal(y)
	r.Rectifier = stat.Mean(res)
	r.Corrected, r.CorrectedLo, r.CorrectedHi = math.NaN(), math.NaN(), math.NaN()
	switch {
	case len(y) == 0:
		r.Warning = "no labelled item"
		return r
	case len(unlabelled) == 0:
		r.Warning = "every item is labelled: the human mean is the estimate"
		return r
	}
	mu := stat.Mean(unlabelled)
	r.Corrected = mu + r.Rectifier
	se := math.Sqrt(popVar(unlabelled)/float64(len(unlabelled)) + popVar(res)/float64(len(res)))
	r.CorrectedLo, r.CorrectedHi = r.Corrected-float64(z*se), r.Corrected+float64(z*se)
	return r
}

// popVar is the variance dividing by the count.
func popVar(x []float64) float64 {
	m := stat.Mean(x)
	var s float64
	for _, v := range x {
		s += float64((v - m) * (v - m))
	}
	return s / float64(len(x))
}

// meanVar is the mean and the unbiased variance (NaN below two values).
func meanVar(x []float64) (float64, float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	m := stat.Mean(x)
	if len(x) < 2 {
		return m, math.NaN()
	}
	var s float64
	for _, v := range x {
		s += float64((v - m) * (v - m))
	}
	return m, s / float64(len(x)-1)
}
