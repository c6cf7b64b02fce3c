#!/usr/bin/python3
"""Reference values for gymlens's variance components (gymlens variance).

Run with Debian's python3 (apt-get install python3-scipy python3-statsmodels):
    /usr/bin/python3 analysis/testdata/make_variance_refs.py > analysis/testdata/variance_refs.json
The Go tests read the JSON (data and expected values); they never run this.

A balanced design: C configurations (fixed) x S scenarios x P personas
within each scenario x R repetitions, with random scenario, persona within
scenario, configuration x scenario and configuration x persona effects and
a residual. Two independent references:

- statsmodels' MixedLM (REML), the fixed configuration effects and one
  variance component per random term; for balanced data with positive
  components REML equals the ANOVA (method of moments) estimates;
- the ANOVA estimates from their expected mean squares, in numpy.
"""
import json
import warnings

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf

warnings.simplefilter("ignore")
rng = np.random.default_rng(19)
NC, NS, NP, NR = 4, 8, 3, 3
sd = {"scenario": 6.0, "persona": 3.0, "config_scenario": 4.0, "config_persona": 2.0, "residual": 5.0}
conf = rng.normal(0, 5, NC)
b_s = rng.normal(0, sd["scenario"], NS)
b_sp = rng.normal(0, sd["persona"], (NS, NP))
b_cs = rng.normal(0, sd["config_scenario"], (NC, NS))
b_csp = rng.normal(0, sd["config_persona"], (NC, NS, NP))
rows = []
for c in range(NC):
    for s in range(NS):
        for p in range(NP):
            for r in range(NR):
                y = 50 + conf[c] + b_s[s] + b_sp[s, p] + b_cs[c, s] + b_csp[c, s, p] + rng.normal(0, sd["residual"])
                rows.append({"c": c, "s": s, "p": p, "r": r, "y": round(float(y), 6)})
df = pd.DataFrame(rows)
df["sp"] = df.s.astype(str) + "/" + df.p.astype(str)
df["cs"] = df.c.astype(str) + "/" + df.s.astype(str)
df["csp"] = df.c.astype(str) + "/" + df.s.astype(str) + "/" + df.p.astype(str)
df["g"] = 1
m = smf.mixedlm("y ~ C(c)", df, groups="g", re_formula="0",
                vc_formula={"s": "0 + C(s)", "sp": "0 + C(sp)", "cs": "0 + C(cs)", "csp": "0 + C(csp)"})
f = m.fit(reml=True, method="lbfgs", maxiter=2000, gtol=1e-12)
vc = dict(zip(m.exog_vc.names, f.vcomp))
reml = {"scenario": vc["s"], "persona": vc["sp"], "config_scenario": vc["cs"], "config_persona": vc["csp"], "residual": f.scale}

# ANOVA from the expected mean squares.
y = df.y.to_numpy().reshape(NC, NS, NP, NR)
g = y.mean()
ys, ysp, yc, ycs, ycsp = y.mean(axis=(0, 2, 3)), y.mean(axis=(0, 3)), y.mean(axis=(1, 2, 3)), y.mean(axis=(2, 3)), y.mean(axis=3)
ms_s = NC * NP * NR * ((ys - g) ** 2).sum() / (NS - 1)
ms_p = NC * NR * ((ysp - ys[:, None]) ** 2).sum() / (NS * (NP - 1))
ms_cs = NP * NR * ((ycs - yc[:, None] - ys[None, :] + g) ** 2).sum() / ((NC - 1) * (NS - 1))
ms_cp = NR * ((ycsp - ycs[:, :, None] - ysp[None, :, :] + ys[None, :, None]) ** 2).sum() / ((NC - 1) * NS * (NP - 1))
ms_e = ((y - ycsp[..., None]) ** 2).sum() / (NC * NS * NP * (NR - 1))
anova = {"residual": ms_e, "config_persona": (ms_cp - ms_e) / NR, "config_scenario": (ms_cs - ms_cp) / (NP * NR),
         "persona": (ms_p - ms_cp) / (NC * NR), "scenario": (ms_s - ms_cs - ms_p + ms_cp) / (NC * NP * NR)}
print(json.dumps({"generator": "make_variance_refs.py", "statsmodels": statsmodels.__version__,
                  "design": {"C": NC, "S": NS, "P": NP, "R": NR}, "rows": rows,
                  "reml": reml, "anova": {k: float(v) for k, v in anova.items()}}, indent=0))
