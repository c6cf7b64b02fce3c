#!/usr/bin/python3
"""Reference values for stat.ClusterSlope: a least-squares slope and its
cluster-robust variance, for the data as observed and for resamples.

Run with Debian's python3 (numpy):
    /usr/bin/python3 analysis/testdata/make_slope_refs.py > analysis/testdata/slope_refs.json
The Go test (TestClusterSlopeAgainstNumpy) reads the JSON; it never runs this.

A resample counts cluster c w[c] times. Here it is written out the long
way: the points of cluster c are repeated w[c] times, each copy a cluster
of its own, and the regression of y on (1, x) is fitted by
numpy.linalg.lstsq; the variance is the sandwich
    (X'X)^-1 (sum over clusters g of X_g' e_g e_g' X_g) (X'X)^-1
(CR0, no small-sample factor), its slope entry. For the data as observed,
the cluster-robust t interval too: G the clusters with a point, se =
sqrt(G/(G-1) * V) (CR1), the slope -/+ scipy.stats.t.ppf(0.975, G-1) * se
at 95% (and at 0.8, 0.99 and 1 - 0.05/325), p = 2 * scipy.stats.t.sf(|slope|/se, G-1).
Cases: a continuous x
(as item lengths), a 0/1 x (a difference of two means, as self-preference),
clusters of unequal sizes, one cluster with no point; weights all 1, and
resamples that repeat some clusters and leave others out.
"""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(2026)


def fit(x, y, cluster, w):
    rows, groups = [], []
    g = 0
    for c, wc in enumerate(w):
        idx = np.nonzero(cluster == c)[0]
        for _ in range(int(wc)):
            rows.extend(idx)
            groups.extend([g] * len(idx))
            g += 1
    rows, groups = np.array(rows), np.array(groups)
    X = np.column_stack([np.ones(len(rows)), x[rows]])
    Y = y[rows]
    coef = np.linalg.lstsq(X, Y, rcond=None)[0]
    e = Y - X @ coef
    bread = np.linalg.inv(X.T @ X)
    meat = np.zeros((2, 2))
    for k in range(g):
        s = X[groups == k].T @ e[groups == k]
        meat += np.outer(s, s)
    v = bread @ meat @ bread
    return float(coef[1]), float(v[1, 1])


cases = []
for kind, clusters in (("continuous", 12), ("binary", 9), ("continuous", 5)):
    sizes = rng.integers(1, 9, size=clusters)
    sizes[clusters // 2] = 0  # a cluster with no point
    cluster = np.repeat(np.arange(clusters), sizes)
    n = len(cluster)
    effect = rng.normal(0, 0.5, size=clusters)[cluster]
    if kind == "continuous":
        x = rng.integers(300, 6000, size=n) / 1000
    else:
        x = (rng.random(n) < 0.4).astype(float)
    y = 0.3 + 0.15 * x + effect + rng.normal(0, 0.4, size=n)
    x, y = np.round(x, 6), np.round(y, 6)
    weights = [np.ones(clusters, dtype=int)]
    for _ in range(3):
        weights.append(np.bincount(rng.integers(0, clusters, size=clusters), minlength=clusters))
    beta, var = zip(*(fit(x, y, cluster, w) for w in weights))
    g = int(np.sum(sizes > 0))
    se = float(np.sqrt(g / (g - 1) * var[0]))
    intervals = {}
    for level in (0.8, 0.95, 0.99, 1 - 0.05 / 325):
        q = float(stats.t.ppf(1 - (1 - level) / 2, g - 1))
        intervals[repr(level)] = [beta[0] - q * se, beta[0] + q * se]
    p = float(2 * stats.t.sf(abs(beta[0]) / se, g - 1))
    cases.append({"p": p, "intervals": intervals, "kind": kind, "clusters": clusters, "x": x.tolist(), "y": y.tolist(), "cluster": cluster.tolist(),
                  "weights": [w.tolist() for w in weights], "slope": list(beta), "variance": list(var)})
print(json.dumps({"generator": "make_slope_refs.py, numpy " + np.__version__, "cases": cases}, indent=1))
