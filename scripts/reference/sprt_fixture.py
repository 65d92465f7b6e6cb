"""Reference LLRs of the sequential test for crates/stats/src/sequential.rs, computed here by
an independent route (NumPy and SciPy).

Regenerate: .venv/bin/python scripts/reference/sprt_fixture.py > tests/fixtures/sprt.json

The statistic (docs/analysis.md, "Sequential tests"): the GSPRT of Michel Van den Bergh's notes,
as fishtest runs it. With p the empirical distribution of the unit scores (a count of 1e-3
added at 0 and at 1 when no unit scored there) and N the regularized count,

    LLR = N * sum_i p_i * ln(q1_i / q0_i),

q0 and q1 the distributions on the same values closest to p (maximum likelihood) under H0 and
H1. Under a bound in normalized Elo, H: (mu_q - 1/2) / sigma_q = t with
t = nElo / (800 / ln 10) * sqrt(m), m the games in a unit; under a bound on the mean score,
H: mu_q = 1/2 + d.

The Rust code finds the closest distributions from the Lagrange conditions (a secular equation,
and a fixed point for the t-value). This script does not: it profiles the likelihood over the
mean. For a mean mu and a variance v, the closest distribution with both moments is
q_i = p_i / (1 + a (x_i - mu) + b ((x_i - mu)^2 - v)), (a, b) found by Newton's method on the
convex empirical-likelihood dual (NumPy); the t-value constraint fixes v = ((mu - 1/2) / t)^2, the best
mu is found with scipy.optimize.minimize_scalar (bounded), then polished with
scipy.optimize.root on the optimum's conditions in (a, b, mu) (both moments, and a zero
derivative of the profile in mu). A mean constraint
alone (t = 0, or a score difference) needs no profile: one multiplier, found with brentq.
"""
import json
import math
import sys

import numpy as np
import scipy
from scipy import optimize, stats

EPSILON = 1e-3
NELO_PER_T = 800 / math.log(10)


def regularized(scores):
    values, counts = np.unique(np.asarray(scores, dtype=float), return_counts=True)
    values, counts = list(values), list(counts.astype(float))
    if values[0] != 0.0:
        values.insert(0, 0.0)
        counts.insert(0, EPSILON)
    if values[-1] != 1.0:
        values.append(1.0)
        counts.append(EPSILON)
    return np.array(values), np.array(counts)


def closest_with_mean(x, p, mu):
    phi = x - mu
    lo, hi = -1 / phi.max(), -1 / phi.min()
    span = hi - lo
    f = lambda l: np.sum(p * phi / (1 + l * phi))
    l = optimize.brentq(f, lo + 1e-15 * span, hi - 1e-15 * span, xtol=1e-300, rtol=1e-15, maxiter=500)
    q = p / (1 + l * phi)
    return q / q.sum()


def dual(p, g):
    """The empirical-likelihood dual: lambda maximizing the concave G(l) = sum p ln(1 + g l)
    (g: one row per value, one column per constraint), by damped Newton steps that stay where
    every 1 + g l > 0. Returns (lambda, G) or None when G has no maximum (the constraints
    cannot be met on these values)."""
    l = np.zeros(g.shape[1])
    value = 0.0
    for _ in range(200):
        d = 1 + g @ l
        grad = g.T @ (p / d)
        hess = -(g * (p / d**2)[:, None]).T @ g
        step = np.linalg.solve(hess, -grad)
        t = 1.0
        while True:
            nl = l + t * step
            nd = 1 + g @ nl
            if np.all(nd > 0):
                nv = np.sum(p * np.log(nd))
                if nv >= value - 1e-15:
                    break
            t /= 2
            if t < 1e-20:
                return None
        l, value = nl, nv
        if np.linalg.norm(l) > 1e12:
            return None
        if np.max(np.abs(grad)) < 1e-15:
            break
    return l, value


def closest_with_moments(x, p, mu, v):
    """Closest distribution to p with mean mu and variance v, or None."""
    g = np.column_stack([x - mu, (x - mu) ** 2 - v])
    found = dual(p, g)
    if found is None:
        return None
    q = p / (1 + g @ found[0])
    if abs(q.sum() - 1) > 1e-9 or abs(np.sum(q * (x - mu))) > 1e-9:
        return None
    return q / q.sum()


