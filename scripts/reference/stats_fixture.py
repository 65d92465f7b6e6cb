"""Reference values for crates/stats/src/stats.rs, computed by SciPy and statsmodels.

Regenerate: python3 scripts/reference/stats_fixture.py > tests/fixtures/stats.json
(needs `pip install scipy statsmodels`; the file records the versions used).

The sample data are drawn here from a seeded NumPy generator and stored in the fixture next
to the results, so the Rust test reads both and needs no Python. Every result comes from a
library routine (never from a formula typed here). Cohen's d and d_z come from SciPy's
t-tests, by the identities d = t_pooled·sqrt(1/n1 + 1/n2) (`ttest_ind(equal_var=True)`, whose
pooled variance is eq. 12's) and d_z = t_paired/sqrt(n) (`ttest_rel`). Two values the
libraries do not have are written out: the paper's sample size (its eq. 5, a closed form
from `scipy.stats.norm.ppf`) and the paper's Cohen's d with population variances (eq. 11-12
as its public code computes them, `np.var` with ddof=0).

Covered: Welch's and the paired t-test, Cohen's d and d_z, the t interval of a mean, NumPy's
percentile, Pearson's r with its interval, cluster-robust means and differences of two
agents' means (`cluster`), the clustered two-sample comparison of proportions with units
holding one agent's observations only, its t-test on G - 1 df and d_z (`cluster_pair`), the
directly standardised rate over strata with its linearised variance and t interval
(`stratified`), Bonferroni and Holm, Wilson and normal intervals, eq. 5, `NormalIndPower`,
`TTestIndPower`, `TTestPower`, power, units needed and detectable difference of a measured
design (`measured_design`), the noncentral t and the normal and t quantiles. statsmodels'
cluster-robust covariance has no option for the correction G/(G-1) alone, so its
uncorrected sandwich (`use_correction=False`) is scaled by G/(G-1) here (`cluster`,
`cluster_pair`, `stratified`). New draws go after all earlier ones, so that the data of the
earlier cases stay as they are.
"""
import json

import numpy as np
import scipy
import statsmodels
from scipy import stats
from scipy.optimize import brentq
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower, TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_confint

rng = np.random.default_rng(20250101)


def floats(a):
    return [float(x) for x in a]


# Sample data: shaped like the per-round records (win indicators, coin changes, per-call
# success flags, hand values at calls), plus a small sample and unequal sizes.
samples = {
    "wins": (rng.binomial(1, 0.35, 1024), rng.binomial(1, 0.19, 1024)),
    "coins": (
        np.round(rng.normal(6.0, 30.0, 1024)),
        np.round(rng.normal(-2.0, 22.0, 1024)),
    ),
    "small": (rng.normal(1.0, 2.0, 6), rng.normal(0.0, 1.0, 6)),
    "calls": (rng.binomial(1, 0.76, 300), rng.binomial(1, 0.94, 180)),
    "skewed": (rng.exponential(3.0, 400), rng.exponential(2.5, 250)),
}

two_sample = []
for name, (a, b) in samples.items():
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    w = stats.ttest_ind(a, b, equal_var=False)
    n1, n2 = len(a), len(b)
    # Student's t with the pooled variance of eq. 12: t = (mean_a - mean_b) / (s_p·sqrt(1/n1 +
    # 1/n2)), so Cohen's d = t·sqrt(1/n1 + 1/n2).
    student = stats.ttest_ind(a, b, equal_var=True)
    pooled_pop = np.sqrt(((n1 - 1) * np.var(a, ddof=0) + (n2 - 1) * np.var(b, ddof=0)) / (n1 + n2 - 2))
    case = {
        "name": name,
        "a": floats(a),
        "b": floats(b),
        "welch": {"statistic": float(w.statistic), "df": float(w.df), "p": float(w.pvalue)},
        "cohen_d": float(student.statistic * np.sqrt(1 / n1 + 1 / n2)),
        "cohen_d_paper": float((a.mean() - b.mean()) / pooled_pop),
        "mean_ci95_a": floats(stats.t.interval(0.95, n1 - 1, loc=a.mean(), scale=stats.sem(a))),
        "p95_a": float(np.percentile(a, 95)),
    }
    if n1 == n2:
        r = stats.ttest_rel(a, b)
        case["paired"] = {"statistic": float(r.statistic), "df": float(r.df), "p": float(r.pvalue)}
        # t = mean(d) / (sd(d)/sqrt(n)), so d_z = mean(d)/sd(d) = t/sqrt(n).
        case["cohen_dz"] = float(r.statistic / np.sqrt(n1))
    two_sample.append(case)

