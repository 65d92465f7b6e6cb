"""Reference ratings for crates/stats/src/ratings.rs, computed by choix.

Regenerate: .venv/bin/python scripts/reference/ratings_fixture.py > tests/fixtures/ratings.json
(needs `choix`, which scripts/setup-python.sh installs, and the release build of dhumbal-run,
`cargo build --release`, for the cases on records at the end; the file records the versions
used).

Synthetic units are drawn here from a seeded NumPy generator, shaped like Dhumbal's: a unit is
a deal under several seating arrangements (games), each game ranks its seats with one winner
first and the others by a "hand value" that ties often. The data go into the fixture next to
the results, so the Rust test (tests/ratings.rs) reads both and needs no Python.

What is compared (docs/analysis.md, "Ratings"): ties are split, a group of k tied seats
counting as each of its k! orders with weight 1/k!. choix has no weights, so every game is
written out as all the orders its ties allow, each repeated L/(prod k!) times (L a common
multiple), which multiplies the log-likelihood by L: choix's `alpha` is then L times ours.
- Plackett-Luce: `choix.opt_rankings` on those orders.
- Bradley-Terry: `choix.opt_pairwise` on every pair of seats (full rank breaking), a decided
  pair written twice, a tied pair once each way (L = 2).
Each case is fitted with alpha = 0 (the maximum-likelihood estimate; compared after subtracting
the mean, as the likelihood does not see a common shift) and with a penalty alpha = 2 (compared
as is; large enough to move the estimates by about 1e-2, so that a penalty applied wrongly shows).
Newton-CG runs with a tight tolerance (1e-13), and each case records a bound on the distance
from choix's answer to the optimum (the gradient's norm over the smallest curvature; below 1e-8,
asserted), so that the optimum, not the stopping rule, is compared.
"""
import itertools
import json
import math
import sys

import choix
import numpy as np
import scipy

rng = np.random.default_rng(20261126)

AGENTS = 6
TRUE = np.array([0.0, 0.4, -0.3, 0.9, 0.2, -0.8])


def draw_units(n_units, seats_choices, games_per_unit):
    units = []
    for _ in range(n_units):
        k = int(rng.choice(seats_choices))
        agents = [int(a) for a in rng.choice(AGENTS, size=k, replace=False)]
        games = []
        for g in range(games_per_unit):
            seated = agents[g % k:] + agents[:g % k]  # a rotation of the seats
            u = TRUE[seated] + rng.gumbel(size=k)
            winner = int(np.argmax(u))
            # The others by a coarse "hand value" (lower is better): frequent ties.
            hand = np.floor((3.0 - u) * 1.5).astype(int)
            places = []
            for s in range(k):
                if s == winner:
                    places.append(0)
                else:
                    ahead = 1 + sum(1 for t in range(k) if t != winner and t != s and hand[t] < hand[s])
                    places.append(int(ahead))
            games.append({"agents": seated, "places": places})
        units.append(games)
    return units


def orders(game):
    """Every finishing order the ties allow, with its weight 1/prod(k!)."""
    by_place = {}
    for a, p in zip(game["agents"], game["places"]):
        by_place.setdefault(p, []).append(a)
    groups = [by_place[p] for p in sorted(by_place)]
    weight = 1.0 / math.prod(math.factorial(len(g)) for g in groups)
    out = []
    for perms in itertools.product(*[itertools.permutations(g) for g in groups]):
        out.append([a for perm in perms for a in perm])
    return out, weight


def pl_data(units):
    data = []
    weights = []
    for unit in units:
        for game in unit:
            os_, w = orders(game)
            for o in os_:
                data.append(o)
                weights.append(w)
    big = 1
    for w in weights:
        big = math.lcm(big, round(1 / w))
    rankings = []
    for o, w in zip(data, weights):
        rankings.extend([o] * round(big * w))
    return rankings, big


def bt_data(units):
    pairs = []
    for unit in units:
        for game in unit:
            a, p = game["agents"], game["places"]
            for s in range(len(a)):
                for t in range(s + 1, len(a)):
                    if a[s] == a[t]:
                        continue
                    if p[s] < p[t]:
                        pairs += [(a[s], a[t])] * 2
                    elif p[s] > p[t]:
                        pairs += [(a[t], a[s])] * 2
                    else:
                        pairs += [(a[s], a[t]), (a[t], a[s])]
    return pairs, 2


def fit(model, units, alpha):
    """choix's estimate, and a bound on its distance to the optimum (the gradient's norm over
    the smallest curvature, both per unit of our weights: divided by the replication L), which
    shows that the optimum, not the stopping rule, is what the test compares."""
    if model == "plackett_luce":
        data, scale = pl_data(units)
        theta = choix.opt_rankings(AGENTS, data, alpha=alpha * scale, tol=1e-13)
        fcts = choix.opt.Top1Fcts.from_rankings(data, alpha * scale)
    else:
        data, scale = bt_data(units)
        theta = choix.opt_pairwise(AGENTS, data, alpha=alpha * scale, tol=1e-13)
        fcts = choix.opt.PairwiseFcts(data, alpha * scale)
    theta = np.asarray(theta, dtype=float)
    gradient = np.asarray(fcts.gradient(theta)) / scale
    # How far choix's answer can be from the optimum: |gradient| / the smallest curvature (for
    # alpha = 0 the likelihood is flat along a common shift: its zero eigenvalue is left out).
    curvatures = np.sort(np.linalg.eigvalsh(np.asarray(fcts.hessian(theta)) / scale))
    smallest = curvatures[1] if alpha == 0 else curvatures[0]
    bound = float(np.linalg.norm(gradient) / smallest)
    if alpha == 0:
        theta = theta - theta.mean()
    return [float(x) for x in theta], bound


