#!/usr/bin/python3
"""Reference values for `gymlens agree --source inspect` on the items of
items.csv (TestAgreeInspectSamples writes the warehouse's items in this
form and checks that they are these).

Written from the definitions with Python's standard library alone, apart
from gymlens's Go code:
    python3 cmd/gymlens/testdata/inspect_agree/make_refs.py > cmd/gymlens/testdata/inspect_agree/refs.json

items.csv: item (configuration|sample|epoch), source (inspect.SCORER, a
judge's custom.NAME.FIELD (JUDGE), or human.QUESTION), rater (the human
rater; empty otherwise), value. A human question's value of an item is the
mean of its raters' ratings. Every scorer is paired with every judge score
and human question, every judge score with every human question; a pair
whose values are all 0 or 1 is binary (rates, their difference and the
percent agreement in percent, Cohen's kappa), else continuous (means, B - A,
MAE, Pearson, Spearman, Kendall's tau-b). A is the earlier in scorer,
judge, human order, then by name.
"""
import csv
import json
import math
import os
from collections import defaultdict

here = os.path.dirname(os.path.abspath(__file__))
vals = defaultdict(dict)  # source -> item -> value
human = defaultdict(list)
with open(os.path.join(here, "items.csv"), newline="") as f:
    for r in csv.DictReader(f):
        if r["rater"]:
            human[(r["source"], r["item"])].append(float(r["value"]))
        else:
            vals[r["source"]][r["item"]] = float(r["value"])
for (src, item), vs in human.items():
    vals[src][item] = sum(vs) / len(vs)


def kind(s):
    if s.startswith("inspect."):
        return 0
    if s.startswith("human."):
        return 2
    return 1


def mean(x):
    return sum(x) / len(x)


def pearson(x, y):
    mx, my = mean(x), mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def ranks(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def kendall_tau_b(x, y):
    n = len(x)
    nc = nd = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                tx += 1
                ty += 1
            elif dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx * dy > 0:
                nc += 1
            else:
                nd += 1
    n0 = n * (n - 1) / 2
    d = math.sqrt((n0 - tx) * (n0 - ty))
    return None if d == 0 else (nc - nd) / d


sources = sorted(vals, key=lambda s: (kind(s), s))
out = {}
for i, a in enumerate(sources):
    for b in sources[i + 1:]:
        if kind(a) == kind(b):
            continue
        items = sorted(set(vals[a]) & set(vals[b]))
        if not items:
            continue
        x = [vals[a][k] for k in items]
        y = [vals[b][k] for k in items]
        binary = all(v in (0, 1) for v in x + y)
        if binary:
            ra, rb = mean(x), mean(y)
            po = mean([1.0 if p == q else 0.0 for p, q in zip(x, y)])
            pe = ra * rb + (1 - ra) * (1 - rb)
            stats = {"rate_a": 100 * ra, "rate_b": 100 * rb, "delta": 100 * (rb - ra),
                     "percent_agreement": 100 * po, "cohen_kappa": None if pe >= 1 else (po - pe) / (1 - pe)}
        else:
            stats = {"mean_a": mean(x), "mean_b": mean(y), "delta": mean(y) - mean(x),
                     "mae": mean([abs(q - p) for p, q in zip(x, y)]), "pearson": pearson(x, y),
                     "spearman": pearson(ranks(x), ranks(y)), "kendall_tau_b": kendall_tau_b(x, y)}
        out[a + " ~ " + b] = {"binary": binary, "n": len(items), "stats": stats}
print(json.dumps(out, indent=1, sort_keys=True))