# Pearson correlation (the paper's risk assessment, eq. 9): hand value at a call against the
# call's success.
hv = rng.integers(0, 11, 250).astype(float)
success = (rng.random(250) < 0.95 - 0.04 * hv).astype(float)
pr = stats.pearsonr(hv, success)
ci = pr.confidence_interval(0.95)
pearson = {
    "x": floats(hv),
    "y": floats(success),
    "r": float(pr.statistic),
    "p": float(pr.pvalue),
    "ci95": [float(ci.low), float(ci.high)],
}

# Means over clusters of unequal size (the rounds of point games, the arrangements of a
# deal): statsmodels' cluster-robust OLS on a constant gives the SE of one mean (its CR1
# correction is G/(G-1) for one regressor); for the difference of two agents' means over the
# same clusters, the stacked regression on two agent dummies gives the CR0 sandwich, scaled
# here by the same G/(G-1) (statsmodels' own correction would add (N-1)/(N-2)).
import statsmodels.api as sm

cluster_rows = []
for g in range(40):
    for agent, shift in (("a", 0.4), ("b", 0.0)):
        for _ in range(int(rng.integers(1, 7))):
            cluster_rows.append((g, agent, float(np.round(rng.normal(shift + 0.05 * g, 2.0), 3))))
groups = np.array([r[0] for r in cluster_rows])
agent_is_a = np.array([r[1] == "a" for r in cluster_rows])
values = np.array([r[2] for r in cluster_rows])
fit_a = sm.OLS(values[agent_is_a], np.ones((agent_is_a.sum(), 1))).fit(
    cov_type="cluster", cov_kwds={"groups": groups[agent_is_a]})
X = np.column_stack([agent_is_a, ~agent_is_a]).astype(float)
fit = sm.OLS(values, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
G = len(set(groups))
V = fit.cov_params() * G / (G - 1)
cluster = {
    "group": [int(g) for g in groups],
    "agent": [r[1] for r in cluster_rows],
    "value": floats(values),
    "mean_a": float(fit_a.params[0]),
    "se_a": float(fit_a.bse[0]),
    "difference": float(fit.params[0] - fit.params[1]),
    "var_difference": float(V[0, 0] + V[1, 1] - 2 * V[0, 1]),
}

# Call success over deals: a clustered two-sample comparison of proportions. Each deal holds
# 0-3 calls of each agent, every call a success (1) or a failure (0) with a deal-level shift
# of the success probability, so the calls of one deal are correlated; some deals hold calls
# of one agent only, and deals without calls are left out (they are no cluster). The
# reference is the stacked regression of the flags on the two agents' indicators with
# statsmodels' cluster-robust covariance: its CR0 sandwich (`use_correction=False`) scaled
# here by G/(G-1), because statsmodels' own correction would add (N-1)/(N-2). The test is
# statsmodels' `t_test` on a - b with that covariance (`cov_p`), on the G - 1 degrees of
# freedom that statsmodels uses for clustered inference (`use_t=True`); d_z = t/√G.
pair_rows = []
for g in range(150):
    shift = rng.normal(0.0, 0.12)
    calls_a, calls_b = rng.choice(4, size=2, p=[0.3, 0.35, 0.25, 0.1])
    for agent, calls, base in (("a", calls_a, 0.85), ("b", calls_b, 0.78)):
        p_call = min(max(base + shift, 0.0), 1.0)
        for _ in range(int(calls)):
            pair_rows.append((g, agent, float(rng.random() < p_call)))
groups = np.array([r[0] for r in pair_rows])
agent_is_a = np.array([r[1] == "a" for r in pair_rows])
values = np.array([r[2] for r in pair_rows])
X = np.column_stack([agent_is_a, ~agent_is_a]).astype(float)
fit = sm.OLS(values, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False},
                            use_t=True)
G = len(set(groups))
V = fit.cov_params() * G / (G - 1)
tt = fit.t_test([1.0, -1.0], cov_p=V)
assert tt.df_denom == G - 1
only_one = len({g for g, a, _ in pair_rows if a == "a"} ^ {g for g, a, _ in pair_rows if a == "b"})
cluster_pair = {
    "group": [int(g) for g in groups],
    "agent": [r[1] for r in pair_rows],
    "value": floats(values),
    "units": G,
    "units_one_agent": only_one,
    "difference": float(fit.params[0] - fit.params[1]),
    "var_difference": float(np.squeeze(fit.cov_params(r_matrix=[[1.0, -1.0]], cov_p=V))),
    "test": {"statistic": float(np.squeeze(tt.tvalue)), "df": float(tt.df_denom),
             "p": float(np.squeeze(tt.pvalue))},
    # The same p from SciPy's t distribution, for the record.
    "p_scipy": float(2 * stats.t.sf(abs(float(np.squeeze(tt.tvalue))), G - 1)),
    "cohen_dz": float(np.squeeze(tt.tvalue) / np.sqrt(G)),
}

