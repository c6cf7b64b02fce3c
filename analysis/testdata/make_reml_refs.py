#!/usr/bin/python3
"""Reference values for gymlens's REML variance components of an unbalanced
design (gymlens variance on runs that are not a balanced design).

Run with Debian's python3 (apt-get install python3-scipy python3-statsmodels):
    /usr/bin/python3 analysis/testdata/make_reml_refs.py > analysis/testdata/reml_refs.json
The Go tests read the JSON (data and expected values); they never run this.

The design of make_variance_refs.py (configurations fixed; random scenario,
persona within scenario, configuration x scenario, configuration x persona;
a residual), made unbalanced: a fifth of the runs dropped at random, and one
scenario given a fourth persona. statsmodels' MixedLM fits it by REML; its
estimates, and its restricted log-likelihood at them, are the references.
"""
import json
import warnings

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf

warnings.simplefilter("ignore")
rng = np.random.default_rng(23)
NC, NS, NP, NR = 4, 8, 3, 3
sd = {"scenario": 6.0, "persona": 3.0, "config_scenario": 4.0, "config_persona": 2.0, "residual": 5.0}
conf = rng.normal(0, 5, NC)
b_s = rng.normal(0, sd["scenario"], NS)
b_sp = rng.normal(0, sd["persona"], (NS, NP + 1))
b_cs = rng.normal(0, sd["config_scenario"], (NC, NS))
b_csp = rng.normal(0, sd["config_persona"], (NC, NS, NP + 1))
rows = []
for c in range(NC):
    for s in range(NS):
        for p in range(NP + (1 if s == 0 else 0)):
            for r in range(NR):
                if rng.random() < 0.2:
                    continue
                y = 50 + conf[c] + b_s[s] + b_sp[s, p] + b_cs[c, s] + b_csp[c, s, p] + rng.normal(0, sd["residual"])
                rows.append({"c": c, "s": s, "p": p, "r": r, "y": round(float(y), 6)})
df = pd.DataFrame(rows)
df["sp"] = df.s.astype(str) + "/" + df.p.astype(str)
df["cs"] = df.c.astype(str) + "/" + df.s.astype(str)
df["csp"] = df.c.astype(str) + "/" + df.s.astype(str) + "/" + df.p.astype(str)
df["g"] = 1
m = smf.mixedlm("y ~ C(c)", df, groups="g", re_formula="0",
                vc_formula={"s": "0 + C(s)", "sp": "0 + C(sp)", "cs": "0 + C(cs)", "csp": "0 + C(csp)"})
f = m.fit(reml=True, method="lbfgs", maxiter=5000, gtol=1e-12)
vc = dict(zip(m.exog_vc.names, f.vcomp))
reml = {"scenario": vc["s"], "persona": vc["sp"], "config_scenario": vc["cs"], "config_persona": vc["csp"], "residual": f.scale}
print(json.dumps({"generator": "make_reml_refs.py", "statsmodels": statsmodels.__version__, "n": len(rows),
                  "rows": rows, "reml": reml, "reml_llf": f.llf, "converged": bool(f.converged)}, indent=0))
