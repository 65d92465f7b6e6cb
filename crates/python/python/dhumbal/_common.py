"""What the environments share: the configuration sent to the native tables, the output
buffers they write into, and the observation spaces."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces

from ._native import ACTION_SLOTS, RANDOM_ACTION, Tables

__all__ = ["ACTION_SLOTS", "RANDOM_ACTION", "Buffers", "make_tables", "observation_space", "render_text", "reset_seed"]


def _rules(rules: str | Mapping[str, Any] | None, players: int | None) -> Any:
    if rules is None:
        spec: dict[str, Any] = {}
    elif isinstance(rules, str):
        spec = {"preset": rules}
    elif isinstance(rules, Mapping):
        spec = dict(rules)
    else:
        raise TypeError(f"rules: expected a preset name or a mapping, got {type(rules).__name__}")
    if players is not None:
        spec["players"] = int(players)
    return spec


def make_tables(
    n: int,
    *,
    rules: str | Mapping[str, Any] | None,
    players: int | None,
    opponents: Sequence[Any] | None,
    seat: str | int,
    encoding: str,
    reward: str,
    reward_scale: float,
    game_reward: float,
    rounds: int,
    base: str | os.PathLike[str] | None,
    threads: int | None = None,
) -> Tables:
    """Native tables for this configuration; `ValueError` names the bad setting. `threads`:
    how many threads step them (None: the native default)."""
    config = {
        "rules": _rules(rules, players),
        "opponents": list(opponents) if opponents is not None else [],
        "seat": seat,
        "encoding": encoding,
        "reward": reward,
        "reward_scale": reward_scale,
        "game_reward": game_reward,
        "rounds": rounds,
    }
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise ValueError(f"threads: expected a whole number from 1 (or None for the default), got {threads!r}")
    return Tables(
        json.dumps(config), os.fspath(base) if base is not None else os.getcwd(), n, None if threads is None else int(threads)
    )


def observation_space(tables: Tables) -> spaces.Dict:
    """One decision's observation: the state vector, the legal-action mask (the first legal
    actions' slots are 1), and for the `cards` encoding each legal action's feature row."""
    parts: dict[str, spaces.Space[Any]] = {
        "observation": spaces.Box(-np.inf, np.inf, (tables.state_dim,), np.float32),
    }
    if tables.action_dim:
        parts["action_features"] = spaces.Box(
            -np.inf, np.inf, (ACTION_SLOTS, tables.action_dim), np.float32
        )
    parts["action_mask"] = spaces.Box(0, 1, (ACTION_SLOTS,), np.int8)
    return spaces.Dict(parts)


class Buffers:
    """The arrays the native tables write into: allocated once, overwritten by every step."""

    def __init__(self, tables: Tables) -> None:
        n = tables.num_tables
        self.obs = np.zeros((n, tables.state_dim), np.float32)
        self.features = np.zeros((n, ACTION_SLOTS, max(tables.action_dim, 1)), np.float32)
        self.mask = np.zeros((n, ACTION_SLOTS), np.int8)
        self.seat = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, tables.players), np.float64)
        self.done = np.zeros(n, np.bool_)
        self.winner = np.full(n, -1, np.int64)
        # The index of the legal action each table played at the last step (-1: none).
        self.action = np.full(n, -1, np.int64)
        self.has_features = tables.action_dim > 0
        tables.bind(self.obs, self.features, self.mask, self.seat, self.rewards, self.done, self.winner, self.action)

    def observation(self, i: int, copy: bool = True) -> dict[str, np.ndarray]:
        """Table `i`'s pending decision as an observation dict (copied unless asked not to)."""
        take = (lambda a: a.copy()) if copy else (lambda a: a)
        out = {"observation": take(self.obs[i])}
        if self.has_features:
            out["action_features"] = take(self.features[i])
        out["action_mask"] = take(self.mask[i])
        return out

    def batch(self) -> dict[str, np.ndarray]:
        """Every table's pending decision (the buffers themselves, not copies)."""
        out = {"observation": self.obs}
        if self.has_features:
            out["action_features"] = self.features
        out["action_mask"] = self.mask
        return out


def reset_seed(seed: int | None, seeded: bool) -> int | None:
    """The seed to reset the native tables with: `seed`; or None (go on to the next games of
    the last seed) when there was one; or, at a first reset without a seed, a fresh one from
    the operating system."""
    if seed is None:
        return None if seeded else int(np.random.SeedSequence().entropy % (1 << 63))
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected a whole number from 0, got {seed!r}")
    return int(seed) % (1 << 64)


def render_text(tables: Tables, mode: str | None) -> str | None:
    """`render()` of an environment on table 0: the text of `dhumbal-run show`'s renderer,
    returned for `ansi` (plain, no escape codes), printed for `human` (in colour when stdout is
    a terminal and NO_COLOR is not set), nothing without a render mode."""
    if mode is None:
        return None
    if mode == "human":
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(tables.render(0, colour), flush=True)
        return None
    return tables.render(0, False)