# A rate standardised over strata (point games: the win rate at tables of 4, 3 and 2
# players, weighted by fixed shares). Each game (cluster) holds rounds at each table size in
# varying numbers (1-8 at four players, 0-5 at three, 0-4 at two), wins with a probability
# near 1/4, 1/3, 1/2 shifted by a game effect. The rate Σ w_m·p_m is the linear combination
# w·β of the regression of the win flags on the stratum indicators (no constant), whose
# coefficients are the stratum rates, and its linearised variance is w·V·w with V that
# regression's cluster-robust covariance, again the CR0 sandwich (`use_correction=False`)
# scaled by G/(G-1). The interval is statsmodels' `t_test(w, cov_p=V).conf_int` on G - 1
# degrees of freedom, clipped to [0, 1] as the Rust code clips a rate.
strata_sizes = (4, 3, 2)
strat_rows = []
for g in range(120):
    effect = rng.normal(0.0, 0.06)
    counts = (int(rng.integers(1, 9)), int(rng.integers(0, 6)), int(rng.integers(0, 5)))
    for m, (players, n) in enumerate(zip(strata_sizes, counts)):
        p_win = min(max(1.0 / players + effect + rng.normal(0.0, 0.03), 0.0), 1.0)
        for _ in range(n):
            strat_rows.append((g, m, float(rng.random() < p_win)))
groups = np.array([r[0] for r in strat_rows])
stratum = np.array([r[1] for r in strat_rows])
values = np.array([r[2] for r in strat_rows])
X = (stratum[:, None] == np.arange(len(strata_sizes))[None, :]).astype(float)
fit = sm.OLS(values, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False},
                            use_t=True)
G = len(set(groups))
V = fit.cov_params() * G / (G - 1)
pooled = np.bincount(stratum, minlength=len(strata_sizes)) / len(stratum)
stratified = {
    "group": [int(g) for g in groups],
    "stratum": [int(m) for m in stratum],
    "value": floats(values),
    "units": G,
    "rates": floats(fit.params),
    "cases": [],
}
# The pooled shares of rounds, equal weights, and one stratum alone (the clustered mean of
# that stratum's rounds, with every game a unit).
for w in (pooled, np.full(3, 1.0 / 3.0), np.array([0.0, 0.0, 1.0])):
    tt = fit.t_test(w, cov_p=V)
    assert tt.df_denom == G - 1
    low, high = np.squeeze(tt.conf_int(alpha=0.05))
    stratified["cases"].append({
        "weights": floats(w),
        "rate": float(np.squeeze(tt.effect)),
        "var": float(np.squeeze(fit.cov_params(r_matrix=np.atleast_2d(w), cov_p=V))),
        "ci95": [float(np.clip(low, 0.0, 1.0)), float(np.clip(high, 0.0, 1.0))],
    })

# Multiple comparisons over one family.
families = [
    [0.01, 0.04, 0.03, 0.005, 0.5, 0.2],
    [1.2839639276787884e-15, 8.384034291024766e-07, 9.473733258922113e-14, 0.0020541568778487587,
     0.5803167549175454, 0.011394522797131918],
    [0.02, 0.02, 0.02, 0.9],
    [0.3],
    # Holm (and Bonferroni) cap at 1: 4 x 0.3 = 1.2, and the cap carries down the steps.
    [0.3, 0.45, 0.35, 0.8],
    # Capped after the first steps: 0.001 x 5 = 0.005, 0.1 x 4 = 0.4, 0.4 x 3 = 1.2 -> 1.
    [0.4, 0.001, 0.6, 0.1, 0.9],
]
adjust = []
for ps in families:
    adjust.append({
        "p": ps,
        "bonferroni": floats(multipletests(ps, method="bonferroni")[1]),
        "holm": floats(multipletests(ps, method="holm")[1]),
    })

# Proportion intervals.
proportions = []
for k, n in [(359, 1024), (199, 1024), (0, 10), (7, 7), (1, 3), (5000, 10000)]:
    proportions.append({
        "k": k,
        "n": n,
        "wilson": floats(proportion_confint(k, n, alpha=0.05, method="wilson")),
        "normal": floats(proportion_confint(k, n, alpha=0.05, method="normal")),
    })

