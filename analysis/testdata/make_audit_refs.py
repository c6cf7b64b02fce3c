#!/usr/bin/python3
"""Reference values for the fixes of the statistics audit (issue 12).

Run with Debian's python3 (apt-get install python3-scipy python3-sklearn
python3-statsmodels):
    /usr/bin/python3 analysis/testdata/make_audit_refs.py > analysis/testdata/audit_refs.json
The Go tests read the JSON (data and expected values); they never run this.

- text_labels: Cohen's kappa of text labels (sklearn.metrics.cohen_kappa_score
  on the strings themselves), Fleiss' kappa of text labels
  (statsmodels aggregate_raters + fleiss_kappa), Krippendorff's alpha
  (nominal) from the coincidence-matrix definition (alpha_ref.py).
- ordered_labels: the same with an order given (low < mid < high):
  quadratic-weighted kappa (sklearn, labels in that order) and ordinal alpha.
- bca_ties: scipy.stats.bootstrap(method="BCa") of a statistic whose
  replicates often equal the estimate (a proportion, and the mean of a dozen
  ratings 1-5), with its replicates: z0 counts a tied replicate as half.
- alpha_many_values: Krippendorff's alpha at the four levels on continuous
  ratings (nearly every value distinct, some zeros), from the
  coincidence-matrix definition in alpha_ref.py (O(V^2), independent of the
  Go code's closed forms).
- judge_halves: the quadratic-weighted kappa of human ratings (1-5) against
  a judge average put on the scale by the rule of analysis.SplitToScale
  (nearest point; a half-way value half on each neighbour), from
  sklearn.metrics.cohen_kappa_score with sample_weight; beside it the value
  when every half is rounded up, the old rule.
"""
import json

import numpy as np
import scipy
from scipy import stats
import sklearn
import statsmodels
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from alpha_ref import alpha_units as alpha

rng = np.random.default_rng(12)
out = {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
       "statsmodels": statsmodels.__version__}


# Two raters, PARE's three answers, 60 items.
cats = ["accept", "reject", "gather_context"]
truth = rng.integers(0, 3, size=60)
a = np.where(rng.random(60) < 0.75, truth, rng.integers(0, 3, size=60))
b = np.where(rng.random(60) < 0.7, truth, rng.integers(0, 3, size=60))
la = [cats[i] for i in a]
lb = [cats[i] for i in b]
two = {"a": la, "b": lb, "cohen_kappa": cohen_kappa_score(la, lb),
       "alpha_nominal": alpha([[x, y] for x, y in zip(la, lb)], "nominal")}

# Three raters, yes/no, 40 items, every item rated by all three.
t3 = rng.random(40) < 0.6
r3 = np.where(rng.random((40, 3)) < 0.8, t3[:, None], ~t3[:, None])
l3 = [["yes" if v else "no" for v in row] for row in r3]
table, _ = aggregate_raters(np.array(l3, dtype=object))
three = {"ratings": l3, "fleiss_kappa": fleiss_kappa(table, method="fleiss"),
         "alpha_nominal": alpha(l3, "nominal"),
         "percent_agreement": 100 * float(np.mean([
             sum((row.count(c) * (row.count(c) - 1)) for c in set(row)) / (3 * 2) for row in l3]))}
out["text_labels"] = {"two": two, "three": three}

# Ordered text: low < mid < high, two raters.
order = ["low", "mid", "high"]
t = rng.integers(0, 3, size=50)
oa = np.clip(t + rng.integers(-1, 2, size=50), 0, 2)
ob = np.clip(t + rng.integers(-1, 2, size=50), 0, 2)
ola = [order[i] for i in oa]
olb = [order[i] for i in ob]
out["ordered_labels"] = {
    "order": order, "a": ola, "b": olb,
    "cohen_kappa": cohen_kappa_score(ola, olb),
    "quadratic_kappa": cohen_kappa_score(ola, olb, labels=order, weights="quadratic"),
    "alpha_ordinal": alpha([[x, y] for x, y in zip(ola, olb)], "ordinal", order),
    "alpha_nominal": alpha([[x, y] for x, y in zip(ola, olb)], "nominal"),
}

# BCa where many replicates tie with the estimate.
bca = {}
for name, data, fn in [
        ("proportion", rng.integers(0, 2, size=30).astype(float), np.mean),
        ("rating_mean", rng.integers(1, 6, size=12).astype(float), np.mean)]:
    r = stats.bootstrap((data,), fn, n_resamples=4999, method="BCa", confidence_level=0.95,
                        random_state=np.random.default_rng(3))
    reps = r.bootstrap_distribution
    theta = float(fn(data))
    bca[name] = {"data": data.tolist(), "replicates": reps.tolist(), "ci": [float(r.confidence_interval.low), float(r.confidence_interval.high)],
                 "tied": int(np.sum(reps == theta)), "below": int(np.sum(reps < theta))}
out["bca_ties"] = bca

# Judge averages of two judges' 1-5 scores (so halves are common) against
# human ratings.
jh = rng.integers(1, 6, size=(80, 2))
javg = jh.mean(axis=1)
hum = np.clip(np.round(javg + rng.normal(0, 0.8, size=80)), 1, 5).astype(int)
ye, je, we = [], [], []
for h, j in zip(hum, javg):
    lo = np.floor(j)
    if j - lo == 0.5:
        ye += [h, h]; je += [int(lo), int(lo) + 1]; we += [0.5, 0.5]
    else:
        ye.append(h); je.append(int(round(j))); we.append(1.0)
up = np.floor(javg + 0.5).astype(int)
out["judge_halves"] = {"human": hum.tolist(), "judge": javg.tolist(), "halves": int(np.sum(javg % 1 == 0.5)),
                       "quadratic_kappa": cohen_kappa_score(ye, je, labels=[1, 2, 3, 4, 5], weights="quadratic", sample_weight=we),
                       "rounded_up_kappa": cohen_kappa_score(hum, up, labels=[1, 2, 3, 4, 5], weights="quadratic")}

# Continuous ratings, 150 units, 3 raters, 20% missing, values >= 0 with
# a few exact zeros: nearly every value distinct.
base = np.abs(rng.normal(2, 1, size=150))
cont = np.round(np.abs(base[:, None] + rng.normal(0, 0.4, size=(150, 3))), 4)
cont[rng.random(cont.shape) < 0.03] = 0.0
units = []
for row in cont:
    keep = [float(v) for v in row if rng.random() >= 0.2]
    units.append(keep)
out["alpha_many_values"] = {"units": units,
                            "alpha": {lv: alpha(units, lv) for lv in ["nominal", "ordinal", "interval", "ratio"]}}

print(json.dumps(out, indent=1, sort_keys=True))
