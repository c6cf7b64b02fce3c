package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/analysis/stat"
)

// benchCoverage simulates clustered data with a known mean and counts how
// often each 95% interval covers it: the cluster bootstrap (percentile and
// BCa) against the naive bootstrap that resamples runs as if independent.
func benchCoverage(args []string) error {
	fl := flag.NewFlagSet("coverage", flag.ExitOnError)
	datasets := fl.Int("datasets", 1000, "simulated datasets")
	clusters := fl.Int("clusters", 10, "clusters (scenarios) per dataset")
	runs := fl.Int("runs", 9, "runs per cluster (personas × repetitions)")
	resamples := fl.Int("resamples", 10000, "bootstrap resamples per interval")
	sdBetween := fl.Float64("sd-between", 8, "sd of the cluster effects")
	sdWithin := fl.Float64("sd-within", 12, "sd of the runs within a cluster")
	seed := fl.Uint64("seed", 1, "seed")
	fl.Parse(args)
	const truth = 60.0
	t0 := time.Now()
	methods := []string{"cluster expanded percentile", "cluster percentile", "cluster BCa", "two-level percentile", "two-level expanded", "naive (runs) percentile"}
	covered := make([]int, len(methods))
	width := make([]float64, len(methods))
	r := rand.New(rand.NewPCG(*seed, 7))
	n := *clusters * *runs
	x := make([]float64, n)
	for d := 0; d < *datasets; d++ {
		for c := 0; c < *clusters; c++ {
			u := r.NormFloat64() * *sdBetween
			for k := 0; k < *runs; k++ {
				x[c**runs+k] = truth + u + r.NormFloat64()**sdWithin
			}
		}
		sums := make([]float64, *clusters)
		for i, v := range x {
			sums[i / *runs] += v
		}
		perRun := float64(*runs)
		clusterMean := func(w, out []float64) {
			var s, m float64
			for c, wc := range w {
				s += wc * sums[c]
				m += wc * perRun
			}
			out[0] = s / m
		}
		runMean := func(w, out []float64) { out[0] = stat.WeightedMean(x, w) }
		// The two-level bootstrap: clusters, then the runs within each.
		rows, members := make([][]float64, n), make([][]int, *clusters)
		for i, v := range x {
			rows[i] = []float64{v}
			members[i / *runs] = append(members[i / *runs], i)
		}
		twoLevel := analysis.TwoLevelMeans(members, rows, []int{0}, uint64(d)+1)
		twoLevelOf := func(o analysis.BootstrapOptions) analysis.Estimate {
			est, _ := stat.ClusterBootstrapIndexed(*clusters, 1, func(b int, w, out []float64) {
				if b < 0 {
					clusterMean(w, out)
				} else {
					twoLevel(b, w, out)
				}
			}, o)
			return est[0]
		}
		opt := analysis.BootstrapOptions{Resamples: *resamples, Seed: uint64(d) + 1, Method: analysis.Percentile}
		for j, e := range []analysis.Estimate{
			stat.ClusterBootstrap(*clusters, 1, clusterMean, withMethod(opt, analysis.Expanded))[0],
			stat.ClusterBootstrap(*clusters, 1, clusterMean, opt)[0],
			stat.ClusterBootstrap(*clusters, 1, clusterMean, withMethod(opt, analysis.BCa))[0],
			twoLevelOf(opt),
			twoLevelOf(withMethod(opt, analysis.Expanded)),
			stat.ClusterBootstrap(n, 1, runMean, opt)[0],
		} {
			if e.Lo <= truth && truth <= e.Hi {
				covered[j]++
			}
			width[j] += e.Hi - e.Lo
		}
	}
	fmt.Printf("%d datasets: %d clusters × %d runs, cluster sd %g, run sd %g, true mean %g; %d resamples per interval (%.1f s)\n\n",
		*datasets, *clusters, *runs, *sdBetween, *sdWithin, truth, *resamples, time.Since(t0).Seconds())
	for j, m := range methods {
		fmt.Printf("%-28s coverage of the 95%% interval: %5.1f%%   mean width %.2f\n", m, 100*float64(covered[j])/float64(*datasets), width[j]/float64(*datasets))
	}
	return nil
}

func withMethod(o analysis.BootstrapOptions, m string) analysis.BootstrapOptions {
	o.Method = m
	return o
}
