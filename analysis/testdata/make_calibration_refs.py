#!/usr/bin/python3
"""An independent simulation of gymlens's calibration (analysis.Calibrate).

Run with Debian's python3 (apt-get install python3-scipy), from the
repository's root:
    /usr/bin/python3 analysis/testdata/make_calibration_refs.py

It writes analysis/testdata/calibration_balanced.csv (a balanced design of
8 configurations x 10 scenarios x 9 runs with skewed, bounded values, drawn
here from a fixed seed) and analysis/testdata/calibration_refs.json: for
that design's TC and for the sample corpus's TC and TA
(analysis/testdata/calibration_sample.csv: each run's configuration,
scenario, TC and TA, as reports.Dataset.SelectedValues gives them on the
warehouse of `gymlens demo` at seed 1, scale 1, with the sample's two
judges; a fixed copy, so that the test does not move when the sample
does), the simulated coverage of the 95% expanded
percentile and percentile intervals of the configurations' means and the
size of the paired test, each with its Monte Carlo standard error.

Nothing here calls gymlens: the generating model, the cluster bootstrap
and the intervals are written again with numpy and scipy, from
docs/statistics.md's description.

The generating model, fitted for each configuration c:
  mu_c     the mean of its runs;
  cells    its runs by scenario: mean m_cs, count n_cs;
  sigma2_c the pooled within-scenario variance (sum of squares / sum (n-1));
  tau2_c   max(0, var_s(m_cs) - mean_s(sigma2_c / n_cs)) over its scenarios;
  u_cs     (m_cs - mu_c) tau2/(tau2 + sigma2/n_cs), 0 where it has no run,
           centred over the S scenarios and rescaled so that its mean
           square over them is tau2_c;
  pool_c   its residuals (run - m_cs) * sqrt(n_cs/(n_cs - 1)), n_cs > 1.
A metric with at most 25 distinct values is discrete: values kept in
[min, max] of them and rounded at random to one of the two nearest (keeping
the mean); otherwise kept in its scale (0-100 here).
A dataset: each scenario slot draws a source scenario uniformly; run i of
configuration c in slot k is mu_c + shift_c + u[c, source_k] + a residual
drawn from pool_c, bounded (and rounded).
Truth: mean over s, e of clip(mu_c + shift_c + u_cs + e).
Null pairs: configurations with runs in 2+ scenarios, ordered by mu, paired
(1st, 2nd), (3rd, 4th), ...; the second's shift makes its truth equal to the
first's (bisection).
Intervals: B resamples of the scenarios (multinomial counts); a
configuration's replicate is sum_s w_s sum_cs / sum_s w_s n_cs over its own
scenarios; the expanded percentile interval takes the type-7 quantiles at
alpha'/2 = Phi(-sqrt(n/(n-1)) t_{1-alpha/2, n-1}), n its scenarios; the
paired test rejects when the same interval of the difference B - A (every
scenario of the pairs resampled) excludes 0.
"""
import csv
import json
import math
import multiprocessing
import os

import numpy as np
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
LEVEL = 0.95
DATASETS = 2000
RESAMPLES = 2000
MAX_SUPPORT = 25


