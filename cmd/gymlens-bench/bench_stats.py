#!/usr/bin/python3
"""A straightforward numpy/scipy implementation of what `gymlens-bench stats`
times in Go: for every configuration, scenario and persona group, the mean of
TC, TA, TR-D and TR-J with a 10,000-resample cluster-bootstrap percentile
interval (scenarios resampled; within one scenario, runs), and the run-level
Pearson correlations among the four with cluster-bootstrap intervals.

Usage: /usr/bin/python3 bench_stats.py RUNS.csv RESAMPLES
Prints the estimates' count, then the seconds the computation took.
"""
import sys
import time

import numpy as np
from scipy import stats

path, B = sys.argv[1], int(sys.argv[2])
data = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
metrics = ["TC", "TA", "TRD", "TRJ"]
rng = np.random.default_rng(1)

t0 = time.perf_counter()


def cluster_means(rows, clusters, m):
    """Per cluster: sum and count of the metric's non-missing values."""
    vals = rows[m].astype(float)
    keys = sorted(set(clusters))
    sums = np.array([np.nansum(vals[clusters == k]) for k in keys])
    cnts = np.array([np.sum(~np.isnan(vals[clusters == k])) for k in keys])
    return sums, cnts


count = 0
for dim in ["config", "scenario", "persona_group"]:
    for g in sorted(set(data[dim])):
        rows = data[data[dim] == g]
        clusters = rows["scenario"]
        if len(set(clusters)) == 1:
            clusters = np.arange(len(rows)).astype(str)
        k = len(set(clusters))
        for m in metrics:
            sums, cnts = cluster_means(rows, clusters, m)
            est = sums.sum() / cnts.sum()
            reps = np.empty(B)
            for b in range(B):
                pick = rng.integers(0, k, size=k)
                reps[b] = sums[pick].sum() / cnts[pick].sum()
            lo, hi = np.percentile(reps, [2.5, 97.5])
            count += 1

scen = data["scenario"]
keys = sorted(set(scen))
members = [np.flatnonzero(scen == s) for s in keys]
for i in range(4):
    for j in range(i + 1, 4):
        x, y = data[metrics[i]].astype(float), data[metrics[j]].astype(float)
        ok = ~np.isnan(x) & ~np.isnan(y)
        r = stats.pearsonr(x[ok], y[ok]).statistic
        reps = np.empty(B)
        for b in range(B):
            pick = rng.integers(0, len(keys), size=len(keys))
            idx = np.concatenate([members[p] for p in pick])
            xi, yi = x[idx], y[idx]
            okb = ~np.isnan(xi) & ~np.isnan(yi)
            reps[b] = np.corrcoef(xi[okb], yi[okb])[0, 1]
        lo, hi = np.percentile(reps, [2.5, 97.5])
        count += 1

elapsed = time.perf_counter() - t0
print(count)
print(f"{elapsed:.3f}")