datasets = {
    "multi": draw_units(120, [3, 4, 5], 4),
    "two_player": draw_units(150, [2], 2),
}
cases = []
for name, units in datasets.items():
    for model in ["plackett_luce", "bradley_terry"]:
        for alpha in [0.0, 2.0]:
            theta, bound = fit(model, units, alpha)
            assert bound < 1e-8, (name, model, alpha, bound)
            cases.append({"data": name, "model": model, "alpha": alpha,
                          "theta": theta, "error_bound": bound})

# The same check on records: two small runs of dhumbal-run (the release build), their records
# read with pandas, each game's finishing order derived here from the columns as
# docs/analysis.md ("Ratings") defines it, and fitted by choix. tests/ratings.rs runs the same
# scenarios and compares the reports' ratings; the runs' row counts and wins are kept to tell
# changed records (regenerate this file) from a wrong rating.
# (Random never outlasts a heuristic in a short point game, which leaves no maximum-likelihood
# rating; the point case seats the four heuristics.)
RECORD_SCENARIOS = {
    "coins": (["aggressive", "conservative", "balanced", "random"],
              "name: coins\nseed: 11\ndeals: 40\nseating: rotate\nrules: {preset: paper}\n"),
    "points": (["aggressive", "conservative", "balanced", "opportunistic"],
               "name: points\nseed: 12\ngames: 40\nseating: rotate\nrules: {preset: jhyap}\n"),
}


def places(keys):
    """Competition ranking: one more than the seats strictly ahead (smaller key is ahead)."""
    return [sum(1 for t in keys if t < k) for k in keys]


def records_case(name, agents, head):
    yaml = head + "agents:\n" + "".join(f"  - kind: {a}\n" for a in agents)
    import os
    import subprocess
    import tempfile

    import pandas as pd

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    binary = os.path.join(root, "target", "release", "dhumbal-run")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.yaml")
        with open(path, "w") as f:
            f.write(yaml)
        out = os.path.join(tmp, "out")
        subprocess.run([binary, path, "--out", out, "--no-report"], check=True,
                       capture_output=True)
        df = pd.read_parquet(os.path.join(out, "rounds"))
    df["agent"] = df["agent"].astype(str)
    index = {a: i for i, a in enumerate(agents)}
    games = []
    if name == "coins":
        # A round is a game: the winner first, the others by hand value, lower first.
        for _, g in df.groupby(["deal", "rotation", "round"], sort=True):
            g = g.sort_values("seat")
            keys = [(0 if w else 1, h) for w, h in zip(g["won"], g["hand_value"])]
            games.append({"agents": [index[a] for a in g["agent"]], "places": places(keys)})
    else:
        # A game (one arrangement): its winner first, then by the last round played, later
        # first; players out in the same round tied.
        for _, g in df.groupby(["deal", "rotation"], sort=True):
            seats = g.groupby("seat").agg(agent=("agent", "first"), last=("round", "max"),
                                          won=("game_won", "max")).sort_index()
            keys = [(0 if w else 1, -r) for w, r in zip(seats["won"], seats["last"])]
            games.append({"agents": [index[a] for a in seats["agent"]], "places": places(keys)})
    data, scale = pl_data([games])
    theta = np.asarray(choix.opt_rankings(len(agents), data, alpha=0.0, tol=1e-13))
    fcts = choix.opt.Top1Fcts.from_rankings(data, 0.0)
    gradient = np.asarray(fcts.gradient(theta)) / scale
    curvatures = np.sort(np.linalg.eigvalsh(np.asarray(fcts.hessian(theta)) / scale))
    bound = float(np.linalg.norm(gradient) / curvatures[1])
    # Newton-CG stops within about 5e-8 here (and does not move when restarted there).
    assert bound < 1e-7, (name, bound)
    theta = theta - theta.mean()
    wins = df.groupby("agent")["won"].sum()
    return {
        "name": name,
        "scenario": yaml,
        "agents": agents,
        "rows": int(len(df)),
        "wins": [int(wins[a]) for a in agents],
        "games": len(games),
        "tied_games": sum(1 for g in games if len(set(g["places"])) < len(g["places"])),
        "theta": [float(x) for x in theta],
        "error_bound": bound,
    }


records = [records_case(n, a, h) for n, (a, h) in RECORD_SCENARIOS.items()]

json.dump(
    {
        "generated_by": "scripts/reference/ratings_fixture.py",
        "versions": {"choix": choix.__version__ if hasattr(choix, "__version__") else
                     __import__("importlib.metadata").metadata.version("choix"),
                     "numpy": np.__version__, "scipy": scipy.__version__},
        "agents": AGENTS,
        "datasets": datasets,
        "cases": cases,
        "records": records,
    },
    sys.stdout,
    indent=1,
)
sys.stdout.write("\n")
