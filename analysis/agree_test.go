package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

type agreeRefs struct {
	K2011 struct {
		Data      [][]*float64       `json:"data"`
		Published map[string]float64 `json:"published"`
		Alpha     map[string]float64 `json:"alpha"`
	} `json:"krippendorff_2011"`
	Ordinal5   alphaRef `json:"alpha_ordinal5"`
	Continuous alphaRef `json:"alpha_continuous"`
	Cohen      struct {
		A, B                     []float64
		Kappa, Linear, Quadratic float64
	} `json:"cohen"`
	CohenBinary struct {
		A, B  []float64
		Kappa float64
	} `json:"cohen_binary"`
	Fleiss struct {
		Ratings [][]float64
		Kappa   float64
	} `json:"fleiss"`
	Kendall struct {
		X, Y     []float64
		TauB     float64 `json:"tau_b"`
		Spearman float64
	} `json:"kendall"`
	KendallNoTies struct {
		X, Y []float64
		TauB float64 `json:"tau_b"`
	} `json:"kendall_noties"`
}

type alphaRef struct {
	Data  [][]*float64       `json:"data"`
	Alpha map[string]float64 `json:"alpha"`
}

// units turns raters × units data with nulls into the values of each unit.
func units(data [][]*float64) [][]float64 {
	out := make([][]float64, len(data[0]))
	for _, row := range data {
		for u, v := range row {
			if v != nil {
				out[u] = append(out[u], *v)
			}
		}
	}
	return out
}

func closeTo(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g", what, got, want)
	}
}

func TestKrippendorffAlphaPublishedExample(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	u := units(r.K2011.Data)
	for _, lv := range Levels {
		got, reason, err := stat.KrippendorffAlpha(u, lv)
		if err != nil || reason != "" {
			t.Fatal(err, reason)
		}
		// Krippendorff (2011) prints three decimals.
		closeTo(t, lv+" vs the paper", got, r.K2011.Published[lv], 0.0005)
		closeTo(t, lv+" vs the reference implementation", got, r.K2011.Alpha[lv], 1e-12)
	}
}

func TestKrippendorffAlphaReferences(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	for name, ref := range map[string]alphaRef{"ordinal 1-5": r.Ordinal5, "continuous": r.Continuous} {
		u := units(ref.Data)
		for lv, want := range ref.Alpha {
			got, _, err := stat.KrippendorffAlpha(u, lv)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, name+" "+lv, got, want, 1e-10)
		}
	}
}

// Weights are multiplicities: α of the data with one unit counted twice
// is α of the data with that unit repeated.
func TestAlphaWeightsAreMultiplicities(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	u := units(r.Ordinal5.Data)
	var pairable [][]float64
	for _, x := range u {
		if len(x) >= 2 {
			pairable = append(pairable, x)
		}
	}
	for _, lv := range Levels {
		a, err := stat.NewAlphaData(pairable, lv)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(pairable))
		for i := range w {
			w[i] = float64(i % 3)
		}
		var rep [][]float64
		for i, x := range pairable {
			for k := 0; k < i%3; k++ {
				rep = append(rep, x)
			}
		}
		want, _, _ := stat.KrippendorffAlpha(rep, lv)
		closeTo(t, lv+" weighted", a.Alpha(w), want, 1e-10)
	}
}

func TestAlphaDegenerate(t *testing.T) {
	for _, c := range []struct {
		units [][]float64
		why   string
	}{
		{[][]float64{{1}, {2}, {3}}, "no unit was rated by two"},
		{[][]float64{{2, 2}, {2, 2, 2}}, "every value is the same"},
		{nil, "no unit"},
	} {
		a, reason, err := stat.KrippendorffAlpha(c.units, Interval)
		if err != nil || !math.IsNaN(a) || !strings.Contains(reason, c.why) {
			t.Errorf("%v: α %v, reason %q, err %v", c.units, a, reason, err)
		}
	}
	if _, _, err := stat.KrippendorffAlpha([][]float64{{1, -1}}, Ratio); err == nil {
		t.Error("negative values accepted at the ratio level")
	}
	if _, _, err := stat.KrippendorffAlpha([][]float64{{1, 2}}, "cardinal"); err == nil {
		t.Error("unknown level accepted")
	}
	// Perfect agreement with variation between units.
	if a, _, _ := stat.KrippendorffAlpha([][]float64{{1, 1}, {2, 2, 2}, {5, 5}}, Nominal); a != 1 {
		t.Errorf("perfect agreement: α = %v", a)
	}
}

