#!/usr/bin/python3
"""Writes gymlens's hand-made PARE and Meta-ARE result files and the
reference numbers the Go tests check against (refs.json).

The summary reports (combined_result.json, benchmark_stats.json) are
computed here with numpy from the rows, following the definitions in
PARE's and Meta-ARE's report code (success rate over validated runs in
percent, standard deviation across run numbers with ddof=1, Pass@k / Pass^k
over scenarios, totals and rates of the stored counts), then two numbers
in each are altered on purpose so that `gymlens reconcile` has mismatches
to find. Wilson intervals come from statsmodels, the unbiased pass@k and
pass^k from scipy's exact binomial coefficients.

Run with Debian's python3 (numpy, scipy, statsmodels):
    /usr/bin/python3 ingest/testdata/pare/make_handmade.py
"""
import json
import math
import os

import numpy as np
from scipy.special import comb
from statsmodels.stats.proportion import proportion_confint

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10"
TRACES = "/home/researcher/pare/traces/" + BASE


def pare_row(cfg, scen, run, status, counts, export=None, acc_rate=None, prop_rate=None, dur=None):
    p, a, r, w, t = counts
    succ = {"success": 1.0, "failed": 0.0}.get(status)
    return {
        "base_scenario_id": scen, "run_number": run,
        "success_numeric": succ, "success_bool": None if succ is None else succ == 1.0,
        "status": status, "has_exception": status == "exception",
        "exception_type": "RateLimitError" if status == "exception" else None,
        "exception_message": "rate limit reached" if status == "exception" else None,
        "rationale": None, "export_path": export,
        "run_duration": dur, "job_duration": cfg["job"],
        "user_model": "gpt-5-mini", "user_provider": "openai",
        "observe_model": cfg["obs"], "observe_provider": cfg["prov"],
        "execute_model": cfg["obs"], "execute_provider": cfg["prov"],
        "agent_type": "proactive", "proactive_model": "proactive_%s_%s" % (cfg["obs"], cfg["obs"]),
        "tool_failure_probability": 0.0, "num_env_events_per_minute": 0,
        "proposal_count": p, "acceptance_count": a, "read_only_actions": r, "write_actions": w, "number_of_turns": t,
        "proposal_rate": prop_rate if prop_rate is not None else (p / t if t else 0.0),
        "acceptance_rate": acc_rate if acc_rate is not None else (a / p if p else 0.0),
    }


A = {"obs": "claude-4.5", "prov": "bedrock", "job": 812.5}
B = {"obs": "gpt-5", "prov": "openai", "job": 640.25}
descA = "obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0"
descB = "obs_gpt-5_exec_gpt-5_enmi_0_es_42_tfp_0.0"