# Power and sample size. statsmodels' `solve_power` stops at about 1e-8 relative, so each
# solved value is also polished here by `brentq` on statsmodels' own power function (to
# 1e-13): the Rust test checks against the polished root and keeps the library's answer for
# the record.
def polish(power_of, target, guess, floor=0.0):
    lo, hi = max(guess * 0.8, floor), guess * 1.25
    return float(brentq(lambda x: power_of(x) - target, lo, hi, xtol=1e-13, rtol=1e-15))


def eq5(delta, sigma2, alpha, power):
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return 2 * z * z * sigma2 / delta ** 2


power = {"eq5": [], "normal_ind": [], "ttest_ind": [], "ttest_paired": []}
for delta, p, alpha, pw in [(0.05, 0.25, 0.05, 0.8), (0.05, 0.5, 0.05, 0.8), (0.02, 0.3, 0.05 / 6, 0.9)]:
    power["eq5"].append({"delta": delta, "sigma2": p * (1 - p), "alpha": alpha, "power": pw,
                         "n": float(eq5(delta, p * (1 - p), alpha, pw))})
for es, n1, alpha, ratio in [(0.05 / np.sqrt(0.1875), 1024, 0.05, 1.0), (0.2, 100, 0.01, 0.5), (0.0, 50, 0.05, 1.0)]:
    power["normal_ind"].append({
        "effect_size": float(es), "nobs1": n1, "alpha": alpha, "ratio": ratio,
        "power": float(NormalIndPower().power(es, n1, alpha, ratio=ratio)),
    })
for es, alpha, pw in [(0.05 / np.sqrt(0.1875), 0.05, 0.8), (0.3, 0.05 / 6, 0.9)]:
    power["normal_ind"].append({
        "effect_size": float(es), "alpha": alpha, "ratio": 1.0, "power": pw,
        "statsmodels_solve_power": float(NormalIndPower().solve_power(es, None, alpha, pw, ratio=1.0)),
    })
    r = power["normal_ind"][-1]
    r["nobs1"] = polish(lambda n: NormalIndPower().power(es, n, alpha, ratio=1.0), pw, r["statsmodels_solve_power"], floor=2.5)
for es, n1, alpha, ratio in [(0.2, 100, 0.05, 1.0), (0.5, 20, 0.01, 0.6), (0.1, 1024, 0.05 / 6, 1.0), (0.05, 5000, 0.05, 1.0)]:
    power["ttest_ind"].append({
        "effect_size": es, "nobs1": n1, "alpha": alpha, "ratio": ratio,
        "power": float(TTestIndPower().power(es, n1, alpha, ratio=ratio)),
    })
for es, alpha, pw in [(0.2, 0.05, 0.8), (0.5, 0.01, 0.9)]:
    power["ttest_ind"].append({
        "effect_size": es, "alpha": alpha, "ratio": 1.0, "power": pw,
        "statsmodels_solve_power": float(TTestIndPower().solve_power(es, None, alpha, pw, ratio=1.0)),
    })
    r = power["ttest_ind"][-1]
    r["nobs1"] = polish(lambda n: TTestIndPower().power(es, n, alpha, ratio=1.0), pw, r["statsmodels_solve_power"], floor=2.5)
for n1, alpha, pw in [(1024, 0.05, 0.8), (200, 0.05 / 6, 0.8)]:
    power["ttest_ind"].append({
        "nobs1": n1, "alpha": alpha, "ratio": 1.0, "power": pw,
        "statsmodels_solve_power": float(TTestIndPower().solve_power(None, n1, alpha, pw, ratio=1.0)),
    })
    r = power["ttest_ind"][-1]
    r["effect_size"] = polish(lambda e: TTestIndPower().power(e, n1, alpha, ratio=1.0), pw, r["statsmodels_solve_power"])
for es, n, alpha in [(0.1, 500, 0.05), (0.3, 30, 0.01), (-0.2, 80, 0.05)]:
    power["ttest_paired"].append({
        "effect_size": es, "nobs": n, "alpha": alpha,
        "power": float(TTestPower().power(es, n, alpha)),
    })
for es, alpha, pw in [(0.1, 0.05, 0.8), (0.25, 0.05 / 6, 0.9)]:
    power["ttest_paired"].append({
        "effect_size": es, "alpha": alpha, "power": pw,
        "statsmodels_solve_power": float(TTestPower().solve_power(es, None, alpha, pw)),
    })
    r = power["ttest_paired"][-1]
    r["nobs"] = polish(lambda n: TTestPower().power(es, n, alpha), pw, r["statsmodels_solve_power"], floor=2.5)
