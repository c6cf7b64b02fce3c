package analysis

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// repeatItem is it with the answers' scores.
func repeatItem(it rows.RepeatItem, answers []map[string]float64) rows.RepeatItem {
	it.Names, it.Values = rows.RepeatScores(answers)
	return it
}

// noiseRuns are 20 scenarios × 3 runs of one task judged by j; in the
// runs of odd scenarios j answered twice (0.2 and 0.8, mean 0.5),
// elsewhere once (0.5).
func noiseRuns() ([]rows.RunRow, []rows.RepeatItem) {
	var runs []rows.RunRow
	var items []rows.RepeatItem
	for s := range 20 {
		for k := range 3 {
			id := fmt.Sprintf("s%d/r%d", s, k)
			runs = append(runs, rows.RunRow{RunID: id, Scenario: fmt.Sprintf("s%d", s), ConfigID: "c",
				Tasks: []rows.TaskRow{{Task: "t", Weight: 1, TC: []rows.TCJudgment{{Judge: "j", Correctness: 0.5, Grounding: 0.5, Completeness: 0.5, ArtifactQ: 0.5}}}}})
			if s%2 == 1 {
				items = append(items, repeatItem(rows.RepeatItem{RunID: id, Task: "t", Metric: "tc", Judge: "j", Seeds: []int64{1, 2}},
					[]map[string]float64{{"correctness": 0.2, "grounding": 0.5, "completeness": 0.5, "artifact_quality": 0.5},
						{"correctness": 0.8, "grounding": 0.5, "completeness": 0.5, "artifact_quality": 0.5}}))
			}
		}
	}
	return runs, items
}

// A draw redraws each repeated judgment as the mean of a resample of its
// answers: over many draws TC.correctness has the mean of the answers and
// the bootstrap variance of a mean of two, σ₀²/2 = 0.09/2 (×100²); a
// judgment asked once never moves.
func TestJudgeNoiseDraws(t *testing.T) {
	runs, items := noiseRuns()
	n := NewJudgeNoise(RunSlice(runs), items, "", BootstrapOptions{Resamples: 1000, Seed: 3})
	if n == nil || n.Runs() != 30 {
		t.Fatalf("noisy runs: %v", n)
	}
	m := MetricIndex("TC.correctness")
	var sum, sq float64
	const draws = 1000
	for d := range draws {
		x := n.values(&runs[3], d)[m] // s1/r0: asked twice
		sum, sq = sum+x, sq+x*x
		if y := n.values(&runs[0], d)[m]; y != 50 {
			t.Fatalf("a judgment asked once moved: %v", y)
		}
	}
	mean := sum / draws
	v := sq/draws - mean*mean
	// Draws of two answers: 20, 50 or 80 with probabilities ¼, ½, ¼.
	if math.Abs(mean-50) > 2 || math.Abs(v-450) > 45 {
		t.Errorf("draws: mean %v (want 50), variance %v (want 450)", mean, v)
	}
	if a, b := n.values(&runs[3], 7)[m], n.values(&runs[3], 7)[m]; a != b {
		t.Error("a draw is not reproducible")
	}
}