def closest_with_t(x, p, t):
    if t == 0:
        return closest_with_mean(x, p, 0.5)

    def negative_likelihood(mu):
        v = ((mu - 0.5) / t) ** 2
        q = closest_with_moments(x, p, mu, v)
        if q is None:
            return 1e10
        return -np.sum(p * np.log(q))

    # The mean lies on the side of 1/2 that t says, inside the values' range.
    lo, hi = (0.5, x.max()) if t > 0 else (x.min(), 0.5)
    grid = np.linspace(lo, hi, 401)[1:-1]
    values = [negative_likelihood(m) for m in grid]
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    best = optimize.minimize_scalar(
        negative_likelihood, bounds=(a, b), method="bounded", options={"xatol": 1e-13, "maxiter": 2000}
    )
    mu = best.x
    # Polish: the profile is flat at its optimum, so the scalar search leaves mu a little off.
    # At the optimum the multipliers (a, b) meet both moments and, by the envelope theorem,
    # the derivative of sum p ln(1 + a (x - mu) + b ((x - mu)^2 - v(mu))) in mu vanishes.
    v = lambda m: ((m - 0.5) / t) ** 2
    g = np.column_stack([x - mu, (x - mu) ** 2 - v(mu)])
    a, b = dual(p, g)[0]

    def kkt(z):
        a, b, m = z
        d = 1 + a * (x - m) + b * ((x - m) ** 2 - v(m))
        return [
            np.sum(p * (x - m) / d),
            np.sum(p * ((x - m) ** 2 - v(m)) / d),
            np.sum(p * (-a - 2 * b * (x - m) - b * 2 * (m - 0.5) / t**2) / d),
        ]

    sol = optimize.root(kkt, [a, b, mu], method="hybr", options={"xtol": 1e-15})
    # "no further improvement is possible" is how hybr ends at machine precision.
    assert np.max(np.abs(kkt(sol.x))) < 1e-12, (sol.message, kkt(sol.x))
    a, b, mu = sol.x
    q = p / (1 + a * (x - mu) + b * ((x - mu) ** 2 - v(mu)))
    assert abs(q.sum() - 1) < 1e-12 and np.all(q > 0)
    return q / q.sum()


def llr(scores, hyp):
    x, c = regularized(scores)
    n = c.sum()
    p = c / n
    if hyp["kind"] == "normalized":
        t = lambda e: e / NELO_PER_T * math.sqrt(hyp["games_per_unit"])
        q0, q1 = closest_with_t(x, p, t(hyp["elo0"])), closest_with_t(x, p, t(hyp["elo1"]))
    else:
        q0 = closest_with_mean(x, p, 0.5 + hyp["d0"])
        q1 = closest_with_mean(x, p, 0.5 + hyp["d1"])
    return float(n * np.sum(p * np.log(q1 / q0)))


def after_tail(design, theta, look, side, s, nodes=100):
    """P_theta(an outcome at least as extreme as the stop (look, side, s) in the stagewise
    ordering), for crates/stats/src/sequential/after.rs (`Design::tail`), by another route: the
    sub-density of the sum of the standardized unit scores (increments N(theta*n, n)) over
    each look's continuation region on Gauss-Legendre nodes (`nodes` per look, where the Rust
    code uses a trapezoid grid of 6 points per standard deviation), exact to about 1e-14 here
    (200 and 400 nodes agree with SciPy's adaptive `quad` nested look by look)."""
    t0, t1 = design["t0"], design["t1"]
    lo_b, hi_b = design["bounds"]
    d = t1 - t0
    xs, w = np.array([0.0]), np.array([1.0])
    up = down = 0.0
    prev = 0
    g, gw = np.polynomial.legendre.leggauss(nodes)
    for k, n in enumerate(design["looks"]):
        step = n - prev
        m, sd = theta * step, math.sqrt(step)
        if k == look:
            if side in ("upper", "max"):
                return float(up + w @ stats.norm.sf(s, xs + m, sd))
            return float(1 - (down + w @ stats.norm.cdf(s, xs + m, sd)))
        # The test continues at this look while the LLR, about (t1 - t0) S - n (t1^2 - t0^2)/2,
        # lies between the bounds.
        shift = n * (t1 * t1 - t0 * t0) / 2
        lo, hi = (lo_b + shift) / d, (hi_b + shift) / d
        up += w @ stats.norm.sf(hi, xs + m, sd)
        down += w @ stats.norm.cdf(lo, xs + m, sd)
        x = (hi - lo) / 2 * g + (hi + lo) / 2
        w = (w @ stats.norm.pdf(x[None, :], xs[:, None] + m, sd)) * gw * (hi - lo) / 2
        xs, prev = x, n
    raise ValueError("a stop past the design's looks")


