"""Writes reports/paper/README.md: every number of the paper's Tables I-VI (and the effect
sizes its text quotes) beside this repository's runs of scenarios/paper/, each agent's win
rate in the paper's fixed seats against rotated ones, a section per conclusion of the paper
under the corrected design (scenarios/championship.yaml), and Figs. 1-7 beside ours, read from
each run's statistics under the paper's definitions (`dhumbal-run report --definitions paper`:
normal intervals as the paper's eq. 6, Welch tests on rounds, Cohen's d with ddof=0).

    python3 scripts/paper_report.py reports/paper        (scripts/reproduce-paper.sh runs it)

Standard library only. The paper's numbers are copied from its section IV (the paper is cited
in docs/paper-code.md); each table says where.
"""

from __future__ import annotations

import json
import pathlib
import sys

# Agent rows: win %, 95% CI, economic (coins/round), Jhyap success %, cards/round, decision ms
# (None where the paper's table has no such column).
PAPER = {
    "table1": {
        "title": "Table I: rule-based tournament (4 players, 1024 rounds)",
        "run": "table1",
        "rows": {
            "aggressive": (35.06, (32.14, 37.98), 6.16, 76.17, None, None),
            "conservative": (19.43, (17.01, 21.85), -2.23, 93.65, None, None),
            "balanced": (25.10, (22.44, 27.76), 0.07, 80.59, None, None),
            "opportunistic": (20.41, (17.94, 22.88), -4.00, 72.10, None, None),
        },
        "pairs": [
            ("win", "aggressive", "conservative", 0.356, "<1e-15"),
            ("win", "aggressive", "opportunistic", 0.332, "<1e-14"),
            ("win", "aggressive", "balanced", 0.218, "<1e-6"),
            ("calls", "aggressive", "conservative", 0.704, "<1e-53"),
        ],
    },
    "table2": {
        "title": "Tables II and III: search tournament (2 players, 1024 rounds)",
        "run": "table2",
        "rows": {
            "mcts": (47.1, (44.0, 50.2), -1.0, 97.7, None, 2468.7),
            "ismcts": (52.9, (49.8, 56.0), 1.0, 98.2, None, 2775.4),
        },
        "pairs": [
            ("win", "mcts", "ismcts", -0.117, "0.008"),
            ("economic", "mcts", "ismcts", -0.080, "0.069"),
            ("calls", "mcts", "ismcts", -0.113, "0.010"),
            ("cards_discarded", "mcts", "ismcts", -0.019, "0.669"),
        ],
    },
    "table4": {
        "title": "Tables IV and V: learning tournament (2 players, 1024 rounds)",
        "run": "table4",
        "rows": {
            "ppo": (55.4, (52.4, 58.4), 4.8, None, None, 2.4),
            "dqn": (44.6, (41.6, 47.6), -4.8, None, None, 2.3),
        },
        "pairs": [
            ("win", "ppo", "dqn", 0.216, "<0.0001"),
            ("economic", "ppo", "dqn", 0.244, "<0.0001"),
            ("calls", "ppo", "dqn", -0.044, "0.318"),
        ],
    },
    "table6": {
        "title": "Table VI: championship (4 players, 1024 rounds)",
        "run": "table6",
        "rows": {
            "aggressive": (88.3, (86.3, 90.3), 70.1, 92.6, 9.5, 0.01),
            "ismcts": (9.0, (7.2, 10.8), -12.8, 100.0, 9.3, 1450.7),
            "ppo": (1.5, (0.8, 2.2), -29.2, 87.5, 8.2, 2.4),
            "random": (1.3, (0.6, 2.0), -28.0, 81.8, 8.3, 0.01),
        },
        "pairs": [
            ("win", "aggressive", "ismcts", 2.606, "<0.001"),
            ("win", "aggressive", "ppo", 3.576, "<0.001"),
            ("win", "aggressive", "random", 3.613, "<0.001"),
            ("economic", "aggressive", "ismcts", 2.073, "<0.001"),
            ("economic", "aggressive", "ppo", 2.759, "<0.001"),
            ("economic", "aggressive", "random", 2.740, "<0.001"),
            ("calls", "aggressive", "ismcts", 5.022, "<0.001"),
            ("calls", "aggressive", "ppo", 5.321, "<0.001"),
            ("calls", "aggressive", "random", 5.567, "<0.001"),
            ("win", "ismcts", "ppo", 0.343, "<0.001"),
            ("economic", "ismcts", "ppo", 0.682, "<0.001"),
            ("win", "ismcts", "random", 0.355, "<0.001"),
            ("economic", "ismcts", "random", 0.639, "<0.001"),
            ("win", "ppo", "random", 0.017, "0.704"),
            ("economic", "ppo", "random", -0.076, "0.088"),
            ("calls", "ppo", "random", 0.043, "0.333"),
        ],
    },
}

