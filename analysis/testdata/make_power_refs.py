#!/usr/bin/python3
"""Reference values for gymlens's power and minimum detectable effect.

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 analysis/testdata/make_power_refs.py > analysis/testdata/power_refs.json

For variance components v = (scenario, persona, config x scenario,
config x persona, residual) and a paired design of S scenarios x P
personas x R repetitions, the difference of two configurations' means has
SE^2 = 2 (v_cs / S + v_cp / (S P) + v_e / (S P R)), and the paired t-test
over scenarios has S - 1 degrees of freedom. The MDE is
(t.ppf(1 - alpha/2, S-1) + t.ppf(power, S-1)) * SE; the exact power of the
test at that difference comes from the noncentral t (scipy.stats.nct), which
the formula approximates.
"""
import json
import math

from scipy import optimize, stats

cases = []
for v, S, P, R, alpha, power in [
    ((40.0, 3.0, 6.0, 2.0, 60.0), 10, 3, 3, 0.05, 0.8),
    ((40.0, 3.0, 6.0, 2.0, 60.0), 30, 3, 3, 0.05, 0.9),
    ((1.0, 0.5, 0.2, 0.1, 2.0), 5, 2, 4, 0.01, 0.8),
]:
    se = math.sqrt(2 * (v[2] / S + v[3] / (S * P) + v[4] / (S * P * R)))
    df = S - 1
    mde = (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * se
    # Exact power of the two-sided t-test at the MDE: the scenario-level
    # differences are normal with variance S * SE^2, so t is noncentral
    # with noncentrality mde / se.
    tc = stats.t.ppf(1 - alpha / 2, df)
    nc = mde / se
    pw = lambda lam: stats.nct.sf(tc, df, lam) + stats.nct.cdf(-tc, df, lam)
    exact = pw(nc)
    # The exact MDE: the noncentrality whose power is the one asked for.
    lam = optimize.brentq(lambda l: pw(l) - power, 0, 100, xtol=1e-12)
    cases.append({"v": v, "S": S, "P": P, "R": R, "alpha": alpha, "power": power, "se": se, "mde_approx": mde,
                  "power_at_approx": exact, "mde": lam * se})
# How far the textbook MDE, (t_{1-alpha/2} + t_power) * SE, is from the
# exact one, in per cent of the exact (negative: the textbook's is lower).
gaps = []
for alpha, S in [(0.05, 10), (0.05, 5), (0.01, 10), (0.01, 5)]:
    df = S - 1
    tc = stats.t.ppf(1 - alpha / 2, df)
    pw = lambda lam: stats.nct.sf(tc, df, lam) + stats.nct.cdf(-tc, df, lam)
    lam = optimize.brentq(lambda l: pw(l) - 0.8, 0, 100, xtol=1e-13)
    gaps.append({"S": S, "alpha": alpha, "power": 0.8, "exact": lam, "textbook": tc + stats.t.ppf(0.8, df),
                 "percent": 100 * ((tc + stats.t.ppf(0.8, df)) / lam - 1)})
print(json.dumps({"generator": "make_power_refs.py", "cases": cases, "textbook_gaps": gaps}, indent=1))