def after_cases():
    """Designs and stops for the inference after a stop: tails at several drifts, and the
    median-unbiased estimate and 95% interval (the drifts where the tail is 1/2, 0.025 and
    0.975, by brentq), at symmetric (alpha = beta = 0.05, equal spacing) and asymmetric
    (alpha = 0.05, beta = 0.2, unequal spacing, t0 < 0) designs, stops at each side."""
    wald = lambda a, b: [math.log(b / (1 - a)), math.log((1 - b) / a)]
    designs = [
        ({"t0": 0.0, "t1": 0.2, "bounds": wald(0.05, 0.05), "looks": [25, 50, 75, 100]},
         [(0, "upper", 0.3), (2, "upper", 0.5), (1, "lower", -0.2), (3, "max", 10.0)]),
        ({"t0": -0.05, "t1": 0.1, "bounds": wald(0.05, 0.2), "looks": [40, 100, 160, 200]},
         [(1, "upper", 0.1), (2, "lower", -0.4), (0, "lower", -1.0), (3, "max", 5.0)]),
    ]
    out = []
    for design, stops in designs:
        t0, t1 = design["t0"], design["t1"]
        d = t1 - t0
        for look, side, offset in stops:
            n = design["looks"][look]
            shift = n * (t1 * t1 - t0 * t0) / 2
            lo, hi = (design["bounds"][0] + shift) / d, (design["bounds"][1] + shift) / d
            # Past the line the test stopped at (the `max` stop's offset is the sum itself).
            s = {"upper": hi + offset, "lower": lo + offset, "max": offset}[side]
            solve = lambda level: optimize.brentq(
                lambda th: after_tail(design, th, look, side, s) - level, -2.0, 2.0, xtol=1e-14
            )
            out.append(
                {
                    "design": design,
                    "stop": {"look": look, "side": side, "sum": s},
                    "tails": [
                        [th, after_tail(design, th, look, side, s)]
                        for th in [-0.1, 0.0, 0.05, 0.1, 0.2]
                    ],
                    "estimate": solve(0.5),
                    "ci95": [solve(0.025), solve(0.975)],
                }
            )
    return out


def estimates():
    """The fixed-sample estimate of a test's unit scores (`sequential::estimate`): the mean with
    a normal 95% interval on the sample standard deviation (ddof 1), as logistic Elo
    -400 log10(1/s - 1) (none outside (0, 1), the interval clamped to [0, 1] first) and as
    normalized Elo NELO_PER_T (s - reference) / (sd sqrt(m)) with sd the population one (ddof
    0, fishtest's); and a plan's bounds on both scales at that spread (`sequential::Scales`):
    per-game sd = sd sqrt(m), normalized bounds as the logistic Elo of
    1/2 + e / NELO_PER_T * per-game sd, logistic bounds as the normalized Elo
    NELO_PER_T (1 / (1 + 10^(-e/400)) - 1/2) / per-game sd. Odd sizes, an interval past 1, a
    reference other than 1/2, several games per unit."""
    z = stats.norm.ppf(0.975)
    elo = lambda s: -400 * math.log10(1 / s - 1) if 0 < s < 1 else None
    score = lambda e: 1.0 / (1.0 + 10.0 ** (-e / 400.0))
    out = []
    for scores, reference, m, bounds in [
        ([1.0, 1.0, 0.5, 1.0, 1.0], 0.5, 2, (0.0, 10.0)),
        ([0.75, 0.25, 0.5, 1.0, 0.5, 0.75, 0.0], 0.5, 4, (-2.0, 8.0)),
        ([0.0, 0.5, 0.5, 0.25, 0.5, 0.0, 1.0, 0.25, 0.5], 0.25, 3, (0.0, 5.0)),
    ]:
        x = np.array(scores)
        n = len(x)
        mean = float(x.mean())
        se = float(np.std(x, ddof=1)) / math.sqrt(n)
        sd = float(np.std(x, ddof=0))
        ci = [mean - z * se, mean + z * se]
        nelo = lambda s: NELO_PER_T * (s - reference) / (sd * math.sqrt(m))
        per_game_sd = sd * math.sqrt(m)
        out.append(
            {
                "scores": scores,
                "reference": reference,
                "games_per_unit": m,
                "score": mean,
                "score_ci95": ci,
                "elo": elo(mean),
                "elo_ci95": [elo(min(max(c, 0.0), 1.0)) for c in ci],
                "nelo": nelo(mean),
                "nelo_ci95": [nelo(c) for c in ci],
                "bounds": list(bounds),
                "per_game_sd": per_game_sd,
                "normalized_bounds_as_elo": [elo(0.5 + e / NELO_PER_T * per_game_sd) for e in bounds],
                "logistic_bounds_as_nelo": [
                    NELO_PER_T * (score(e) - 0.5) / per_game_sd for e in bounds
                ],
            }
        )
    return out