METRIC = {"win": "win", "economic": "economic", "calls": "Jhyap (caller)", "cards_discarded": "cards"}


def fmt(x, digits=1):
    return "" if x is None else f"{x:.{digits}f}"


def sig(x):
    return "" if x is None else f"{x:.3g}"


def ci(pair, digits=1, scale=100.0):
    return "" if pair is None else f"[{pair[0] * scale:.{digits}f}, {pair[1] * scale:.{digits}f}]"


def ours(stats, agent):
    a = agent_row(stats, agent)
    cs = a["call_success"]
    return {
        "win": a["win"]["rate"] * 100,
        "ci": a["win"]["ci95"],
        "econ": a["economic"]["mean"],
        "econ_ci": a["economic"]["ci95"],
        "jhyap": cs["rate"] * 100 if cs["n"] else None,
        "cards": a["cards_discarded_per_round"]["mean"],
        "ms": a["decision_time"]["mean_us"] / 1000 if a.get("decision_time") else None,
    }


def pair(stats, metric, a, b):
    for p in stats["pairwise"]:
        if p["metric"] != metric:
            continue
        if (p["a"], p["b"]) == (a, b):
            return p["effect"], p["p"]
        if (p["a"], p["b"]) == (b, a):
            return -p["effect"], p["p"]
    return None, None


def load(path: pathlib.Path):
    return json.loads(path.read_text()) if path.is_file() else None


def agent_row(stats, name):
    """An agent's entry in a stage's stats.json."""
    return next((a for a in stats["agents"] if a["agent"] == name), None)


def win(stats, name):
    """Win rate in percent with its 95% interval (the stats' own method)."""
    a = agent_row(stats, name)
    return a["win"]["rate"] * 100, a["win"]["ci95"][0] * 100, a["win"]["ci95"][1] * 100


def wtext(stats, name):
    r, lo, hi = win(stats, name)
    return f"{r:.2f}% [{lo:.2f}, {hi:.2f}]"


def paper_ci(rate, pair):
    """A symmetric (normal, eq. 6) interval in percent, printed as the paper printed its own:
    the rounded rate minus and plus the rounded half-width (Conservative's 19.43 +/- 2.42 is
    [17.01, 21.85]; the unrounded bounds are 17.01 and 21.86)."""
    m = round(rate, 2)
    h = round((pair[1] - pair[0]) * 50.0, 2)
    return f"[{m - h:.2f}, {m + h:.2f}]"


def wtext_paper(stats, name):
    r, _, _ = win(stats, name)
    return f"{r:.2f}% {paper_ci(r, agent_row(stats, name)['win']['ci95'])}"


def primary(stats, a, b, metric="win"):
    """The primary (design-based) test of a against b: difference a - b (percentage points for
    rates, coins per round for `economic`), Holm p."""
    scale = 1.0 if metric == "economic" else 100.0
    for p in stats["pairwise"]:
        if p["metric"] != metric or not p.get("primary"):
            continue
        if (p["a"], p["b"]) == (a, b):
            return p["difference"] * scale, p["p_holm"]
        if (p["a"], p["b"]) == (b, a):
            return -p["difference"] * scale, p["p_holm"]
    return None, None


def ptext(p):
    if p is None:
        return "p n/a"
    if p == 0:
        return "p < 1e-300"
    return f"p = {p:.2g}" if p >= 1e-3 else f"p = {p:.1e}"


def resolved(d, p):
    """A lead (d > 0) the design's test resolves at 0.05."""
    return d is not None and d > 0 and p < 0.05


def seat_rate(stats, name, seat):
    """An agent's win rate in percent when it sat in `seat` (seat 0 starts every round)."""
    a = agent_row(stats, name)
    return next((s["rate"] * 100 for s in a["by_seat"] if s["position"] == seat), None)


