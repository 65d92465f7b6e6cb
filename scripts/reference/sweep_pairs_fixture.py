"""Reference paired differences between the points of a sweep, for crates/report/src/sweep.rs.

Regenerate:
    target/release/dhumbal-run tests/fixtures/sweep-pairs.yaml --out /tmp/sweep-pairs --csv
    .venv/bin/python scripts/reference/sweep_pairs_fixture.py /tmp/sweep-pairs > tests/fixtures/sweep_pairs.json

Written from the definition in docs/analysis.md ("Sweeps"), independently of the Rust code: every
point of a sweep plays the same units (the game under point scoring, the deal under coin
scoring), so the difference between two points is paired by unit. Per unit and agent, the
outcome is a rate: games won over games played (a game counts once per seating arrangement;
point scoring) or rounds won over rounds played. The difference of point k against point j is
the mean over units of (rate at k - rate at j), with the 95% t interval on n - 1 degrees of
freedom (scipy.stats.t). Each point is compared with the first point of its sweep and with the
point before it. The records are read from each point's rounds.csv with pandas.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
import scipy.stats


def unit_rates(csv_path, points):
    df = pd.read_csv(csv_path)
    out = {}
    for agent, rows in df.groupby("agent", sort=False):
        rates = {}
        by_unit = rows.groupby("deal")
        rounds = by_unit["won"].agg(["sum", "count"])
        rates["win"] = (rounds["sum"] / rounds["count"]).to_dict()
        if points:
            games = by_unit.apply(
                lambda g: (g["game_won"].sum(), (g["round"] == 0).sum()), include_groups=False
            )
            rates["games_won"] = {u: k / n for u, (k, n) in games.items()}
        out[agent] = rates
    return out


def paired(a, b):
    units = sorted(set(a) & set(b))
    d = np.array([a[u] - b[u] for u in units], dtype=float)
    n = len(d)
    mean = d.mean()
    half = scipy.stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
    return {"difference": mean, "ci_low": mean - half, "ci_high": mean + half, "units": n}


def main(run):
    run = Path(run)
    manifest = json.loads((run / "manifest.json").read_text())
    sweeps = {}
    for spec in manifest["scenario"]["stages"]:
        sweeps.setdefault(spec["sweep"]["name"], []).append(spec)
    cases = []
    for name, specs in sweeps.items():
        points = specs[0]["rules"]["scoring"] == "points"
        rates = [unit_rates(run / s["name"] / "rounds.csv", points) for s in specs]
        measures = ["games_won", "win"] if points else ["win"]
        for k in range(1, len(specs)):
            for agent in rates[k]:
                for m in measures:
                    for against, j in (("vs_first", 0), ("vs_previous", k - 1)):
                        r = paired(rates[k][agent][m], rates[j][agent][m])
                        cases.append(
                            {
                                "sweep": name,
                                "point": specs[k]["sweep"]["point"],
                                "agent": agent,
                                "measure": m,
                                "against": against,
                                **r,
                            }
                        )
    json.dump(
        {
            "generator": "scripts/reference/sweep_pairs_fixture.py",
            "scenario": "tests/fixtures/sweep-pairs.yaml",
            "versions": {"numpy": np.__version__, "pandas": pd.__version__, "scipy": scipy.__version__},
            "cases": cases,
        },
        sys.stdout,
        indent=1,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
