"""Decision traces (docs/traces.md) validate against schemas/trace.schema.json line by line,
follow the event grammar (game; per round deal, turns, round_end; game_end), count one
decision event per decision the records count, and the schema refuses what it should. Run by
scripts/test.sh."""

from __future__ import annotations

import copy
import json
import pathlib

import jsonschema
import polars as pl
import pytest

import dhumbal

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "trace.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# A coin stage of built-in agents (search included) and a point stage played to the end of
# each game, so that both scorings, eliminations and every event kind appear.
STAGED = {
    "name": "traced", "seed": 5, "output": {"trace": {"deals": [0, 2]}, "chunk_rounds": 16},
    "stages": [
        {"name": "coins", "deals": 6, "seating": "rotate", "rules": {"preset": "paper"},
         "agents": [{"kind": "aggressive"}, {"kind": "ismcts", "params": {"iterations": 30}},
                    {"kind": "mcts", "params": {"iterations": 30}},
                    {"kind": "epsilon", "params": {"agent": {"kind": "balanced"}, "epsilon": 0.3}}]},
        {"name": "points", "games": 3, "seating": "fixed", "rules": {"preset": "jhyap", "players": 3},
         "agents": [{"kind": "conservative"}, {"kind": "random"}, {"kind": "opportunistic"}]},
    ],
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traces")
    path = folder / "traced.yaml"
    path.write_text(json.dumps(STAGED))
    out = folder / "out"
    dhumbal.run(path, out, report=False, csv=True)
    return out


def _lines(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_line_of_every_trace_validates(run):
    files = sorted(run.glob("*/traces/*.jsonl"))
    # coins: deals 0 and 2 under 4 rotations; points: games 0 and 2, one seating.
    assert len(files) == 2 * 4 + 2, [f.name for f in files]
    kinds = set()
    for f in files:
        for n, line in enumerate(_lines(f), 1):
            errors = sorted(VALIDATOR.iter_errors(line), key=lambda e: e.path)
            assert not errors, f"{f.name}:{n}: {errors[0].message} at {list(errors[0].path)}"
            kinds.add(line["event"])
    assert kinds >= {"game", "deal", "decision", "drew", "round_end", "game_end"}, kinds


def test_events_follow_the_grammar_and_match_the_records(run):
    for stage in ["coins", "points"]:
        rounds = pl.read_csv(run / stage / "rounds.csv")
        for f in sorted((run / stage / "traces").glob("*.jsonl")):
            lines = _lines(f)
            head = lines[0]
            assert head["event"] == "game" and lines[-1]["event"] == "game_end", f.name
            assert [l["event"] for l in lines].count("game") == 1
            deal, arrangement = head["deal"], head["arrangement"]
            in_round = False
            decisions: dict[tuple[int, int], int] = {}
            for line in lines[1:-1]:
                e = line["event"]
                if e == "deal":
                    assert not in_round, f"{f.name}: a deal inside a round"
                    in_round = True
                elif e == "round_end":
                    assert in_round, f"{f.name}: a round ended that was not dealt"
                    in_round = False
                else:
                    assert in_round, f"{f.name}: {e} outside a round"
                    if e == "decision":
                        key = (line["round"], line["seat"])
                        decisions[key] = decisions.get(key, 0) + 1
                        assert 0 <= line["choice"] < len(line["legal"]), f"{f.name}: an illegal choice"
            # One decision event per decision the records count, seat by seat.
            if head["scoring"] == "coins":
                mine = rounds.filter((pl.col("deal") == deal) & (pl.col("rotation") == arrangement))
            else:
                mine = rounds.filter(pl.col("deal") == deal)
            assert mine.height > 0
            for row in mine.iter_rows(named=True):
                got = decisions.get((row["round"], row["seat"]), 0)
                assert got == row["decisions"], f"{f.name}: round {row['round']} seat {row['seat']}"
            assert lines[-1]["rounds"] == mine["round"].n_unique()


def test_the_schema_refuses_what_it_should(run):
    line = next(l for l in _lines(next(run.glob("coins/traces/*.jsonl"))) if l["event"] == "decision")
    assert VALIDATOR.is_valid(line)
    broken = []
    bad = copy.deepcopy(line); bad["choice"] = -1; broken.append(bad)
    bad = copy.deepcopy(line); bad["legal"] = ["discard 11♥"]; broken.append(bad)
    bad = copy.deepcopy(line); del bad["view"]["hand"]; broken.append(bad)
    bad = copy.deepcopy(line); bad["phase"] = "bid"; broken.append(bad)
    bad = copy.deepcopy(line); bad["view"]["secret"] = [1]; broken.append(bad)
    bad = copy.deepcopy(line); bad["event"] = "decided"; broken.append(bad)
    for b in broken:
        assert not VALIDATOR.is_valid(b), b


# Every agent family at one table (eight seats of the paper's rules: the shipped networks were
# trained at a paper table) and the tabular policy against epsilon (its abstraction is for
# simplified-2p), with a script that explains itself in each of its forms (tests/explain.rs
# seats it too).
SCRIPT = (ROOT / "tests" / "fixtures" / "explaining.rhai").read_text()


def test_every_familys_traces_validate(tmp_path):
    learning = ROOT / "scenarios" / "learning"
    (tmp_path / "agent.rhai").write_text(SCRIPT)
    scenario = {
        "name": "families", "seed": 7, "output": {"trace": {"every": 1}},
        "stages": [
            {"name": "paper", "rules": {"preset": "paper", "players": 8}, "deals": 3, "agents": [
                {"kind": "aggressive"}, {"kind": "conservative"}, {"kind": "balanced"},
                {"kind": "ismcts", "params": {"iterations": 40}},
                {"kind": "mcts", "params": {"iterations": 40, "determinizations": 2}},
                {"id": "ppo", "kind": "ppo",
                 "params": {"checkpoint": str(learning / "checkpoints/paper/ppo-cards-2p.safetensors")}},
                {"id": "dqn", "kind": "dqn",
                 "params": {"checkpoint": str(learning / "checkpoints/paper/dqn-paper-2p.safetensors")}},
                {"script": "agent.rhai"}]},
            {"name": "tabular", "rules": {"preset": "simplified-2p"}, "games": 2, "agents": [
                {"kind": "tabular", "params": {"policy": str(learning / "tabular/q-learning.csv")}},
                {"kind": "epsilon", "params": {"agent": "balanced", "epsilon": 0.3}}]},
        ],
    }
    path = tmp_path / "families.yaml"
    path.write_text(json.dumps(scenario))
    out = tmp_path / "out"
    dhumbal.run(path, out, report=False)
    explained = set()
    files = sorted(out.glob("*/traces/*.jsonl"))
    assert files
    for f in files:
        for n, line in enumerate(_lines(f), 1):
            errors = sorted(VALIDATOR.iter_errors(line), key=lambda e: e.path)
            assert not errors, f"{f.name}:{n}: {errors[0].message} at {list(errors[0].path)}"
            if line["event"] == "decision" and line["explanation"]:
                explained.add(line["agent"])
    # Every family explained at least one of its decisions.
    assert explained >= {"aggressive", "conservative", "balanced", "ismcts", "mcts", "ppo", "dqn",
                         "tabular", "epsilon"} and any(a.startswith("agent") for a in explained), explained
