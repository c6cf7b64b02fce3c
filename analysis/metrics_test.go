package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// A tiny run computed by hand:
//
// task a (weight 2): evidence 1, outputs 0.5, no constraints;
//
//	judge A: correctness .8 grounding .6 → semantics .7; completeness .4 artifact .6 → completion .5
//	judge B: correctness 1 grounding .8 → .9;             completeness .6 artifact .8 → .7
//	averaged over judges: semantics .8, completion .6
//	TC_a = mean(1, .5, .8, .6) = .725
//
// task b (weight 1): constraints 0 only, no judgments → TC_b = 0
//
//	TC_r = (2·.725 + 1·0)/3 = .48333… → 48.333…
//
// depths: a suggest/suggest (match), b execute/prepare (no) → TR-D 50
// TR-J: a judged by A (all 4) and B (all 2) → 3; b not judged → TR-J_r = 3
// TA: A now 1 later 1, B now 1 later 0 → 1[both] = 1, 0 → 50 (half credit)
func tinyRun() rows.RunRow {
	return rows.RunRow{
		RunID: "r1", Scenario: "s1", HasTAWindow: true,
		Tasks: []rows.TaskRow{
			{Task: "a", Weight: 2, Rules: [3]float64{1, 0.5, 0}, RuleSet: [3]bool{true, true, false},
				Expected: "suggest", Chosen: "suggest",
				TC: []rows.TCJudgment{
					{Judge: "A", Correctness: 0.8, Grounding: 0.6, Completeness: 0.4, ArtifactQ: 0.6},
					{Judge: "B", Correctness: 1, Grounding: 0.8, Completeness: 0.6, ArtifactQ: 0.8}},
				TRJ: []rows.TRJJudgment{{Judge: "A", Scores: [5]float64{4, 4, 4, 4, 4}}, {Judge: "B", Scores: [5]float64{2, 2, 2, 2, 2}}}},
			{Task: "b", Weight: 1, Rules: [3]float64{0, 0, 0}, RuleSet: [3]bool{false, false, true},
				Expected: "execute", Chosen: "prepare"},
		},
		TA: []rows.TAJudgment{{Judge: "A", Now: 1, Later: 1, CQ: 1, HasCQ: true}, {Judge: "B", Now: 1, Later: 0, CQ: 0.5, HasCQ: true}},
	}
}

func TestRunValuesByHand(t *testing.T) {
	r := tinyRun()
	v, miss := RunValues(&r, "")
	want := map[string]float64{
		"TC": 100 * (2*0.725 + 0) / 3, "TA": 50, "TR-D": 50, "TR-J": 3,
		"TC.evidence": 100, "TC.outputs": 50, "TC.constraints": 0, "TC.semantics": 80, "TC.completion": 60,
		"TC.correctness": 90, "TC.grounding": 70, "TC.completeness": 50, "TC.artifact_quality": 70,
		"TA.now": 100, "TA.later": 50, "TA.cq": 75, "TRJ.faith": 3,
	}
	for m, w := range want {
		near(t, m, v[MetricIndex(m)], w, 1e-12)
	}
	if miss.TasksWithoutTC != 1 || miss.TasksWithoutTRJ != 1 || miss.TasksWithoutDepth != 0 {
		t.Errorf("missing %+v", miss)
	}
	// One judge alone.
	v, _ = RunValues(&r, "B")
	near(t, "TC (judge B)", v[mTC], 100*(2*(1+0.5+0.9+0.7)/4)/3, 1e-12)
	near(t, "TA (judge B)", v[mTA], 0, 0)
	near(t, "TR-J (judge B)", v[mTRJ], 2, 0)
}

func TestRunValuesMissingData(t *testing.T) {
	r := tinyRun()
	r.HasTAWindow = false
	v, miss := RunValues(&r, "")
	if !math.IsNaN(v[mTA]) || !miss.NoTAWindow {
		t.Errorf("no TA window: TA %v, %+v", v[mTA], miss)
	}
	r = tinyRun()
	r.TA = nil
	v, miss = RunValues(&r, "")
	if !math.IsNaN(v[mTA]) || !miss.NoTAJudgment {
		t.Errorf("no TA judgment: TA %v, %+v", v[mTA], miss)
	}
	r.Tasks = nil
	v, miss = RunValues(&r, "")
	if !math.IsNaN(v[mTC]) || !math.IsNaN(v[mTRD]) || !miss.NoActiveTasks {
		t.Errorf("no active tasks: %v %+v", v[:4], miss)
	}
}

func TestSummarizeAndWarnings(t *testing.T) {
	runs := []rows.RunRow{tinyRun(), tinyRun(), tinyRun()}
	runs[1].RunID, runs[1].Scenario, runs[1].Tasks[0].Chosen = "r2", "s2", "noop"
	runs[2].RunID, runs[2].Scenario, runs[2].HasTAWindow = "r3", "s3", false
	values, missing, scen, groups := summarizeInputs(t, runs)
	res := Summarize(groups, values, missing, scen, []int{mTC, mTA, mTRD}, BootstrapOptions{Resamples: 500})
	if res[2].Metric != "TR-D" || math.Abs(res[2].Value-100.0/3) > 1e-12 || res[2].NRuns != 3 || res[2].Clusters != 3 {
		t.Errorf("TR-D %+v", res[2])
	}
	if res[1].NRuns != 2 || !strings.Contains(strings.Join(res[1].Warnings, "|"), "1 runs whose scenario has no TA window") {
		t.Errorf("TA %+v", res[1])
	}
	if !strings.Contains(strings.Join(res[0].Warnings, "|"), "3 active tasks without TC judgments") {
		t.Errorf("TC warnings %v", res[0].Warnings)
	}
	if _, err := GroupRuns(runs, []string{"colour"}, nil); err == nil {
		t.Error("unknown dimension accepted")
	}
	g, _ := GroupRuns(runs, []string{"scenario"}, map[string][]string{"scenario": {"s1", "s3"}})
	if len(g) != 2 || g[0].Key["scenario"] != "s1" || g[1].Key["scenario"] != "s3" {
		t.Errorf("groups %+v", g)
	}
}

// summarizeInputs are what Summarize takes for runs, in one group.
func summarizeInputs(t *testing.T, runs []rows.RunRow) ([][]float64, []Missing, []string, []Group) {
	t.Helper()
	values := make([][]float64, len(runs))
	missing := make([]Missing, len(runs))
	scen := make([]string, len(runs))
	for i := range runs {
		values[i], missing[i] = RunValues(&runs[i], "")
		scen[i] = runs[i].Scenario
	}
	groups, err := GroupRuns(runs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return values, missing, scen, groups
}
