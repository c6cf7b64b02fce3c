#!/usr/bin/python3
"""Reference values for gymlens's agreement statistics.

Run with Debian's python3 (apt-get install python3-scipy python3-sklearn
python3-statsmodels):
    /usr/bin/python3 analysis/testdata/make_agree_refs.py > analysis/testdata/agree_refs.json
The Go tests read the JSON (data and expected values); they never run this.

- Cohen's kappa (plain, linear, quadratic): sklearn.metrics.cohen_kappa_score
- Fleiss' kappa: statsmodels.stats.inter_rater.fleiss_kappa
- Kendall's tau-b and Spearman: scipy.stats
- Krippendorff's alpha: alpha_ref.py, written from Krippendorff's
  definition (the coincidence matrix and the difference functions of
  "Computing Krippendorff's Alpha-Reliability", 2011), independent of the
  Go code's pooled-sums formulation, and checked below against the worked
  example of that paper.
"""
import json
import math

import numpy as np
import scipy
import sklearn
import statsmodels
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa
from alpha_ref import alpha

rng = np.random.default_rng(5)
out = {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
       "statsmodels": statsmodels.__version__}


# Krippendorff (2011), section C: 4 observers, 12 units, values 1-5,
# missing marked None. Published: nominal .743, ordinal .815,
# interval .849, ratio .797.
N = None
k2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
         [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]
published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
k = {lv: alpha(k2011, lv) for lv in published}
for lv in published:
    assert round(k[lv], 3) == published[lv], (lv, k[lv])
out["krippendorff_2011"] = {"data": k2011, "published": published, "alpha": k}


def with_missing(a, share):
    a = a.astype(float)
    a[rng.random(a.shape) < share] = np.nan
    return a


def to_lists(a):
    return [[None if math.isnan(v) else float(v) for v in row] for row in a]


# Ordinal 1-5 ratings by 5 raters of 60 units, 25% missing.
truth = rng.integers(1, 6, size=60)
r5 = np.clip(truth + rng.integers(-1, 2, size=(5, 60)), 1, 5)
d = to_lists(with_missing(r5, 0.25))
out["alpha_ordinal5"] = {"data": d, "alpha": {lv: alpha(d, lv) for lv in ["nominal", "ordinal", "interval", "ratio"]}}

# Continuous ratings by 3 raters of 40 units, 20% missing.
base = rng.normal(3, 1, size=40)
rc = np.round(base + rng.normal(0, 0.5, size=(3, 40)), 2)
rc = np.abs(rc)
d = to_lists(with_missing(rc, 0.2))
out["alpha_continuous"] = {"data": d, "alpha": {lv: alpha(d, lv) for lv in ["interval", "ratio", "nominal"]}}

# Cohen's kappa: two raters, 1-5, with ties and a category one rater never uses.
a = np.clip(truth + rng.integers(-1, 2, size=60), 1, 5)
b = np.clip(truth + rng.integers(-2, 2, size=60), 1, 5)
b[b == 3] = 2
labels = [1, 2, 3, 4, 5]
out["cohen"] = {"a": a.tolist(), "b": b.tolist(),
                "kappa": cohen_kappa_score(a, b),
                "linear": cohen_kappa_score(a, b, weights="linear", labels=labels),
                "quadratic": cohen_kappa_score(a, b, weights="quadratic", labels=labels)}
# Binary labels.
ba = (rng.random(80) < 0.6).astype(int)
bb = np.where(rng.random(80) < 0.8, ba, 1 - ba)
out["cohen_binary"] = {"a": ba.tolist(), "b": bb.tolist(), "kappa": cohen_kappa_score(ba, bb)}

# Fleiss' kappa: 30 items, 6 raters each, 4 categories.
items = rng.integers(0, 4, size=30)
ratings = np.where(rng.random((30, 6)) < 0.6, items[:, None], rng.integers(0, 4, size=(30, 6)))
table = np.zeros((30, 4))
for i in range(30):
    for v in ratings[i]:
        table[i, v] += 1
out["fleiss"] = {"ratings": ratings.tolist(), "kappa": fleiss_kappa(table, method="fleiss")}

# Kendall's tau-b and Spearman with ties in both.
x = rng.integers(1, 6, size=50).astype(float)
y = np.round(x * 0.5 + rng.normal(0, 1, size=50))
kt = stats.kendalltau(x, y)
sr = stats.spearmanr(x, y)
out["kendall"] = {"x": x.tolist(), "y": y.tolist(), "tau_b": float(kt.statistic), "spearman": float(sr.statistic)}
xs = rng.normal(size=200)
ys = xs + rng.normal(size=200)
out["kendall_noties"] = {"x": xs.tolist(), "y": ys.tolist(), "tau_b": float(stats.kendalltau(xs, ys).statistic)}

# Prediction-powered mean (Angelopoulos et al. 2023, the mean estimator,
# no power tuning): judge scores f on N items, human labels y on n of them
# (judge scores fl there). The judge term uses the N - n unlabelled items
# only, and both variances divide by the count (ppi_py's ppi_mean_ci with
# lam=1: numpy's default ddof=0); ppi_py itself is not packaged by Debian,
# so its formula is written out here.
N, n = 300, 40
f = np.clip(rng.normal(0.6, 0.15, size=N), 0, 1)
lab = rng.choice(N, size=n, replace=False)
fl = f[lab]
unl = np.delete(f, lab)
y = np.clip(fl - 0.08 + rng.normal(0, 0.1, size=n), 0, 1)
theta = unl.mean() + (y - fl).mean()
se = math.sqrt(unl.var() / len(unl) + (y - fl).var() / n)
z = stats.norm.ppf(0.975)
out["ppi"] = {"unlabelled": unl.tolist(), "y": y.tolist(), "fl": fl.tolist(), "judge": f.mean(), "rectify": (y - fl).mean(),
              "corrected": theta, "lo": theta - z * se, "hi": theta + z * se}

print(json.dumps(out, indent=1, sort_keys=True))