rowsA = [
    # Linked to the fixture trace; every stored count agrees with it.
    pare_row(A, "add_missing_group_contacts", 1, "failed", (1, 0, 22, 5, 10), TRACES + "/" + descA + "/add_missing_group_contacts_run_1.json", dur=31.5),
    pare_row(A, "add_missing_group_contacts", 2, "success", (2, 1, 12, 2, 10), dur=40.0),
    pare_row(A, "add_missing_group_contacts", 3, "success", (1, 1, 14, 3, 10), dur=35.25),
    pare_row(A, "apartment_feature_comparison_query", 1, "failed", (0, 0, 9, 0, 10), dur=20.0),
    pare_row(A, "apartment_feature_comparison_query", 2, "failed", (1, 0, 11, 0, 10), dur=22.0),
    pare_row(A, "apartment_feature_comparison_query", 3, "success", (1, 1, 10, 2, 10), dur=25.5),
    # Linked; turns stored as 9 (the trace has 10) and the acceptance rate
    # written in percent: a value and a unit mismatch (and the proposal
    # rate, 1/9, follows the wrong turns).
    pare_row(A, "apartment_feature_comparison_query", 4, "success", (1, 1, 20, 4, 9), TRACES + "/" + descA + "/apartment_feature_comparison_query_run_4.json",
             acc_rate=100.0, dur=27.0),
    pare_row(A, "urgent_meeting_bumps_personal_errand", 1, "failed", (2, 0, 8, 0, 10), dur=30.0),
    pare_row(A, "urgent_meeting_bumps_personal_errand", 2, "failed", (1, 0, 7, 0, 10), dur=29.0),
    pare_row(A, "urgent_meeting_bumps_personal_errand", 3, "failed", (3, 1, 9, 1, 10), dur=33.0),
    pare_row(A, "group_gift_purchase_coordination", 1, "success", (1, 1, 6, 3, 10), dur=41.0),
    pare_row(A, "group_gift_purchase_coordination", 2, "success", (1, 1, 7, 2, 10), dur=39.5),
    pare_row(A, "group_gift_purchase_coordination", 3, "success", (2, 1, 8, 2, 10), dur=44.0),
]
rowsB = [
    pare_row(B, "add_missing_group_contacts", 1, "success", (1, 1, 10, 2, 10), dur=18.0),
    pare_row(B, "add_missing_group_contacts", 2, "success", (1, 1, 11, 2, 10), dur=19.0),
    pare_row(B, "add_missing_group_contacts", 3, "failed", (2, 0, 12, 0, 10), dur=21.0),
    pare_row(B, "apartment_feature_comparison_query", 1, "failed", (1, 0, 8, 0, 10), dur=17.0),
    pare_row(B, "apartment_feature_comparison_query", 2, "failed", (0, 0, 9, 0, 10), dur=16.5),
    pare_row(B, "apartment_feature_comparison_query", 3, "failed", (1, 0, 10, 1, 10), dur=18.5),
    pare_row(B, "urgent_meeting_bumps_personal_errand", 1, "success", (1, 1, 7, 2, 10), dur=22.0),
    pare_row(B, "urgent_meeting_bumps_personal_errand", 2, "success", (1, 1, 6, 2, 10), dur=23.0),
    # Linked to the rate-limited fixture trace: an exception, not validated.
    pare_row(B, "urgent_meeting_bumps_personal_errand", 3, "exception", (2, 1, 15, 6, 9), TRACES + "/" + descB + "/urgent_meeting_bumps_personal_errand_run_3.json"),
    pare_row(B, "group_gift_purchase_coordination", 1, "success", (1, 1, 5, 2, 10), dur=30.0),
    pare_row(B, "group_gift_purchase_coordination", 2, "failed", (1, 0, 6, 0, 10), dur=28.0),
    pare_row(B, "group_gift_purchase_coordination", 3, "success", (1, 1, 5, 3, 10), dur=31.0),
]


def std_sem(vals):
    if len(vals) < 2:
        return 0.0, 0.0
    sd = float(np.std(vals, ddof=1))
    return sd, sd / math.sqrt(len(vals))


