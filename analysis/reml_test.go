package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// On a balanced design with positive components REML equals the ANOVA
// estimates (a property of the balanced case, not an approximation).
func TestREMLEqualsANOVAWhenBalanced(t *testing.T) {
	runs, values, _ := varianceCase(t)
	d, _, err := balancedDesign(runs, values, 0)
	if err != nil {
		t.Fatal(err)
	}
	anova := d.anova(nil)
	rd, err := remlDesign(runs, values, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := rd.fit(remlStart(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, term := range VarianceTerms {
		if math.Abs(got[k]-anova[k]) > 1e-6*math.Abs(anova[k]) {
			t.Errorf("%s: REML %v, ANOVA %v", term, got[k], anova[k])
		}
	}
}

// An unbalanced design (a fifth of the runs missing, one scenario with a
// fourth persona) against statsmodels' MixedLM (testdata/make_reml_refs.py):
// the restricted log-likelihood at statsmodels' estimates to 1e-9 (the
// formula, independent of either optimiser), and the estimates to the
// optimisers' tolerance.
func TestREMLAgainstStatsmodels(t *testing.T) {
	b, err := os.ReadFile("testdata/reml_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Rows []struct {
			C, S, P, R int
			Y          float64
		}
		REML map[string]float64
		LLF  float64 `json:"reml_llf"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var runs []rows.RunRow
	var values [][]float64
	for _, r := range ref.Rows {
		runs = append(runs, rows.RunRow{ConfigID: fmt.Sprintf("c%d", r.C), Scenario: fmt.Sprintf("s%d", r.S), Persona: fmt.Sprintf("p%d", r.P), Rep: r.R})
		values = append(values, []float64{r.Y})
	}
	if _, _, err := balancedDesign(runs, values, 0); err == nil {
		t.Fatal("the reference design is balanced")
	}
	d, err := remlDesign(runs, values, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"scenario", "persona", "config_scenario", "config_persona", "residual"}
	s2 := ref.REML["residual"]
	theta := make([]float64, 4)
	for k := range theta {
		theta[k] = math.Sqrt(ref.REML[names[k]] / s2)
	}
	f, _ := d.objective(theta, nil)
	n, p := float64(len(ref.Rows)), 4.0
	llf := -0.5 * (f + (n-p)*(1+math.Log(2*math.Pi)))
	if math.Abs(llf-ref.LLF) > 1e-9*math.Abs(ref.LLF) {
		t.Errorf("restricted log-likelihood at statsmodels' estimates: %.12g, statsmodels %.12g", llf, ref.LLF)
	}
	got, th, err := d.fit(remlStart(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The likelihood is flat near its top: statsmodels' L-BFGS stops a
	// little short of it (−2ℓ_R 1e-7 higher than here); the estimates agree
	// to 3e-4.
	if fm, _ := d.objective(th, nil); fm > f+1e-9 {
		t.Errorf("−2ℓ_R at the fit %.12g, at statsmodels' estimates %.12g: the fit is not the maximum", fm, f)
	}
	for k, nm := range names {
		if w := ref.REML[nm]; math.Abs(got[k]-w) > 3e-4*w {
			t.Errorf("%s: %v, statsmodels %v", nm, got[k], w)
		}
	}
}

// One persona per scenario (PARE's design: configurations × scenarios ×
// repetitions): the persona terms are 0, and REML still equals the ANOVA
// on the balanced design; dropping a run switches to REML, close to it.
func TestVarianceWithOnePersona(t *testing.T) {
	runs, values, _ := varianceCase(t)
	var r1 []rows.RunRow
	var v1 [][]float64
	for i, r := range runs {
		if r.Persona == "p0" {
			r1, v1 = append(r1, r), append(v1, values[i])
		}
	}
	an, err := VarianceOf(r1, v1, 0, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := remlDesign(r1, v1, 0)
	reml, _, err := d.fit(remlStart(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(an.Method, "ANOVA") || !strings.Contains(strings.Join(an.Notes, " "), "one persona per scenario") {
		t.Errorf("%s %v", an.Method, an.Notes)
	}
	for k, term := range an.Terms {
		if (k == 1 || k == 3) && (term.Variance.Value != 0 || reml[k] != 0) {
			t.Errorf("%s: %v (REML %v), want 0", term.Term, term.Variance.Value, reml[k])
		}
		if v := term.Variance.Value; math.Abs(v-reml[k]) > 1e-6*math.Max(v, 1e-9) {
			t.Errorf("%s: ANOVA %v, REML %v", term.Term, v, reml[k])
		}
	}
	ub, err := VarianceOf(r1[1:], v1[1:], 0, BootstrapOptions{Resamples: 50, Seed: 1})
	if err != nil || !strings.HasPrefix(ub.Method, "REML") || ub.Terms[1].Variance.Value != 0 || ub.Terms[3].Variance.Value != 0 {
		t.Fatalf("%v %+v", err, ub)
	}
	for k := range ub.Terms {
		if a, b := an.Terms[k].Variance.Value, ub.Terms[k].Variance.Value; math.Abs(a-b) > 0.3*a+1e-12 {
			t.Errorf("%s: one run less moved %v to %v", ub.Terms[k].Term, a, b)
		}
	}
}

// On a balanced design where the ANOVA estimate of σ²_config×persona is
// negative, ANOVA sets it to 0 and keeps the others as their mean squares
// give them; REML, fitting on the boundary, equals the ANOVA of the model
// without the term: its mean square pooled with the residual's,
// MS' = (SS_CP + SS_E)/(df_CP + df_E), in every formula that read MS_CP or
// MS_E. So the two differ in every other component (docs/statistics.md).
func TestREMLPoolsANegativeANOVAComponent(t *testing.T) {
	const C, S, P, R = 4, 8, 3, 3
	for seed := uint64(1); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 22))
		var runs []rows.RunRow
		var values [][]float64
		for s := range S {
			us := r.NormFloat64() * 4
			for p := range P {
				up := r.NormFloat64() * 2
				for c := range C {
					ucs := r.NormFloat64() * 3 // no configuration × persona term
					for k := range R {
						runs = append(runs, rows.RunRow{ConfigID: fmt.Sprintf("c%d", c), Scenario: fmt.Sprintf("s%d", s), Persona: fmt.Sprintf("p%d", p), Rep: k})
						values = append(values, []float64{50 + float64(c) + us + up + ucs + r.NormFloat64()*5})
					}
				}
			}
		}
		d, _, err := balancedDesign(runs, values, 0)
		if err != nil {
			t.Fatal(err)
		}
		v := d.anova(nil)
		if v[3] >= 0 || v[0] <= 0 || v[1] <= 0 || v[2] <= 0 {
			continue
		}
		msE := v[4]
		msCP := R*v[3] + msE
		msCS, msP := P*R*v[2]+msCP, C*R*v[1]+msCP
		msS := C*P*R*v[0] + msCS + msP - msCP
		dfCP, dfE := float64((C-1)*S*(P-1)), float64(C*S*P*(R-1))
		pooled := (dfCP*msCP + dfE*msE) / (dfCP + dfE)
		want := [5]float64{(msS - msCS - msP + pooled) / (C * P * R), (msP - pooled) / (C * R), (msCS - pooled) / (P * R), 0, pooled}
		rd, err := remlDesign(runs, values, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := rd.fit(remlStart(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, term := range VarianceTerms {
			if math.Abs(got[k]-want[k]) > 1e-4*max(1, math.Abs(want[k])) {
				t.Errorf("seed %d, %s: REML %v, the pooled ANOVA %v (ANOVA with the term set to 0: %v)", seed, term, got[k], want[k], math.Max(0, v[k]))
			}
			if k != 3 && math.Abs(got[k]-v[k]) < 1e-6*math.Abs(v[k]) {
				t.Errorf("seed %d, %s: REML equals the unpooled ANOVA (%v)", seed, term, v[k])
			}
		}
		return
	}
	t.Fatal("no seed gave a negative configuration × persona estimate with the others positive")
}
