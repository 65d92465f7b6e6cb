"""Reference values for the Wilson interval at 95% and at two other levels (90%, 99%: the
level enters through its normal quantile), computed by statsmodels.

Regenerate: python3 scripts/reference/wilson_fixture.py > tests/fixtures/wilson.json
(needs `pip install statsmodels`; the file records the versions used).
"""
import json

import scipy
import statsmodels
from statsmodels.stats.proportion import proportion_confint

CASES = [(359, 1024), (199, 1024), (0, 10), (7, 7), (1, 3), (5000, 10000), (3, 100000)]

rows = []
for confidence, cases in [(0.95, CASES), (0.90, CASES[:5]), (0.99, CASES[:5])]:
    for k, n in cases:
        lo, hi = proportion_confint(k, n, alpha=round(1 - confidence, 2), method="wilson")
        rows.append({"confidence": confidence, "k": k, "n": n, "low": lo, "high": hi})
print(json.dumps({"tool": f"statsmodels {statsmodels.__version__}, scipy {scipy.__version__}",
                  "method": "proportion_confint(k, n, alpha=1 - confidence, method='wilson')",
                  "cases": rows}, indent=2))
