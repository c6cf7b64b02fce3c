package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

type selfRefs struct {
	Cases []struct {
		Name          string
		Groups, Other [][]float64
		ICC           float64 `json:"icc"`
		NoiseShare    float64 `json:"noise_share"`
		MSD, Noise    float64
		OtherNoise    bool `json:"other_noise"`
	}
}

// ICC(1,1) and the noise decomposition against scipy's one-way ANOVA and
// numpy (testdata/make_self_refs.py), balanced and not.
func TestSelfAgreementReferences(t *testing.T) {
	b, err := os.ReadFile("testdata/self_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs selfRefs
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs.Cases) != 4 {
		t.Fatalf("%d cases", len(refs.Cases))
	}
	for _, c := range refs.Cases {
		if got := ICC1(c.Groups, nil); math.Abs(got-c.ICC) > 1e-12 {
			t.Errorf("%s: ICC %v, scipy %v", c.Name, got, c.ICC)
		}
		msd, noise, share, otherNoise := NoiseDecomposition(c.Groups, c.Other)
		if math.Abs(msd-c.MSD) > 1e-9*c.MSD || math.Abs(noise-c.Noise) > 1e-9*c.Noise || math.Abs(share-c.NoiseShare) > 1e-12 || otherNoise != c.OtherNoise {
			t.Errorf("%s: msd %v noise %v share %v other's noise %v, numpy %v %v %v %v", c.Name, msd, noise, share, otherNoise, c.MSD, c.Noise, c.NoiseShare, c.OtherNoise)
		}
		// Weights are multiplicities: an item weighted 2 is the item twice.
		w := make([]float64, len(c.Groups))
		var twice [][]float64
		for i := range w {
			w[i] = float64(i % 3)
			for range int(w[i]) {
				twice = append(twice, c.Groups[i])
			}
		}
		if a, b := ICC1(c.Groups, w), ICC1(twice, nil); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: weighted ICC %v, repeated %v", c.Name, a, b)
		}
	}
}