func TestCohenKappaAgainstSklearn(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	c := r.Cohen
	k, _ := stat.CohenKappa(c.A, c.B, Unweighted)
	closeTo(t, "kappa", k, c.Kappa, 1e-12)
	// sklearn weighs category positions; with the full 1-5 scale given as
	// labels, positions and values are equally spaced.
	k, _ = stat.CohenKappa(c.A, c.B, Linear)
	closeTo(t, "linear kappa", k, c.Linear, 1e-12)
	k, _ = stat.CohenKappa(c.A, c.B, Quadratic)
	closeTo(t, "quadratic kappa", k, c.Quadratic, 1e-12)
	k, _ = stat.CohenKappa(r.CohenBinary.A, r.CohenBinary.B, Unweighted)
	closeTo(t, "binary kappa", k, r.CohenBinary.Kappa, 1e-12)
	if k, why := stat.CohenKappa([]float64{1, 1, 1}, []float64{1, 1, 1}, Unweighted); !math.IsNaN(k) || why == "" {
		t.Errorf("one category: %v %q", k, why)
	}
	if k, why := stat.CohenKappa(nil, nil, Unweighted); !math.IsNaN(k) || why == "" {
		t.Errorf("no items: %v %q", k, why)
	}
}

func TestFleissKappaAgainstStatsmodels(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	f := stat.NewFleissData(r.Fleiss.Ratings)
	closeTo(t, "Fleiss kappa", f.Kappa(nil), r.Fleiss.Kappa, 1e-12)
	// Two raters, no missing: the pairwise agreement is the share of
	// identical pairs.
	g := stat.NewFleissData([][]float64{{1, 1}, {1, 2}, {2, 2}, {3, 1}})
	closeTo(t, "agreement", g.Agreement(nil), 0.5, 0)
	if k := stat.NewFleissData([][]float64{{1, 1}, {1, 1}}).Kappa(nil); !math.IsNaN(k) {
		t.Errorf("one category: %v", k)
	}
}

func TestKendallTauBAgainstScipy(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	closeTo(t, "tau-b with ties", stat.KendallTauB(r.Kendall.X, r.Kendall.Y), r.Kendall.TauB, 1e-12)
	closeTo(t, "Spearman with ties", stat.Spearman(r.Kendall.X, r.Kendall.Y), r.Kendall.Spearman, 1e-12)
	closeTo(t, "tau-b without ties", stat.KendallTauB(r.KendallNoTies.X, r.KendallNoTies.Y), r.KendallNoTies.TauB, 1e-12)
	// The O(n²) definition, on the data with ties.
	x, y := r.Kendall.X, r.Kendall.Y
	var con, dis, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			s := (x[i] - x[j]) * (y[i] - y[j])
			switch {
			case s > 0:
				con++
			case s < 0:
				dis++
			}
			if x[i] != x[j] && y[i] == y[j] {
				ty++
			}
			if x[i] == x[j] && y[i] != y[j] {
				tx++
			}
		}
	}
	closeTo(t, "tau-b vs the definition", stat.KendallTauB(x, y), (con-dis)/math.Sqrt((con+dis+tx)*(con+dis+ty)), 1e-12)
	if v := stat.KendallTauB([]float64{1, 1, 1}, []float64{1, 2, 3}); !math.IsNaN(v) {
		t.Errorf("constant x: %v", v)
	}
}

