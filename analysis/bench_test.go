package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/gymlens/gymlens/ingest"
)

// BenchmarkSummarize: the four metrics of 26 configurations × 90 runs
// (10 scenarios) with 10,000-resample intervals.
func BenchmarkSummarize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var runs []ingest.RunRow
	var values [][]float64
	var missing []Missing
	var scen []string
	for c := 0; c < 26; c++ {
		for i := 0; i < 90; i++ {
			run := ingest.RunRow{ConfigID: string(rune('A' + c)), Scenario: string(rune('a' + i%10))}
			v := make([]float64, numMetrics)
			for k := range v {
				v[k] = r.Float64() * 100
			}
			runs, values, missing, scen = append(runs, run), append(values, v), append(missing, Missing{}), append(scen, run.Scenario)
		}
	}
	groups, _ := GroupRuns(runs, []string{"config"}, nil)
	opt := BootstrapOptions{Resamples: 10000, Seed: 1}
	b.ReportAllocs()
	for b.Loop() {
		Summarize(groups, values, missing, scen, []int{mTC, mTA, mTRD, mTRJ}, opt)
	}
}
