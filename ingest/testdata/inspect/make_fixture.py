#!/usr/bin/python3
"""A synthetic Inspect fixture and its reference values.

Run with Debian's python3 (apt-get install python3-numpy python3-scipy):
    /usr/bin/python3 ingest/testdata/inspect/make_fixture.py
It writes logs/model-{a,b,c}.json (Inspect .json logs, log version 2) and
refs.json; the Go tests read both and never run this.

The logs are made up, not from a real evaluation: three models run one
task, "arith", on the same 12 samples, 3 epochs each, with two scorers:
"match" (C or I) and "quality" (a number in [0, 1]). Each sample has a
difficulty shared by the models (so the models' per-sample scores
correlate), each model × sample its own luck, each epoch noise. Samples
carry metadata (difficulty, source document), tokens and times.

refs.json holds, computed here with numpy and scipy from the values
written (not from gymlens):
- per configuration and scorer, the mean over samples of each sample's
  epoch mean;
- per pair of configurations and scorer, the paired difference (B - A)
  and the Pearson correlation of their per-sample means;
- per scorer, the ANOVA variance components of the design configurations
  (fixed) x samples x epochs (expected mean squares of the unrestricted
  mixed model: sample, configuration x sample, epoch residual), the
  correlation of two configurations' per-sample means they imply, and
  the MDE of the paired t-test over samples (exact, noncentral t) and
  the samples it needs for an MDE of 0.1;
- the Pearson and Spearman correlations of match and quality over the
  (configuration, sample) units, epochs averaged;
- per configuration, the mean tokens and seconds per sample and epoch;
- the scores themselves (rows: configuration, sample, epoch, match,
  quality), for the tests that do not read the logs.
"""
import json
import math
import os
import random

import numpy as np
from scipy import optimize, stats

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(61)
MODELS = ["openai/model-a", "openai/model-b", "openai/model-c"]
SKILL = [0.0, 0.9, 1.8]  # on the logit scale
S, R = 12, 3
difficulty = [rng.gauss(0, 1.2) for _ in range(S)]
luck = [[rng.gauss(0, 0.5) for _ in range(S)] for _ in MODELS]

values = {}  # (model, sample, epoch) -> (match, quality, tokens, time)
for m, model in enumerate(MODELS):
    for s in range(S):
        for e in range(R):
            z = SKILL[m] - difficulty[s] + luck[m][s] + rng.gauss(0, 0.6)
            p = 1 / (1 + math.exp(-z))
            match = 1 if rng.random() < p else 0
            quality = round(min(1.0, max(0.0, p + rng.gauss(0, 0.08))), 3)
            inp = 300 + 40 * s + 25 * m
            out = 60 + rng.randrange(0, 80) + 30 * m
            t = round(0.8 + 0.004 * (inp + out) + rng.random(), 3)
            values[(m, s, e)] = (match, quality, inp, out, t)


def sample_json(m, s, e):
    match, quality, inp, out, t = values[(m, s, e)]
    model = MODELS[m]
    q = f"What is {s + 2} times {s + 7}?"
    answer = str((s + 2) * (s + 7)) if match else str((s + 2) * (s + 7) + 1)
    return {
        "id": s + 1, "epoch": e + 1, "input": q, "target": str((s + 2) * (s + 7)),
        "messages": [
            {"id": f"m{m}s{s}e{e}u", "content": q, "source": "input", "role": "user"},
            {"id": f"m{m}s{s}e{e}a", "content": answer, "source": "generate", "role": "assistant", "model": model},
        ],
        "output": {"model": model, "choices": [{"message": {"id": f"m{m}s{s}e{e}a", "content": answer, "source": "generate",
                   "role": "assistant", "model": model}, "stop_reason": "stop"}],
                   "usage": {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}},
        "scores": {"match": {"value": "C" if match else "I", "answer": answer, "explanation": answer},
                   "quality": {"value": quality, "explanation": "graded on a 0-1 scale"}},
        "metadata": {"difficulty": "hard" if difficulty[s] > 0 else "easy", "source": f"doc{s % 4 + 1}"},
        "store": {}, "events": [],
        "model_usage": {model: {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}},
        "total_time": t, "working_time": round(t * 0.9, 3), "uuid": f"u-{m}-{s}-{e}", "error_retries": [], "attachments": {},
    }


def reduce(m, k):
    """Each sample's epoch mean of value k (0 match, 1 quality)."""
    return np.array([np.mean([values[(m, s, e)][k] for e in range(R)]) for s in range(S)])