// The polynomial Spearman of few clusters equals ranking the reweighted
// sample, with ties, for any weights.
func TestSpearmanByClusterPolynomials(t *testing.T) {
	rng, x, y, cl, C := tiedClusters(3, 500, 7, 9, 5)
	fast := newSpearman(x, y, cl, C)
	slow := &spearman{x: x, y: y, cluster: cl, C: C, ox: sortedOrder(x), oy: sortedOrder(y)}
	for k := 0; k < 20; k++ {
		w := clusterWeights(rng, C)
		closeTo(t, "rho", fast.rho(w), slow.rho(w), 1e-10)
	}
}

// tiedClusters is n pairs with many ties (x in 0..kx−1, y = x + 0..ky−1) in
// C clusters, from a seeded generator, which it returns too.
func tiedClusters(seed uint64, n, C, kx, ky int) (*rand.Rand, []float64, []float64, []int, int) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	x, y := make([]float64, n), make([]float64, n)
	cl := make([]int, n)
	for i := range x {
		x[i] = float64(rng.IntN(kx))
		y[i] = x[i] + float64(rng.IntN(ky))
		cl[i] = rng.IntN(C)
	}
	return rng, x, y, cl, C
}

// clusterWeights is a resample's cluster weights: 0, 1 or 2 each.
func clusterWeights(rng *rand.Rand, C int) []float64 {
	w := make([]float64, C)
	for c := range w {
		w[c] = float64(rng.IntN(3))
	}
	return w
}

// With every cluster drawn once, the statistics are the plain ones.
func TestContinuousAgreementPointValues(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	a, b := r.Kendall.X, r.Kendall.Y
	cl := make([]int, len(a))
	for i := range cl {
		cl[i] = i % 5
	}
	p := Paired{Score: "s", A: a, B: b, Cluster: cl, Clusters: 5}
	res := ContinuousAgreement(p, AgreementOptions{Kendall: true}, BootstrapOptions{Resamples: 200, Seed: 1})
	got := map[string]float64{}
	for _, s := range res {
		got[s.Stat] = s.Value
		if math.IsNaN(s.Lo) || s.Lo > s.Value || s.Hi < s.Value {
			t.Errorf("%s: %v outside [%v, %v]", s.Stat, s.Value, s.Lo, s.Hi)
		}
	}
	var mae float64
	for i := range a {
		mae += math.Abs(b[i] - a[i])
	}
	closeTo(t, "mean a", got[StatMeanA], stat.Mean(a), 1e-12)
	closeTo(t, "delta", got[StatDelta], stat.Mean(b)-stat.Mean(a), 1e-12)
	closeTo(t, "mae", got[StatMAE], mae/float64(len(a)), 1e-12)
	closeTo(t, "pearson", got[StatPearson], stat.Pearson(a, b), 1e-12)
	closeTo(t, "spearman", got[StatSpearman], r.Kendall.Spearman, 1e-12)
	closeTo(t, "kendall", got[StatKendall], r.Kendall.TauB, 1e-12)
	bin := BinaryAgreement(Paired{Score: "b", A: r.CohenBinary.A, B: r.CohenBinary.B, Cluster: make([]int, len(r.CohenBinary.A)), Clusters: 1},
		BootstrapOptions{Resamples: 10})
	closeTo(t, "binary kappa", bin[4].Value, r.CohenBinary.Kappa, 1e-12)
	if !math.IsNaN(bin[4].Lo) || len(bin[4].Warnings) == 0 {
		t.Errorf("one cluster: want no interval and a warning, got %+v", bin[4].Estimate)
	}
}

