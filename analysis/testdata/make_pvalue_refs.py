#!/usr/bin/python3
"""Reference p-values for stat.IntervalPValue: the p-value that inverts an interval.

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 analysis/testdata/make_pvalue_refs.py > analysis/testdata/pvalue_refs.json

The p-value of "the statistic is 0" is the smallest alpha whose 1 - alpha
interval excludes 0. Here it is found the long way: each end of the interval
is written as a function of alpha (numpy's "linear" quantiles, R's type 7,
between the second smallest and second largest replicate, a normal tail with
the replicates' standard deviation beyond them), and the alpha at which it
crosses 0 is found by root finding (scipy.optimize.brentq on log alpha).
gymlens computes the same p in closed form (analysis/stat/pvalue.go).

Intervals: percentile (levels alpha/2), expanded percentile (normal score
-sqrt(n/(n-1)) t_{1-alpha/2, n-1}, Hesterberg 2015) and BCa (Efron 1987, z0
counting replicates equal to the estimate as half below, acceleration from
the jackknife, as scipy.stats.bootstrap).
"""
import json
import math

import numpy as np
from scipy import optimize, stats


def quantile(sorted_reps, score):
    """The quantile function at the level of normal score `score`."""
    b = len(sorted_reps)
    qc = 1 / (b - 1)
    s = np.std(sorted_reps, ddof=1)
    p = stats.norm.cdf(score)
    if score < stats.norm.ppf(qc):
        return sorted_reps[1] + s * (score - stats.norm.ppf(qc))
    if score > stats.norm.ppf(1 - qc):
        return sorted_reps[-2] + s * (score - stats.norm.ppf(1 - qc))
    return float(np.quantile(sorted_reps, p, method="linear"))


def bca_params(theta, reps, jack):
    below = np.sum(reps < theta) + 0.5 * np.sum(reps == theta)
    z0 = stats.norm.ppf(below / len(reps))
    d = np.mean(jack) - jack
    acc = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    return z0, acc


def ends(method, alpha, reps, n, z0, acc):
    """The interval's two ends at level 1 - alpha, by their normal scores."""
    if method == "percentile":
        lo, hi = stats.norm.ppf(alpha / 2), stats.norm.isf(alpha / 2)
    elif method == "expanded-percentile":
        z = -math.sqrt(n / (n - 1)) * stats.t.isf(alpha / 2, n - 1)
        lo, hi = z, -z
    else:
        def adj(z):
            return z0 + (z0 + z) / (1 - acc * (z0 + z))
        lo, hi = adj(stats.norm.ppf(alpha / 2)), adj(stats.norm.isf(alpha / 2))
    return quantile(reps, lo), quantile(reps, hi)


def pvalue(method, reps, n, z0, acc):
    """min over the two ends of the smallest alpha at which that end passes 0.

    Each end moves monotonically with alpha. For BCa only on its branch:
    the map z -> z0 + (z0 + z)/(1 - acc (z0 + z)) has a pole at
    z = 1/acc - z0, and an end is followed from alpha = 1 down to the
    alpha at which its z reaches the pole (or down to 1e-300).
    """
    floor = math.log(1e-300)
    best = 1.0
    for side in (0, 1):
        lo_la = floor
        if method == "bca" and acc != 0:
            pole = 1 / acc - z0  # the z of the pole
            if (side == 0 and acc < 0) or (side == 1 and acc > 0):
                lo_la = max(floor, math.log(2) + stats.norm.logcdf(-abs(pole)) + 1e-9)

        def excl(la):
            e = ends(method, math.exp(la), reps, n, z0, acc)
            return e[0] if side == 0 else -e[1]
        hi_la = math.log(1 - 1e-12)
        if excl(hi_la) <= 0:
            continue
        if excl(lo_la) > 0:
            return 0.0
        best = min(best, math.exp(optimize.brentq(excl, lo_la, hi_la, xtol=1e-14, rtol=1e-13)))
    return best


rng = np.random.default_rng(55)
cases = []
for i, (n, shift, scale, b) in enumerate([
    (10, 0.0, 1.0, 200), (10, 1.5, 1.0, 200), (10, 3.5, 1.0, 500),
    (10, 6.0, 1.0, 500), (10, 12.0, 1.0, 1000), (5, 2.0, 2.0, 300),
    (20, -2.5, 0.5, 400), (3, 1.0, 1.0, 300), (10, -9.0, 1.0, 999),
    (8, 0.3, 1.0, 100),
]):
    # Replicates skewed a little (a gamma), so the methods differ.
    # Six decimals, so the file stays small; the replicates are these.
    reps = np.sort(np.round(shift * scale + scale * (rng.gamma(4.0, 0.5, b) - 2.0), 6))
    theta = float(np.median(reps)) + 0.05 * scale
    # Jackknife values of a mean's spread (about sd/sqrt(n) apart), skewed:
    # accelerations of a few hundredths, of both signs.
    sign = 1 if i % 2 == 0 else -1
    jack = theta + scale / n * (rng.normal(0, 1, n) + sign * 0.8 * (rng.gamma(2.0, 1.0, n) - 2.0))
    z0, acc = bca_params(theta, reps, jack)
    for method in ["percentile", "expanded-percentile", "bca"]:
        cases.append({
            "method": method, "n": n, "theta": theta, "replicates": reps.tolist(),
            "jackknife": jack.tolist(), "p": pvalue(method, reps, n, z0, acc),
        })

print(json.dumps({"cases": cases}, indent=1))
