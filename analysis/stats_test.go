package analysis

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

type scipyRefs struct {
	Quantile7 struct {
		X, P, Q []float64
	} `json:"quantile7"`
	Correlation struct {
		X, Y        []float64
		PearsonR    float64   `json:"pearson_r"`
		PearsonP    float64   `json:"pearson_p"`
		PearsonCI95 []float64 `json:"pearson_ci95"`
		SpearmanR   float64   `json:"spearman_r"`
		SpearmanP   float64   `json:"spearman_p"`
	} `json:"correlation"`
	BootstrapMean struct {
		Data       []float64 `json:"data"`
		Percentile struct {
			CI         []float64 `json:"ci"`
			Replicates []float64 `json:"replicates"`
		} `json:"percentile"`
		BCa struct {
			CI         []float64 `json:"ci"`
			Replicates []float64 `json:"replicates"`
		} `json:"BCa"`
	} `json:"bootstrap_mean"`
	ClusterBootstrap struct {
		Clusters      [][]float64 `json:"clusters"`
		Resamples     int         `json:"resamples"`
		ReplicateMean float64     `json:"replicate_mean"`
		ReplicateSD   float64     `json:"replicate_sd"`
	} `json:"cluster_bootstrap"`
}

type rRefs struct {
	P             []float64 `json:"p"`
	Holm          []float64 `json:"holm"`
	BH            []float64 `json:"bh"`
	QuantileX     []float64 `json:"quantile_x"`
	QuantileP     []float64 `json:"quantile_p"`
	QuantileType7 []float64 `json:"quantile_type7"`
	ExpandedN     []float64 `json:"expanded_n"`
	ExpandedAlpha []float64 `json:"expanded_alpha"`
}

func load(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) != math.IsNaN(want) {
		t.Errorf("%s = %.15g, want %.15g (±%g)", what, got, want, tol)
	}
}

