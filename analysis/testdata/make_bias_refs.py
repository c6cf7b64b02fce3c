#!/usr/bin/python3
"""Reference values for gymlens's judge bias (agree --bias).

Run with Debian's python3 (numpy):
    /usr/bin/python3 analysis/testdata/make_bias_refs.py > analysis/testdata/bias_refs.json
The Go tests read the JSON (data and expected values); they never run this.

The data: 12 scenarios, three agent models of families A, B and C, two
repetitions, three tasks a run; three judges jA, jB, jC of families A, B
and C rate each task's TR-J (1-5 scale, unrounded); humans rate a third of
the tasks. Injected: jA prefers agents of its family by 0.3, and its score
rises by 0.2 per 1,000 characters of the item against the truth.

Expected, from the definitions, with numpy alone:
- self-preference of judge J: d = s_J - mean of the other judges' scores;
  mean(d | agent family = J's) - mean(d | other agents);
- length against humans: np.polyfit(L/1000, s_J - human, 1) slope, on the
  rated items; against judge K: np.polyfit(L/1000, s_J - s_K, 1) slope.
"""
import json

import numpy as np

rng = np.random.default_rng(62)
judges = ["jA", "jB", "jC"]
jfam = {"jA": "A", "jB": "B", "jC": "C"}
models = [("Model A", "A"), ("Model B", "B"), ("Model C", "C")]
items = []
for s in range(12):
    scen_eff = rng.normal(0, 0.4)
    for model, fam in models:
        for rep in (1, 2):
            for t in range(3):
                q = 3 + scen_eff + rng.normal(0, 0.6)
                L = float(rng.integers(300, 6000))
                sc = {}
                for j, len_ in zip(judges, (0.2, 0, 0)):
                    x = q + {"jA": 0.1, "jB": -0.2, "jC": 0}[j] + rng.normal(0, 0.35)
                    if jfam[j] == fam:
                        x += 0.3 if j == "jA" else 0
                    x += len_ * (L - 3000) / 1000
                    sc[j] = round(float(x), 6)
                human = round(float(q + rng.normal(0, 0.3)), 6) if rng.random() < 1 / 3 else None
                items.append({"scenario": "s%02d" % s, "model": model, "family": fam, "rep": rep, "task": "t%d" % t,
                              "length": L, "scores": sc, "human": human})

fam = np.array([it["family"] for it in items])
L = np.array([it["length"] for it in items]) / 1000
S = {j: np.array([it["scores"][j] for it in items]) for j in judges}
H = np.array([np.nan if it["human"] is None else it["human"] for it in items])
self_pref, vs_humans, pairs = {}, {}, {}
for j in judges:
    others = np.mean([S[k] for k in judges if k != j], axis=0)
    d = S[j] - others
    inf = fam == jfam[j]
    self_pref[j] = float(d[inf].mean() - d[~inf].mean())
    rated = ~np.isnan(H)
    vs_humans[j] = float(np.polyfit(L[rated], (S[j] - H)[rated], 1)[0])
for a in range(3):
    for b in range(a + 1, 3):
        pairs[judges[a] + "|" + judges[b]] = float(np.polyfit(L, S[judges[a]] - S[judges[b]], 1)[0])
print(json.dumps({"generator": "make_bias_refs.py, numpy " + np.__version__, "items": items,
                  "self_preference": self_pref, "length_vs_humans": vs_humans, "length_pairs": pairs}, indent=1))
