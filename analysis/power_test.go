package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

type powerRefs struct {
	Cases []struct {
		V             [5]float64
		S, P, R       int
		Alpha, Power  float64
		Se            float64 `json:"se"`
		Mde           float64 `json:"mde"`
		PowerAtApprox float64 `json:"power_at_approx"`
		MdeApprox     float64 `json:"mde_approx"`
	}
}

// The SE and the exact MDE (noncentral t) against scipy
// (testdata/make_power_refs.py), and TPower against scipy's noncentral t
// at the textbook MDE.
func TestMDEAgainstScipy(t *testing.T) {
	b, err := os.ReadFile("testdata/power_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref powerRefs
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != 3 {
		t.Fatalf("%d cases", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		d := PowerDesign{Scenarios: c.S, Personas: c.P, Repetitions: c.R, Alpha: c.Alpha, Power: c.Power}
		se, mde := MDE(c.V, d)
		if math.Abs(se-c.Se) > 1e-12*c.Se || math.Abs(mde-c.Mde) > 1e-7*c.Mde {
			t.Errorf("S=%d: SE %v MDE %v, scipy %v %v", c.S, se, mde, c.Se, c.Mde)
		}
		df := float64(c.S - 1)
		tc := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - c.Alpha/2)
		if p := TPower(df, tc, c.MdeApprox/c.Se); math.Abs(p-c.PowerAtApprox) > 1e-8 {
			t.Errorf("S=%d: power %v at the textbook MDE, scipy's noncentral t %v", c.S, p, c.PowerAtApprox)
		}
	}
}

// Simulated studies at the MDE reject as often as the power says: two
// configurations on the same scenarios, personas and repetitions drawn
// from the variance components, the paired t-test over scenarios.
func TestMDEBySimulation(t *testing.T) {
	v := [5]float64{40, 3, 6, 2, 60}
	d := PowerDesign{Scenarios: 8, Personas: 3, Repetitions: 2, Alpha: 0.05, Power: 0.8}
	_, mde := MDE(v, d)
	rng := rand.New(rand.NewPCG(7, 9))
	sd := func(x float64) float64 { return math.Sqrt(x) }
	tc := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(d.Scenarios - 1)}.Quantile(1 - d.Alpha/2)
	const sims = 6000
	reject := 0
	for range sims {
		// Scenario and persona effects are shared by both configurations;
		// each has its own configuration × scenario and × persona effects.
		diffs := make([]float64, d.Scenarios)
		for s := range diffs {
			scen := rng.NormFloat64() * sd(v[0])
			cs := [2]float64{rng.NormFloat64() * sd(v[2]), rng.NormFloat64() * sd(v[2])}
			var sum [2]float64
			for p := 0; p < d.Personas; p++ {
				pers := rng.NormFloat64() * sd(v[1])
				for c := range 2 {
					cp := rng.NormFloat64() * sd(v[3])
					for r := 0; r < d.Repetitions; r++ {
						y := scen + pers + cs[c] + cp + rng.NormFloat64()*sd(v[4])
						if c == 0 {
							y += mde
						}
						sum[c] += y
					}
				}
			}
			n := float64(d.Personas * d.Repetitions)
			diffs[s] = sum[0]/n - sum[1]/n
		}
		m := mean(diffs)
		var ss float64
		for _, x := range diffs {
			ss += (x - m) * (x - m)
		}
		se := math.Sqrt(ss / float64(len(diffs)-1) / float64(len(diffs)))
		if math.Abs(m/se) > tc {
			reject++
		}
	}
	got := float64(reject) / sims
	if math.Abs(got-d.Power) > 4*math.Sqrt(d.Power*(1-d.Power)/sims) {
		t.Errorf("rejection rate at the MDE %.4f, want %.2f", got, d.Power)
	}
}
