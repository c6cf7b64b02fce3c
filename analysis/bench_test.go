package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// BenchmarkSummarize: the four metrics of 26 configurations × 90 runs
// (10 scenarios) with 10,000-resample intervals, by configuration and by
// scenario.
func BenchmarkSummarize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var runs []rows.RunRow
	var values [][]float64
	var missing []Missing
	var scen []string
	for c := 0; c < 26; c++ {
		for i := 0; i < 90; i++ {
			run := rows.RunRow{ConfigID: string(rune('A' + c)), Scenario: string(rune('a' + i%10))}
			v := make([]float64, numMetrics)
			for k := range v {
				v[k] = r.Float64() * 100
			}
			runs, values, missing, scen = append(runs, run), append(values, v), append(missing, Missing{}), append(scen, run.Scenario)
		}
	}
	for _, by := range []string{"config", "scenario"} {
		// By scenario, a group has one scenario, so its 234 runs are the
		// clusters: the breakdown that costs most.
		b.Run(by, func(b *testing.B) {
			groups, _ := GroupRuns(runs, []string{by}, nil)
			opt := BootstrapOptions{Resamples: 10000, Seed: 1}
			b.ReportAllocs()
			for b.Loop() {
				Summarize(groups, values, missing, scen, []int{mTC, mTA, mTRD, mTRJ}, opt)
			}
		})
	}
}

// BenchmarkAlphaBootstrap: Krippendorff's α (interval) of 10,000 items × 5
// raters with 20% missing, and a 1,000-resample interval over items.
func BenchmarkAlphaBootstrap(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	units := make([][]float64, 10000)
	for i := range units {
		t := 3 + r.NormFloat64()
		for k := 0; k < 5; k++ {
			if r.Float64() >= 0.2 {
				units[i] = append(units[i], t+0.6*r.NormFloat64())
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		a, _ := stat.NewAlphaData(units, Interval)
		stat.ClusterBootstrap(a.Pairable, 1, func(w, out []float64) { out[0] = a.Alpha(w) }, BootstrapOptions{Resamples: 1000, Seed: 1})
	}
}

// BenchmarkContinuousAgreement: two judges on 30,000 tasks of 10
// scenarios and 26 configurations, 10,000 resamples.
func BenchmarkContinuousAgreement(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	p := Paired{Clusters: 10, Configs: 26}
	for i := 0; i < 30000; i++ {
		a := r.Float64() * 100
		p.A, p.B = append(p.A, a), append(p.B, a+10*r.NormFloat64())
		p.Cluster, p.Config = append(p.Cluster, i%10), append(p.Config, i%26)
	}
	b.ReportAllocs()
	for b.Loop() {
		ContinuousAgreement(p, AgreementOptions{ConfigLevel: true}, BootstrapOptions{Resamples: 10000, Seed: 1})
	}
}

// BenchmarkCorrelations: the run- and configuration-level Pearson and
// Spearman correlations among the four metrics of 39 configurations × 60
// runs (10 scenarios; TA and TR-D on a few levels, the configurations
// apart as in the sample) with 10,000-resample intervals: what `gymlens
// corr` computes.
func BenchmarkCorrelations(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	var values [][]float64
	var scen, conf []string
	for c := 0; c < 39; c++ {
		for i := 0; i < 60; i++ {
			v := make([]float64, numMetrics)
			for k := range v {
				v[k] = math.NaN()
			}
			// Configurations differ as the sample's models do.
			v[mTC] = float64(c) + r.Float64()*60
			v[mTA] = float64(min(1, r.IntN(39+c)/39)) * 100
			v[mTRD] = float64(min(4, r.IntN(4)+r.IntN(2+c/10))) * 25
			v[mTRJ] = float64(c)/2 + r.Float64()*80
			values, scen, conf = append(values, v), append(scen, string(rune('a'+i%10))), append(conf, string(rune('A'+c)))
		}
	}
	opt := BootstrapOptions{Resamples: 10000, Seed: 1}
	b.ReportAllocs()
	for b.Loop() {
		Correlations(values, scen, conf, []int{mTC, mTA, mTRD, mTRJ}, opt)
	}
}