def main():
    rng = np.random.default_rng(20251126)
    cases = []

    def add(name, values, probs, units, hyp, tested=None):
        # `tested`: the hypotheses the LLR is computed on, when `hyp` (what the case says) is
        # another way of writing them.
        scores = rng.choice(values, size=units, p=probs)
        vals, counts = np.unique(scores, return_counts=True)
        cases.append(
            {
                "name": name,
                "values": [float(v) for v in vals],
                "counts": [int(k) for k in counts],
                "hypotheses": hyp,
                "llr": llr(scores, tested or hyp),
            }
        )

    pair = [0.0, 0.5, 1.0]
    four = [0.0, 0.25, 0.5, 0.75, 1.0]
    nelo = lambda e0, e1, m: {"kind": "normalized", "elo0": e0, "elo1": e1, "games_per_unit": m}
    diff = lambda d0, d1: {"kind": "difference", "d0": d0, "d1": d1}
    add("heads-up, even, 0..10", pair, [0.3, 0.4, 0.3], 400, nelo(0, 10, 2))
    add("heads-up, stronger, 0..10", pair, [0.2, 0.4, 0.4], 300, nelo(0, 10, 2))
    add("heads-up, weaker, 0..5", pair, [0.35, 0.4, 0.25], 1000, nelo(0, 5, 2))
    add("heads-up, lopsided, 0..10", pair, [0.01, 0.05, 0.94], 100, nelo(0, 10, 2))
    add("heads-up, bounds -3..3", pair, [0.28, 0.42, 0.30], 2500, nelo(-3, 3, 2))
    add("heads-up, few units", pair, [0.3, 0.3, 0.4], 12, nelo(0, 10, 2))
    add("pentanomial-like, 0..2", four, [0.05, 0.2, 0.5, 0.2, 0.05], 5000, nelo(0, 2, 4))
    add("pentanomial-like, stronger, 0..2", four, [0.03, 0.2, 0.5, 0.22, 0.05], 8000, nelo(0, 2, 4))
    add("no zeros or ones", [0.25, 0.5, 0.75], [0.3, 0.4, 0.3], 200, nelo(0, 10, 4))
    fine = [i / 24 for i in range(25)]
    probs = np.exp(-((np.array(fine) - 0.52) ** 2) / 0.02)
    add("24 arrangements", fine, list(probs / probs.sum()), 600, nelo(0, 10, 24))
    add("score difference 0..0.05", pair, [0.25, 0.45, 0.30], 500, diff(0.0, 0.05))
    add("score difference -0.02..0.02", four, [0.1, 0.2, 0.4, 0.2, 0.1], 900, diff(-0.02, 0.02))
    # Logistic Elo bounds: the expected score of a logistic Elo difference e is
    # 1 / (1 + 10^(-e/400)); the test is on the mean unit score.
    score = lambda e: 1.0 / (1.0 + 10.0 ** (-e / 400.0))
    for name, e0, e1, values, probs, units in [
        ("logistic Elo 0..5, heads-up", 0.0, 5.0, pair, [0.27, 0.43, 0.30], 1500),
        ("logistic Elo -2..8, four arrangements", -2.0, 8.0, four, [0.1, 0.2, 0.38, 0.22, 0.1], 700),
    ]:
        hyp = {"kind": "logistic", "elo0": e0, "elo1": e1}
        add(name, values, probs, units, hyp, diff(score(e0) - 0.5, score(e1) - 0.5))
    # Wald's bounds (ln(beta/(1-alpha)), ln((1-beta)/alpha)) at symmetric and asymmetric error
    # rates, and moved in by Siegmund's overshoot correction: rho = 0.5826 times the standard
    # deviation of the LLR's normal approximation over a look, (t1 - t0) * sqrt(every), with t
    # the bounds as per-unit t-values, capped at a quarter of the distance between the bounds.
    bounds = []
    for alpha, beta, e0, e1, m, every in [
        (0.05, 0.05, 0, 10, 2, 100),
        (0.05, 0.2, 0, 10, 2, 100),
        (0.01, 0.1, 0, 5, 24, 10),
        (0.1, 0.01, -3, 3, 4, 1),
        (0.05, 0.2, 0, 40, 2, 10000),
    ]:
        lo, hi = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
        t = lambda e: e / NELO_PER_T * math.sqrt(m)
        o = min(0.5826 * (t(e1) - t(e0)) * math.sqrt(every), (hi - lo) / 4)
        bounds.append(
            {
                "alpha": alpha,
                "beta": beta,
                "elo0": e0,
                "elo1": e1,
                "games_per_unit": m,
                "every": every,
                "wald": [lo, hi],
                "corrected": [lo + o, hi - o],
            }
        )
    json.dump(
        {
            "generated_by": "scripts/reference/sprt_fixture.py",
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "epsilon": EPSILON,
            "cases": cases,
            "bounds": bounds,
            "after": after_cases(),
            "estimates": estimates(),
        },
        sys.stdout,
        indent=1,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