def conclusions(root: pathlib.Path) -> list[str]:
    """A section per conclusion of the paper: does it hold under the corrected design, and how
    much of each lead was the seat. Every number is read from the runs; the verdicts follow
    from the numbers (significance at 0.05, Holm, by the design's paired test)."""
    t1 = load(root / "table1" / "paper-stats" / "stats.json")
    t1r = load(root / "table1-rotated" / "stats.json")
    t2 = load(root / "table2" / "paper-stats" / "stats.json")
    t2r = load(root / "table2-rotated" / "stats.json")
    t4 = load(root / "table4" / "paper-stats" / "stats.json")
    t4r = load(root / "table4-rotated" / "stats.json")
    t6 = load(root / "table6" / "paper-stats" / "stats.json")
    t6r = load(root / "table6-rotated" / "stats.json")
    champ = {s: load(root / "championship" / s / "stats.json") for s in ("rule-based", "search", "learning", "final")}
    if None in (t1, t1r, t2, t2r, t4, t4r, t6, t6r) or None in champ.values():
        return ["## The paper's conclusions under a corrected design", "", "(some runs are missing: run scripts/reproduce-paper.sh)", ""]
    rb, se, le, fi = champ["rule-based"], champ["search"], champ["learning"], champ["final"]
    out = [
        "## The paper's conclusions under a corrected design",
        "",
        "The corrected design is `scenarios/championship.yaml` (run here into",
        f"`{root / 'championship'}`; its overview page is `{root / 'championship' / 'report.md'}`):",
        "every stage seeded; every deal played under all seat permutations, so no agent profits from",
        "moving first or from whom it follows; the corrected MCTS and ISMCTS at like budgets;",
        "PPO and DQN trained the same way on the same encoding; sample sizes from the power",
        "analysis; tests paired by deal (the design's unit), Holm-adjusted within each stage. The",
        "\"rotated\" runs are the paper's own matchups with only the seating changed (every deal once",
        "per rotation). Below, \"holds\" means the corrected design finds the same ordering at",
        "p < 0.05; differences are in percentage points of rounds won.",
        "",
    ]
    # C1: Aggressive dominates the rule-based agents.
    a_fixed = win(t1, "aggressive")[0]
    a_rot = win(t1r, "aggressive")[0]
    a_seat0 = seat_rate(t1r, "aggressive", 0)
    others = [n for n in ("conservative", "balanced", "opportunistic")]
    nxt = max(others, key=lambda n: win(rb, n)[0])
    d, p = primary(rb, "aggressive", nxt)
    holds = resolved(d, p) and all(win(rb, "aggressive")[0] > win(rb, n)[0] for n in others)
    out += [
        "### 1. \"Aggressive dominates the rule-based agents\" (Table I, Figs. 1-2)",
        "",
        f"**{'Holds' if holds else 'Does not hold'}, with a smaller lead.** Paper (seat 0, fixed): Aggressive 35.06%, reproduced",
        f"exactly ({a_fixed:.2f}%). Rotated seats: {wtext(t1r, 'aggressive')}; corrected design:",
        f"{wtext(rb, 'aggressive')}, ahead of the next, {nxt} ({wtext(rb, nxt)}), by {d:.2f} points",
        f"({ptext(p)}). Seat: on the same deals (the rotated run) Aggressive wins {a_seat0:.2f}% from seat 0",
        f"and {a_rot:.2f}% over all seats, so of its {a_fixed - 25:.2f}-point lead over an equal share (25%) in",
        f"the paper's table about {a_seat0 - a_rot:.2f} points ({100 * (a_seat0 - a_rot) / (a_fixed - 25):.0f}%) is what seat 0 is worth to it; the",
        f"rest of the gap between {a_fixed:.2f}% and {a_rot:.2f}% ({a_fixed - a_seat0:+.2f} points) goes with the paper's one",
        "1024-round session and its deals, which the rotated run does not share.",
        f"The paper's other rankings move too: fixed seats put Conservative last at {win(t1, 'conservative')[0]:.2f}% and",
        f"Opportunistic at {win(t1, 'opportunistic')[0]:.2f}%; with permuted seats Conservative is still last",
        f"({wtext(rb, 'conservative')}) while Opportunistic ({wtext(rb, 'opportunistic')}) and Balanced",
        f"({wtext(rb, 'balanced')}) are level. Conservative's highest Jhyap success (the paper's 93.65%)",
        f"holds: {agent_row(rb, 'conservative')['call_success']['rate'] * 100:.2f}% in the corrected design, against",
        f"{agent_row(rb, 'aggressive')['call_success']['rate'] * 100:.2f}% for Aggressive.",
        "",
    ]
    # C2: ISMCTS beats MCTS.
    m_fixed = win(t2, "ismcts")[0]
    d2, p2 = primary(se, "ismcts", "mcts")
    d2r, p2r = primary(t2r, "ismcts", "mcts")
    holds2 = resolved(d2, p2)
    out += [
        "### 2. \"ISMCTS beats MCTS\" (Tables II-III, Fig. 3)",
        "",
        f"**{'Holds' if holds2 else 'Not shown at like budgets'}.** Paper: ISMCTS 52.9% against MCTS 47.1% (fixed seats, 100",
        "iterations with 1 world for MCTS and 3 for ISMCTS). With the corrected algorithms at the",
        f"paper's budgets ISMCTS wins {m_fixed:.2f}% in the paper's seats and {wtext(t2r, 'ismcts')} rotated",
        f"(difference {d2r:+.2f} points, {ptext(p2r)}): the direction holds and the gap is larger. But",
        "those budgets are not alike (ISMCTS simulates three worlds per iteration, MCTS one). At the",
        f"same budget (3000 iterations, one world each, heuristic rollouts; the ISMCTS is the reference agent) the corrected design finds",
        f"ISMCTS {wtext(se, 'ismcts')} against MCTS {wtext(se, 'mcts')}: {d2:+.2f} points, {ptext(p2)}",
        f"({'significant' if holds2 else 'not significant; the stage was planned to detect 5 points'}).",
        "The paper's comparison confounds the algorithm with the budget; at like budgets (with",
        "heuristic rollouts and thirty times the iterations) the corrected design does not separate them.",
        "",
    ]
    # C3: PPO beats DQN.
    d3, p3 = primary(le, "ppo", "dqn")
    d3r, p3r = primary(t4r, "ppo", "dqn")
    holds3 = resolved(d3, p3)
    out += [
        "### 3. \"PPO beats DQN\" (Tables IV-V, Figs. 4-5)",
        "",
        f"**{'Holds for the corrected agents, but not for every training' if holds3 else 'Does not hold'}.** Paper: PPO 55.4% against DQN",
        "44.6% (PPO in seat 0). The paper's networks cannot be rebuilt (trained five-handed on shaped",
        "rewards, evaluated on another encoding: `dqn.py`, `ppo.py`, `compete.py`). This repository's networks on the",
        f"paper's encoding, trained heads-up: {wtext(t4, 'ppo')} for PPO in the paper's setting (seat 0,",
        f"one 1024-round session with coins carried over), but {wtext(t4r, 'ppo')} over independent",
        f"rotated deals ({d3r:+.2f} points, {ptext(p3r)}): there DQN is the stronger network. Not because",
        f"of the seat (PPO wins {seat_rate(t4r, 'ppo', 0):.2f}% from seat 0 in the rotated run): the networks see the",
        "coins in their encoding, and a long session moves them off what they were trained on",
        f"({agent_row(t4, 'ppo')['turns_per_round']['mean']:.1f} turns per round in the session against {agent_row(t4r, 'ppo')['turns_per_round']['mean']:.1f} over one-round deals). The corrected design's networks (the",
        f"`cards` encoding, trained at four players): PPO {wtext(le, 'ppo')} against DQN {wtext(le, 'dqn')}",
        f"({d3:+.2f} points, {ptext(p3)}). Which algorithm wins depends on the encoding and training,",
        "not only on the algorithm. Fig. 4's training under the paper's training settings (players,",
        "turns, coins, networks and hyperparameters; not its shaped rewards or opponents; below) ends",
        "with PPO below an equal share even against random players and DQN at about an equal share,",
        "in line with the paper's training win rates of 0-10%.",
        "",
    ]
    # C4: Aggressive dominates the championship; PPO no better than Random.
    champion = max((a["agent"] for a in fi["agents"]), key=lambda n: win(fi, n)[0])
    beats = {}  # Aggressive against each other finalist: (rounds won, coins), difference and p
    for other in (a["agent"] for a in fi["agents"]):
        if other != "aggressive":
            beats[other] = (primary(fi, "aggressive", other), primary(fi, "aggressive", other, "economic"))
    d5, p5 = primary(fi, "ppo", "random")
    searcher = next((a["agent"] for a in fi["agents"] if a["agent"] in ("mcts", "ismcts")), "the search agent")
    ahead = [o for o, ((d, p), _) in beats.items() if resolved(d, p)]
    behind = [o for o, ((d, p), _) in beats.items() if resolved(-d if d is not None else None, p)]
    if not behind and len(ahead) == len(beats):
        verdict = "Holds under the corrected design"
    elif behind:
        verdict = "Holds against " + (", ".join(ahead) or "no one") + "; reversed against " + ", ".join(behind)
    else:
        verdict = "Not resolved against " + ", ".join(o for o in beats if o not in ahead)
    vs = "; ".join(
        f"against {o}: {dw:+.2f} points of rounds won ({ptext(pw)}), {de:+.2f} coins per round ({ptext(pe)})"
        for o, ((dw, pw), (de, pe)) in beats.items()
    )
    out += [
        "### 4. \"Carefully engineered heuristics outperform search and learning\" (Table VI, Figs. 6-7)",
        "",
        f"**{verdict}.** Paper: Aggressive 88.3%, ISMCTS 9.0%, PPO 1.5%, Random 1.3%, PPO indistinguishable",
        "from Random (d = 0.017, p = 0.704). Our run of the paper's setting (fixed seats, ISMCTS",
        f"100x3 with random rollouts, PPO on the paper encoding): Aggressive {wtext(t6, 'aggressive')},",
        f"ISMCTS {wtext(t6, 'ismcts')}, PPO {wtext(t6, 'ppo')}, Random {wtext(t6, 'random')}; rotated,",
        f"Aggressive still wins {wtext(t6r, 'aggressive')} (from seat 0, its seat in the paper:",
        f"{seat_rate(t6r, 'aggressive', 0):.2f}%). So at the paper's budgets Aggressive's lead is real, though far",
        "smaller than 88.3% (the paper's ISMCTS and PPO were broken: docs/paper-code.md). With the",
        "corrected design's finalists (all seat permutations, category winners at sensible budgets): "
        + ", ".join(f"{a['agent']} {wtext(fi, a['agent'])}" for a in sorted(fi["agents"], key=lambda a: -a["win"]["rate"]))
        + f". The most rounds go to **{champion}**. Aggressive {vs}. The search finalist"
        + f" ({searcher}, 3000 iterations a decision) plays out its rollouts with the Aggressive"
        + " heuristic: search built on the heuristic, not instead of it; at 1000 iterations its lead"
        + " over Aggressive was 2 points (docs/agents.md, \"The reference agent\").",
        f"PPO against Random: {d5:+.2f} points ({ptext(p5)}), far from random play.",
        "The paper's text says the championship used randomized seating; its code kept every agent in",
        "one seat (`championship/final.py`), which is what table6.yaml does.",
        "",
    ]
    # Seat effects in one table.
    out += [
        "### How much of each lead was the seat",
        "",
        "For every agent of Tables I, II, IV and VI: its win rate in the paper's setting (fixed",
        "seats), and in the rotated run of the same matchup over all seats and from the seat the",
        "paper gave it. The seat's worth is the last minus the one before: the same deals, only the",
        "seat differs. The fixed-seat column differs from the rotated ones by more than the seat: the",
        "paper's runs of Tables I, IV and VI were one 1024-round session with coins carried over",
        "(and other deals), the rotated runs independent deals. Equal strength is 25% at four",
        "players, 50% heads-up.",
        "",
        "| table | agent | paper's seat | fixed seats (paper's setting) | rotated, all seats [95% CI] | rotated, from the paper's seat | the seat's worth |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, fixed, rot in (("I", t1, t1r), ("II", t2, t2r), ("IV", t4, t4r), ("VI", t6, t6r)):
        for i, a in enumerate(fixed["agents"]):
            n = a["agent"]
            f, r, own = win(fixed, n)[0], win(rot, n)[0], seat_rate(rot, n, i)
            out.append(f"| {name} | {n} | {i} | {f:.2f} | {wtext(rot, n)} | {own:.2f} | {own - r:+.2f} |")
    out += [
        "",
        "Moving first is worth",
        f"{100 * next(s['rate'] for s in t1r['seats'] if s['position'] == 0) - 25:+.2f} points to whoever sits in seat 0 among the four heuristics",
        "(Table I rotated), which is why the corrected design rotates or permutes every deal.",
        "",
    ]
    return out


def img(root: pathlib.Path, rel: str, alt: str) -> str:
    """A markdown image of reports/paper/<rel>, or a note that it is missing."""
    return f"![{alt}]({rel})" if (root / rel).is_file() else f"({rel} missing)"


def imgs(root: pathlib.Path, *figs: tuple[str, str]) -> str:
    """Images side by side: (path under reports/paper, alt text) each."""
    return " ".join(img(root, rel, alt) for rel, alt in figs)


def training_numbers(root: pathlib.Path, run: str):
    """Fig. 4's numbers of one training from its episodes (Polars, when installed: the
    .venv that scripts/setup-python.sh makes has it), else None."""
    path = root / "training" / "train" / run / "episodes.parquet"
    try:
        import polars as pl  # noqa: PLC0415 - optional
    except ImportError:
        return None
    if not path.is_file():
        return None
    df = pl.read_parquet(path)
    sd = df["reward"].rolling_std(100).drop_nulls()
    return {
        "episodes": df.height,
        "reward": df["reward"].mean(),
        "reward_last": df["reward"].tail(1000).mean(),
        "win": df["win"].cast(pl.Float64).mean() * 100,
        "turns": df["turns"].mean(),
        "sd": (sd.min(), sd.max()),
    }


def figures(root: pathlib.Path) -> list[str]:
    """The paper's Figs. 1-7: what its text reports of each, and ours beside it."""
    t1 = load(root / "table1" / "paper-stats" / "stats.json")
    t2 = load(root / "table2" / "paper-stats" / "stats.json")
    t4 = load(root / "table4" / "paper-stats" / "stats.json")
    t6 = load(root / "table6" / "paper-stats" / "stats.json")
    if None in (t1, t2, t4, t6):
        return []
    wins = lambda st, n: agent_row(st, n)["win"]["k"]  # noqa: E731
    out = [
        "## Figures 1-7 beside ours",
        "",
        "The paper's figures are not in the text we have; what its text says of each is quoted",
        "beside ours. Ours are drawn from the runs above: as the paper's code ran (its fixed",
        "seats, under its statistical definitions: `<table>/paper-stats/figures/`) and, where the",
        "corrected design has the same comparison, from `championship/`. Every figure exists as",
        "SVG, PNG (300 dpi) and PDF beside the PNG shown.",
        "",
        "**Fig. 1** (Cohen's d of the rule-based pairs, five metrics). Paper: win rate d = 0.356",
        "(Aggressive vs Conservative), 0.332 (vs Opportunistic), 0.218 (vs Balanced); Jhyap 0.704.",
        "Ours reproduce them (Table I above). Left: the paper's definitions (Welch on rounds,",
        "Cohen's d); right: the corrected design (paired by deal, d_z, Holm).",
        "",
        imgs(root, ("table1/paper-stats/figures/effects.png", "Fig. 1, paper's definitions"), ("championship/rule-based/figures/effects.png", "Fig. 1, corrected design")),
        "",
    ]
    econ = lambda st, n: agent_row(st, n)["economic"]["mean"]  # noqa: E731
    cs = lambda st, n: agent_row(st, n)["call_success"]["rate"] * 100  # noqa: E731
    names = ["aggressive", "conservative", "balanced", "opportunistic"]
    med = sorted(win(t1, n)[0] for n in names)
    med = (med[1] + med[2]) / 2
    out += [
        "**Fig. 2** (rule-based: (a) win rates with 95% intervals, (b) coins per round, (c) Jhyap",
        "success). Paper: (a) Aggressive 35.06% [32.14, 37.98], Conservative 19.43% [17.01, 21.85],",
        "median 22.76%; (b) Aggressive 6.16, Balanced 0.07, Opportunistic -4.00; (c) Conservative",
        "93.65%, Aggressive 76.17%, Opportunistic 72.10%, median 78.38%. Ours: (a) "
        + ", ".join(f"{n} {wtext_paper(t1, n)}" for n in names)
        + f", median {med:.2f}%; (b) "
        + ", ".join(f"{n} {econ(t1, n):.2f}" for n in names)
        + "; (c) "
        + ", ".join(f"{n} {cs(t1, n):.2f}%" for n in names)
        + ". (The paper's median is that of its four rounded win rates, (20.41 + 25.10) / 2 = 22.755;",
        "ours is from unrounded rates.)",
        "",
        imgs(root, ("table1/paper-stats/figures/win_rate.png", "Fig. 2a"), ("table1/paper-stats/figures/economic.png", "Fig. 2b"), ("table1/paper-stats/figures/call_success.png", "Fig. 2c")),
        "",
        "**Fig. 3** (search: (a) win rates, (b) cumulative wins). Paper: ISMCTS 52.9% +/- 3.0, MCTS",
        "47.1% +/- 3.0; 542 wins against 482, a gap of 30 by round 400 and 60 at the end. Ours (the",
        f"paper's setting): ISMCTS {wins(t2, 'ismcts')} wins, MCTS {wins(t2, 'mcts')}; {wtext(t2, 'ismcts')} against",
        f"{wtext(t2, 'mcts')}. Right: the corrected design's like-budget stage.",
        "",
        imgs(root, ("table2/paper-stats/figures/win_rate.png", "Fig. 3a"), ("table2/paper-stats/figures/cumulative_wins.png", "Fig. 3b"), ("championship/search/figures/cumulative_wins.png", "Fig. 3b, corrected design")),
        "",
    ]
    out += [
        "**Fig. 4** (training dynamics of PPO and DQN: (a) reward with its 100-episode moving mean,",
        "(b) cumulative win rate, (c) episode length, (d) 100-episode rolling SD of the reward).",
        "Paper: PPO's mean reward 5.57 coins per episode (7-9 late), DQN's 3.05; training win rates",
        "PPO 9-10%, DQN 0-1%; episodes 105-125 turns (PPO 118, DQN 112); reward SD below 2 for DQN,",
        "5-22 for PPO. Its rewards were shaped and its episodes whole 50-turn five-player games with",
        "a million coins, so only the shape compares. Ours: `scenarios/paper/fig4-training.yaml`",
        "(five players, 50-turn rounds, a million coins, the paper's networks and hyperparameters,",
        "the coin change as reward, the four heuristics as opponents), one round per episode.",
        "",
    ]
    for run in ("ppo", "dqn"):
        m = load(root / "training" / "train" / run / "manifest.json")
        ev = "" if m is None else "the greedy policy at the end wins " + ", ".join(
            f"{e['win_rate'] * 100:.1f}% [{e['low'] * 100:.1f}, {e['high'] * 100:.1f}] of rounds against four {e['opponent']}"
            for e in m.get("last_evaluations", [])
        ) + " (an equal share is 20%)"
        n = training_numbers(root, run)
        nums = "" if n is None else (
            f"{n['episodes']} episodes, mean reward {n['reward']:.2f} coins per round "
            f"({n['reward_last']:.2f} over the last 1000), training win rate {n['win']:.2f}%, "
            f"{n['turns']:.1f} turns per round, rolling SD {n['sd'][0]:.1f}-{n['sd'][1]:.1f}; "
        )
        out += [f"- {run.upper()}: {nums}{ev}.", ""]
        out += [
            " ".join(
                img(root, f"training/train/{run}/figures/{stem}.png", f"Fig. 4{p}, {run}")
                for p, stem in zip("abcd", ("training_reward", "training_win_rate", "training_length", "training_reward_sd"))
            ),
            "",
        ]
    out += [
        "**Fig. 5** (learning: (a) win rates, (b) cumulative wins). Paper: PPO 55.4% +/- 3.0, DQN",
        "44.6%; 571 wins against 453 (which is 55.8%, not 55.4%: the figure and the table disagree).",
        f"Ours (the paper's setting): PPO {wins(t4, 'ppo')} wins, DQN {wins(t4, 'dqn')}. Right: the corrected",
        "design's learning stage.",
        "",
        imgs(root, ("table4/paper-stats/figures/win_rate.png", "Fig. 5a"), ("table4/paper-stats/figures/cumulative_wins.png", "Fig. 5b"), ("championship/learning/figures/cumulative_wins.png", "Fig. 5b, corrected design")),
        "",
        "**Fig. 6** (championship: Cohen's d, three metrics). Paper: Aggressive against ISMCTS, PPO",
        "and Random d = 2.606, 3.576, 3.613 (win), 2.073, 2.759, 2.740 (economic), 5.022, 5.321,",
        "5.567 (Jhyap); PPO against Random 0.017 (p = 0.704). Ours: Table VI above. Left: the paper's",
        "setting and definitions; right: the corrected design's final.",
        "",
        imgs(root, ("table6/paper-stats/figures/effects.png", "Fig. 6, paper's setting"), ("championship/final/figures/effects.png", "Fig. 6, corrected design")),
        "",
        "**Fig. 7** (championship: (a) win rates with 95% intervals, (b) cumulative coins). Paper:",
        "Aggressive 88.3% +/- 2.0, ISMCTS 9.0% +/- 1.8, PPO 1.5% +/- 0.7, Random 1.3% +/- 0.7, median",
        "5.2% (panel (a) was drawn from hard-coded table values in the paper's plotting code); (b) Aggressive",
        "+70.1 coins per round, ISMCTS -12.8, PPO -29.2, Random -28.0. Ours (the paper's setting): "
        + ", ".join(f"{n} {wtext(t6, n)}, {econ(t6, n):+.2f} coins per round" for n in ("aggressive", "ismcts", "ppo", "random"))
        + ". Bottom: the corrected design's final.",
        "",
        imgs(root, ("table6/paper-stats/figures/win_rate.png", "Fig. 7a"), ("table6/paper-stats/figures/cumulative_economic.png", "Fig. 7b")),
        "",
        imgs(root, ("championship/final/figures/win_rate.png", "Fig. 7a, corrected design"), ("championship/final/figures/cumulative_economic.png", "Fig. 7b, corrected design")),
        "",
    ]
    return out


def main() -> None:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "reports/paper")
    out = [
        "# The paper's tables beside ours",
        "",
        "Written by `scripts/reproduce-paper.sh` (`scripts/paper_report.py`). For each table: the",
        "paper's number (its section IV; the paper and its public code: docs/paper-code.md) and ours from",
        "`scenarios/paper/`, set up as the paper's code ran it (fixed seats, seat 0 first, its",
        "budgets and seeding; docs in each scenario file), under the paper's statistical",
        "definitions (normal 95% interval of eq. 6 over rounds, Welch's test, Cohen's d). Table I",
        "is reproduced exactly (the paper's generator and agents); Tables II-VI cannot be: the",
        "paper's search and learning agents had bugs its code shows (docs/paper-code.md), its",
        "championship was unseeded and its search budgets took seconds per decision. Ours use the",
        "corrected agents and this repository's trained networks. Intervals of win rates in the",
        "tables are printed the paper's way, the rounded rate plus and minus the rounded half-width,",
        "which can differ from the rounded bounds in the last digit. After the tables: what becomes of",
        "each of the paper's conclusions under a corrected design (`scenarios/championship.yaml`),",
        "how much of each lead was the seat, and the paper's Figs. 1-7 beside ours.",
        "",
    ]
    for key, t in PAPER.items():
        run = root / t["run"] / "paper-stats" / "stats.json"
        if not run.is_file():
            out += [f"## {t['title']}", "", f"(no run at {run})", ""]
            continue
        stats = json.loads(run.read_text())
        out += [f"## {t['title']}", "", f"Ours: `{root / t['run']}` ({stats['design']['rounds']} rounds, seed {stats['design']['seed']}).", ""]
        out += [
            "| agent | win % paper | win % ours [95% CI] | econ. paper | econ. ours [95% CI] | Jhyap % paper | Jhyap % ours | cards/round paper | ours | decision ms paper | ours |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for agent, (w, wci, e, j, c, ms) in t["rows"].items():
            o = ours(stats, agent)
            out.append(
                f"| {agent} | {w} {list(wci)} | {o['win']:.2f} {paper_ci(o['win'], o['ci'])} | {e} | {o['econ']:.2f} {ci(o['econ_ci'], 2, 1.0)} "
                f"| {fmt(j, 2)} | {fmt(o['jhyap'], 2)} | {fmt(c)} | {o['cards']:.1f} | {'' if ms is None else ms} | {sig(o['ms'])} |"
            )
        rotated = root / f"{t['run']}-rotated" / "stats.json"
        if rotated.is_file():
            rs = json.loads(rotated.read_text())
            out += [
                "",
                f"Seats: the paper's fixed seats against rotated ones (`{rotated.parent}`: every deal once per rotation,",
                "so each agent starts equally often; 95% intervals by deal). The difference estimates what",
                "sitting where the paper sat each agent was worth to it; the two runs deal different cards,",
                "so differences within the rotated interval's width are noise.",
                "",
                "| agent | win % fixed seats | win % rotated seats [95% CI] | fixed minus rotated |",
                "|---|---|---|---|",
            ]
            for agent in t["rows"]:
                f_ = ours(stats, agent)
                r_ = ours(rs, agent)
                out.append(f"| {agent} | {f_['win']:.2f} | {r_['win']:.2f} {ci(r_['ci'], 2)} | {f_['win'] - r_['win']:+.2f} |")
        out += ["", "| comparison | metric | d paper | p paper | d ours | p ours |", "|---|---|---|---|---|---|"]
        for metric, a, b, d, p in t["pairs"]:
            od, op = pair(stats, metric, a, b)
            ods = "" if od is None else f"{od:.3f}"
            ops = "" if op is None else f"{op:.3g}"
            out.append(f"| {a} vs {b} | {METRIC[metric]} | {d} | {p} | {ods} | {ops} |")
        out.append("")
    out += [
        "Notes. Jhyap in the comparisons is the paper's test: the indicator \"this agent called\"",
        "per round, not call success (docs/analysis.md). The paper's Table III `Cards` is a",
        "hypothetical next discard its code computed; ours is the cards actually discarded per",
        "round. Decision times are this machine's (ours: mean over every decision).",
        "",
    ]
    out += conclusions(root)
    out += figures(root)
    (root / "README.md").write_text("\n".join(out))
    print(f"wrote {root / 'README.md'}")


if __name__ == "__main__":
    main()