func TestPPIMean(t *testing.T) {
	var r struct {
		PPI struct {
			Unlabelled, Y, FL                 []float64
			Corrected, Lo, Hi, Judge, Rectify float64
		} `json:"ppi"`
	}
	load(t, "testdata/agree_refs.json", &r)
	p := r.PPI
	got := PPIMean(p.Unlabelled, p.Y, p.FL, 0.95)
	closeTo(t, "judge mean", got.JudgeMean, p.Judge, 1e-12)
	closeTo(t, "rectifier", got.Rectifier, p.Rectify, 1e-12)
	closeTo(t, "corrected", got.Corrected, p.Corrected, 1e-12)
	closeTo(t, "lower", got.CorrectedLo, p.Lo, 1e-12)
	closeTo(t, "upper", got.CorrectedHi, p.Hi, 1e-12)
	if got.N != len(p.Unlabelled)+len(p.Y) || got.Labelled != len(p.Y) {
		t.Errorf("N %d, labelled %d", got.N, got.Labelled)
	}
	// Without unlabelled items there is nothing to correct.
	if e := PPIMean(nil, p.Y, p.FL, 0.95); !math.IsNaN(e.Corrected) || e.Warning == "" {
		t.Errorf("every item labelled: %+v", e)
	}
}

// Constant scores give NaN with the reason, never a panic.
func TestAgreementDegenerate(t *testing.T) {
	p := Paired{Score: "s", A: []float64{3, 3, 3, 3}, B: []float64{1, 2, 3, 4}, Cluster: []int{0, 1, 0, 1}, Clusters: 2}
	for _, s := range ContinuousAgreement(p, AgreementOptions{Kendall: true}, BootstrapOptions{Resamples: 100}) {
		if s.Stat == StatPearson || s.Stat == StatSpearman || s.Stat == StatKendall {
			if !math.IsNaN(s.Value) || !strings.Contains(strings.Join(s.Warnings, ";"), "constant") {
				t.Errorf("%s: %v %v", s.Stat, s.Value, s.Warnings)
			}
		}
	}
	p.B = []float64{1, 1, 1, 1}
	p.A = []float64{1, 1, 1, 1}
	for _, s := range BinaryAgreement(p, BootstrapOptions{Resamples: 100}) {
		if s.Stat == StatKappa && (!math.IsNaN(s.Value) || !strings.Contains(strings.Join(s.Warnings, ";"), "one category")) {
			t.Errorf("κ: %v %v", s.Value, s.Warnings)
		}
	}
	s, _ := KappaAgreement(p, Quadratic, BootstrapOptions{Resamples: 100})
	if !math.IsNaN(s.Value) || len(s.Warnings) == 0 {
		t.Errorf("weighted κ: %v %v", s.Value, s.Warnings)
	}
	if s := ContinuousAgreement(Paired{Score: "e", Clusters: 0}, AgreementOptions{}, BootstrapOptions{Resamples: 100}); len(s) == 0 || !math.IsNaN(s[0].Value) {
		t.Errorf("no items: %+v", s)
	}
}

// Kendall's τ-b from the per-cluster-pair counts equals τ-b of the
// reweighted sample built item by item, ties included.
func TestKendallByClusterWeights(t *testing.T) {
	rng, x, y, cl, C := tiedClusters(5, 300, 6, 5, 4)
	fast := newKendall(x, y, cl, C)
	slow := *fast
	slow.fast = false
	for k := 0; k < 20; k++ {
		w := clusterWeights(rng, C)
		closeTo(t, "tau", fast.tau(w), slow.tau(w), 1e-12)
	}
}