for n, alpha, pw in [(1024, 0.05, 0.8), (256, 0.05 / 6, 0.8)]:
    power["ttest_paired"].append({
        "nobs": n, "alpha": alpha, "power": pw,
        "statsmodels_solve_power": float(TTestPower().solve_power(None, n, alpha, pw)),
    })
    r = power["ttest_paired"][-1]
    r["effect_size"] = polish(lambda e: TTestPower().power(e, n, alpha), pw, r["statsmodels_solve_power"])

# A measured design plans a run (`power::MeasuredDesign`): from the variance V of a mean
# difference measured over G units, the SD of the unit differences is σ_u = sqrt(G·V) (the
# design's definition, not a library result), and the test is the paired t-test on the units
# with effect δ/σ_u: statsmodels `TTestPower` for power, units needed and the minimum
# detectable effect (solved values polished as above; the detectable difference is the
# standardised effect times σ_u). At 20000 units statsmodels' own effect size stops 2.4e-5
# short of the root; the polished one meets the target power to 1e-16.
designs = []
for name, source in (("cluster", cluster), ("cluster_pair", cluster_pair)):
    var_difference = source["var_difference"]
    units = len(set(source["group"]))
    sd_units = float(np.sqrt(units * var_difference))
    d = {"name": name, "var_difference": var_difference, "units": units, "sd_units": sd_units,
         "power": [], "units_needed": [], "mde": []}
    for delta, n, alpha in [(0.5 * sd_units, units, 0.05), (0.05, 150, 0.05), (0.05, 20000, 0.05 / 6),
                            (0.01, 20000, 0.05 / 6), (-0.1, 400, 0.05 / 6), (0.2 * sd_units, 12, 0.01)]:
        d["power"].append({"delta": delta, "units": n, "alpha": alpha,
                           "power": float(TTestPower().power(delta / sd_units, n, alpha))})
    for delta, alpha, pw in [(0.1, 0.05, 0.8), (0.05, 0.05 / 6, 0.9), (0.01, 0.05 / 6, 0.8)]:
        es = delta / sd_units
        r = {"delta": delta, "alpha": alpha, "power": pw,
             "statsmodels_solve_power": float(TTestPower().solve_power(es, None, alpha, pw))}
        r["units"] = polish(lambda n: TTestPower().power(es, n, alpha), pw, r["statsmodels_solve_power"], floor=2.5)
        d["units_needed"].append(r)
    for n, alpha, pw in [(units, 0.05, 0.8), (150, 0.05 / 6, 0.8), (20000, 0.05 / 6, 0.9)]:
        solved = float(TTestPower().solve_power(None, n, alpha, pw))
        es = polish(lambda e: TTestPower().power(e, n, alpha), pw, solved)
        d["mde"].append({"units": n, "alpha": alpha, "power": pw,
                         "statsmodels_solve_power": solved * sd_units, "delta": es * sd_units})
    designs.append(d)
measured_design = designs

# The noncentral t distribution under the power of t-tests.
nct = []
for t, df, nc in [(2.0, 10, 1.0), (-1.5, 30, 0.5), (1.96, 2000, 3.0), (5.0, 100, 8.0), (1.0, 5, -2.0),
                  (-2.6, 1500, -1.2), (0.0, 7, 0.0), (3.0, 40, 0.0), (30.0, 5000, 28.0)]:
    nct.append({"t": t, "df": df, "nc": nc, "cdf": float(stats.nct.cdf(t, df, nc))})

# Quantiles.
quantiles = []
for p in [0.975, 0.995, 0.9, 0.5, 0.025, 1 - 0.05 / 12]:
    quantiles.append({"p": p, "normal": float(stats.norm.ppf(p)),
                      "t": [{"df": df, "q": float(stats.t.ppf(p, df))} for df in [3, 29.5, 1023, 100000]]})

print(json.dumps({
    "tool": f"scipy {scipy.__version__}, statsmodels {statsmodels.__version__}, numpy {np.__version__}",
    "script": "scripts/reference/stats_fixture.py",
    "two_sample": two_sample,
    "pearson": pearson,
    "cluster": cluster,
    "cluster_pair": cluster_pair,
    "stratified": stratified,
    "adjust": adjust,
    "proportions": proportions,
    "power": power,
    "measured_design": measured_design,
    "nct": nct,
    "quantiles": quantiles,
}, indent=1))
