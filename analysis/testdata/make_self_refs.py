#!/usr/bin/python3
"""Reference values for gymlens's judge self-agreement (agree --self).

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 analysis/testdata/make_self_refs.py > analysis/testdata/self_refs.json
The Go tests read the JSON (data and expected values); they never run this.

- ICC(1,1): from the one-way ANOVA's F of scipy.stats.f_oneway (groups =
  items, members = an item's answers), ICC = (F - 1) / (F + k0 - 1) with
  k0 = (N - sum n_i^2 / N) / (g - 1), which is (MSB - MSW) / (MSB + (k0 - 1)
  MSW) divided through by MSW (Shrout & Fleiss 1979; Donner 1986 for
  unequal group sizes).
- The noise share: numpy, from its definition: with a_i, b_i the two
  judges' answers to item i, the mean of (a - b)^2 over one answer of each
  is (mean a_i - mean b_i)^2 + var0(a_i) + var0(b_i) (checked against the
  brute-force mean of (a_ir - b_is)^2 over every pair of answers); the
  share is sum(var1(a_i) + var1(b_i)) / sum of that, var1 with ddof=1
  (unbiased for the answers' variance), b's term only when b answered
  every item twice or more (otherwise its noise is unknown: left out).
"""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(11)
cases = []
for name, sizes in [("balanced3", [3] * 40), ("balanced2", [2] * 25), ("unbalanced", list(rng.integers(2, 6, size=30))), ("both-repeated", [3] * 30)]:
    true = rng.normal(50, 15, size=len(sizes))
    groups = [list(np.round(t + rng.normal(0, 6, size=n), 3)) for t, n in zip(true, sizes)]
    F = stats.f_oneway(*groups).statistic
    N = sum(sizes)
    g = len(sizes)
    k0 = (N - sum(n * n for n in sizes) / N) / (g - 1)
    icc = (F - 1) / (F + k0 - 1)
    # A second judge: a shift, its own noise, asked once or twice.
    # In "both-repeated" it answers every item three times.
    other = [list(np.round(np.mean(x) + 4 + rng.normal(0, 3, size=3 if name == "both-repeated" else 1 + (i % 2)), 3))
             for i, x in enumerate(groups)]
    other_noise = all(len(b) > 1 for b in other)
    num, den, brute = 0.0, 0.0, 0.0
    for a, b in zip(groups, other):
        a, b = np.array(a), np.array(b)
        num += a.var(ddof=1) + (b.var(ddof=1) if other_noise else 0.0)
        den += (a.mean() - b.mean()) ** 2 + a.var() + b.var()
        brute += np.mean((a[:, None] - b[None, :]) ** 2)
    assert abs(den - brute) < 1e-9 * den
    cases.append({"name": name, "groups": groups, "other": other, "icc": icc, "f": F,
                  "noise_share": num / den, "msd": den / len(groups), "noise": num / len(groups), "other_noise": other_noise})
print(json.dumps({"generator": "make_self_refs.py", "scipy": __import__("scipy").__version__, "cases": cases}, indent=1))
