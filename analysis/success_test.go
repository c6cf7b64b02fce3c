package analysis

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/rows"
)

// The hand-made PARE and Meta-ARE files and their reference numbers:
// ingest/testdata/pare/make_handmade.py (numpy, scipy, statsmodels).
var handmade = filepath.Join("..", "ingest", "testdata", "pare")

type passRefs struct {
	Wilson []struct {
		K, N          int
		Level, Lo, Hi float64
	}
	Scalar struct {
		PassAt  [][4]float64 `json:"pass_at"`
		PassHat [][4]float64 `json:"pass_hat"`
	}
	Pass          map[string]map[string]float64
	Success       map[string]float64
	CombinedATrue map[string]any `json:"combined_A_true"`
	AreSearchTrue map[string]any `json:"are_search_true"`
}

func loadPassRefs(t *testing.T) passRefs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(handmade, "refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r passRefs
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// resultRows reads a hand-made result file as the warehouse would give it.
func resultRows(t *testing.T, path string, read func(string, []byte) ([]pare.Result, error)) []rows.PAREResultRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := read(path, b)
	if err != nil {
		t.Fatal(err)
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	var out []rows.PAREResultRow
	for _, r := range rs {
		x := rows.PAREResultRow{ResultID: r.Key(), Source: r.Source, Scenario: r.Scenario, ConfigID: r.ConfigID(), Status: r.Status,
			RunNumber: -1, Success: f(r.Success), RunDuration: f(r.RunDuration), JobDuration: f(r.JobDuration),
			Capability: r.Capability, Phase: r.Phase, Noise: r.Noise()}
		if r.RunNumber != nil {
			x.RunNumber = *r.RunNumber
		}
		for i, c := range r.Counts {
			x.Counts[i] = math.NaN()
			if c != nil {
				x.Counts[i] = float64(*c)
			}
		}
		out = append(out, x)
	}
	return out
}

func TestWilsonAndPassEstimators(t *testing.T) {
	refs := loadPassRefs(t)
	for _, w := range refs.Wilson {
		lo, hi := Wilson(w.K, w.N, w.Level)
		if math.Abs(lo-w.Lo) > 1e-12 || math.Abs(hi-w.Hi) > 1e-12 {
			t.Errorf("Wilson(%d, %d, %g) = [%v, %v], statsmodels [%v, %v]", w.K, w.N, w.Level, lo, hi, w.Lo, w.Hi)
		}
	}
	if lo, hi := Wilson(0, 0, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("Wilson of no trials")
	}
	for _, c := range refs.Scalar.PassAt {
		if got := PassAt(int(c[0]), int(c[1]), int(c[2])); math.Abs(got-c[3]) > 1e-15 {
			t.Errorf("pass@%v with n=%v c=%v: %v, scipy %v", c[2], c[0], c[1], got, c[3])
		}
	}
	for _, c := range refs.Scalar.PassHat {
		if got := PassHat(int(c[0]), int(c[1]), int(c[2])); math.Abs(got-c[3]) > 1e-15 {
			t.Errorf("pass^%v with n=%v c=%v: %v, scipy %v", c[2], c[0], c[1], got, c[3])
		}
	}
	if !math.IsNaN(PassAt(2, 1, 3)) || !math.IsNaN(PassHat(2, 1, 3)) {
		t.Error("k > n must be NaN")
	}
}

// PARE's and Meta-ARE's report statistics, recomputed in Go, against
// the numpy port of their report code.
func TestReportStats(t *testing.T) {
	refs := loadPassRefs(t)
	dir := filepath.Join(handmade, "results", "base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10")
	results := resultRows(t, filepath.Join(dir, "obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0_result.json"), pare.ReadPAREResults)
	got := ReportStats(results, func(r *rows.PAREResultRow) string { return r.Scenario })
	check := func(name string, want map[string]any, got map[string]float64) {
		n := 0
		for k, v := range want {
			f, ok := v.(float64)
			if !ok || k == "tool_failure_probability" || k == "num_env_events_per_minute" {
				continue
			}
			n++
			if g, ok := got[k]; !ok || !same(g, f) {
				t.Errorf("%s %s: %v, reference %v", name, k, got[k], f)
			}
		}
		if n < 15 {
			t.Errorf("%s: only %d statistics compared", name, n)
		}
	}
	check("PARE A", refs.CombinedATrue, got)
	are := resultRows(t, filepath.Join(handmade, "are", "standard", "search", "output.jsonl"), pare.ReadAREOutput)
	check("ARE search", refs.AreSearchTrue, ReportStats(are, func(r *rows.PAREResultRow) string { return r.Scenario + "/" + r.Phase }))
}

// Ratios of sums compared: with denominators of one they are the means
// CompareNamed compares; otherwise the pooled ratios, by hand.
func TestCompareRatios(t *testing.T) {
	values := [][]float64{{1}, {3}, {2}, {math.NaN()}, {5}, {4}}
	scen := []string{"s1", "s2", "s1", "s2", "s1", "s2"}
	pairs := []Pair{{A: "a", B: "b", RunsA: []int{0, 1}, RunsB: []int{2, 3, 4, 5}}}
	opt := BootstrapOptions{Resamples: 500, Seed: 3}
	ones := [][]float64{{1}, {1}, {1}, {1}, {1}, {1}}
	got := CompareRatios(pairs, values, ones, scen, []string{"x"}, nil, opt)
	want := CompareNamed(pairs, values, scen, []string{"x"}, opt)
	if got[0].Value != want[0].Value || got[0].Lo != want[0].Lo || got[0].Hi != want[0].Hi || got[0].P != want[0].P || got[0].NB != 3 {
		t.Errorf("%+v\n%+v", got[0], want[0])
	}
	// A: (1 + 1) / (2 + 2) = 0.5; B: (2 + 1) / (2 + 4) = 0.5, in percent.
	num := [][]float64{{1}, {1}, {2}, {1}, {math.NaN()}, {7}}
	den := [][]float64{{2}, {2}, {2}, {4}, {9}, {math.NaN()}}
	r := CompareRatios(pairs, num, den, scen, []string{"pooled"}, []float64{100}, opt)[0]
	if r.MeanA != 50 || r.MeanB != 50 || r.Value != 0 || r.NA != 2 || r.NB != 2 {
		t.Errorf("%+v", r)
	}
}

// Pooled ratios: with denominators of one, the means SummarizeNamed
// gives; otherwise the ratio of sums, by hand.
func TestSummarizeRatios(t *testing.T) {
	values := [][]float64{{1}, {3}, {2}, {math.NaN()}}
	ones := [][]float64{{1}, {1}, {1}, {1}}
	scen := []string{"s1", "s2", "s1", "s2"}
	g := []Group{{Key: map[string]string{"c": "x"}, Runs: []int{0, 1, 2, 3}}}
	opt := BootstrapOptions{Resamples: 400, Seed: 5}
	got := SummarizeRatios(g, values, ones, scen, []string{"v"}, []float64{1}, opt)[0]
	want := SummarizeNamed(g, values, scen, []string{"v"}, opt)[0]
	if got.Value != want.Value || got.Lo != want.Lo || got.Hi != want.Hi || got.NRuns != 3 {
		t.Errorf("%+v\n%+v", got, want)
	}
	// (1 + 2 + 1) / (2 + 2 + 4) = 0.5, in percent; run 3 lacks a denominator.
	num := [][]float64{{1}, {2}, {1}, {5}}
	den := [][]float64{{2}, {2}, {4}, {math.NaN()}}
	r := SummarizeRatios(g, num, den, scen, []string{"p"}, []float64{100}, opt)[0]
	if r.Value != 50 || r.NRuns != 3 || r.Clusters != 2 {
		t.Errorf("%+v", r)
	}
	if e := SummarizeRatios(g, [][]float64{{math.NaN()}, {math.NaN()}, {math.NaN()}, {math.NaN()}}, den, scen, []string{"p"}, []float64{100}, opt)[0]; !math.IsNaN(e.Value) || e.NRuns != 0 {
		t.Errorf("no runs: %+v", e)
	}
}
