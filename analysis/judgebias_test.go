package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// biasFamilies are the synthetic data's families: models "Model A" …
// and judges jA … of families A, B and C.
var biasFamilies = Families{"Model A": "A", "Model B": "B", "Model C": "C", "jA": "A", "jB": "B", "jC": "C"}

// biasItem is a task of the synthetic data.
type biasItem struct {
	scenario, model, task string
	rep                   int
	length                float64
	scores                map[string]float64
	human                 *float64
}

// biasRuns lays items out as runs with TR-J judgments (every construct
// the item's score), their lengths and human ratings (question trust).
func biasRuns(items []biasItem) ([]rows.RunRow, ItemLengths, []rows.RatingRow) {
	var runs []rows.RunRow
	at := map[string]int{}
	length := map[[2]string]float64{}
	var ratings []rows.RatingRow
	for _, it := range items {
		id := fmt.Sprintf("%s/%s/%d", it.model, it.scenario, it.rep)
		k, ok := at[id]
		if !ok {
			k = len(runs)
			at[id] = k
			runs = append(runs, rows.RunRow{RunID: id, ConfigID: it.model + " | CD | none", Model: it.model, Harness: "CD", Effort: "none",
				Scenario: it.scenario, Persona: "p", Rep: it.rep})
		}
		t := rows.TaskRow{Task: it.task, Weight: 1}
		for _, j := range []string{"jA", "jB", "jC"} {
			if v, ok := it.scores[j]; ok {
				t.TRJ = append(t.TRJ, rows.TRJJudgment{Judge: j, Scores: [5]float64{v, v, v, v, v}})
			}
		}
		runs[k].Tasks = append(runs[k].Tasks, t)
		length[[2]string{id, it.task}] = it.length
		if it.human != nil {
			ratings = append(ratings, rows.RatingRow{Rater: "h1", Question: "trust", Value: *it.human, RunID: id, Task: it.task})
		}
	}
	lengths := func(run, kind, task string) (float64, bool) {
		if kind != "trj" {
			return 0, false
		}
		x, ok := length[[2]string{run, task}]
		return x, ok
	}
	return runs, lengths, ratings
}

// synthBias draws items as make_bias_refs.py does: jA prefers agents of
// its family by sp and its score rises by slope per 1,000 characters.
func synthBias(seed uint64, scenarios int, sp, slope float64, humans bool) []biasItem {
	r := rand.New(rand.NewPCG(seed, 62))
	var items []biasItem
	for s := range scenarios {
		se := r.NormFloat64() * 0.4
		for _, fam := range []string{"A", "B", "C"} {
			for rep := 1; rep <= 2; rep++ {
				for t := range 3 {
					q := 3 + se + r.NormFloat64()*0.6
					L := float64(300 + r.IntN(5700))
					sc := map[string]float64{}
					for _, j := range []string{"jA", "jB", "jC"} {
						x := q + map[string]float64{"jA": 0.1, "jB": -0.2, "jC": 0}[j] + r.NormFloat64()*0.35
						if j == "jA" {
							if fam == "A" {
								x += sp
							}
							x += slope * (L - 3000) / 1000
						}
						sc[j] = x
					}
					it := biasItem{scenario: fmt.Sprintf("s%02d", s), model: "Model " + fam, task: fmt.Sprintf("t%d", t), rep: rep, length: L, scores: sc}
					if h := q + r.NormFloat64()*0.3; humans && r.Float64() < 1.0/3 {
						it.human = &h
					}
					items = append(items, it)
				}
			}
		}
	}
	return items
}

func measureBias(t testing.TB, items []biasItem, humans bool, opt BootstrapOptions) *JudgeBias {
	runs, lengths, ratings := biasRuns(items)
	var rs []rows.RatingRow
	if humans {
		rs = ratings
	}
	jb, err := MeasureJudgeBias(RunSlice(runs), biasFamilies, lengths, RatingsOf(rs), opt)
	if err != nil {
		t.Fatal(err)
	}
	return jb
}

func spOf(jb *JudgeBias, judge string) SelfPreference {
	for _, s := range jb.SelfPreference {
		if s.Judge == judge && s.Score == "TRJ" {
			return s
		}
	}
	panic("no self-preference of " + judge)
}

func lenOf(jb *JudgeBias, judge, ref string) LengthBias {
	for _, l := range jb.Length {
		if l.Judge == judge && l.Reference == ref && l.Score == "TRJ" {
			return l
		}
	}
	panic("no length bias of " + judge + " against " + ref)
}

