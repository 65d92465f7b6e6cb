"""Reference values for the Wilson 95% interval, computed by statsmodels.

Regenerate: python3 scripts/reference/wilson_fixture.py > tests/fixtures/wilson.json
(needs `pip install statsmodels`; the file records the versions used).
"""
import json

import scipy
import statsmodels
from statsmodels.stats.proportion import proportion_confint

CASES = [(359, 1024), (199, 1024), (0, 10), (7, 7), (1, 3), (5000, 10000), (3, 100000)]

rows = []
for k, n in CASES:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    rows.append({"k": k, "n": n, "low": lo, "high": hi})
print(json.dumps({"tool": f"statsmodels {statsmodels.__version__}, scipy {scipy.__version__}",
                  "method": "proportion_confint(k, n, alpha=0.05, method='wilson')",
                  "cases": rows}, indent=2))
