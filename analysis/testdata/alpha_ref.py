"""Krippendorff's alpha from its definition, for the reference scripts.

Written from Krippendorff, "Computing Krippendorff's Alpha-Reliability"
(2011): the coincidence matrix of pairable values and the difference
functions of the four levels. O(V^2) in the distinct values and
independent of the Go code's closed forms, which is the point.
"""
import numpy as np


def alpha_units(units, level, order=None):
    """units: lists of the values each unit got (missing left out); order:
    the categories in order (for text categories), else the sorted values."""
    units = [u for u in units if len(u) >= 2]
    values = order if order is not None else sorted({v for u in units for v in u})
    ix = {v: i for i, v in enumerate(values)}
    V = len(values)
    o = np.zeros((V, V))
    for u in units:
        m = len(u)
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[ix[u[i]], ix[u[j]]] += 1.0 / (m - 1)
    nc = o.sum(axis=1)
    n = nc.sum()

    def delta(c, k):
        if level == "nominal":
            return 0.0 if c == k else 1.0
        if level == "interval":
            return (values[c] - values[k]) ** 2
        if level == "ratio":
            s = values[c] + values[k]
            return 0.0 if s == 0 else ((values[c] - values[k]) / s) ** 2
        lo, hi = min(c, k), max(c, k)
        return (sum(nc[lo:hi + 1]) - (nc[c] + nc[k]) / 2) ** 2

    do = sum(o[c, k] * delta(c, k) for c in range(V) for k in range(V))
    de = sum(nc[c] * nc[k] * delta(c, k) for c in range(V) for k in range(V))
    return 1 - (n - 1) * do / de


def alpha(data, level):
    """data: raters x units, None for missing."""
    units = [[data[r][u] for r in range(len(data)) if data[r][u] is not None] for u in range(len(data[0]))]
    return alpha_units(units, level)
