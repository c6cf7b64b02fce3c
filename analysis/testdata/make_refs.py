#!/usr/bin/python3
"""Reference values for gymlens's statistics, computed with numpy and scipy.

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 analysis/testdata/make_refs.py > analysis/testdata/scipy_refs.json
The Go tests read the JSON; they never run this script.
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20261130)
out = {"numpy": np.__version__, "scipy": scipy.__version__}

# Quantiles, numpy's default "linear" method (R's type 7).
x = [3.1, 0.4, 2.2, 9.0, 5.5, 5.5, 1.0]
ps = [0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1]
out["quantile7"] = {"x": x, "p": ps, "q": [float(np.quantile(x, p)) for p in ps]}

# Correlations, with ties.
cx = [1, 2, 2, 3, 4, 5, 5, 5, 6, 7, 8, 9, 9, 10, 12]
cy = [2.0, 1.5, 3.1, 3.0, 2.9, 4.8, 5.0, 4.1, 6.3, 5.9, 7.7, 8.1, 6.9, 9.5, 11.0]
pr = stats.pearsonr(cx, cy)
ci = pr.confidence_interval(0.95)
sr = stats.spearmanr(cx, cy)
out["correlation"] = {"x": cx, "y": cy, "pearson_r": float(pr.statistic), "pearson_p": float(pr.pvalue),
                      "pearson_ci95": [float(ci.low), float(ci.high)],
                      "spearman_r": float(sr.statistic), "spearman_p": float(sr.pvalue)}

# Bootstrap intervals of the mean from one set of replicates: the Go test
# recomputes both intervals from these replicates and the data.
data = rng.gamma(2.0, 1.5, size=30)
res = {}
for method in ["percentile", "BCa"]:
    r = stats.bootstrap((data,), np.mean, n_resamples=9999, method=method, confidence_level=0.95,
                        random_state=np.random.default_rng(7))
    res[method] = {"ci": [float(r.confidence_interval.low), float(r.confidence_interval.high)],
                   "replicates": [float(v) for v in r.bootstrap_distribution]}
out["bootstrap_mean"] = {"data": [float(v) for v in data], **res}

# A plain cluster bootstrap: draw as many clusters as there are, with
# replacement, keep all their runs, take the mean over runs.
sizes = [9, 9, 8, 9, 7, 9, 9, 6, 9, 9]
clusters = [list(rng.normal(loc=rng.normal(50, 8), scale=12, size=s)) for s in sizes]
B = 20000
brng = np.random.default_rng(11)
reps = np.empty(B)
for b in range(B):
    pick = brng.integers(0, len(clusters), size=len(clusters))
    vals = np.concatenate([clusters[i] for i in pick])
    reps[b] = vals.mean()
out["cluster_bootstrap"] = {"clusters": [[float(v) for v in c] for c in clusters], "resamples": B,
                            "replicate_mean": float(reps.mean()), "replicate_sd": float(reps.std(ddof=1))}

json.dump(out, sys.stdout)
sys.stdout.write("\n")
