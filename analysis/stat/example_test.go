package stat_test

import (
	"fmt"

	"github.com/gymlens/gymlens/analysis/stat"
)

// R's quantile(1:10, c(0.25, 0.5, 0.9)) is 3.25, 5.50, 9.10 (type 7).
func ExampleQuantile7() {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, p := range []float64{0.25, 0.5, 0.9} {
		fmt.Printf("%.2f ", stat.Quantile7(p, x))
	}
	fmt.Println()
	// Output: 3.25 5.50 9.10
}

// R's cor(c(1,2,3,4,5), c(2,4,5,4,5)) is 0.7745967.
func ExamplePearson() {
	fmt.Printf("%.7f\n", stat.Pearson([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5}))
	// Output: 0.7745967
}

// R's p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") is 0.03 0.06 0.06
// 0.02, and with "BH" 0.02 0.04 0.04 0.02.
func ExampleHolm() {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	fmt.Printf("%.2f\n%.2f\n", stat.Holm(p), stat.BenjaminiHochberg(p))
	// Output:
	// [0.03 0.06 0.06 0.02]
	// [0.02 0.04 0.04 0.02]
}

// Krippendorff's own worked example (Krippendorff 2011, "Computing
// Krippendorff's alpha-reliability", the 4 observers × 12 units table
// with missing values): nominal α = 0.743, interval α = 0.849.
func ExampleKrippendorffAlpha() {
	units := [][]float64{{1, 1, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 4},
		{4, 4, 4, 4}, {1, 1, 2, 1}, {2, 2, 2, 2}, {5, 5, 5}, {1, 1}, {3}}
	for _, level := range []string{stat.Nominal, stat.Interval} {
		a, _, _ := stat.KrippendorffAlpha(units, level)
		fmt.Printf("%s %.3f\n", level, a)
	}
	// Output:
	// nominal 0.743
	// interval 0.849
}

// Cohen's κ of two raters who agree on 7 of 10 items, one saying "yes"
// (1) 5 times, the other 6: p_o = 0.7, p_e = 0.5 × 0.6 + 0.5 × 0.4 = 0.5,
// κ = (p_o − p_e)/(1 − p_e) = 0.4.
func ExampleCohenKappa() {
	a := []float64{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}
	b := []float64{1, 1, 1, 1, 0, 1, 0, 0, 1, 0}
	k, _ := stat.CohenKappa(a, b, stat.Unweighted)
	fmt.Printf("%.1f\n", k)
	// Output: 0.4
}

// The mean of three clusters' values with its bootstrap interval: the
// statistic is a function of how many times each cluster was drawn (w).
func ExampleClusterBootstrap() {
	x := []float64{2, 4, 9}
	mean := func(w, out []float64) { out[0] = stat.WeightedMean(x, w) }
	est := stat.ClusterBootstrap(len(x), 1, mean, stat.BootstrapOptions{Resamples: 2000, Seed: 1, Level: 0.95, Method: stat.Percentile})
	fmt.Printf("%.1f, %d resamples, %s\n", est[0].Value, est[0].Resamples, est[0].Warnings[0])
	// Output: 5.0, 2000 resamples, 3 clusters: interval unreliable
}