// The estimates are numpy's on the data make_bias_refs.py drew.
func TestJudgeBiasMatchesNumpy(t *testing.T) {
	b, err := os.ReadFile("testdata/bias_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Items []struct {
			Scenario, Model, Task string
			Rep                   int
			Length                float64
			Scores                map[string]float64
			Human                 *float64
		}
		SelfPreference map[string]float64 `json:"self_preference"`
		VsHumans       map[string]float64 `json:"length_vs_humans"`
		Pairs          map[string]float64 `json:"length_pairs"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var items []biasItem
	for _, it := range ref.Items {
		items = append(items, biasItem{scenario: it.Scenario, model: it.Model, task: it.Task, rep: it.Rep, length: it.Length, scores: it.Scores, human: it.Human})
	}
	opt := BootstrapOptions{Resamples: 200, Seed: 1}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %.12f, numpy %.12f", what, got, want)
		}
	}
	jb := measureBias(t, items, true, opt)
	for j, want := range ref.SelfPreference {
		close("self-preference "+j, spOf(jb, j).Value, want)
		close("length against the humans "+j, lenOf(jb, j, "humans").Value, ref.VsHumans[j])
	}
	jb = measureBias(t, items, false, opt)
	for pair, want := range ref.Pairs {
		a, b, _ := strings.Cut(pair, "|")
		close("length "+pair, lenOf(jb, a, b).Value, want)
	}
}

// Injected effects, alone and together, fall inside their intervals,
// and the intervals of the effect injected exclude 0.
func TestJudgeBiasRecovered(t *testing.T) {
	opt := BootstrapOptions{Resamples: 2000, Seed: 3}
	for _, c := range []struct {
		name      string
		sp, slope float64
	}{{"self-preference", 0.3, 0}, {"length", 0, 0.2}, {"both", 0.3, 0.2}} {
		for _, humans := range []bool{false, true} {
			jb := measureBias(t, synthBias(7, 30, c.sp, c.slope, humans), humans, opt)
			sp := spOf(jb, "jA")
			if !(sp.Lo <= c.sp && c.sp <= sp.Hi) {
				t.Errorf("%s, humans %v: self-preference %.3f [%.3f, %.3f] misses %.1f", c.name, humans, sp.Value, sp.Lo, sp.Hi, c.sp)
			}
			if c.sp > 0 && !(sp.Lo > 0) {
				t.Errorf("%s: self-preference's interval [%.3f, %.3f] does not exclude 0", c.name, sp.Lo, sp.Hi)
			}
			ref := "jB"
			if humans {
				ref = "humans"
			}
			lb := lenOf(jb, "jA", ref)
			t.Logf("%s, humans %v: self-preference %.3f [%.3f, %.3f]; slope against %s %.3f [%.3f, %.3f]", c.name, humans, sp.Value, sp.Lo, sp.Hi, ref, lb.Value, lb.Lo, lb.Hi)
			if !(lb.Lo <= c.slope && c.slope <= lb.Hi) {
				t.Errorf("%s, humans %v: length slope %.3f [%.3f, %.3f] misses %.1f", c.name, humans, lb.Value, lb.Lo, lb.Hi, c.slope)
			}
			if c.slope > 0 && !(lb.Lo > 0) {
				t.Errorf("%s: the length slope's interval [%.3f, %.3f] does not exclude 0", c.name, lb.Lo, lb.Hi)
			}
			// A judge with no length effect, against another.
			if !humans {
				if l := lenOf(jb, "jB", "jC"); !(l.Lo <= 0 && 0 <= l.Hi) {
					t.Errorf("%s: jB against jC: slope %.3f [%.3f, %.3f] excludes 0", c.name, l.Value, l.Lo, l.Hi)
				}
			}
		}
	}
}

// biasNullDatasets is the null datasets of TestJudgeBiasNullRejection,
// for each design (seeds 5000 to 6999, fixed before their rates were
// seen).
const biasNullDatasets = 2000

// biasNullScenarios is the scenarios of each null dataset (1,080 tasks
// rated by three judges, about 360 of them by humans too).
const biasNullScenarios = 60

// Over null datasets, each effect's rejection rate at α = 0.05 pooled
// over its three judges (or pairs) is at most α + 2 Monte Carlo se, the
// se counting that the three tests read the same data: the binomial se of
// 1,500 independent tests times √(design effect), the design effect the
// per-dataset variance of the number of the three rejected over what
// independent tests would give. Each judge's (or pair's) rate alone is
// at most α + 2 se of its 2,000 datasets (0.0597).
func TestJudgeBiasNullRejection(t *testing.T) {
	if testing.Short() {
		t.Skip("measures bias on 4,000 null datasets")
	}
	const alpha = 0.05
	opt := BootstrapOptions{} // the intervals are cluster-robust t: only the level applies
	for _, humans := range []bool{false, true} {
		rejected, perDataset := nullRejections(t, 5000, biasNullDatasets, humans, alpha, opt)
		effects := map[string][]string{"self-preference": {"self-preference jA", "self-preference jB", "self-preference jC"}}
		if humans {
			effects["length"] = []string{"length jA vs humans", "length jB vs humans", "length jC vs humans"}
		} else {
			effects["length"] = []string{"length jA vs jB", "length jA vs jC", "length jB vs jC"}
		}
		se := math.Sqrt(alpha * (1 - alpha) / biasNullDatasets)
		for effect, keys := range effects {
			for _, k := range keys {
				rate := float64(rejected[k]) / biasNullDatasets
				t.Logf("humans %v: %s: rejected %.4f", humans, k, rate)
				if rate > alpha+2*se {
					t.Errorf("humans %v: %s rejected in %.4f of %d null datasets, above α + 2 se = %.4f", humans, k, rate, biasNullDatasets, alpha+2*se)
				}
			}
			m := float64(len(keys))
			counts := perDataset[effect]
			rate := stat.Mean(counts) / m
			deff := 1.0
			if rate > 0 && rate < 1 {
				deff = stat.SD(counts) * stat.SD(counts) / m / (rate * (1 - rate))
			}
			pooled := alpha + 2*math.Sqrt(alpha*(1-alpha)*deff/(m*biasNullDatasets))
			t.Logf("humans %v: %s, pooled: rejected %.4f (design effect %.2f, bound %.4f)", humans, effect, rate, deff, pooled)
			if rate > pooled {
				t.Errorf("humans %v: %s rejected in %.4f of its %d tests, above α + 2 se = %.4f", humans, effect, rate, len(counts)*len(keys), pooled)
			}
		}
	}
}

// nullRejections measures the bias of n null datasets of a design (seeds
// first on) and counts, for each test (an effect and its judge or pair),
// the datasets in which it rejects at alpha, and for each effect the
// number of its tests rejected in each dataset.
func nullRejections(t testing.TB, first uint64, n int, humans bool, alpha float64, opt BootstrapOptions) (map[string]int, map[string][]float64) {
	rejected := map[string]int{}
	perDataset := map[string][]float64{}
	for d := range n {
		jb := measureBias(t, synthBias(first+uint64(d), biasNullScenarios, 0, 0, humans), humans, opt)
		count := map[string]float64{"self-preference": 0, "length": 0}
		for _, s := range jb.SelfPreference {
			rejected["self-preference "+s.Judge] += 0
			if s.P < alpha {
				rejected["self-preference "+s.Judge]++
				count["self-preference"]++
			}
		}
		for _, l := range jb.Length {
			rejected["length "+l.Judge+" vs "+l.Reference] += 0
			if l.P < alpha {
				rejected["length "+l.Judge+" vs "+l.Reference]++
				count["length"]++
			}
		}
		for e, k := range count {
			perDataset[e] = append(perDataset[e], k)
		}
	}
	return rejected, perDataset
}

func TestReadFamilies(t *testing.T) {
	f, err := ReadFamilies(strings.NewReader("name,family\nGPT 5.6 Luna,GPT\n\"judge-gpt, mini\",GPT\n"), "fam.csv")
	if err != nil || f["judge-gpt, mini"] != "GPT" || len(f) != 2 {
		t.Fatalf("%v %v", f, err)
	}
	for in, want := range map[string]string{
		"":                        "fam.csv: empty",
		"model,family\na,b\n":     "fam.csv:1: expected the header name,family",
		"name,family\na,b\na,c\n": `fam.csv:3: "a" is listed again (first on line 2)`,
		"name,family\na,\n":       `fam.csv:2: field family: empty for "a"`,
		"name,family\n,b\n":       "fam.csv:2: field name: empty",
		"name,family\na,b,c\n":    "fam.csv:2: expected 2 fields",
		"name,family\n":           "fam.csv: no row after the header",
	} {
		if _, err := ReadFamilies(strings.NewReader(in), "fam.csv"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	// A name missing from the map is refused with its name.
	runs, lengths, _ := biasRuns(synthBias(1, 3, 0, 0, false))
	fam := Families{"Model A": "A", "Model B": "B", "Model C": "C", "jA": "A", "jB": "B"}
	if _, err := MeasureJudgeBias(RunSlice(runs), fam, lengths, nil, BootstrapOptions{Resamples: 50}); err == nil || !strings.Contains(err.Error(), `judge "jC"`) {
		t.Errorf("jC without a family: %v", err)
	}
	delete(fam, "Model B")
	fam["jC"] = "C"
	if _, err := MeasureJudgeBias(RunSlice(runs), fam, lengths, nil, BootstrapOptions{Resamples: 50}); err == nil || !strings.Contains(err.Error(), `agent model "Model B"`) {
		t.Errorf("Model B without a family: %v", err)
	}
}

// With fewer than two judge families among the agents' families,
// self-preference is not measured and a note says why.
func TestSelfPreferenceNeedsTwoSharedFamilies(t *testing.T) {
	runs, _, _ := biasRuns(synthBias(1, 4, 0, 0, false))
	fam := Families{"Model A": "A", "Model B": "B", "Model C": "C", "jA": "A", "jB": "X", "jC": "Y"}
	jb, err := MeasureJudgeBias(RunSlice(runs), fam, nil, nil, BootstrapOptions{Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(jb.SelfPreference) != 0 || len(jb.Notes) == 0 || !strings.Contains(jb.Notes[0], "two judge families or more that are also agent families") {
		t.Errorf("%+v", jb)
	}
}

// Leave-family-out: a judge that favours its family's agents inflates the
// measured difference; leaving its family's judges out removes it, and the
// bias is the difference of the two, from the same resamples.
func TestCompareDebiased(t *testing.T) {
	items := synthBias(5, 20, 0.6, 0, true)
	runs, _, ratings := biasRuns(items)
	var pairs []Pair
	byModel := map[string][]int{}
	for i, r := range runs {
		byModel[r.Model] = append(byModel[r.Model], i)
	}
	pairs = append(pairs, Pair{A: "Model B | CD | none", B: "Model A | CD | none", RunsA: byModel["Model B"], RunsB: byModel["Model A"]})
	opt := BootstrapOptions{Resamples: 2000, Seed: 4}
	res, err := CompareDebiased(pairs, RunSlice(runs), []int{mTRJ, mTRD}, biasFamilies, RatingsOf(ratings), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Metric != "TR-J" {
		t.Fatalf("rows: %+v", res.Rows)
	}
	row := res.Rows[0]
	if strings.Join(row.Dropped, ",") != "jA,jB" || strings.Join(row.Kept, ",") != "jC" {
		t.Errorf("dropped %v kept %v", row.Dropped, row.Kept)
	}
	// jA adds 0.6 to Model A's items, one judge of three: 0.2 to the mean.
	if !(row.Bias.Lo <= 0.2 && 0.2 <= row.Bias.Hi) || math.Abs(row.Bias.Value-(row.Measured.Value-row.LeaveOut.Value)) > 1e-12 {
		t.Errorf("bias %+v, measured %v, leave-out %v", row.Bias, row.Measured.Value, row.LeaveOut.Value)
	}
	if len(res.PPI) != 1 || res.PPI[0].Score != "TRJ" {
		t.Fatalf("PPI: %+v", res.PPI)
	}
	// The humans see no self-preference: the corrected difference is
	// about the judges' less the 0.2 jA adds.
	p := res.PPI[0]
	if !(p.Corrected.Value < p.Judge.Value-0.1) || !(p.Corrected.Lo <= p.Judge.Value-0.2 && p.Judge.Value-0.2 <= p.Corrected.Hi) {
		t.Errorf("PPI: judges %.3f, corrected %.3f [%.3f, %.3f]", p.Judge.Value, p.Corrected.Value, p.Corrected.Lo, p.Corrected.Hi)
	}
	// Two judges are too few.
	two := Families{"Model A": "A", "Model B": "B", "jA": "A", "jB": "B"}
	for i := range runs {
		for k := range runs[i].Tasks {
			runs[i].Tasks[k].TRJ = runs[i].Tasks[k].TRJ[:2]
		}
	}
	if _, err := CompareDebiased(pairs, RunSlice(runs), []int{mTRJ}, two, nil, opt); err == nil || !strings.Contains(err.Error(), "3 judges or more") {
		t.Errorf("two judges: %v", err)
	}
}

func TestConclusionChange(t *testing.T) {
	e := func(lo, v, hi float64) Estimate { return Estimate{Lo: lo, Value: v, Hi: hi} }
	for _, c := range []struct {
		m, l Estimate
		want string
	}{
		{e(0.1, 0.2, 0.3), e(-0.1, 0.1, 0.3), "no longer does"},
		{e(-0.1, 0.1, 0.3), e(0.1, 0.2, 0.3), "it does"},
		{e(0.1, 0.2, 0.3), e(-0.3, -0.2, -0.1), "changes sign"},
		{e(0.1, 0.2, 0.3), e(0.05, 0.1, 0.3), ""},
	} {
		if got := conclusionChange(c.m, c.l); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v %v: %q", c.m, c.l, got)
		}
	}
}