// A large sample's pair tables, counted cluster by cluster in O(C·n log n),
// hold the same whole numbers as the pair-by-pair count (a pair between
// two clusters under (c, d), c < d), and τ-b from them equals τ-b of the
// reweighted sample built item by item, to the bit.
func TestKendallCountedByCluster(t *testing.T) {
	rng, x, y, cl, C := tiedClusters(9, 2500, 7, 6, 5)
	tables := func() *kendall {
		k := newKendall(x, y, cl, C)
		k.s, k.tx, k.ty, k.txy = make([]float64, C*C), make([]float64, C*C), make([]float64, C*C), make([]float64, C*C)
		return k
	}
	quad, byCl := tables(), tables()
	quad.countPairs()
	byCl.countByCluster()
	for name, tabs := range map[string][2][]float64{"s": {quad.s, byCl.s}, "tx": {quad.tx, byCl.tx}, "ty": {quad.ty, byCl.ty}, "txy": {quad.txy, byCl.txy}} {
		q, b := tabs[0], tabs[1]
		for c := range C {
			for d := c; d < C; d++ {
				want := q[c*C+d]
				if d != c {
					want += q[d*C+c]
				}
				if b[c*C+d] != want || (d != c && b[d*C+c] != 0) {
					t.Fatalf("%s[%d,%d]: %v, want %v", name, c, d, b[c*C+d], want)
				}
			}
		}
	}
	if byCl.s[0] == 0 || byCl.tx[1] == 0 || byCl.txy[2] == 0 {
		t.Fatal("the sample has no ties or no order: no test")
	}
	slow := *byCl
	slow.fast = false
	for k := 0; k < 20; k++ {
		w := clusterWeights(rng, C)
		if f, s := byCl.tau(w), slow.tau(w); f != s {
			t.Fatalf("weights %v: τ-b %v from the tables, %v from the sample", w, f, s)
		}
	}
	// Past kendallFastItems newKendall counts by cluster, and past
	// kendallPairItems with few clusters: its tables are byCl's.
	if k := newKendall(x, y, cl, C); !k.fast || !slices.Equal(k.s, byCl.s) || !slices.Equal(k.tx, byCl.tx) || !slices.Equal(k.txy, byCl.txy) {
		t.Error("2,500 items in 7 clusters are not counted by cluster")
	}
	_, x, y, cl, C = tiedClusters(11, kendallFastItems+10, 9, 6, 5)
	if k := newKendall(x, y, cl, C); !k.fast {
		t.Error("a large sample is not counted by cluster")
	}
}

// KappaAgreement's estimate is Cohen's κ of the pairs (sklearn's value).
func TestKappaAgreementPoint(t *testing.T) {
	var r agreeRefs
	load(t, "testdata/agree_refs.json", &r)
	cl := make([]int, len(r.Cohen.A))
	for i := range cl {
		cl[i] = i % 4
	}
	p := Paired{A: r.Cohen.A, B: r.Cohen.B, Cluster: cl, Clusters: 4}
	s, c := KappaAgreement(p, Quadratic, BootstrapOptions{Resamples: 200})
	closeTo(t, "quadratic κ", s.Value, r.Cohen.Quadratic, 1e-12)
	if c.N != float64(len(r.Cohen.A)) || math.IsNaN(s.Lo) {
		t.Errorf("confusion n %v, interval [%v, %v]", c.N, s.Lo, s.Hi)
	}
	u, _ := KappaAgreement(p, Unweighted, BootstrapOptions{Resamples: 200})
	closeTo(t, "κ", u.Value, r.Cohen.Kappa, 1e-12)
}

// A judge average half-way between two points of a 1–5 scale counts half
// on each before κ against humans, as scikit-learn's weighted κ with
// sample weights (analysis/testdata/make_audit_refs.py); rounding every
// half up, the old rule, gives another κ.
func TestKappaOfJudgeHalves(t *testing.T) {
	var r struct {
		H struct {
			Human          []float64
			Judge          []float64
			Halves         int
			QuadraticKappa float64 `json:"quadratic_kappa"`
			RoundedUp      float64 `json:"rounded_up_kappa"`
		} `json:"judge_halves"`
	}
	load(t, "testdata/audit_refs.json", &r)
	if r.H.Halves < 10 {
		t.Fatalf("%d halves: the case does not test them", r.H.Halves)
	}
	var p Paired
	for i, j := range r.H.Judge {
		cats, ws := SplitToScale(j, 5)
		for c := range cats {
			p.A, p.B, p.Weight = append(p.A, r.H.Human[i]), append(p.B, cats[c]), append(p.Weight, ws[c])
			p.Cluster = append(p.Cluster, i%8)
		}
	}
	p.Clusters = 8
	s, conf := KappaAgreement(p, Quadratic, BootstrapOptions{Resamples: 100, Seed: 1})
	closeTo(t, "quadratic κ with halves split", s.Value, r.H.QuadraticKappa, 1e-12)
	if s.N != len(r.H.Judge) || conf.N != float64(len(r.H.Judge)) {
		t.Errorf("n = %d, confusion total %v, want %d items", s.N, conf.N, len(r.H.Judge))
	}
	if math.Abs(s.Value-r.H.RoundedUp) < 1e-3 {
		t.Errorf("splitting halves should differ from rounding them up (%v vs %v)", s.Value, r.H.RoundedUp)
	}
	for v, want := range map[float64][]float64{3.5: {3, 4}, 3.4999999999999996: {3, 4}, 3.4: {3}, 0.2: {1}, 5.5: {5}, 4.75: {5}} {
		cats, _ := SplitToScale(v, 5)
		if fmt.Sprint(cats) != fmt.Sprint(want) {
			t.Errorf("SplitToScale(%v) = %v, want %v", v, cats, want)
		}
	}
}

