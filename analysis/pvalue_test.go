package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
)

// pairCase is two configurations on n scenarios × runs runs, B − A with
// true difference delta; discrete draws values on a 1–5 scale, as ratings.
func pairCase(r *rand.Rand, n, runs int, delta float64, discrete bool) ([]Pair, [][]float64, []string) {
	var values [][]float64
	var scen []string
	var p Pair
	p.A, p.B = "A", "B"
	for s := range n {
		u := r.NormFloat64() * 8
		for side := range 2 {
			v := r.NormFloat64() * 3 // configuration × scenario
			for range runs {
				x := 60 + u + v + r.NormFloat64()*12 + float64(side)*delta
				if discrete {
					x = math.Max(1, math.Min(5, math.Round(3+(x-60)/12)))
				}
				if side == 0 {
					p.RunsA = append(p.RunsA, len(values))
				} else {
					p.RunsB = append(p.RunsB, len(values))
				}
				values = append(values, []float64{x})
				scen = append(scen, fmt.Sprintf("s%d", s))
			}
		}
	}
	return []Pair{p}, values, scen
}

// A comparison's p-value and its interval are one procedure: p < α
// exactly when the interval at level 1 − α excludes 0, for every interval
// method, several levels (Holm's α/m among them), clusters from 2 to 20,
// few and many resamples, continuous and discrete values, null and
// non-null differences.
func TestComparePValueInvertsTheInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 1))
	levels := []float64{0.8, 0.9, 0.95, 0.99, 1 - 0.05/325}
	checked, rejected := 0, 0
	for d := range 120 {
		n := []int{2, 3, 5, 10, 10, 20}[d%6]
		delta := []float64{0, 0, 4, 10, 30}[d%5]
		pairs, values, scen := pairCase(r, n, 1+d%3, delta, d%4 == 3)
		for _, method := range stat.Methods {
			b := []int{100, 1000}[d%2]
			if method == stat.BCa && n < 3 {
				continue
			}
			for _, level := range levels {
				opt := BootstrapOptions{Resamples: b, Level: level, Method: method, Seed: uint64(d)}
				c := Compare(pairs, values, scen, []int{0}, opt)[0]
				if math.IsNaN(c.Lo) || math.IsNaN(c.P) {
					continue
				}
				excludes := c.Lo > 0 || c.Hi < 0
				if (c.P < 1-level) != excludes {
					t.Errorf("dataset %d (%d scenarios, delta %g), %s, %d resamples, level %g: p = %.6g but the interval [%.6g, %.6g]",
						d, n, delta, method, b, level, c.P, c.Lo, c.Hi)
				}
				checked++
				if excludes {
					rejected++
				}
			}
		}
	}
	// Both outcomes were seen often, so the check held on both sides.
	if checked < 1500 || rejected < 200 || checked-rejected < 200 {
		t.Errorf("checked %d intervals, %d excluding 0: too few of one kind", checked, rejected)
	}
}

// The p-value that inverts each interval method, against the same p found
// the long way by scipy: each end of the interval as a function of α, and
// the α at which it crosses 0 by root finding
// (analysis/testdata/make_pvalue_refs.py). Replicates with 0 among them
// and beyond them (p down to 1e-39, read in the normal tails), clusters
// from 3 to 20, BCa accelerations of both signs.
func TestIntervalPValueAgainstScipy(t *testing.T) {
	var refs struct {
		Cases []struct {
			Method     string
			N          int
			Theta      float64
			Replicates []float64
			Jackknife  []float64
			P          float64
		}
	}
	b, err := os.ReadFile("testdata/pvalue_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs.Cases) < 30 {
		t.Fatalf("%d cases", len(refs.Cases))
	}
	for i, c := range refs.Cases {
		got := stat.IntervalPValue(c.Theta, c.Replicates, c.Jackknife, c.Method, c.N)
		// Relative: the smallest are 1e-39. Student's t tails of gonum and
		// scipy differ by a few 1e-9 at 1e-4.
		if math.Abs(got-c.P) > 1e-8*c.P+1e-15 {
			t.Errorf("case %d (%s, %d clusters, %d replicates): p = %.12g, scipy %.12g", i, c.Method, c.N, len(c.Replicates), got, c.P)
		}
	}
}
