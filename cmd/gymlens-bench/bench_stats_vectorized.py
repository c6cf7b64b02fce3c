#!/usr/bin/python3
"""What a competent numpy user writes for what `gymlens-bench stats` times
in Go: for every configuration, scenario and persona group, the mean of TC,
TA, TR-D and TR-J with a cluster-bootstrap percentile interval (scenarios
resampled; within one scenario, runs), and the run-level Pearson
correlations among the four with cluster-bootstrap intervals.

No Python loop over resamples: a group's clusters are reduced once to their
sums and counts (np.bincount); the resamples are drawn as one (B, clusters)
matrix of indices, turned by one np.bincount into how often each resample
draws each cluster, and each resample's statistic
comes from one matrix product of those counts with the clusters' sums; the
correlations likewise from the clusters' sufficient statistics (n, Σx, Σy,
Σx², Σy², Σxy). (bench_stats.py, kept for comparison, loops over the
resamples.)

Usage: /usr/bin/python3 bench_stats_vectorized.py RUNS.csv RESAMPLES
Prints the estimates' count, then the seconds the computation took.
"""
import sys
import time

import numpy as np

path, B = sys.argv[1], int(sys.argv[2])
data = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
metrics = ["TC", "TA", "TRD", "TRJ"]
rng = np.random.default_rng(1)

t0 = time.perf_counter()
vals = np.column_stack([data[m].astype(float) for m in metrics])  # (runs, 4)
present = ~np.isnan(vals)
filled = np.where(present, vals, 0.0)

def draws(k):
    """B resamples of k clusters drawn with replacement, as a (B, k)
    matrix of how often each is drawn."""
    pick = rng.integers(0, k, size=(B, k))
    flat = (np.arange(B)[:, None] * k + pick).ravel()
    return np.bincount(flat, minlength=B * k).reshape(B, k).astype(float)


count = 0
for dim in ["config", "scenario", "persona_group"]:
    groups, gidx = np.unique(data[dim], return_inverse=True)
    for g in range(len(groups)):
        rows = np.flatnonzero(gidx == g)
        _, cl = np.unique(data["scenario"][rows], return_inverse=True)
        if cl.max() == 0:  # one scenario: the runs are the clusters
            cl = np.arange(len(rows))
        k = cl.max() + 1
        sums = np.stack([np.bincount(cl, weights=filled[rows, j], minlength=k) for j in range(4)], axis=1)
        cnts = np.stack([np.bincount(cl, weights=present[rows, j], minlength=k) for j in range(4)], axis=1)
        est = sums.sum(0) / cnts.sum(0)
        W = draws(k)
        reps = (W @ sums) / (W @ cnts)  # (B, 4)
        lo, hi = np.percentile(reps, [2.5, 97.5], axis=0)
        count += 4

_, scl = np.unique(data["scenario"], return_inverse=True)
k = scl.max() + 1
W = draws(k)
for i in range(4):
    for j in range(i + 1, 4):
        ok = present[:, i] & present[:, j]
        x, y = np.where(ok, vals[:, i], 0.0), np.where(ok, vals[:, j], 0.0)
        S = np.stack([np.bincount(scl, weights=w, minlength=k) for w in (ok.astype(float), x, y, x * x, y * y, x * y)], axis=1)
        n, sx, sy, sxx, syy, sxy = (W @ S).T
        reps = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
        r = np.corrcoef(vals[ok, i], vals[ok, j])[0, 1]
        lo, hi = np.percentile(reps, [2.5, 97.5])
        count += 1

elapsed = time.perf_counter() - t0
print(count)
print(f"{elapsed:.3f}")
