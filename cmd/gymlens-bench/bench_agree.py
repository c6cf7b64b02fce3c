#!/usr/bin/python3
"""A straightforward numpy implementation of Krippendorff's alpha (interval)
with a bootstrap over items, for `gymlens-bench agree`.

Usage: bench_agree.py RATINGS.csv RESAMPLES  (rows: items; columns: raters;
empty: missing). Prints "alpha seconds".
"""
import sys
import time

import numpy as np


def alpha_interval(x):
    """x: items x raters, NaN missing. Krippendorff's alpha, interval metric."""
    m = np.sum(~np.isnan(x), axis=1)
    x = x[m >= 2]
    m = m[m >= 2]
    n = m.sum()
    # Observed: within each item, the squared differences of all ordered
    # pairs of its values, divided by m_u - 1.
    d = x[:, :, None] - x[:, None, :]
    within = np.nansum(d * d, axis=(1, 2)) / (m - 1)
    do = within.sum()
    v = x[~np.isnan(x)]
    de = 2 * (n * np.sum(v * v) - np.sum(v) ** 2)
    return 1 - (n - 1) * do / de


x = np.genfromtxt(sys.argv[1], delimiter=",")
b = int(sys.argv[2])
t0 = time.perf_counter()
a = alpha_interval(x)
rng = np.random.default_rng(1)
reps = np.empty(b)
for i in range(b):
    reps[i] = alpha_interval(x[rng.integers(0, len(x), len(x))])
lo, hi = np.quantile(reps, [0.025, 0.975])
secs = time.perf_counter() - t0
print(f"alpha {a:.6f} [{lo:.4f}, {hi:.4f}]", file=sys.stderr)
print(f"{a:.10f} {secs:.4f}")
