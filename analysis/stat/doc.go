// Package stat holds the generic statistics gymlens's analyses are built
// on, in the manner of gonum's stat: plain float64 slices in, numbers
// out, each function's formula in its doc comment, nil weights meaning
// equal weights, and NaN (with the reason, where one is returned) when a
// statistic is undefined rather than a panic or a silent zero.
//
//   - The cluster bootstrap (ClusterBootstrap, Replicates, Jackknife): a
//     statistic is a function of cluster weights, resample b drawn from a
//     PCG generator seeded (seed, b), so the digits do not depend on the
//     number of cores; percentile, expanded percentile and BCa intervals;
//     bootstrap p-values.
//   - A least-squares slope from clustered data (ClusterSlope): its
//     cluster-robust variance for any cluster weights and its
//     cluster-robust t interval with the p-value that inverts it.
//   - Descriptive statistics and correlation: Mean, WeightedMean, SD,
//     Quantile7 (R's type 7), Pearson, Spearman, Ranks, KendallTauB (τ-b,
//     ties handled), the Fisher-z interval and the correlation's p-value.
//   - Adjustments for multiple comparisons: Holm, BenjaminiHochberg.
//   - Agreement coefficients: Krippendorff's α at four levels
//     (KrippendorffAlpha, AlphaData for resampling), Cohen's κ unweighted
//     and weighted (CohenKappa, Confusion), Fleiss' κ (FleissData).
//
// Every function is checked against an outside reference (R, scipy,
// statsmodels, krippendorff, published worked examples), computed by the
// scripts in analysis/testdata and read back by the tests.
package stat
