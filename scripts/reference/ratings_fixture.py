"""Reference ratings for crates/report/src/ratings.rs, computed by choix.

Regenerate: .venv/bin/python scripts/reference/ratings_fixture.py > tests/fixtures/ratings.json
(needs `choix`, which scripts/setup-python.sh installs; the file records the versions used).

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
the mean, as the likelihood does not see a common shift) and with a penalty (compared as is).
Newton-CG runs with a tight tolerance (1e-13) so that the optimum, not the stopping rule, is
compared.
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
    if model == "plackett_luce":
        data, scale = pl_data(units)
        theta = choix.opt_rankings(AGENTS, data, alpha=alpha * scale, tol=1e-13)
    else:
        data, scale = bt_data(units)
        theta = choix.opt_pairwise(AGENTS, data, alpha=alpha * scale, tol=1e-13)
    theta = np.asarray(theta, dtype=float)
    if alpha == 0:
        theta = theta - theta.mean()
    return [float(x) for x in theta]


datasets = {
    "multi": draw_units(120, [3, 4, 5], 4),
    "two_player": draw_units(150, [2], 2),
}
cases = []
for name, units in datasets.items():
    for model in ["plackett_luce", "bradley_terry"]:
        for alpha in [0.0, 0.05]:
            cases.append({"data": name, "model": model, "alpha": alpha,
                          "theta": fit(model, units, alpha)})

json.dump(
    {
        "generated_by": "scripts/reference/ratings_fixture.py",
        "versions": {"choix": choix.__version__ if hasattr(choix, "__version__") else
                     __import__("importlib.metadata").metadata.version("choix"),
                     "numpy": np.__version__, "scipy": scipy.__version__},
        "agents": AGENTS,
        "datasets": datasets,
        "cases": cases,
    },
    sys.stdout,
    indent=1,
)
sys.stdout.write("\n")
