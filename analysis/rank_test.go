package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// rankCase builds configurations over 10 scenarios, one run each, whose
// value in scenario s is value(config, s); it returns the groups, values
// and scenarios Ranks takes (the metric at place 0).
func rankCase(configs []string, value func(c string, s int) float64) ([]Group, [][]float64, []string) {
	var groups []Group
	var values [][]float64
	var scen []string
	for _, c := range configs {
		g := Group{Key: map[string]string{"config": c}}
		for s := range 10 {
			g.Runs = append(g.Runs, len(values))
			values = append(values, []float64{value(c, s)})
			scen = append(scen, fmt.Sprintf("s%d", s))
		}
		groups = append(groups, g)
	}
	return groups, values, scen
}

// Configurations far apart, with the scenarios' effects shared: every
// resample orders them the same way, so each rank interval is its rank
// and only the best is ever first.
func TestRanksSeparated(t *testing.T) {
	groups, values, scen := rankCase([]string{"low", "top", "mid", "high"}, func(c string, s int) float64 {
		base := map[string]float64{"low": 10, "mid": 20, "high": 30, "top": 40}[c]
		return base + 5*float64(s%3)
	})
	got := Ranks(groups, values, scen, 0, BootstrapOptions{Resamples: 2000, Seed: 3})
	want := []string{"top", "high", "mid", "low"}
	for i, r := range got {
		if r.Config != want[i] || r.Rank != i+1 || r.RankLo != i+1 || r.RankHi != i+1 || r.PBest != map[bool]float64{true: 1, false: 0}[i == 0] {
			t.Errorf("%d: %+v", i, r)
		}
	}
}

// Two configurations whose difference is +1 on six scenarios and −1.5 on
// four: P(best) is a binomial probability (testdata/make_rank_refs.py),
// which the resampled share matches within Monte Carlo error; a third,
// far below, is always third.
func TestRanksPBestAgainstTheBinomial(t *testing.T) {
	b, err := os.ReadFile("testdata/rank_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		PBestA float64 `json:"p_best_a"`
		PBestB float64 `json:"p_best_b"`
	}
	json.Unmarshal(b, &ref)
	groups, values, scen := rankCase([]string{"A", "B", "C"}, func(c string, s int) float64 {
		switch c {
		case "A":
			if s < 6 {
				return 51
			}
			return 48.5
		case "B":
			return 50
		}
		return 10
	})
	const n = 20000
	got := Ranks(groups, values, scen, 0, BootstrapOptions{Resamples: n, Seed: 1})
	by := map[string]RankEstimate{}
	for _, r := range got {
		by[r.Config] = r
	}
	se := func(p float64) float64 { return 4 * math.Sqrt(p*(1-p)/n) }
	if a := by["A"]; math.Abs(a.PBest-ref.PBestA) > se(ref.PBestA) || a.RankLo != 1 || a.RankHi != 2 || a.Rank != 1 {
		t.Errorf("A: %+v, P(best) want %.4f", a, ref.PBestA)
	}
	if b := by["B"]; math.Abs(b.PBest-ref.PBestB) > se(ref.PBestB) || b.RankLo != 1 || b.RankHi != 2 || b.Rank != 1 {
		t.Errorf("B: %+v, P(best) want %.4f", b, ref.PBestB)
	}
	if c := by["C"]; c.Rank != 3 || c.RankLo != 3 || c.RankHi != 3 || c.PBest != 0 {
		t.Errorf("C: %+v", c)
	}
}

func TestLetterDisplay(t *testing.T) {
	d := func(pairs ...string) map[[2]string]bool {
		m := map[[2]string]bool{}
		for _, p := range pairs {
			m[[2]string{p[:1], p[1:]}] = true
		}
		return m
	}
	for _, c := range []struct {
		groups []string
		diff   map[[2]string]bool
		want   []string
	}{
		{[]string{"A", "B", "C"}, d(), []string{"a", "a", "a"}},
		{[]string{"A", "B", "C"}, d("AB", "AC", "BC"), []string{"a", "b", "c"}},
		{[]string{"A", "B", "C"}, d("AC"), []string{"a", "ab", "b"}},
		{[]string{"A", "B", "C", "D"}, d("AC", "AD", "BD"), []string{"a", "ab", "bc", "c"}},
		{[]string{"A", "B", "C", "D"}, d("AD"), []string{"a", "ab", "ab", "b"}},
	} {
		if got := LetterDisplay(c.groups, c.diff); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.diff, got, c.want)
		}
	}
	// Whatever the pattern, a display is valid: two groups share a letter
	// exactly when they are not different.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 2 + trial%9
		var groups []string
		for i := range n {
			groups = append(groups, string(rune('A'+i)))
		}
		diff := map[[2]string]bool{}
		for i := range n {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < 0.4 {
					diff[[2]string{groups[i], groups[j]}] = true
				}
			}
		}
		got := LetterDisplay(groups, diff)
		for i := range n {
			for j := i + 1; j < n; j++ {
				share := strings.ContainsFunc(got[i], func(r rune) bool { return strings.ContainsRune(got[j], r) })
				if share == diff[[2]string{groups[i], groups[j]}] {
					t.Fatalf("trial %d: %v different %v, letters %v", trial, groups[i]+groups[j], diff, got)
				}
			}
		}
	}
}