def report_stats(rows, cluster=lambda r: r["base_scenario_id"], pare=True):
    val = [r for r in rows if r["success_numeric"] is not None]
    s = {"total_runs": len(rows), "validated_runs": len(val),
         "success_runs": sum(r["status"] == "success" for r in rows), "failed_runs": sum(r["status"] == "failed" for r in rows),
         "exception_runs": sum(r["status"] == "exception" for r in rows), "no_validation_runs": sum(r["status"] == "no_validation" for r in rows)}
    runs = sorted({r["run_number"] for r in rows if r["run_number"] is not None})
    s["success_rate"] = float(np.mean([r["success_numeric"] for r in val])) * 100 if val else 0.0
    per_run = []
    for n in runs:
        v = [r["success_numeric"] for r in val if r["run_number"] == n]
        if v:
            per_run.append(float(np.mean(v)) * 100)
    s["success_rate_std"], s["success_rate_sem"] = std_sem(per_run)
    scen = {}
    for r in rows:
        scen.setdefault(cluster(r), []).append(r)
    rates = {k: [r["success_numeric"] for r in v if r["success_numeric"] is not None] for k, v in scen.items()}
    s["pass_at_k"] = sum(1 for v in rates.values() if v and np.mean(v) > 0)
    s["pass_k"] = sum(1 for v in rates.values() if v and np.mean(v) == 1.0)
    s["total_scenarios"] = len(scen)
    s["pass_at_k_percent"] = s["pass_at_k"] / len(scen) * 100
    s["pass_k_percent"] = s["pass_k"] / len(scen) * 100
    ks = [len(v) for v in scen.values()]
    s["k"] = ks[0] if len(set(ks)) == 1 else max(ks)
    d = [r["run_duration"] for r in rows if r["run_duration"] is not None]
    s["avg_run_duration"] = float(np.mean(d)) if d else 0.0
    s["avg_run_duration_std"] = float(np.std(d, ddof=1)) if len(d) > 1 else 0.0
    s["job_duration"] = float(np.mean([r["job_duration"] for r in rows if r.get("job_duration") is not None] or [0.0]))
    if not pare:
        return s
    tot = lambda rs, f: sum(r[f] for r in rs)
    s["total_proposals"], s["total_acceptances"] = tot(rows, "proposal_count"), tot(rows, "acceptance_count")
    s["total_turns"] = tot(rows, "number_of_turns")
    s["total_read_only_actions"], s["total_write_actions"] = tot(rows, "read_only_actions"), tot(rows, "write_actions")
    s["aggregate_proposal_rate"] = s["total_proposals"] / s["total_turns"] if s["total_turns"] else 0.0
    s["aggregate_acceptance_rate"] = s["total_acceptances"] / s["total_proposals"] if s["total_proposals"] else 0.0
    s["avg_read_only_actions"] = s["total_read_only_actions"] / len(rows)
    s["avg_write_actions"] = s["total_write_actions"] / len(rows)
    pr, ar, rd, wr = [], [], [], []
    for n in runs:
        rs = [r for r in rows if r["run_number"] == n]
        if tot(rs, "number_of_turns") > 0:
            pr.append(tot(rs, "proposal_count") / tot(rs, "number_of_turns"))
        if tot(rs, "proposal_count") > 0:
            ar.append(tot(rs, "acceptance_count") / tot(rs, "proposal_count"))
        rd.append(tot(rs, "read_only_actions") / len(rs))
        wr.append(tot(rs, "write_actions") / len(rs))
    s["aggregate_proposal_rate_std"], s["aggregate_proposal_rate_sem"] = std_sem(pr)
    s["aggregate_acceptance_rate_std"], s["aggregate_acceptance_rate_sem"] = std_sem(ar)
    s["avg_read_only_actions_std"], s["avg_read_only_actions_sem"] = std_sem(rd)
    s["avg_write_actions_std"], s["avg_write_actions_sem"] = std_sem(wr)
    return s