// With the noise, the point estimate is the same and the interval wider:
// scenario means are all 50, so without the noise the interval is a
// point, with it the judges' noise alone spreads it.
func TestSummarizeWithJudgeNoise(t *testing.T) {
	runs, items := noiseRuns()
	values, missing, scen, groups := summarizeInputs(t, runs)
	opt := BootstrapOptions{Resamples: 500, Seed: 1, Method: "percentile"}
	m := []int{MetricIndex("TC.correctness")}
	plain := Summarize(groups, values, missing, scen, m, opt)[0]
	noisy := SummarizeNoisy(groups, values, missing, scen, m, opt, NewJudgeNoise(RunSlice(runs), items, "", opt))[0]
	// The noise of the mean: 30 of 60 runs with variance 450 each, so
	// 30·450/60² = 3.75, and a 95% interval about 2·1.96·√3.75 ≈ 7.6 wide
	// (the scenario draws reweight the runs, which widens it a little).
	if plain.Value != 50 || noisy.Value != 50 || plain.Hi-plain.Lo != 0 || math.Abs(noisy.Hi-noisy.Lo-7.6) > 1.5 {
		t.Errorf("plain %v [%v, %v]; noisy %v [%v, %v]", plain.Value, plain.Lo, plain.Hi, noisy.Value, noisy.Lo, noisy.Hi)
	}
	again := SummarizeNoisy(groups, values, missing, scen, m, opt, NewJudgeNoise(RunSlice(runs), items, "", opt))[0]
	if again.Lo != noisy.Lo || again.Hi != noisy.Hi {
		t.Error("not deterministic")
	}
	// The runs kept packed (as a warehouse's are) give the same interval
	// to the bit, as does one core.
	packed := NewPackedRuns()
	for _, r := range runs {
		packed.Add(r)
	}
	if p := SummarizeNoisy(groups, values, missing, scen, m, opt, NewJudgeNoise(packed, items, "", opt))[0]; p.Lo != noisy.Lo || p.Hi != noisy.Hi {
		t.Errorf("packed runs: [%v, %v], want [%v, %v]", p.Lo, p.Hi, noisy.Lo, noisy.Hi)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if p := SummarizeNoisy(groups, values, missing, scen, m, opt, NewJudgeNoise(packed, items, "", opt))[0]; p.Lo != noisy.Lo || p.Hi != noisy.Hi {
		t.Errorf("one core: [%v, %v], want [%v, %v]", p.Lo, p.Hi, noisy.Lo, noisy.Hi)
	}
	// Another judge's repeats do not count for --judge j.
	if NewJudgeNoise(RunSlice(runs), items, "k", opt) != nil {
		t.Error("judge k has no repeats")
	}
}

// The two-level bootstrap keeps the one-level estimate to the last digit
// and widens the interval by the runs' own spread: on clusters whose
// means are equal, one level gives a point, two levels an interval about
// ±1.96·sd/√n wide.
func TestTwoLevelBootstrap(t *testing.T) {
	var runs []rows.RunRow
	for s := range 10 {
		for k := range 9 {
			v := 50 + 10*float64(k%3-1) // every scenario's runs: 40, 50, 60
			runs = append(runs, rows.RunRow{RunID: fmt.Sprintf("s%d/r%d", s, k), Scenario: fmt.Sprintf("s%d", s), ConfigID: "c",
				Tasks: []rows.TaskRow{{Task: "t", Weight: 1, TC: []rows.TCJudgment{{Judge: "j", Correctness: v / 100, Grounding: 0.5, Completeness: 0.5, ArtifactQ: 0.5}}}}})
		}
	}
	values, missing, scen, groups := summarizeInputs(t, runs)
	m := []int{MetricIndex("TC.correctness")}
	one := Summarize(groups, values, missing, scen, m, BootstrapOptions{Resamples: 2000, Seed: 1, Method: Percentile})[0]
	two := Summarize(groups, values, missing, scen, m, BootstrapOptions{Resamples: 2000, Seed: 1, Method: Percentile, TwoLevel: true})[0]
	// sd of the runs: √(200/3); the mean of 90 of them: sd 0.861, so a
	// 95% interval ≈ 3.4 wide.
	if one.Value != two.Value || one.Hi-one.Lo != 0 || math.Abs(two.Hi-two.Lo-3.4) > 0.5 {
		t.Errorf("one level %v [%v, %v]; two levels %v [%v, %v]", one.Value, one.Lo, one.Hi, two.Value, two.Lo, two.Hi)
	}
	again := Summarize(groups, values, missing, scen, m, BootstrapOptions{Resamples: 2000, Seed: 1, Method: Percentile, TwoLevel: true})[0]
	if again.Lo != two.Lo || again.Hi != two.Hi {
		t.Error("not deterministic")
	}
}
