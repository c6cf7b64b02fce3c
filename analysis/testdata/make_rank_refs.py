#!/usr/bin/python3
"""Reference values for gymlens's rank intervals (gymlens rank).

Run with Debian's python3 (apt-get install python3-scipy):
    /usr/bin/python3 analysis/testdata/make_rank_refs.py > analysis/testdata/rank_refs.json

The constructed case: configurations A and B on 10 scenarios, one run each;
A - B is +1 on 6 scenarios and -1.5 on the other 4. A cluster-bootstrap
resample draws 10 scenarios with replacement, so the number k of draws that
fall on a +1 scenario is Binomial(10, 0.6), and the difference of the
resampled means has the sign of k - 1.5 (10 - k), i.e. of k - 6. A is first
when k >= 6 (k = 6 is a tie: both first), B when k <= 6.
"""
import json

from scipy import stats

b = stats.binom(10, 0.6)
print(json.dumps({
    "generator": "make_rank_refs.py",
    "p_best_a": float(b.sf(5)),   # P(k >= 6)
    "p_best_b": float(b.cdf(6)),  # P(k <= 6)
    "p_tie": float(b.pmf(6)),
}, indent=1))