def dump(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


res = os.path.join(HERE, "results", BASE)
dump(os.path.join(res, descA + "_result.json"), rowsA)
dump(os.path.join(res, descB + "_result.json"), rowsB)
per = []
for cfg, rows in ((A, rowsA), (B, rowsB)):
    st = report_stats(rows)
    entry = {"user_model": "gpt-5-mini", "proactive_model": "proactive_%s_%s" % (cfg["obs"], cfg["obs"]),
             "tool_failure_probability": 0.0, "num_env_events_per_minute": 0, **st}
    per.append(entry)
true_A = dict(per[0])
# Two numbers altered: A's success rate written as a fraction, and its
# total acceptances one too many.
per[0]["success_rate"] = per[0]["success_rate"] / 100
per[0]["total_acceptances"] += 1
dump(os.path.join(res, "combined_result.json"), {
    "metadata": {"split": "full", "timestamp": "2026-01-27T10:00:00", "report_version": "1.0", "weight_per_app_class": None},
    "per_config_results": per})

# Meta-ARE: output.jsonl per capability of the standard phase.
def are_line(scen, run, score, status=None, exc=None):
    status = status or {1.0: "success", 0.0: "failed"}[score]
    md = {"scenario_id": scen, "run_number": run, "status": status, "has_exception": exc is not None}
    if exc:
        md["exception_type"], md["exception_message"] = exc, "the scenario timed out"
    return {"task_id": scen, "trace_id": None, "score": score, "metadata": md}

are = {
    "execution": [are_line("exec_a", r, s) for r, s in ((1, 1.0), (2, 1.0), (3, 0.0))] +
                 [are_line("exec_b", r, s) for r, s in ((1, 0.0), (2, 0.0), (3, 0.0))] +
                 [are_line("exec_c", 1, 1.0), are_line("exec_c", 2, None, "exception", "ScenarioTimeoutError"), are_line("exec_c", 3, 1.0)],
    "search": [are_line("search_a", r, s) for r, s in ((1, 1.0), (2, 0.0), (3, 1.0))] +
              [are_line("search_b", r, s) for r, s in ((1, 1.0), (2, 1.0), (3, 1.0))],
}
are_rows = {}
for cap, lines in are.items():
    path = os.path.join(HERE, "are", "standard", cap, "output.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for ln in lines:
            f.write(json.dumps(ln) + "\n")
    are_rows[cap] = [{"base_scenario_id": l["task_id"], "run_number": l["metadata"]["run_number"], "success_numeric": l["score"],
                      "status": l["metadata"]["status"], "run_duration": None, "job_duration": None, "phase": "standard"} for l in lines]
per_cap = {}
for cap, rows in are_rows.items():
    st = report_stats(rows, cluster=lambda r: (r["base_scenario_id"], r["phase"]), pare=False)
    st.pop("k")
    st.pop("job_duration")
    per_cap[cap] = {"capability": cap, **st}
allrows = [r for rows in are_rows.values() for r in rows]
glob = report_stats(allrows, cluster=lambda r: (r["base_scenario_id"], r["phase"]), pare=False)
for k in ("k", "success_rate", "success_rate_std", "success_rate_sem", "job_duration"):
    glob.pop(k)
glob["macro_success_rate"] = float(np.mean([per_cap[c]["success_rate"] for c in per_cap]))
val = [per_cap[c]["validated_runs"] for c in per_cap]
glob["micro_success_rate"] = sum(per_cap[c]["success_rate"] * per_cap[c]["validated_runs"] for c in per_cap) / sum(val)
true_search = dict(per_cap["search"])
per_cap["search"]["pass_k"] += 1  # altered on purpose
dump(os.path.join(HERE, "are", "benchmark_stats.json"), {
    "metadata": {"model": "llama-4-maverick", "model_provider": "llama-api", "timestamp": "2026-01-27T11:00:00", "report_version": "3.0"},
    "statistics": {"per_capability": per_cap, "global": glob}, "run_configurations": []})

# Reference numbers.
def tally(rows):
    out = {}
    for r in rows:
        t = out.setdefault(r["base_scenario_id"], [0, 0])
        if r["success_numeric"] is not None:
            t[0] += 1
            t[1] += int(r["success_numeric"])
    return out

def pass_at(n, c, k):
    return float("nan") if n < k else 1 - comb(n - c, k, exact=True) / comb(n, k, exact=True)

def pass_hat(n, c, k):
    return float("nan") if n < k else comb(c, k, exact=True) / comb(n, k, exact=True)

refs = {"wilson": [], "pass": {}, "success": {}}
for k, n in ((0, 1), (1, 1), (3, 10), (7, 12), (50, 50), (1, 3)):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    refs["wilson"].append({"k": k, "n": n, "level": 0.95, "lo": lo, "hi": hi})
lo, hi = proportion_confint(7, 12, alpha=0.10, method="wilson")
refs["wilson"].append({"k": 7, "n": 12, "level": 0.90, "lo": lo, "hi": hi})
for name, rows in (("A", rowsA), ("B", rowsB)):
    t = tally(rows)
    kmin = min(n for n, c in t.values())
    out = {}
    for k in (1, 2, 3):
        vals = [pass_at(n, c, k) for n, c in t.values()]
        hats = [pass_hat(n, c, k) for n, c in t.values()]
        out["pass@%d" % k] = 100 * float(np.nanmean(vals))
        out["pass^%d" % k] = 100 * float(np.nanmean(hats))
    out["k"] = kmin
    out["pare_pass@k"] = 100 * float(np.mean([c > 0 for n, c in t.values()]))
    out["pare_pass^k"] = 100 * float(np.mean([n > 0 and c == n for n, c in t.values()]))
    refs["pass"][name] = out
    v = [r["success_numeric"] for r in rows if r["success_numeric"] is not None]
    refs["success"][name] = 100 * float(np.mean(v))
refs["scalar"] = {"pass_at": [[n, c, k, pass_at(n, c, k)] for n, c, k in ((5, 2, 1), (5, 2, 3), (10, 3, 4), (4, 4, 2), (4, 0, 2), (3, 1, 3))],
                  "pass_hat": [[n, c, k, pass_hat(n, c, k)] for n, c, k in ((5, 2, 1), (5, 2, 2), (10, 7, 4), (4, 4, 2), (4, 0, 2), (3, 3, 3))]}
refs["combined_A_true"] = true_A
refs["are_search_true"] = true_search
with open(os.path.join(HERE, "refs.json"), "w") as f:
    json.dump(refs, f, indent=1, sort_keys=True, default=lambda x: None)
    f.write("\n")
print("wrote", HERE)