// A judge asked twice whose TA label flips on a known set of items: the
// flip rate is that share, α the closed form of nominal α for it, and TC
// scores with no within-item variance have ICC 1.
func TestCompareSelf(t *testing.T) {
	var items []rows.RepeatItem
	flipped := 0
	for i := range 40 {
		now := 1.0
		scores := []map[string]float64{{"ta_now": 1, "ta_later": 1}, {"ta_now": now, "ta_later": 1}}
		if i%5 == 0 {
			scores[1]["ta_now"] = 0
			flipped++
		}
		items = append(items, repeatItem(rows.RepeatItem{RunID: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Metric: "ta", Judge: "j", Seeds: []int64{1, 2}}, scores))
		items = append(items, repeatItem(rows.RepeatItem{RunID: "r", Task: string(rune('a' + i)), Metric: "tc", Judge: "j", Seeds: []int64{1, 2}},
			[]map[string]float64{{"correctness": float64(i) / 40}, {"correctness": float64(i) / 40}}))
	}
	s, err := CompareSelf("j", items, nil, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SelfScore{}
	for _, x := range s.Scores {
		got[x.Score] = x
	}
	now := got["TA.now"]
	N, F := 40.0, float64(flipped)
	if now.Scale != ScaleBinary || now.Items != 40 || now.FlipRate.Value != F/N || math.Abs(now.Alpha.Value-(1-(2*N-1)/(2*N-F))) > 1e-12 {
		t.Errorf("TA.now: %+v, want flip rate %v and α %v", now, F/N, 1-(2*N-1)/(2*N-F))
	}
	if l := got["TA.later"]; l.FlipRate.Value != 0 {
		t.Errorf("TA.later never flips: %+v", l)
	}
	if c := got["TC.correctness"]; c.Scale != ScaleInterval || c.ICC.Value != 1 || c.SDWithin != 0 || c.Alpha.Value != 1 {
		t.Errorf("TC.correctness: %+v", c)
	}
	if _, err := CompareSelf("other", items, nil, BootstrapOptions{Resamples: 50}); err == nil {
		t.Error("a judge never asked twice passed")
	}
}

// Answers are laid out as numbers, NaN where one lacks a score; an
// answer without a score does not count among that score's answers, and
// a score answered once is not an item of it.
func TestRepeatScoresWithMissingAnswers(t *testing.T) {
	names, values := rows.RepeatScores([]map[string]float64{{"b": 2, "a": 1}, {"b": 3}, {"c": 4, "a": 5}})
	if !slices.Equal(names, []string{"a", "b", "c"}) || len(values) != 9 {
		t.Fatalf("names %v, values %v", names, values)
	}
	it := rows.RepeatItem{Seeds: []int64{1, 2, 3}, Names: names, Values: values}
	for _, c := range []struct {
		a    int
		name string
		want float64
		ok   bool
	}{{0, "a", 1, true}, {0, "b", 2, true}, {0, "c", 0, false}, {1, "a", 0, false}, {1, "b", 3, true}, {2, "c", 4, true}, {2, "d", 0, false}} {
		if v, ok := it.Score(c.a, c.name); ok != c.ok || (ok && v != c.want) {
			t.Errorf("answer %d, %s: %v %v, want %v %v", c.a, c.name, v, ok, c.want, c.ok)
		}
	}
	if a := it.Answer(2); len(a) != 3 || a[0] != 5 || !math.IsNaN(a[1]) || a[2] != 4 || cap(a) != 3 {
		t.Errorf("answer 2: %v (cap %d)", a, cap(a))
	}
	// Three TC answers, the second without grounding: grounding has two
	// answers (its SD within from 0.2 and 0.6), completeness one (no item).
	var items []rows.RepeatItem
	for i := range 10 {
		items = append(items, repeatItem(rows.RepeatItem{RunID: "r", Task: string(rune('a' + i)), Metric: "tc", Judge: "j", Seeds: []int64{1, 2, 3}},
			[]map[string]float64{{"correctness": 0.5, "grounding": 0.2}, {"correctness": 0.5, "completeness": 1}, {"correctness": 0.5, "grounding": 0.6}}))
	}
	s, err := CompareSelf("j", items, nil, BootstrapOptions{Resamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SelfScore{}
	for _, x := range s.Scores {
		got[x.Score] = x
	}
	if g := got["TC.grounding"]; g.Items != 10 || g.Answers != 2 || math.Abs(g.SDWithin-math.Sqrt(800)) > 1e-9 {
		t.Errorf("TC.grounding: %+v, want 10 items of 2 answers, SD within √800", g)
	}
	if c := got["TC.correctness"]; c.Answers != 3 || c.SDWithin != 0 {
		t.Errorf("TC.correctness: %+v", c)
	}
	if _, ok := got["TC.completeness"]; ok || len(s.Scores) != 2 {
		t.Errorf("completeness was answered once an item: %+v", s.Scores)
	}
}

// The noise share against another judge, by hand: j asked four tasks
// twice (on the metric's scale 40 and 60, 60 and 60, 50 and 90, 80 and
// 80: means 50, 60, 70, 80, variances with n 100, 0, 400, 0, with n − 1
// 200, 0, 800, 0), b once (45, 60, 80, 80): squared differences 25, 0,
// 100, 0, so MSD = (125 + 0 + 500 + 0)/4 = 156.25; b's noise is unknown
// (left out), j's is 1000/4 = 250, share 1.6 (an unbiased variance of two
// answers can exceed the disagreement). A run j was not asked again and a
// task b did not judge add nothing; packed runs give the same.
func TestNoiseShareByHand(t *testing.T) {
	ja := [][2]float64{{0.4, 0.6}, {0.6, 0.6}, {0.5, 0.9}, {0.8, 0.8}, {0.1, 0.9}}
	b := []float64{0.45, 0.6, 0.8, 0.8}
	var runs []rows.RunRow
	var items []rows.RepeatItem
	for i := range 6 {
		id := fmt.Sprintf("r%d", i)
		task := rows.TaskRow{Task: "t", Weight: 1, TC: []rows.TCJudgment{{Judge: "j", Correctness: 0.5}}}
		if i < 4 || i == 5 {
			task.TC = append(task.TC, rows.TCJudgment{Judge: "b", Correctness: 0.1 + 0.7*float64(i/5)})
			if i < 4 {
				task.TC[1].Correctness = b[i]
			}
		}
		runs = append(runs, rows.RunRow{RunID: id, Scenario: "s", ConfigID: "c", Tasks: []rows.TaskRow{task}})
		if i < 5 { // r4: b did not judge it; r5: j was asked once
			items = append(items, repeatItem(rows.RepeatItem{RunID: id, Task: "t", Metric: "tc", Judge: "j", Seeds: []int64{1, 2}},
				[]map[string]float64{{"correctness": ja[i][0]}, {"correctness": ja[i][1]}}))
		}
	}
	packed := NewPackedRuns()
	for _, r := range runs {
		packed.Add(r)
	}
	for _, set := range []RunSet{RunSlice(runs), packed} {
		s, err := CompareSelf("j", items, set, BootstrapOptions{Resamples: 100, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Noise) != 1 {
			t.Fatalf("noise shares: %+v", s.Noise)
		}
		n := s.Noise[0]
		if n.Score != "TC.correctness" || n.Other != "b" || n.Items != 4 || math.Abs(n.MSD-156.25) > 1e-9 || math.Abs(n.Noise-250) > 1e-9 || math.Abs(n.Share.Value-1.6) > 1e-12 || n.OtherNoise {
			t.Errorf("%T: %+v, want 4 items, MSD 156.25, noise 250, share 1.6, b's noise left out", set, n)
		}
	}
}

// noisyPair is 300 tasks judged by j and b, alike in everything but noise:
// each answer is the task's value plus noise of sd 0.05; j was asked three
// times, b three times (bRepeats) or once. b's judgment in the runs is
// the mean of its answers.
func noisyPair(bRepeats int) ([]rows.RunRow, []rows.RepeatItem) {
	r := rand.New(rand.NewPCG(55, 2))
	var runs []rows.RunRow
	var items []rows.RepeatItem
	answers := func(u float64, n int) ([]map[string]float64, float64) {
		var out []map[string]float64
		var m float64
		for range n {
			v := u + r.NormFloat64()*0.05
			out = append(out, map[string]float64{"correctness": v})
			m += v / float64(n)
		}
		return out, m
	}
	for i := range 300 {
		id := fmt.Sprintf("r%d", i)
		u := 0.3 + 0.4*r.Float64()
		ja, jm := answers(u, 3)
		ba, bm := answers(u, bRepeats)
		task := rows.TaskRow{Task: "t", Weight: 1, TC: []rows.TCJudgment{{Judge: "j", Correctness: jm}, {Judge: "b", Correctness: bm}}}
		runs = append(runs, rows.RunRow{RunID: id, Scenario: fmt.Sprintf("s%d", i%30), ConfigID: "c", Tasks: []rows.TaskRow{task}})
		items = append(items, repeatItem(rows.RepeatItem{RunID: id, Task: "t", Metric: "tc", Judge: "j", Seeds: []int64{1, 2, 3}}, ja))
		if bRepeats > 1 {
			items = append(items, repeatItem(rows.RepeatItem{RunID: id, Task: "t", Metric: "tc", Judge: "b", Seeds: []int64{1, 2, 3}}, ba))
		}
	}
	return runs, items
}

// Two judges that differ only by noise: asked three times each, their
// disagreement is all noise, and the share's interval holds 1 (issue 55,
// item 2: with the variances' n in the denominator it was about 2/3).
// With b asked once, b's noise is unknown: it is left out and the row
// says so; the share is then j's noise alone, half the disagreement here.
func TestNoiseShareOfJudgesAlikeButForNoise(t *testing.T) {
	for _, c := range []struct {
		repeats    int
		share      float64
		otherNoise bool
	}{{3, 1, true}, {1, 0.5, false}} {
		runs, items := noisyPair(c.repeats)
		s, err := CompareSelf("j", items, RunSlice(runs), BootstrapOptions{Resamples: 1000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Noise) != 1 {
			t.Fatalf("noise shares: %+v", s.Noise)
		}
		n := s.Noise[0]
		if !(n.Share.Lo <= c.share && c.share <= n.Share.Hi) || n.Share.Hi-n.Share.Lo > 0.4 {
			t.Errorf("b asked %d times: share %.3f [%.3f, %.3f], want an interval holding %g", c.repeats, n.Share.Value, n.Share.Lo, n.Share.Hi, c.share)
		}
		if n.OtherNoise != c.otherNoise {
			t.Errorf("b asked %d times: OtherNoise %v", c.repeats, n.OtherNoise)
		}
	}
}
