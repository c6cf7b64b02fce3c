package analysis

import (
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// SelfAgreement is how far a judge agrees with itself when asked the same
// item again (gymlens judge --repeats: other seeds), score by score, and
// how much of its disagreement with each other judge that noise explains.
type SelfAgreement struct {
	Judge  string
	Scores []SelfScore
	Noise  []NoiseShare
}

// SelfScore is a judge's test-retest agreement on one score.
type SelfScore struct {
	Score   string  // as the metrics name it: TC.correctness, TA.now, custom.NAME.FIELD
	Scale   string  // binary, ordinal or interval
	Items   int     // inputs answered validly twice or more
	Answers float64 // answers per item, on average
	// Alpha is Krippendorff's α over the items (units) and their answers,
	// at the scale's level (nominal for binary labels).
	Alpha Estimate
	// ICC is the one-way random-effects intraclass correlation of a single
	// answer, ICC(1,1) (unbalanced items: the ANOVA estimator with k₀);
	// not for binary labels.
	ICC Estimate
	// FlipRate is, for a binary label, the share of items whose answers
	// are not all the same.
	FlipRate Estimate
	// SDWithin is the root of the mean within-item variance (n − 1 in the
	// denominator), on the metric's scale: the noise of one answer.
	SDWithin float64
}

// NoiseShare is how much of the disagreement between the judge and
// another judge on one score the judges' own noise explains: over the
// items both judged, with ā and b̄ the judges' means of an item's n_A and
// n_B answers, v_A, v_B the variances of its answers with n in the
// denominator (0 for a judge asked once) and s²_A, s²_B with n − 1,
//
//	MSD   = mean over items of (ā − b̄)² + v_A + v_B,
//
// the mean squared difference between one answer of each (exactly, and
// unbiased for its expectation Δ² + σ²_A + σ²_B), and
//
//	Share = mean(s²_A + s²_B) / MSD,
//
// the part of it that asking again would change, each variance unbiased
// for σ² (1 for judges alike but for noise; 0: the judges differ
// systematically and never vary). s²_B is counted only when the other
// judge was asked again on every item (OtherNoise); otherwise its noise is
// unknown and left out.
type NoiseShare struct {
	Score, Other string
	Items        int
	MSD, Noise   float64
	Share        Estimate
	// OtherNoise says whether the other judge's noise is counted: it was
	// asked again on every item. When not, its noise is unknown and left
	// out, and the share is the judge's own noise alone (for two judges
	// alike but for noise, about its part of their two noises, not 1).
	OtherNoise bool
}

// Scales of a score for self-agreement.
const (
	ScaleBinary   = "binary"
	ScaleOrdinal  = "ordinal"
	ScaleInterval = "interval"
)

// repeatScore names a stored score (a judgments column, or a rubric's
// field) as the metrics name it, with its scale and the factor that puts
// it on the metric's scale.
func repeatScore(metric, key string) (name, scale string, factor float64) {
	switch metric {
	case "tc":
		return "TC." + key, ScaleInterval, 100
	case "trj":
		return "TRJ." + key, ScaleOrdinal, 1
	case "ta":
		switch key {
		case "ta_now", "ta_later":
			return "TA." + strings.TrimPrefix(key, "ta_"), ScaleBinary, 1
		case "ta_cq":
			return "TA.cq", ScaleOrdinal, 1
		}
		return "", "", 0
	}
	if !strings.HasPrefix(metric, CustomPrefix) {
		return "", "", 0
	}
	name = metric + "." + key
	m, k := customOf(name)
	if m == nil || k < 0 {
		return name, ScaleInterval, 1
	}
	f := m.fields[k]
	switch {
	case len(f.Levels) == 2:
		scale = ScaleBinary
	case len(f.Levels) > 2:
		scale = ScaleOrdinal
	default:
		scale = ScaleInterval
	}
	factor = 1
	if f.Min == 0 && f.Max == 1 && scale != ScaleBinary {
		factor = 100
	}
	return name, scale, factor
}

// repeated is one score's items: the answers of each (on the metric's
// scale), with the item they are of.
type repeated struct {
	scale  string
	values [][]float64
	items  []*rows.RepeatItem
}

// key is where the i-th item belongs: run, task, metric.
func (r *repeated) key(i int) [3]string {
	it := r.items[i]
	return [3]string{it.RunID, it.Task, it.Metric}
}

func collectRepeats(items []rows.RepeatItem, judge string) (map[string]*repeated, []string) {
	by := map[string]*repeated{}
	var names []string
	for i := range items {
		it := &items[i]
		if it.Judge != judge {
			continue
		}
		for k, key := range it.Names {
			name, scale, factor := repeatScore(it.Metric, key)
			if name == "" {
				continue
			}
			var vs []float64
			for a := range it.Seeds {
				if v := it.Answer(a)[k]; !math.IsNaN(v) {
					vs = append(vs, factor*v)
				}
			}
			if len(vs) < 2 {
				continue
			}
			r := by[name]
			if r == nil {
				r = &repeated{scale: scale}
				by[name] = r
				names = append(names, name)
			}
			r.values = append(r.values, vs)
			r.items = append(r.items, it)
		}
	}
	return by, names
}

// CompareSelf computes the judge's test-retest agreement from its
// repeated answers (items: ingest's JudgeRepeats, every judge's), and, on
// the runs given (with their judgments), the noise share of its
// disagreement with each other judge (runs may be nil: no noise shares).
// Intervals resample the items.
func CompareSelf(judge string, items []rows.RepeatItem, runs RunSet, opt BootstrapOptions) (*SelfAgreement, error) {
	if runs == nil {
		runs = RunSlice(nil)
	}
	by, names := collectRepeats(items, judge)
	if len(names) == 0 {
		var have []string
		for _, it := range items {
			if !slices.Contains(have, it.Judge) {
				have = append(have, it.Judge)
			}
		}
		if len(have) == 0 {
			return nil, NoDataf("--self %s: no judge was asked any item twice: judge with --repeats 2 or more first", judge)
		}
		return nil, NoDataf("--self %s: the judge was asked no item twice (judges asked again: %s): judge with --repeats 2 or more", judge, strings.Join(have, ", "))
	}
	out := &SelfAgreement{Judge: judge}
	for _, name := range names {
		out.Scores = append(out.Scores, selfScore(name, by[name], opt))
	}
	// The noise of the other judges, where they were asked again too.
	others := JudgesOf(runs)
	for _, b := range others {
		if b == judge {
			continue
		}
		byB, _ := collectRepeats(items, b)
		for _, name := range names {
			if ns, ok := noiseShare(name, by[name], byB[name], runs, b, opt); ok {
				out.Noise = append(out.Noise, ns)
			}
		}
	}
	return out, nil
}

func selfScore(name string, r *repeated, opt BootstrapOptions) SelfScore {
	nan := Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	s := SelfScore{Score: name, Scale: r.scale, Items: len(r.values), ICC: nan, FlipRate: nan}
	var answers, within float64
	var dfw float64
	for _, vs := range r.values {
		answers += float64(len(vs))
		m := mean(vs)
		for _, v := range vs {
			within += float64((v - m) * (v - m))
		}
		dfw += float64(len(vs) - 1)
	}
	s.Answers = answers / float64(len(r.values))
	s.SDWithin = math.Sqrt(within / dfw)
	level := map[string]string{ScaleBinary: Nominal, ScaleOrdinal: Ordinal, ScaleInterval: Interval}[r.scale]
	s.Alpha, _ = AlphaWithInterval(r.values, level, opt)
	if r.scale == ScaleBinary {
		flips := make([]float64, len(r.values))
		for i, vs := range r.values {
			if slices.Min(vs) != slices.Max(vs) {
				flips[i] = 1
			}
		}
		s.FlipRate = stat.ClusterBootstrap(len(flips), 1, func(w, out []float64) {
			var n, f float64
			for i, x := range flips {
				n, f = n+w[i], f+float64(w[i]*x)
			}
			out[0] = f / n
		}, opt)[0]
	} else {
		d := newICCGroups(r.values)
		s.ICC = stat.ClusterBootstrap(len(r.values), 1, func(w, out []float64) { out[0] = d.icc(w) }, opt)[0]
	}
	return s
}

// ICC1 is the one-way random-effects intraclass correlation of a single
// measurement, ICC(1,1), of groups (each item's answers), each weighted w
// (nil: 1; a bootstrap resample's multiplicities):
//
//	ICC = (MSB − MSW) / (MSB + (k₀ − 1) MSW),
//
// MSB and MSW the between- and within-group mean squares of the one-way
// ANOVA and k₀ = (N − Σ nᵢ²/N)/(g − 1) the effective group size (nᵢ for
// balanced groups; Shrout & Fleiss 1979, and the unbalanced form of
// Donner 1986). NaN with fewer than two groups or no within variance and
// no between variance.
func ICC1(groups [][]float64, w []float64) float64 {
	return newICCGroups(groups).icc(w)
}

// iccGroups are ICC1's groups laid out for weighting many times (a
// bootstrap's resamples): every value in one array, in the groups' order,
// and each group's mean computed once. icc does ICC1's arithmetic in
// ICC1's order, so that it gives the same bits; walking one array instead
// of a slice a group, and no mean a resample, made the bootstrap of
// 234,000 items' ICC (--scale 100) faster (docs/benchmarks.md).
type iccGroups struct {
	vals  []float64
	start []int // group i's values are vals[start[i]:start[i+1]]
	mean  []float64
}

func newICCGroups(groups [][]float64) *iccGroups {
	d := &iccGroups{start: make([]int, 0, len(groups)+1), mean: make([]float64, len(groups))}
	for i, vs := range groups {
		d.start = append(d.start, len(d.vals))
		d.vals = append(d.vals, vs...)
		d.mean[i] = mean(vs)
	}
	d.start = append(d.start, len(d.vals))
	return d
}

func (d *iccGroups) icc(w []float64) float64 {
	weight := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
	var g, N, sum, sumSq float64
	for i := range d.mean {
		wi := weight(i)
		if wi == 0 {
			continue
		}
		vs := d.vals[d.start[i]:d.start[i+1]]
		g += wi
		n := float64(len(vs))
		N += float64(wi * n)
		sumSq += float64(wi * n * n)
		for _, v := range vs {
			sum += float64(wi * v)
		}
	}
	if g < 2 || N <= g {
		return math.NaN()
	}
	grand := sum / N
	var ssb, ssw float64
	for i, m := range d.mean {
		wi := weight(i)
		if wi == 0 {
			continue
		}
		vs := d.vals[d.start[i]:d.start[i+1]]
		ssb += float64(wi * float64(len(vs)) * (m - grand) * (m - grand))
		for _, v := range vs {
			ssw += float64(wi * (v - m) * (v - m))
		}
	}
	msb, msw := ssb/(g-1), ssw/(N-g)
	k0 := (N - sumSq/N) / (g - 1)
	den := msb + float64((k0-1)*msw)
	if den == 0 {
		return math.NaN()
	}
	return (msb - msw) / den
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// varianceN1 is the variance of an item's answers with n − 1 in the
// denominator, unbiased for the answers' σ²; 0 for fewer than two.
func varianceN1(vs []float64) float64 {
	if len(vs) < 2 {
		return 0
	}
	return variance0(vs) * float64(len(vs)) / float64(len(vs)-1)
}

func variance0(vs []float64) float64 {
	if len(vs) < 2 {
		return 0
	}
	m := mean(vs)
	var s float64
	for _, v := range vs {
		s += float64((v - m) * (v - m))
	}
	return s / float64(len(vs))
}

// noiseShare is the noise share of one score between judge A's repeated
// answers and judge b's judgments (and b's repeats, where b was asked
// again), over the items both have.
func noiseShare(name string, a, bRep *repeated, runs RunSet, b string, opt BootstrapOptions) (NoiseShare, bool) {
	// The other judge's v and s² of the items it was asked again.
	bVar := map[[3]string][2]float64{}
	if bRep != nil {
		for i := range bRep.items {
			if len(bRep.values[i]) > 1 {
				bVar[bRep.key(i)] = [2]float64{variance0(bRep.values[i]), varianceN1(bRep.values[i])}
			}
		}
	}
	type key = [3]string
	byKey := map[key]int{}
	inRun := map[string]bool{} // the runs with an item of a
	for i, it := range a.items {
		byKey[a.key(i)] = i
		inRun[it.RunID] = true
	}
	var d2, noise, otherV0, otherS2 []float64
	otherNoise := true
	for i := range runs.Len() {
		if !inRun[RunIDOf(runs, i)] { // nothing to read in it
			continue
		}
		r := runs.Run(i)
		try := func(task string, bv float64, ok bool) {
			if !ok {
				return
			}
			for _, metric := range metricsOfScore(name) {
				j, has := byKey[key{r.RunID, task, metric}]
				if !has {
					continue
				}
				am := mean(a.values[j])
				vb, asked := bVar[key{r.RunID, task, metric}]
				otherNoise = otherNoise && asked
				// d2 carries both judges' v (the MSD's terms), noise the
				// judge's s²; the other's are added below if known.
				d2 = append(d2, float64((am-bv)*(am-bv))+variance0(a.values[j])+vb[0])
				noise = append(noise, varianceN1(a.values[j]))
				otherV0, otherS2 = append(otherV0, vb[0]), append(otherS2, vb[1])
			}
		}
		if strings.HasPrefix(name, "TA.") {
			bv, ok := RunLabel(r, name, b)
			try("", bv, ok)
			continue
		}
		if m, _ := customOf(name); m != nil && m.run {
			bv, ok := customScore(r.Custom, name, b)
			try("", bv, ok)
			continue
		}
		for k := range r.Tasks {
			bv, ok := TaskScore(&r.Tasks[k], name, b)
			try(r.Tasks[k].Task, bv, ok)
		}
	}
	if len(d2) == 0 {
		return NoiseShare{}, false
	}
	if otherNoise {
		for i := range noise {
			noise[i] += otherS2[i]
		}
	}
	msd, nz, _ := noiseParts(d2, noise, nil)
	est := stat.ClusterBootstrap(len(d2), 1, func(w, out []float64) { _, _, out[0] = noiseParts(d2, noise, w) }, opt)[0]
	return NoiseShare{Score: name, Other: b, Items: len(d2), MSD: msd, Noise: nz, Share: est, OtherNoise: otherNoise}, true
}

// noiseParts are the MSD, the mean noise and the share of items with
// terms of the MSD msd[i] ((ā − b̄)² + v_A + v_B) and noise s²_A (+ s²_B),
// each weighted w (nil: 1).
func noiseParts(terms, noise, w []float64) (msd, nz, share float64) {
	var n float64
	for i := range terms {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		msd, nz, n = msd+float64(wi*terms[i]), nz+float64(wi*noise[i]), n+wi
	}
	if msd == 0 {
		return 0, 0, math.NaN()
	}
	return msd / n, nz / n, nz / msd
}

// NoiseDecomposition is NoiseShare's arithmetic for two judges' answers
// to the same items (a[i], b[i]: every answer of each to item i): the
// mean squared difference of one answer of each, the mean noise, and the
// noise's share of it; b's noise counts when b has two answers or more to
// every item (otherNoise).
func NoiseDecomposition(a, b [][]float64) (msd, noise, share float64, otherNoise bool) {
	terms, nz := make([]float64, len(a)), make([]float64, len(a))
	otherNoise = true
	for i := range a {
		d := mean(a[i]) - mean(b[i])
		terms[i], nz[i] = float64(d*d)+variance0(a[i])+variance0(b[i]), varianceN1(a[i])
		otherNoise = otherNoise && len(b[i]) > 1
	}
	if otherNoise {
		for i := range b {
			nz[i] += varianceN1(b[i])
		}
	}
	msd, noise, share = noiseParts(terms, nz, nil)
	return msd, noise, share, otherNoise
}

// metricsOfScore is the judged metric a score comes from.
func metricsOfScore(name string) []string {
	switch {
	case strings.HasPrefix(name, "TC."):
		return []string{"tc"}
	case strings.HasPrefix(name, "TRJ."):
		return []string{"trj"}
	case strings.HasPrefix(name, "TA."):
		return []string{"ta"}
	}
	if m, _ := customOf(name); m != nil {
		return []string{m.name}
	}
	return nil
}

// SelfTable lays a self-agreement out: a row per score, then a row per
// score and other judge for the noise shares.
func SelfTable(s *SelfAgreement) ([]string, [][]any) {
	cols := []string{"judge", "score", "scale", "items", "answers_per_item", "alpha", "alpha_low", "alpha_high",
		"icc", "icc_low", "icc_high", "flip_rate", "flip_low", "flip_high", "sd_within"}
	var out [][]any
	num := nanNil
	for _, r := range s.Scores {
		out = append(out, []any{s.Judge, r.Score, r.Scale, r.Items, r.Answers, num(r.Alpha.Value), num(r.Alpha.Lo), num(r.Alpha.Hi),
			num(r.ICC.Value), num(r.ICC.Lo), num(r.ICC.Hi), num(r.FlipRate.Value), num(r.FlipRate.Lo), num(r.FlipRate.Hi), num(r.SDWithin)})
	}
	return cols, out
}

// NoiseTable lays the noise shares out, a row per score and other judge;
// other_noise says whether the other judge's noise is counted ("counted":
// it was asked again on every item) or not ("unknown": asked once).
func NoiseTable(s *SelfAgreement) ([]string, [][]any) {
	cols := []string{"judge", "other", "score", "items", "msd", "noise", "other_noise", "share", "share_low", "share_high"}
	var out [][]any
	for _, n := range s.Noise {
		other := "unknown"
		if n.OtherNoise {
			other = "counted"
		}
		out = append(out, []any{s.Judge, n.Other, n.Score, n.Items, n.MSD, n.Noise, other, nanNil(n.Share.Value), nanNil(n.Share.Lo), nanNil(n.Share.Hi)})
	}
	return cols, out
}

func nanNil(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}
