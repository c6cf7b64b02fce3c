package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/gymlens/gymlens/analysis"
)

// benchSize simulates pairs of configurations on the same scenarios and
// counts how often gymlens compare's test (p < α, the p-value that
// inverts the expanded percentile interval) rejects: with no true
// difference (its size), and at the paired t-test's minimum detectable
// effect (its power there), beside the paired t-test over scenarios.
func benchSize(args []string) error {
	fl := flag.NewFlagSet("size", flag.ExitOnError)
	pairs := fl.Int("pairs", 1000, "simulated pairs of configurations, each with no difference and each at the MDE")
	scenarios := fl.Int("scenarios", 10, "scenarios (personas 3, repetitions 3)")
	resamples := fl.Int("resamples", 10000, "bootstrap resamples per comparison")
	alpha := fl.Float64("alpha", 0.05, "level of the tests")
	seed := fl.Uint64("seed", 1, "seed")
	fl.Parse(args)
	// Variance components: scenario, persona, config × scenario,
	// config × persona, runs (the sample's TC, rounded).
	v := [5]float64{64, 4, 9, 4, 144}
	const personas, reps = 3, 3
	d := analysis.PowerDesign{Scenarios: *scenarios, Personas: personas, Repetitions: reps, Alpha: *alpha, Power: 0.8}
	_, mde := analysis.MDE(v, d)
	t0 := time.Now()
	r := rand.New(rand.NewPCG(*seed, 55))
	tc := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(*scenarios - 1)}
	type tally struct{ p, interval, t int }
	var null, atMDE tally
	for i := 0; i < *pairs; i++ {
		for _, delta := range []float64{0, mde} {
			pair, values, scen, diffs := simulatePair(r, v, *scenarios, personas, reps, delta)
			opt := analysis.BootstrapOptions{Resamples: *resamples, Level: 1 - *alpha, Seed: uint64(i) + 1}
			c := analysis.Compare([]analysis.Pair{pair}, values, scen, []int{0}, opt)[0]
			var m, ss float64
			for _, x := range diffs {
				m += x
			}
			m /= float64(len(diffs))
			for _, x := range diffs {
				ss += (x - m) * (x - m)
			}
			tstat := m / math.Sqrt(ss/float64(len(diffs)-1)/float64(len(diffs)))
			tally := &null
			if delta != 0 {
				tally = &atMDE
			}
			if c.P < *alpha {
				tally.p++
			}
			if c.Lo > 0 || c.Hi < 0 {
				tally.interval++
			}
			if 2*tc.CDF(-math.Abs(tstat)) < *alpha {
				tally.t++
			}
		}
	}
	n := float64(*pairs)
	share := func(k int) string {
		p := float64(k) / n
		return fmt.Sprintf("%5.1f%% (se %.1f%%)", 100*p, 100*math.Sqrt(p*(1-p)/n))
	}
	fmt.Printf("%d pairs: %d scenarios × %d personas × %d repetitions, components %v (scenario, persona, config×scenario, config×persona, runs); "+
		"expanded percentile, %d resamples, α = %g (%.1f s)\n\n", *pairs, *scenarios, personas, reps, v, *resamples, *alpha, time.Since(t0).Seconds())
	fmt.Printf("%-44s %-20s %-20s\n", "rejects", "no difference (size)", fmt.Sprintf("at the t-test's MDE %.2f (power .8)", mde))
	fmt.Printf("%-44s %-20s %-20s\n", "gymlens compare: p < α", share(null.p), share(atMDE.p))
	fmt.Printf("%-44s %-20s %-20s\n", "gymlens compare: interval excludes 0", share(null.interval), share(atMDE.interval))
	fmt.Printf("%-44s %-20s %-20s\n", "paired t-test over scenarios", share(null.t), share(atMDE.t))
	return nil
}

// simulatePair draws two configurations A and B (B − A = delta) on the same
// scenarios and personas from variance components v, and returns the pair,
// the run values (one metric), their scenarios and the scenarios'
// differences of means, B − A.
func simulatePair(r *rand.Rand, v [5]float64, scenarios, personas, reps int, delta float64) (analysis.Pair, [][]float64, []string, []float64) {
	p := analysis.Pair{A: "A", B: "B"}
	var values [][]float64
	var scen []string
	diffs := make([]float64, scenarios)
	sd := func(k int) float64 { return math.Sqrt(v[k]) }
	for s := 0; s < scenarios; s++ {
		name := fmt.Sprintf("s%d", s)
		us := r.NormFloat64() * sd(0)
		per := make([]float64, personas)
		for k := range per {
			per[k] = r.NormFloat64() * sd(1)
		}
		for side := 0; side < 2; side++ {
			cs := r.NormFloat64() * sd(2)
			var sum float64
			for k := range per {
				cp := r.NormFloat64() * sd(3)
				for range reps {
					x := 60 + us + per[k] + cs + cp + r.NormFloat64()*sd(4) + float64(side)*delta
					sum += x
					if side == 0 {
						p.RunsA = append(p.RunsA, len(values))
					} else {
						p.RunsB = append(p.RunsB, len(values))
					}
					values = append(values, []float64{x})
					scen = append(scen, name)
				}
			}
			m := sum / float64(personas*reps)
			if side == 0 {
				diffs[s] -= m
			} else {
				diffs[s] += m
			}
		}
	}
	return p, values, scen, diffs
}