// α on continuous ratings, nearly every value distinct, at every level:
// the closed forms (and, for ratio, the quadrature) against the
// coincidence-matrix definition computed outside Go; weighted units as
// repeated units, as the bootstrap uses them.
func TestAlphaManyDistinctValues(t *testing.T) {
	var r struct {
		M struct {
			Units [][]float64
			Alpha map[string]float64
		} `json:"alpha_many_values"`
	}
	load(t, "testdata/audit_refs.json", &r)
	for _, lv := range Levels {
		got, why, err := stat.KrippendorffAlpha(r.M.Units, lv)
		if err != nil || why != "" {
			t.Fatal(err, why)
		}
		closeTo(t, lv, got, r.M.Alpha[lv], 1e-12)
		a, _ := stat.NewAlphaData(r.M.Units, lv)
		w := make([]float64, a.Pairable)
		var rep [][]float64
		i := 0
		for _, u := range r.M.Units {
			if len(u) < 2 {
				continue
			}
			w[i] = float64((i * 7) % 4)
			for k := 0; k < int(w[i]); k++ {
				rep = append(rep, u)
			}
			i++
		}
		want, _, _ := stat.KrippendorffAlpha(rep, lv)
		closeTo(t, lv+" weighted", a.Alpha(w), want, 1e-12)
	}
}

// Cohen's κ from the pairs and marginals equals κ from the full confusion
// table, for values with as many categories as values.
func TestCohenKappaWithoutTheTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, 300), make([]float64, 300)
	for i := range a {
		a[i] = math.Round(rng.NormFloat64()*1000) / 100
		b[i] = a[i] + math.Round(rng.NormFloat64()*50)/100
		if i%5 == 0 {
			b[i] = a[i]
		}
	}
	for _, wt := range []string{Unweighted, Linear, Quadratic} {
		got, _ := stat.CohenKappa(a, b, wt)
		closeTo(t, "κ "+wt, got, stat.ConfusionMatrix(a, b, nil).Kappa(wt), 1e-12)
	}
}

// BinaryAgreement's per-cluster sums give what the item-by-item loop
// gives, to the bit: 0/1 labels of 3,000 items in 12 clusters of unequal
// sizes, some clusters all agreeing, with the percentile and BCa
// intervals.
func TestBinaryAgreementByClusterIsByItem(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	var p Paired
	p.Score, p.Clusters = "ta", 12
	for i := 0; i < 3000; i++ {
		c := min(r.IntN(15), 11)
		a := float64(r.IntN(2))
		b := a
		if c%4 != 0 && r.IntN(5) == 0 {
			b = 1 - a
		}
		p.A, p.B, p.Cluster = append(p.A, a), append(p.B, b), append(p.Cluster, c)
	}
	for _, m := range []string{stat.Percentile, stat.BCa} {
		opt := BootstrapOptions{Resamples: 2000, Seed: 3, Method: m}
		fast := BinaryAgreement(p, opt)
		binaryByCluster = false
		slow := BinaryAgreement(p, opt)
		binaryByCluster = true
		if fmt.Sprintf("%#v", fast) != fmt.Sprintf("%#v", slow) {
			t.Errorf("%s: by cluster %+v\nby item %+v", m, fast, slow)
		}
	}
}
