package analysis

import (
	"encoding/json"
	"fmt"
	"math"
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
