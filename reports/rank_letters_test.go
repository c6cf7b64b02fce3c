package reports

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gymlens/gymlens/analysis"
)

// Twenty-six configurations on ten scenarios, 3 points apart in steps
// (75 points from first to last) and a run sd of 4 around shared
// scenario effects: at the default 10,000 resamples, Holm over their 325
// pairs separates the far ones, so the letters are not all "a" (issue
// 52, item 4), and the best and the worst share none.
func TestRankLettersSeparateAtTheDefaultResamples(t *testing.T) {
	r := rand.New(rand.NewPCG(52, 4))
	var groups []analysis.Group
	var values [][]float64
	var scen []string
	effect := make([]float64, 10)
	for s := range effect {
		effect[s] = r.NormFloat64() * 10
	}
	for c := range 26 {
		g := analysis.Group{Key: map[string]string{"config": fmt.Sprintf("c%02d", c)}}
		for s := range 10 {
			for range 3 {
				g.Runs = append(g.Runs, len(values))
				values = append(values, []float64{float64(3*c) + effect[s] + r.NormFloat64()*4})
				scen = append(scen, fmt.Sprintf("s%d", s))
			}
		}
		groups = append(groups, g)
	}
	out := RankConfigs(groups, values, scen, 0, analysis.DefaultBootstrap)
	if len(out) != 26 {
		t.Fatalf("%d rows", len(out))
	}
	letters := map[string]bool{}
	for _, row := range out {
		for _, l := range row.Letters {
			letters[string(l)] = true
		}
	}
	best, worst := out[0].Letters, out[len(out)-1].Letters
	if len(letters) < 3 || slices.ContainsFunc([]rune(best), func(l rune) bool { return slices.Contains([]rune(worst), l) }) {
		t.Errorf("letters %v: best %q, worst %q", letters, best, worst)
	}
	if out[len(out)-1].TiedWithBest {
		t.Errorf("the worst (75 points below) is tied with the best")
	}
}
