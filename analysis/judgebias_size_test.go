package analysis

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis/stat"
)

// TestJudgeBiasNullSize measures the judge-bias tests' rejection rates at
// α = 0.05 on GYMLENS_BIAS_SIZE null datasets of each design (seeds
// GYMLENS_BIAS_SEED on, 100000 unless set; 60 scenarios), each test's and each effect's pooled over its
// three judges or pairs, with Monte Carlo se (the pooled one from the
// per-dataset counts: the three tests read the same data); then, on the
// same seeds with jA's self-preference 0.3 and slope 0.2 injected, how
// often each 95% interval covers the true value and excludes 0. It checks
// nothing; docs/statistics.md quotes it:
//
//	GYMLENS_BIAS_SIZE=3000 go test ./analysis -run TestJudgeBiasNullSize -v
func TestJudgeBiasNullSize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GYMLENS_BIAS_SIZE"))
	if n <= 0 {
		t.Skip("a measurement: GYMLENS_BIAS_SIZE=N runs it on N null datasets of each design")
	}
	const alpha = 0.05
	first := uint64(100000)
	if v, err := strconv.ParseUint(os.Getenv("GYMLENS_BIAS_SEED"), 10, 64); err == nil {
		first = v
	}
	start := time.Now()
	for _, humans := range []bool{false, true} {
		rejected, perDataset := nullRejections(t, first, n, humans, alpha, BootstrapOptions{})
		var sb strings.Builder
		fmt.Fprintf(&sb, "humans %v: %d null datasets (seeds %d–%d), α = %g (%s)\n", humans, n, first, first+uint64(n)-1, alpha, time.Since(start).Round(time.Second))
		keys := make([]string, 0, len(rejected))
		for k := range rejected {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			r := float64(rejected[k]) / float64(n)
			fmt.Fprintf(&sb, "  %-22s %.4f (se %.4f)\n", k, r, math.Sqrt(r*(1-r)/float64(n)))
		}
		for _, e := range []string{"self-preference", "length"} {
			v := slices.Clone(perDataset[e])
			for i := range v {
				v[i] /= 3 // the share of the effect's three tests
			}
			fmt.Fprintf(&sb, "  %-22s %.4f (se %.4f), pooled\n", e, stat.Mean(v), stat.SD(v)/math.Sqrt(float64(len(v))))
		}
		t.Log("\n" + sb.String())
	}
	// jB's and jC's references hold jA, whose 0.3 on family A's agents
	// moves their self-preference to 0.3/2 · 1/2 = 0.075.
	truth := map[string]float64{"self-preference jA": 0.3, "self-preference jB": 0.075, "self-preference jC": 0.075,
		"length jA vs humans": 0.2, "length jB vs humans": 0, "length jC vs humans": 0,
		"length jA vs jB": 0.2, "length jA vs jC": 0.2, "length jB vs jC": 0}
	for _, humans := range []bool{false, true} {
		cover, excludes := map[string]int{}, map[string]int{}
		for d := range n {
			jb := measureBias(t, synthBias(first+uint64(d), biasNullScenarios, 0.3, 0.2, humans), humans, BootstrapOptions{})
			check := func(key string, e Estimate) {
				if e.Lo <= truth[key] && truth[key] <= e.Hi {
					cover[key]++
				}
				if e.Lo > 0 || e.Hi < 0 {
					excludes[key]++
				}
			}
			for _, s := range jb.SelfPreference {
				check("self-preference "+s.Judge, s.Estimate)
			}
			for _, l := range jb.Length {
				check("length "+l.Judge+" vs "+l.Reference, l.Estimate)
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "humans %v: %d datasets, jA's self-preference 0.3 and slope 0.2 injected (%s)\n", humans, n, time.Since(start).Round(time.Second))
		keys := make([]string, 0, len(cover))
		for k := range truth {
			if _, ok := cover[k]; ok || excludes[k] > 0 {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			c := float64(cover[k]) / float64(n)
			fmt.Fprintf(&sb, "  %-22s true %.3f: covered %.4f (se %.4f), 0 excluded %.4f\n", k, truth[k], c, math.Sqrt(c*(1-c)/float64(n)), float64(excludes[k])/float64(n))
		}
		t.Log("\n" + sb.String())
	}
}