func sorted(x []float64) []float64 {
	s := append([]float64(nil), x...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestQuantile7AgainstNumpyAndR(t *testing.T) {
	var s scipyRefs
	var r rRefs
	load(t, "testdata/scipy_refs.json", &s)
	load(t, "testdata/r_refs.json", &r)
	x := sorted(s.Quantile7.X)
	for i, p := range s.Quantile7.P {
		near(t, "numpy quantile", stat.Quantile7(p, x), s.Quantile7.Q[i], 1e-12)
	}
	x = sorted(r.QuantileX)
	for i, p := range r.QuantileP {
		near(t, "R quantile type 7", stat.Quantile7(p, x), r.QuantileType7[i], 1e-12)
	}
	if !math.IsNaN(stat.Quantile7(0.5, nil)) {
		t.Error("quantile of nothing is not NaN")
	}
}

func TestCorrelationsAgainstScipy(t *testing.T) {
	var s scipyRefs
	load(t, "testdata/scipy_refs.json", &s)
	c := s.Correlation
	n := len(c.X)
	r := stat.Pearson(c.X, c.Y)
	near(t, "pearson r", r, c.PearsonR, 1e-12)
	near(t, "pearson p", stat.CorrelationPValue(r, n), c.PearsonP, 1e-12)
	lo, hi := stat.FisherZInterval(r, n, 0.95)
	near(t, "fisher lo", lo, c.PearsonCI95[0], 1e-12)
	near(t, "fisher hi", hi, c.PearsonCI95[1], 1e-12)
	rs := stat.Spearman(c.X, c.Y)
	near(t, "spearman r (ties)", rs, c.SpearmanR, 1e-12)
	near(t, "spearman p", stat.CorrelationPValue(rs, n), c.SpearmanP, 1e-12)
	if !math.IsNaN(stat.Pearson([]float64{1, 1, 1}, []float64{1, 2, 3})) {
		t.Error("the correlation with a constant is not NaN")
	}
}

func TestExpandedPercentileAgainstR(t *testing.T) {
	var r rRefs
	load(t, "testdata/r_refs.json", &r)
	for i, n := range r.ExpandedN {
		near(t, "expanded α", stat.ExpandedAlpha(0.95, int(n)), r.ExpandedAlpha[i], 1e-12)
	}
	reps := make([]float64, 1001)
	for i := range reps {
		reps[i] = float64(i)
	}
	lo, hi := stat.ExpandedPercentileInterval(reps, 0.95, 10)
	a := stat.ExpandedAlpha(0.95, 10)
	near(t, "expanded lo", lo, 1000*a, 1e-9)
	near(t, "expanded hi", hi, 1000*(1-a), 1e-9)
	if plo, phi := stat.PercentileInterval(reps, 0.95); !(lo < plo && phi < hi) {
		t.Errorf("expanded [%v, %v] is not wider than percentile [%v, %v]", lo, hi, plo, phi)
	}
}

func TestMultipleComparisonsAgainstR(t *testing.T) {
	var r rRefs
	load(t, "testdata/r_refs.json", &r)
	holm, bh := stat.Holm(r.P), stat.BenjaminiHochberg(r.P)
	for i := range r.P {
		near(t, "holm", holm[i], r.Holm[i], 1e-15)
		near(t, "BH", bh[i], r.BH[i], 1e-15)
	}
}

// meanJackknife is the jackknife of the mean of data, each value its own
// cluster: what scipy's BCa uses.
func meanJackknife(data []float64) []float64 {
	mean := func(w, out []float64) {
		var s, sw float64
		for i, v := range data {
			s += w[i] * v
			sw += w[i]
		}
		out[0] = s / sw
	}
	jack := stat.Jackknife(len(data), 1, mean)
	jk := make([]float64, len(data))
	for i := range jk {
		jk[i] = jack[i][0]
	}
	return jk
}

// Given scipy's own replicates, the intervals are scipy's to the last
// digit: percentile and BCa (jackknife over observations, which are
// clusters of one).
func TestIntervalsAgainstScipyBootstrap(t *testing.T) {
	var s scipyRefs
	load(t, "testdata/scipy_refs.json", &s)
	b := s.BootstrapMean
	lo, hi := stat.PercentileInterval(sorted(b.Percentile.Replicates), 0.95)
	near(t, "percentile lo", lo, b.Percentile.CI[0], 1e-12)
	near(t, "percentile hi", hi, b.Percentile.CI[1], 1e-12)
	jk := meanJackknife(b.Data)
	theta := stat.Mean(b.Data)
	lo, hi, warn := stat.BCaInterval(theta, sorted(b.BCa.Replicates), jk, 0.95)
	if warn != "" {
		t.Fatal(warn)
	}
	near(t, "BCa lo", lo, b.BCa.CI[0], 1e-12)
	near(t, "BCa hi", hi, b.BCa.CI[1], 1e-12)
}

// The cluster bootstrap draws as a plain implementation does: the mean and
// standard deviation of its replicates match a straightforward Python
// cluster bootstrap within Monte-Carlo error.
func TestClusterBootstrapMatchesPlainImplementation(t *testing.T) {
	var s scipyRefs
	load(t, "testdata/scipy_refs.json", &s)
	cb := s.ClusterBootstrap
	sum := make([]float64, len(cb.Clusters))
	cnt := make([]float64, len(cb.Clusters))
	for i, c := range cb.Clusters {
		for _, v := range c {
			sum[i] += v
		}
		cnt[i] = float64(len(c))
	}
	statFn := func(w, out []float64) {
		var s, n float64
		for i := range w {
			s += w[i] * sum[i]
			n += w[i] * cnt[i]
		}
		out[0] = s / n
	}
	reps := stat.Replicates(len(sum), 1, statFn, BootstrapOptions{Resamples: cb.Resamples, Seed: 99})
	m, sd := stat.Mean(reps), stat.SD(reps)
	// The difference of two independent means of B replicates has sd
	// σ·√(2/B); the sample sd's relative error is about 1/√(2B) each.
	B := float64(cb.Resamples)
	near(t, "replicate mean", m, cb.ReplicateMean, 4*cb.ReplicateSD*math.Sqrt(2/B))
	near(t, "replicate sd", sd, cb.ReplicateSD, 4*cb.ReplicateSD*math.Sqrt(2/(2*B)))
}

func TestBootstrapDoesNotDependOnWorkers(t *testing.T) {
	x := []float64{3, 5, 1, 8, 13, 2, 7, 4, 9, 6, 11, 10}
	statFn := func(w, out []float64) {
		out[0] = stat.WeightedMean(x, w)
		out[1] = stat.WeightedMean(x, w) - x[0]*w[0]/12
	}
	var first []Estimate
	for _, workers := range []int{1, 2, 3, 8} {
		est := stat.ClusterBootstrap(len(x), 2, statFn, BootstrapOptions{Resamples: 2000, Seed: 5, Method: BCa, Workers: workers})
		if first == nil {
			first = est
			continue
		}
		for j := range est {
			if est[j].Lo != first[j].Lo || est[j].Hi != first[j].Hi {
				t.Fatalf("workers %d: [%v, %v], first [%v, %v]", workers, est[j].Lo, est[j].Hi, first[j].Lo, first[j].Hi)
			}
		}
	}
	other := stat.ClusterBootstrap(len(x), 2, statFn, BootstrapOptions{Resamples: 2000, Seed: 6})
	if other[0].Lo == first[0].Lo && other[0].Hi == first[0].Hi {
		t.Error("another seed gave the same interval")
	}
	if first[0].Value != stat.Mean(x) || !(first[0].Lo < first[0].Value && first[0].Value < first[0].Hi) {
		t.Errorf("estimate %+v", first[0])
	}
}

func TestFewClustersWarn(t *testing.T) {
	est := stat.ClusterBootstrap(3, 1, func(w, out []float64) { out[0] = w[0] + w[1] + w[2] }, BootstrapOptions{Resamples: 100})
	if len(est[0].Warnings) == 0 {
		t.Error("no warning with 3 clusters")
	}
	est = stat.ClusterBootstrap(1, 1, func(w, out []float64) { out[0] = 1 }, BootstrapOptions{Resamples: 100})
	if !math.IsNaN(est[0].Lo) || len(est[0].Warnings) < 2 {
		t.Errorf("one cluster: %+v", est[0])
	}
}

// BCa where many replicates equal the estimate: z₀ counts them as half
// below, as scipy.stats.bootstrap does (analysis/testdata/make_audit_refs.py).
func TestBCaTiesAgainstScipy(t *testing.T) {
	var refs struct {
		BCa map[string]struct {
			Data, Replicates []float64
			CI               [2]float64
			Tied             int
		} `json:"bca_ties"`
	}
	load(t, "testdata/audit_refs.json", &refs)
	if len(refs.BCa) != 2 {
		t.Fatalf("%d cases", len(refs.BCa))
	}
	for name, c := range refs.BCa {
		if c.Tied < len(c.Replicates)/20 {
			t.Fatalf("%s: only %d replicates tie with the estimate: the case does not test ties", name, c.Tied)
		}
		jk := meanJackknife(c.Data)
		lo, hi, warn := stat.BCaInterval(stat.Mean(c.Data), sorted(c.Replicates), jk, 0.95)
		if warn != "" {
			t.Fatal(warn)
		}
		near(t, name+" BCa lo", lo, c.CI[0], 1e-12)
		near(t, name+" BCa hi", hi, c.CI[1], 1e-12)
	}
}

// An interval that cannot be had, or that has no width, says why: every
// method, on one cluster, on identical replicates, on an undefined
// statistic.
func TestNullIntervalsCarryTheirReason(t *testing.T) {
	constant := func(w, out []float64) { out[0] = 5 }
	undefined := func(w, out []float64) { out[0] = math.NaN() }
	for _, method := range []string{Percentile, Expanded, BCa} {
		opt := BootstrapOptions{Resamples: 200, Seed: 1, Method: method}
		for name, c := range map[string]struct {
			clusters int
			stat     Statistics
			want     string
		}{
			"one cluster": {1, constant, "no interval"},
			"identical":   {10, constant, "zero width"},
			"undefined":   {10, undefined, "no interval"},
		} {
			e := stat.ClusterBootstrap(c.clusters, 1, c.stat, opt)[0]
			if !strings.Contains(strings.Join(e.Warnings, "; "), c.want) {
				t.Errorf("%s, %s: [%v, %v] with warnings %q, want %q", method, name, e.Lo, e.Hi, e.Warnings, c.want)
			}
			if name == "identical" && (e.Lo != 5 || e.Hi != 5) {
				t.Errorf("%s: identical replicates give [%v, %v], want [5, 5]", method, e.Lo, e.Hi)
			}
		}
	}
}
