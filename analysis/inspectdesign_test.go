package analysis

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// inspectRefs is ingest/testdata/inspect/refs.json: the synthetic
// fixture's scores and what numpy and scipy make of them
// (make_fixture.py).
type inspectRefs struct {
	Configs  []string
	Variance map[string]struct {
		Sample       float64 `json:"sample"`
		ConfigSample float64 `json:"config_sample"`
		Epoch        float64 `json:"epoch"`
		RImplied     float64 `json:"r_implied"`
		SE           float64 `json:"se"`
		MDE          float64 `json:"mde"`
		SamplesFor01 int     `json:"samples_for_0.1"`
	}
	Corr struct {
		Pearson, Spearman float64
		N                 int
	}
	Pairs []struct {
		A, B, Metric string
		Diff, R      float64
	}
	Rows [][]any
}

// inspectFixture reads the references and builds the fixture's Inspect
// data: one eval per configuration, task arith, scorers match and quality.
func inspectFixture(t *testing.T) (*rows.InspectData, *inspectRefs) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "inspect", "refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r inspectRefs
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	d := &rows.InspectData{}
	for _, c := range r.Configs {
		d.Evals = append(d.Evals, rows.InspectEval{EvalID: "e-" + c, Task: "arith", ConfigID: c, Epochs: 3})
	}
	for _, row := range r.Rows {
		c, s, e := row[0].(string), row[1].(string), int(row[2].(float64))
		for i, scorer := range []string{"match", "quality"} {
			d.Scores = append(d.Scores, rows.InspectScore{EvalID: "e-" + c, SampleID: s, Epoch: e, Scorer: scorer, Metric: "inspect." + scorer,
				Value: row[3+i].(float64), Valid: true})
		}
	}
	return d, &r
}

func inspectNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// The variance components of configurations × samples × epochs, the
// correlation of two configurations' sample means they imply, the MDE and
// the samples needed, against numpy's expected mean squares and scipy's
// noncentral t.
func TestInspectVarianceAndPowerAgainstScipy(t *testing.T) {
	d, ref := inspectFixture(t)
	vcs, skipped, err := InspectVariance(d, BootstrapOptions{Resamples: -1})
	if err != nil || len(skipped) > 0 || len(vcs) != 2 {
		t.Fatalf("%v %v %d", err, skipped, len(vcs))
	}
	for _, vc := range vcs {
		metric := vc.Metric[:len(vc.Metric)-len(" (arith)")]
		want := ref.Variance[metric]
		var v [5]float64
		for k, term := range vc.Terms {
			v[k] = term.Variance.Value
		}
		// A negative estimate is set to 0, as gymlens variance does.
		for k, w := range map[int]float64{0: want.Sample, 2: want.ConfigSample, 4: want.Epoch, 1: 0, 3: 0} {
			if !inspectNear(v[k], math.Max(0, w), 1e-9) {
				t.Errorf("%s %s: %g, numpy %g", vc.Metric, VarianceTerms[k], v[k], w)
			}
		}
		if vc.Scenarios != 12 || vc.Repetitions != 3 || vc.Configs != 3 {
			t.Errorf("%s: design %d × %d × %d", vc.Metric, vc.Configs, vc.Scenarios, vc.Repetitions)
		}
		if r := InspectPairR(v, 3); !inspectNear(r, want.RImplied, 1e-9) {
			t.Errorf("%s r_implied %g, numpy %g", vc.Metric, r, want.RImplied)
		}
		p, err := Power(vc, PowerDesign{Scenarios: 12, Personas: 1, Repetitions: 3, Alpha: 0.05, Power: 0.8}, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		if !inspectNear(p.SE, want.SE, 1e-9) || !inspectNear(p.MDE, want.MDE, 1e-6) || p.ScenariosNeeded != want.SamplesFor01 {
			t.Errorf("%s: se %g mde %g samples %d; scipy %g %g %d", vc.Metric, p.SE, p.MDE, p.ScenariosNeeded, want.SE, want.MDE, want.SamplesFor01)
		}
	}
	// One configuration: no components, and the reason.
	one := &rows.InspectData{Evals: d.Evals[:1], Scores: d.Scores[:72]}
	if _, skipped, err := InspectVariance(one, BootstrapOptions{Resamples: -1}); err == nil || len(skipped) != 2 {
		t.Errorf("one configuration: %v %v", err, skipped)
	}
}

// The scorers' correlation over (configuration, sample) units, epochs
// averaged, against scipy's pearsonr and spearmanr; the paired
// comparison's per-sample r against numpy's corrcoef.
func TestInspectCorrelationsAgainstScipy(t *testing.T) {
	d, ref := inspectFixture(t)
	cs, err := InspectCorrelations(d, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CorrResult{}
	for _, c := range cs {
		got[c.Level+" "+c.Method] = c
	}
	if c := got["sample pearson"]; !inspectNear(c.R, ref.Corr.Pearson, 1e-9) || c.N != ref.Corr.N || c.X != "inspect.match (arith)" || c.Y != "inspect.quality (arith)" {
		t.Errorf("pearson %+v, scipy %g over %d", c, ref.Corr.Pearson, ref.Corr.N)
	}
	if c := got["sample spearman"]; !inspectNear(c.R, ref.Corr.Spearman, 1e-9) {
		t.Errorf("spearman %g, scipy %g", c.R, ref.Corr.Spearman)
	}
	if _, ok := got["config pearson"]; !ok || len(cs) != 4 {
		t.Errorf("levels: %v", got)
	}
	res, err := CompareInspect(d, ref.Configs, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ref.Pairs {
		found := false
		for _, c := range res {
			if c.A == p.A && c.B == p.B && c.Metric == p.Metric+" (arith)" {
				found = true
				if !inspectNear(c.Value, p.Diff, 1e-9) || !inspectNear(*c.R, p.R, 1e-9) {
					t.Errorf("%s %s−%s: %g r %g; numpy %g r %g", p.Metric, p.B, p.A, c.Value, *c.R, p.Diff, p.R)
				}
			}
		}
		if !found {
			t.Errorf("no comparison %s %s %s", p.A, p.B, p.Metric)
		}
	}
}