for m, model in enumerate(MODELS):
    scores = []
    for k, name in enumerate(["match", "quality"]):
        red = reduce(m, k)
        met = {"accuracy": float(np.mean(red))} if name == "match" else {"mean": float(np.mean(red))}
        met["stderr"] = float(np.std(red, ddof=1)) / math.sqrt(S)
        scores.append({"name": name, "scorer": name, "params": {}, "metrics": {
            n: {"name": n, "value": v, "params": {}} for n, v in met.items()}})
    log = {
        "version": 2, "status": "success",
        "eval": {"eval_id": f"fixture-eval-{m + 1}", "run_id": "fixture-run", "created": "2026-12-01T10:00:00+00:00",
                 "task": "arith", "task_id": "fixture-task", "task_version": 0, "task_attribs": {}, "task_args": {},
                 "dataset": {"name": "arith", "samples": S, "sample_ids": list(range(1, S + 1)), "shuffled": False},
                 "model": model, "model_generate_config": {}, "model_args": {}, "model_roles": {},
                 "config": {"epochs": R, "epochs_reducer": ["mean"]}, "packages": {"inspect_ai": "0.3.150"},
                 "scorers": [{"name": "match", "options": {}, "metrics": [], "metadata": {}},
                             {"name": "quality", "options": {}, "metrics": [], "metadata": {}}]},
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
        "results": {"total_samples": S * R, "completed_samples": S * R, "scores": scores},
        "stats": {"started_at": "2026-12-01T10:00:00+00:00", "completed_at": "2026-12-01T10:05:00+00:00", "model_usage": {}},
        "samples": [sample_json(m, s, e) for s in range(S) for e in range(R)],
    }
    with open(os.path.join(HERE, "logs", f"model-{'abc'[m]}.json"), "w") as f:
        json.dump(log, f, indent=1)
        f.write("\n")


def mde(v_cs, v_e, S, R, alpha=0.05, power=0.8):
    se = math.sqrt(2 * (v_cs / S + v_e / (S * R)))
    df = S - 1
    tc = stats.t.ppf(1 - alpha / 2, df)

    def pw(lam):
        return stats.nct.sf(tc, df, lam) + stats.nct.cdf(-tc, df, lam) - power
    lam = optimize.brentq(pw, 0.5, 20, xtol=1e-14)
    return se, lam * se


refs = {"generator": "make_fixture.py", "configs": [f"{m} | generate | none" for m in MODELS], "means": {}, "pairs": [], "variance": {}}
C = len(MODELS)
for k, name in enumerate(["match", "quality"]):
    metric = "inspect." + name
    red = [reduce(m, k) for m in range(C)]
    for m in range(C):
        refs["means"][f"{refs['configs'][m]}|{metric}"] = float(np.mean(red[m]))
    for a in range(C):
        for b in range(a + 1, C):
            refs["pairs"].append({"a": refs["configs"][a], "b": refs["configs"][b], "metric": metric,
                                  "diff": float(np.mean(red[b] - red[a])), "r": float(np.corrcoef(red[a], red[b])[0, 1])})
    y = np.array([[[values[(m, s, e)][k] for e in range(R)] for s in range(S)] for m in range(C)], dtype=float)
    g, ys, yc, ycs = y.mean(), y.mean(axis=(0, 2)), y.mean(axis=(1, 2)), y.mean(axis=2)
    ms_s = C * R * ((ys - g) ** 2).sum() / (S - 1)
    ms_cs = R * ((ycs - yc[:, None] - ys[None, :] + g) ** 2).sum() / ((C - 1) * (S - 1))
    ms_e = ((y - ycs[..., None]) ** 2).sum() / (C * S * (R - 1))
    v_s, v_cs, v_e = (ms_s - ms_cs) / (C * R), (ms_cs - ms_e) / R, ms_e
    se, m_de = mde(max(v_cs, 0), v_e, S, R)
    refs["variance"][metric] = {"sample": v_s, "config_sample": v_cs, "epoch": v_e,
                                "r_implied": max(v_s, 0) / (max(v_s, 0) + max(v_cs, 0) + v_e / R), "se": se, "mde": m_de}
units = [(np.mean([values[(m, s, e)][0] for e in range(R)]), np.mean([values[(m, s, e)][1] for e in range(R)]))
         for m in range(C) for s in range(S)]
x, yq = np.array([u[0] for u in units]), np.array([u[1] for u in units])
refs["corr"] = {"pearson": float(stats.pearsonr(x, yq)[0]), "spearman": float(stats.spearmanr(x, yq)[0]), "n": len(units)}
refs["rows"] = [[refs["configs"][m], str(s + 1), e + 1, values[(m, s, e)][0], values[(m, s, e)][1]]
                for m in range(C) for s in range(S) for e in range(R)]
for v in refs["variance"].values():
    # The fewest samples whose MDE is at most 0.1 (epochs as given).
    v["samples_for_0.1"] = next(n for n in range(2, 100000) if mde(max(v["config_sample"], 0), v["epoch"], n, R)[1] <= 0.1)
refs["costs"] = {}
for m in range(C):
    refs["costs"][refs["configs"][m]] = {
        "total_tokens": float(np.mean([values[(m, s, e)][2] + values[(m, s, e)][3] for s in range(S) for e in range(R)])),
        "total_time": float(np.mean([values[(m, s, e)][4] for s in range(S) for e in range(R)]))}
with open(os.path.join(HERE, "refs.json"), "w") as f:
    json.dump(refs, f, indent=1)
    f.write("\n")
