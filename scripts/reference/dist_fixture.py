"""Reference values for crates/stats/src/dist.rs (the normal, Student's t and the noncentral t),
computed by SciPy.

Regenerate: .venv/bin/python scripts/reference/dist_fixture.py > tests/fixtures/dist.json

Each function at points that reach every branch of the Rust code: both tails and the middle,
far tails (p-values of 1e-50 and less, which must not round to 0), fractional, small and
huge degrees of freedom and df = inf (the normal limit), negative t and negative
noncentrality (the noncentral t's reflection), t = 0, and the edges where the result is
infinite or undefined. JSON has no infinity or NaN: they are written as the strings "inf",
"-inf" and "nan". Every value comes from a SciPy routine, never from a formula typed here.
"""
import json
import math

import numpy as np
import scipy
from scipy import stats


def num(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


xs = [-38.0, -8.5, -1.96, -0.3, 0.0, 0.3, 1.0, 1.96, 5.0, 12.0, 37.5]
normal = [{"x": x, "cdf": num(stats.norm.cdf(x)), "sf": num(stats.norm.sf(x))} for x in xs]

ps = [0.0, 1e-300, 1e-20, 1e-6, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-12, 1.0]
normal_quantile = [{"p": p, "q": num(stats.norm.ppf(p))} for p in ps]

dfs = [0.5, 1.0, 2.5, 7.0, 30.0, 1000.0, 1e7]
ts = [-40.0, -6.0, -2.0, -0.5, 0.0, 0.5, 2.0, 6.0, 40.0]
t = []
for df in dfs:
    for x in ts:
        t.append({
            "t": x,
            "df": df,
            "two_sided_p": num(2 * stats.t.sf(abs(x), df)),
            "cdf": num(stats.t.cdf(x, df)),
            "pdf": num(stats.t.pdf(x, df)),
        })
for x in [-6.0, 0.5, 2.0, 9.0]:
    t.append({
        "t": x,
        "df": "inf",
        "two_sided_p": num(2 * stats.norm.sf(abs(x))),
        "cdf": num(stats.norm.cdf(x)),
    })

qps = [1e-12, 1e-4, 0.025, 0.3, 0.5, 0.6, 0.975, 0.999, 1 - 1e-10]
t_quantile = []
for df in [0.7, 1.0, 3.5, 12.0, 100.0, 1e6]:
    for p in qps:
        t_quantile.append({"p": p, "df": df, "q": num(stats.t.ppf(p, df))})
for p in [0.025, 0.5, 0.9]:
    t_quantile.append({"p": p, "df": "inf", "q": num(stats.norm.ppf(p))})

nct = []
for df in [1.0, 4.0, 25.0, 300.0]:
    for nc in [-3.0, -0.5, 0.0, 0.8, 2.5, 9.0, 40.0]:
        for x in [-5.0, -1.0, 0.0, 0.7, 2.0, 6.0, 45.0]:
            nct.append({"t": x, "df": df, "nc": nc, "cdf": num(stats.nct.cdf(x, df, nc))})

print(json.dumps({
    "versions": {"numpy": np.__version__, "scipy": scipy.__version__},
    "normal": normal,
    "normal_quantile": normal_quantile,
    "t": t,
    "t_quantile": t_quantile,
    "nct": nct,
}, indent=1))
