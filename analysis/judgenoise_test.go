package analysis

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
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

// redrawByMaps is the draw as first written (every answer a map, every
// slice copied), kept as the reference the planned draw must equal to
// the bit.
func redrawByMaps(n *JudgeNoise, rp *rows.RunRow, d int) rows.RunRow {
	r := *rp
	h := fnv.New64a()
	h.Write([]byte(r.RunID))
	rng := rand.New(rand.NewPCG(n.seed^h.Sum64(), uint64(d)))
	draw := func(task, metric, judge string) map[string]float64 {
		it := n.reps[repKey{r.RunID, task, metric, judge}]
		if it == nil {
			return nil
		}
		var answers []map[string]float64
		for a := range it.Seeds {
			m := map[string]float64{}
			for k, name := range it.Names {
				if v := it.Answer(a)[k]; !math.IsNaN(v) {
					m[name] = v
				}
			}
			answers = append(answers, m)
		}
		out := map[string]float64{}
		both := 0.0
		for range answers {
			a := answers[rng.IntN(len(answers))]
			for k, v := range a {
				out[k] += v
			}
			if a["ta_now"] == 1 && a["ta_later"] == 1 {
				both++
			}
		}
		for k := range out {
			out[k] /= float64(len(answers))
		}
		out["\x00both"] = both / float64(len(answers))
		return out
	}
	custom := func(js []rows.CustomJudgment, task string) []rows.CustomJudgment {
		js = slices.Clone(js)
		for k := range js {
			if s := draw(task, js[k].Metric, js[k].Judge); s != nil {
				delete(s, "\x00both")
				js[k].Scores = s
			}
		}
		return js
	}
	r.TA = slices.Clone(r.TA)
	for k := range r.TA {
		j := &r.TA[k]
		if s := draw("", "ta", j.Judge); s != nil {
			j.Now, j.Later, j.Both, j.HasBoth = s["ta_now"], s["ta_later"], s["\x00both"], true
			if v, ok := s["ta_cq"]; ok {
				j.CQ, j.HasCQ = v, true
			}
		}
	}
	r.Custom = custom(r.Custom, "")
	r.Tasks = slices.Clone(r.Tasks)
	for t := range r.Tasks {
		tk := &r.Tasks[t]
		tk.TC, tk.TRJ = slices.Clone(tk.TC), slices.Clone(tk.TRJ)
		for k := range tk.TC {
			j := &tk.TC[k]
			if s := draw(tk.Task, "tc", j.Judge); s != nil {
				j.Correctness, j.Grounding, j.Completeness, j.ArtifactQ = s["correctness"], s["grounding"], s["completeness"], s["artifact_quality"]
			}
		}
		for k := range tk.TRJ {
			j := &tk.TRJ[k]
			if s := draw(tk.Task, "trj", j.Judge); s != nil {
				for c, name := range trjConstructs {
					j.Scores[c] = s[name]
				}
			}
		}
		tk.Custom = custom(tk.Custom, tk.Task)
	}
	return r
}

// Runs with every kind of judgment (TA, TC, TR-J, a rubric's at run and
// task level), some asked again (two to four answers, some lacking a
// score), by two judges: each draw equals the reference to the bit, and
// leaves the run it was drawn from as it was.
func TestRedrawAsTheMapsDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	val := func() float64 { return float64(rng.IntN(5)) / 4 }
	answers := func(names ...string) []map[string]float64 {
		var out []map[string]float64
		for range 2 + rng.IntN(3) {
			m := map[string]float64{}
			for _, k := range names {
				if rng.IntN(6) > 0 {
					m[k] = val()
				}
			}
			out = append(out, m)
		}
		return out
	}
	var runs []rows.RunRow
	var items []rows.RepeatItem
	ask := func(run, task, metric, judge string, names ...string) {
		if rng.IntN(3) > 0 {
			a := answers(names...)
			it := rows.RepeatItem{RunID: run, Task: task, Metric: metric, Judge: judge}
			for s := range a {
				it.Seeds = append(it.Seeds, int64(s+1))
			}
			items = append(items, repeatItem(it, a))
		}
	}
	ta := []string{"ta_now", "ta_later", "ta_cq"}
	tc := []string{"correctness", "grounding", "completeness", "artifact_quality"}
	for i := range 40 {
		id := fmt.Sprintf("r%d", i)
		r := rows.RunRow{RunID: id, Scenario: "s", ConfigID: "c"}
		for _, j := range []string{"j", "k"} {
			r.TA = append(r.TA, rows.TAJudgment{Judge: j, Now: 1, Later: 0})
			ask(id, "", "ta", j, ta...)
			r.Custom = append(r.Custom, rows.CustomJudgment{Metric: "custom.run", Judge: j, Scores: map[string]float64{"x": 1}})
			ask(id, "", "custom.run", j, "x", "y")
		}
		for k := range 3 {
			task := fmt.Sprintf("t%d", k)
			tk := rows.TaskRow{Task: task, Weight: 1}
			for _, j := range []string{"j", "k"} {
				tk.TC = append(tk.TC, rows.TCJudgment{Judge: j, Correctness: 0.5})
				ask(id, task, "tc", j, tc...)
				tk.TRJ = append(tk.TRJ, rows.TRJJudgment{Judge: j, Scores: [5]float64{3, 3, 3, 3, 3}})
				ask(id, task, "trj", j, trjConstructs[:]...)
				tk.Custom = append(tk.Custom, rows.CustomJudgment{Metric: "custom.task", Judge: j, Scores: map[string]float64{"z": 2}})
				ask(id, task, "custom.task", j, "z")
			}
			r.Tasks = append(r.Tasks, tk)
		}
		runs = append(runs, r)
	}
	n := NewJudgeNoise(RunSlice(runs), items, "", BootstrapOptions{Resamples: 50, Seed: 5})
	if n == nil {
		t.Fatal("no noisy run")
	}
	before := fmt.Sprintf("%v", runs)
	for i := range runs {
		plan := n.plan(&runs[i])
		for d := range 50 {
			got, want := n.redraw(&runs[i], plan, d), redrawByMaps(n, &runs[i], d)
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Fatalf("run %d, draw %d:\n got %#v\nwant %#v", i, d, got, want)
			}
		}
	}
	if fmt.Sprintf("%v", runs) != before {
		t.Error("a draw changed the run it was drawn from")
	}
}
