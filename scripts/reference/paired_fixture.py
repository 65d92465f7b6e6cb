"""Reference paired differences of rates on shared units, for crates/stats/src/paired.rs.

Regenerate: .venv/bin/python scripts/reference/paired_fixture.py > tests/fixtures/paired.json

Written from the definition in docs/analysis.md ("Sweeps"), independently of the Rust code:
each side has, per unit, successes and trials; the units paired are those both sides have with
at least one trial; the difference is the mean over those units of (rate of a - rate of b),
with the 95% t interval on n - 1 degrees of freedom (`scipy.stats.t.interval` on the mean and
its standard error; no interval for one unit). The tallies are drawn here from a seeded NumPy
generator and stored next to the results. The cases cover units missing on either side, units
with no trials on either side, unequal trials per unit (so that a pooled rate would differ
from the mean of unit rates), odd sizes, and a case whose differences are all equal.
"""
import json

import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20261205)


def side(units, trials_max, p, empty=0.0):
    out = {}
    for u in units:
        n = int(rng.integers(0, trials_max + 1)) if rng.random() < empty else int(
            rng.integers(1, trials_max + 1))
        out[int(u)] = [int(rng.binomial(n, p)), n]
    return out


def reference(a, b):
    diffs = [a[u][0] / a[u][1] - b[u][0] / b[u][1]
             for u in sorted(a) if u in b and a[u][1] > 0 and b[u][1] > 0]
    n = len(diffs)
    if n == 0:
        return None
    d = np.asarray(diffs, dtype=float)
    mean = float(d.mean())
    ci = None
    if n >= 2:
        se = float(d.std(ddof=1)) / np.sqrt(n)
        if se == 0.0:
            ci = [mean, mean]
        else:
            low, high = stats.t.interval(0.95, n - 1, loc=mean, scale=se)
            ci = [float(low), float(high)]
    return {"difference": mean, "ci95": ci, "units": n}


cases = []
for name, units_a, units_b, trials, pa, pb, empty in [
    ("deals, one round each", range(40), range(40), 1, 0.55, 0.45, 0.0),
    ("sessions of 5 rounds, odd size", range(17), range(17), 5, 0.4, 0.35, 0.0),
    ("games of unequal length", range(60), range(60), 9, 0.3, 0.3, 0.0),
    ("units missing on either side", range(0, 50), range(10, 63), 3, 0.6, 0.5, 0.0),
    ("units with no trials", range(30), range(30), 4, 0.5, 0.52, 0.3),
    ("two units", range(2), range(2), 6, 0.5, 0.2, 0.0),
]:
    a = side(units_a, trials, pa, empty)
    b = side(units_b, trials, pb, empty)
    cases.append({"name": name, "a": a, "b": b, "expected": reference(a, b)})
same = {u: [1, 2] for u in range(5)}
zero = {u: [0, 2] for u in range(5)}
cases.append({"name": "equal differences", "a": same, "b": zero, "expected": reference(same, zero)})
one_a, one_b = {7: [2, 3]}, {7: [1, 3], 8: [1, 1]}
cases.append({"name": "one unit", "a": one_a, "b": one_b, "expected": reference(one_a, one_b)})
cases.append({"name": "no unit shared", "a": {1: [1, 1]}, "b": {2: [1, 1]}, "expected": None})

print(json.dumps({"versions": {"numpy": np.__version__, "scipy": scipy.__version__},
                  "cases": cases}, indent=1))
