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

type varianceRefs struct {
	Rows []struct {
		C, S, P, R int
		Y          float64
	}
	REML, ANOVA map[string]float64
}

func varianceCase(t *testing.T) ([]rows.RunRow, [][]float64, varianceRefs) {
	b, err := os.ReadFile("testdata/variance_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref varianceRefs
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var runs []rows.RunRow
	var values [][]float64
	for _, r := range ref.Rows {
		runs = append(runs, rows.RunRow{ConfigID: fmt.Sprintf("c%d", r.C), Scenario: fmt.Sprintf("s%d", r.S), Persona: fmt.Sprintf("p%d", r.P), Rep: r.R})
		values = append(values, []float64{r.Y})
	}
	return runs, values, ref
}

// The five components against numpy's ANOVA (to 1e-9) and statsmodels'
// REML (MixedLM, which equals it on balanced data with positive
// components, to the optimizer's tolerance), testdata/make_variance_refs.py.
func TestVarianceComponentsReferences(t *testing.T) {
	runs, values, ref := varianceCase(t)
	d, _, err := balancedDesign(runs, values, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{VarScenario: "scenario", VarPersona: "persona", VarConfigScenario: "config_scenario", VarConfigPersona: "config_persona", VarResidual: "residual"}
	got := d.anova(nil)
	for k, term := range VarianceTerms {
		a, r := ref.ANOVA[names[term]], ref.REML[names[term]]
		if math.Abs(got[k]-a) > 1e-9*math.Abs(a) {
			t.Errorf("%s: %v, numpy's ANOVA %v", term, got[k], a)
		}
		if math.Abs(got[k]-r) > 1e-3*math.Abs(r) {
			t.Errorf("%s: %v, statsmodels' REML %v", term, got[k], r)
		}
	}
	// Weights are multiplicities: scenario 0 weighted 2 and scenario 1
	// weighted 0 is the design with scenario 0 twice and no scenario 1.
	w := make([]float64, d.S)
	for i := range w {
		w[i] = 1
	}
	w[0], w[1] = 2, 0
	twice := &design{C: d.C, S: d.S, P: d.P, R: d.R}
	for c := range d.y {
		twice.y = append(twice.y, append([][][]float64{d.y[c][0], d.y[c][0]}, d.y[c][2:]...))
	}
	a, b := d.anova(w), twice.anova(nil)
	for k := range a {
		if math.Abs(a[k]-b[k]) > 1e-9*math.Abs(b[k]) {
			t.Errorf("weighted %s: %v, repeated %v", VarianceTerms[k], a[k], b[k])
		}
	}
	vc, err := VarianceOf(runs, values, 0, BootstrapOptions{Resamples: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var share, total float64
	for k, term := range vc.Terms {
		share += term.Share.Value
		total += got[k]
		if !(term.Variance.Lo <= term.Variance.Value && term.Variance.Value <= term.Variance.Hi) {
			t.Errorf("%s: %+v", term.Term, term.Variance)
		}
	}
	icc := (got[0] + got[2]) / total
	S, P, R := float64(d.S), float64(d.P), float64(d.R)
	deff := ((got[0]+got[2])/S + (got[1]+got[3])/(S*P) + got[4]/(S*P*R)) / (total / (S * P * R))
	if math.Abs(share-1) > 1e-12 || math.Abs(vc.ICC.Value-icc) > 1e-12 || math.Abs(vc.DesignEffect.Value-deff) > 1e-12 || vc.Configs != 4 || vc.Scenarios != 8 {
		t.Errorf("shares sum to %v; ICC %v (want %v); design effect %v (want %v); %+v", share, vc.ICC.Value, icc, vc.DesignEffect.Value, deff, vc)
	}
	// An unbalanced design is estimated by REML, saying so and why (the
	// cell), with intervals from a capped bootstrap of refits.
	ub, err := VarianceOf(runs[1:], values[1:], 0, BootstrapOptions{Resamples: 300, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ub.Method, "REML") || len(ub.Notes) < 2 || !strings.Contains(ub.Notes[0], "c0 on s0/p0 has 2 runs with a value, 3 elsewhere") ||
		!strings.Contains(ub.Notes[1], "intervals from 200 resamples, not 300") {
		t.Errorf("unbalanced: %s %v", ub.Method, ub.Notes)
	}
	for k, term := range ub.Terms {
		if v := term.Variance; !(v.Lo <= v.Value && v.Value <= v.Hi) || math.Abs(v.Value-got[k]) > 0.35*got[k] {
			t.Errorf("unbalanced %s: %+v (balanced: %v)", term.Term, v, got[k])
		}
	}
}