def balanced(seed=20261206):
    rng = np.random.default_rng(seed)
    rows = []
    s_eff = rng.normal(0, 8, 10)
    for c in range(8):
        for s in range(10):
            cs = rng.normal(0, 4)
            for r in range(9):
                e = 14 * (rng.exponential(1.0) - 1.0)  # skewed residuals
                x = min(100.0, max(0.0, 55 + 3 * c + s_eff[s] + cs + e))
                rows.append(("c%02d" % c, "s%02d" % s, x))
    path = os.path.join(HERE, "calibration_balanced.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["config", "scenario", "TC"])
        for r in rows:
            w.writerow([r[0], r[1], repr(r[2])])


def read(path, column):
    conf, scen, val = [], [], []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row[column] == "":
                continue
            conf.append(row["config"])
            scen.append(row["scenario"])
            val.append(float(row[column]))
    return conf, scen, np.array(val)


class Model:
    def __init__(self, conf, scen, y, lo, hi):
        self.configs = list(dict.fromkeys(conf))
        self.slots = list(dict.fromkeys(scen))
        C, S = len(self.configs), len(self.slots)
        self.C, self.S = C, S
        ci = {c: i for i, c in enumerate(self.configs)}
        si = {s: i for i, s in enumerate(self.slots)}
        self.conf = np.array([ci[c] for c in conf])
        self.slot = np.array([si[s] for s in scen])
        self.y = y
        distinct = np.unique(np.round(y * 1e9) / 1e9)
        self.support = distinct if len(distinct) <= MAX_SUPPORT else None
        if self.support is not None:
            lo, hi = distinct[0], distinct[-1]
        self.lo, self.hi = lo, hi
        self.mu = np.zeros(C)
        self.u = np.zeros((C, S))
        self.pool = []
        self.n = np.zeros((C, S))
        allres = []
        for c in range(C):
            yc, sc = y[self.conf == c], self.slot[self.conf == c]
            self.mu[c] = yc.mean()
            means = np.zeros(S)
            ss, df, pool = 0.0, 0.0, []
            for s in range(S):
                v = yc[sc == s]
                self.n[c, s] = len(v)
                if len(v) == 0:
                    continue
                means[s] = v.mean()
                r = v - means[s]
                ss += (r ** 2).sum()
                df += len(v) - 1
                if len(v) > 1:
                    pool.extend(r * math.sqrt(len(v) / (len(v) - 1)))
            within = ss / df if df > 0 else 0.0
            has = self.n[c] > 0
            k = has.sum()
            tau2 = 0.0
            if k > 1:
                m = means[has]
                tau2 = max(0.0, m.var(ddof=1) - (within / self.n[c][has]).mean())
            u = np.zeros(S)
            if tau2 > 0:
                u[has] = (means[has] - self.mu[c]) * tau2 / (tau2 + within / self.n[c][has])
            u -= u.mean()
            uv = (u ** 2).mean()
            u *= math.sqrt(tau2 / uv) if uv > 0 else 0.0
            self.u[c] = u
            self.pool.append(np.array(pool))
            allres.extend(pool)
        self.pool = [p if len(p) else np.array(allres if allres else [0.0]) for p in self.pool]
        self.shift = np.zeros(C)
        order = [c for c in range(C) if (self.n[c] > 0).sum() >= 2]
        order.sort(key=lambda c: self.mu[c])  # stable, as Go's SliceStable
        self.pairs = []
        for p in range(0, len(order) - 1, 2):
            a, b = order[p], order[p + 1]
            self.pairs.append((a, b))
            self.shift[b] = self.solve(b, self.truth(a, 0.0))
        self.truths = np.array([self.truth(c, self.shift[c]) for c in range(C)])

    def truth(self, c, delta):
        x = self.mu[c] + delta + self.u[c][:, None] + self.pool[c][None, :]
        return np.clip(x, self.lo, self.hi).mean()

    def solve(self, c, target):
        lo, hi = -(self.hi - self.lo), self.hi - self.lo
        for _ in range(200):
            mid = (lo + hi) / 2
            if self.truth(c, mid) < target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    def draw(self, rng):
        src = rng.integers(0, self.S, self.S)
        x = np.empty(len(self.y))
        for c in range(self.C):
            idx = np.nonzero(self.conf == c)[0]
            e = self.pool[c][rng.integers(0, len(self.pool[c]), len(idx))]
            x[idx] = self.mu[c] + self.shift[c] + self.u[c][src[self.slot[idx]]] + e
        x = np.clip(x, self.lo, self.hi)
        if self.support is not None:
            sup = self.support
            j = np.searchsorted(sup, x)  # sup[j-1] < x <= sup[j]
            exact = sup[np.minimum(j, len(sup) - 1)] == x
            jj = np.clip(j, 1, len(sup) - 1)
            a, b = sup[jj - 1], sup[jj]
            up = rng.random(len(x)) * (b - a) < x - a
            x = np.where(exact, x, np.where(up, b, a))
        return x


def expanded_alpha(level, n):
    z = math.sqrt(n / (n - 1)) * stats.t.ppf(1 - (1 - level) / 2, n - 1)
    return 2 * stats.norm.cdf(-z)


def interval(reps, a):
    return np.quantile(reps, a / 2, axis=0), np.quantile(reps, 1 - a / 2, axis=0)


def simulate(model, seed):
    rng = np.random.default_rng(seed)
    C, S = model.C, model.S
    methods = ["expanded-percentile", "percentile"]
    cov = {m: np.zeros((DATASETS, 2)) for m in methods}
    rej = {m: np.zeros((DATASETS, 2)) for m in methods}
    cnt = np.zeros((C, S))
    for c in range(C):
        for s in range(S):
            cnt[c, s] = ((model.conf == c) & (model.slot == s)).sum()
    own = [np.nonzero(cnt[c] > 0)[0] for c in range(C)]
    # Configurations with the same scenarios share one draw of them (a
    # configuration's interval depends on its own draws alone).
    sets = {}
    for c in range(C):
        sets.setdefault(tuple(own[c]), []).append(c)
    for d in range(DATASETS):
        y = model.draw(rng)
        sums = np.zeros((C, S))
        np.add.at(sums, (model.conf, model.slot), y)
        for sc, cs in sets.items():
            sc = np.array(sc)
            n = len(sc)
            w = rng.multinomial(n, np.full(n, 1.0 / n), size=RESAMPLES)
            reps = (w @ sums[cs][:, sc].T) / (w @ cnt[cs][:, sc].T)  # resamples x configurations
            for m in methods:
                a = expanded_alpha(LEVEL, n) if m == "expanded-percentile" else 1 - LEVEL
                lo, hi = interval(reps, a)
                t = model.truths[cs]
                cov[m][d, 1] += len(cs)
                cov[m][d, 0] += ((lo <= t) & (t <= hi)).sum()
        # The paired test: every scenario of the pairs, drawn once for all.
        if model.pairs:
            sc = np.unique(np.concatenate([np.concatenate([own[a], own[b]]) for a, b in model.pairs]))
            n = len(sc)
            w = rng.multinomial(n, np.full(n, 1.0 / n), size=RESAMPLES)
            A = [a for a, b in model.pairs]
            B = [b for a, b in model.pairs]
            diff = (w @ sums[B][:, sc].T) / (w @ cnt[B][:, sc].T) - (w @ sums[A][:, sc].T) / (w @ cnt[A][:, sc].T)
            for m in methods:
                al = expanded_alpha(LEVEL, n) if m == "expanded-percentile" else 1 - LEVEL
                lo, hi = interval(diff, al)
                rej[m][d, 1] += len(A)
                rej[m][d, 0] += ((lo > 0) | (hi < 0)).sum()
    out = {}
    for m in methods:
        out[m] = {}
        for what, arr in (("coverage", cov[m]), ("size", rej[m])):
            h, k = arr[:, 0], arr[:, 1]
            p = h.sum() / k.sum()
            D = len(h)
            se = math.sqrt(((h - p * k) ** 2).sum() / (D * (D - 1))) / k.mean()
            out[m][what] = p
            out[m][what + "_se"] = se
    return out


CASES = [
    ("balanced TC", "calibration_balanced.csv", "TC", 0.0, 100.0, 1),
    ("sample TC", "calibration_sample.csv", "TC", 0.0, 100.0, 2),
    ("sample TA", "calibration_sample.csv", "TA", 0.0, 100.0, 3),
]


def run(case):
    name, path, column, lo, hi, seed = case
    conf, scen, y = read(os.path.join(HERE, path), column)
    model = Model(conf, scen, y, lo, hi)
    res = simulate(model, seed)
    return {"name": name, "file": path, "column": column, "datasets": DATASETS, "resamples": RESAMPLES,
            "level": LEVEL, "configs": model.C, "scenarios": model.S, "pairs": len(model.pairs),
            "truths": list(model.truths), "methods": res}


def main():
    balanced()
    # One process per case (each seeded apart): the same output as in turn.
    with multiprocessing.Pool(len(CASES)) as pool:
        cases = pool.map(run, CASES)
    with open(os.path.join(HERE, "calibration_refs.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
