package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

// tieData is judge scores made as a judge's mean of four components (the
// TC diagnostics) in tenths, so that many items tie in exact arithmetic;
// each item's float score is summed in the order given by perm. exact
// holds the same scores from integers (the sum of the tenths × 2.5),
// whose ties are exact.
func tieData(n int, perm func(r *rand.Rand, q []int), seed uint64) (score, exact, human []float64, cluster []int) {
	r := rand.New(rand.NewPCG(seed, 7))
	pr := rand.New(rand.NewPCG(seed, 8)) // the orders, apart from the data
	for i := range n {
		q := []int{6 + r.IntN(5), 6 + r.IntN(5), 6 + r.IntN(5), 6 + r.IntN(5)}
		sum := q[0] + q[1] + q[2] + q[3]
		perm(pr, q)
		var f float64
		for _, v := range q {
			f += float64(v) / 10
		}
		score = append(score, 100*f/4)
		exact = append(exact, float64(sum*25)/10)
		human = append(human, float64(1+(sum-24+r.IntN(6))/4))
		_ = i
		cluster = append(cluster, i%10)
	}
	return
}

// Rank statistics, κ, α, Fleiss' κ and percent agreement do not depend on
// the order in which a score was summed: on the same data summed in
// other orders they give the same numbers, and the numbers of exact
// arithmetic (a fresh sample warehouse had τ-b .70830 where exact
// arithmetic gives .70783 before ties were snapped).
func TestTiesDoNotDependOnSummationOrder(t *testing.T) {
	keep := func(*rand.Rand, []int) {}
	shuffle := func(r *rand.Rand, q []int) { r.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] }) }
	reverse := func(_ *rand.Rand, q []int) { q[0], q[1], q[2], q[3] = q[3], q[2], q[1], q[0] }
	a, exact, human, cl := tieData(400, keep, 1)
	b, _, _, _ := tieData(400, shuffle, 1)
	c, _, _, _ := tieData(400, reverse, 1)
	differ := 0
	for i := range a {
		if a[i] != b[i] || a[i] != c[i] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the test data has no score whose float value depends on the order of its sum")
	}
	opt := BootstrapOptions{Resamples: 300, Seed: 3}
	type figures map[string]float64
	compute := func(x []float64) figures {
		f := figures{}
		p := Paired{Score: "TC", A: x, B: human, Cluster: cl, Clusters: 10}
		for _, s := range ContinuousAgreement(p, AgreementOptions{Kendall: true}, opt) {
			if s.Stat == StatSpearman || s.Stat == StatKendall {
				f[s.Stat], f[s.Stat+".lo"], f[s.Stat+".hi"] = s.Value, s.Lo, s.Hi
			}
		}
		f["spearman"] = stat.Spearman(x, human)
		f["kendall"] = stat.KendallTauB(x, human)
		k, _ := stat.CohenKappa(x[:len(x)-1], x[1:], Unweighted)
		f["cohen"] = k
		units := make([][]float64, len(x)/2)
		for i := range units {
			units[i] = []float64{x[2*i], x[2*i+1], x[(2*i+7)%len(x)]}
		}
		fd := stat.NewFleissData(units)
		f["fleiss"], f["agreement"] = fd.Kappa(nil), fd.Agreement(nil)
		for _, lv := range []string{Nominal, Ordinal} {
			al, _, err := stat.KrippendorffAlpha(units, lv)
			if err != nil {
				t.Fatal(err)
			}
			f["alpha."+lv] = al
		}
		ks, _ := KappaAgreement(Paired{Score: "TC", A: x, B: exact, Cluster: cl, Clusters: 10}, Quadratic, opt)
		f["kappa_agreement"], f["kappa_agreement.lo"], f["kappa_agreement.hi"] = ks.Value, ks.Lo, ks.Hi
		return f
	}
	want := compute(exact)
	for name, x := range map[string][]float64{"in order": a, "shuffled": b, "reversed": c} {
		got := compute(x)
		for k, v := range want {
			if got[k] != v && !(math.IsNaN(v) && math.IsNaN(got[k])) {
				t.Errorf("%s: %s = %.17g, exact arithmetic gives %.17g", name, k, got[k], v)
			}
		}
	}
}

// SnapTie makes equal what differs only by the order of a sum, and keeps
// apart what differs by more than TiePrecision.
func TestSnapTie(t *testing.T) {
	if stat.SnapTie(89.99999999999999) != 90 || stat.SnapTie(0.1+0.2) != 0.3 || stat.SnapTie(99.99999999999999) != 100 {
		t.Error("sums in different orders are not one value")
	}
	if stat.SnapTie(1+2e-9) == stat.SnapTie(1) || stat.SnapTie(-0.5) != -0.5 || !math.IsNaN(stat.SnapTie(math.NaN())) {
		t.Error("SnapTie merges values it should keep apart")
	}
}
