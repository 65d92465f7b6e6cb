"""Gymnasium environments: one learner seat against opponents given as scenario agent entries,
one table (`DhumbalEnv`) or many stepped together in Rust (`DhumbalVectorEnv`)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from ._common import ACTION_SLOTS, RANDOM_ACTION, Buffers, make_tables, observation_space, render_text, reset_seed

__all__ = ["DhumbalEnv", "DhumbalVectorEnv"]

_DOC_ARGS = """
    Arguments: `rules` (a preset name or a mapping as a scenario's `rules:` section),
    `players`, `opponents` (agent entries, one per other seat, exactly as a scenario writes
    them: `"aggressive"`, `{"kind": "ismcts", "params": {"iterations": 200}}`,
    `{"script": "my_agent.rhai"}`, `{"kind": "ppo", "params": {"checkpoint": "x.safetensors"}}`;
    default: `random` in every other seat), `seat` (`rotate`: game g of the seed in seat g mod players;
    `reset(seed=s)` starts game 0 of s, table i of a vector game i, and each later game, or
    reset without a seed, is the next one; `random`; or a seat number), `encoding` (`cards` or `paper`), `reward` (`score` or `win`),
    `reward_scale`, `game_reward` (points games: the learner gets it for winning the game,
    minus its share for losing), `rounds` (coin games: rounds per episode), `base` (folder
    that relative paths in opponents start from; default: the working folder),
    `invalid_action` (`raise`, the default: an action the mask does not mark raises
    `ValueError`; `penalize`: it is replaced by legal action `action mod legal` and the step's
    reward lowered by `invalid_penalty`, for tools that sample unmasked actions, such as
    Gymnasium's environment checker).

    The action `dhumbal.RANDOM_ACTION` (-2) plays a uniformly random legal action, drawn in
    Rust by the table from the learner seat's own seeded stream (reproducible: a function of
    the seed, the game and the actions before it, whatever the thread or table count);
    `info["action"]` says which index each step played.
"""


_SETTINGS = ("rules", "players", "seat", "encoding", "reward", "reward_scale", "game_reward", "rounds", "base")


def _setup(env: Any, n: int, args: dict[str, Any], threads: int | None = None) -> None:
    """The native tables, buffers and invalid-action handling of either environment, from
    its constructor's arguments."""
    if args["invalid_action"] not in ("raise", "penalize"):
        raise ValueError(f"invalid_action: expected 'raise' or 'penalize', got {args['invalid_action']!r}")
    env._invalid = args["invalid_action"] == "penalize"
    env._penalty = float(args["invalid_penalty"])
    kw = {k: args[k] for k in _SETTINGS}
    opponents = args["opponents"]
    if opponents is None:
        # `random` in every other seat: the table's size comes from the rules.
        probe = make_tables(1, opponents=None, **kw)
        opponents = ["random"] * (probe.players - 1)
    env._tables = make_tables(n, opponents=opponents, threads=threads, **kw)
    env._seeded = False
    env._buf = Buffers(env._tables)


class DhumbalEnv(gym.Env):
    __doc__ = (
        """One learner seat at a Dhumbal table, the other seats played natively.

    Observations are dicts (`observation`, `action_mask`, and for `cards` `action_features`);
    an action is an index into the decision's legal actions (those `action_mask` marks). The
    reward of a step is what the learner's seat got since its previous decision (round ends,
    and the game's end). `info` has the learner's `seat` and, at the end, the game's
    `winner` seat.
    """
        + _DOC_ARGS
    )

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        rules: str | Mapping[str, Any] | None = "paper",
        players: int | None = None,
        opponents: Sequence[Any] | None = None,
        seat: str | int = "rotate",
        encoding: str = "cards",
        reward: str = "score",
        reward_scale: float = 1.0,
        game_reward: float = 1.0,
        rounds: int = 1,
        render_mode: str | None = None,
        base: str | os.PathLike[str] | None = None,
        invalid_action: str = "raise",
        invalid_penalty: float = 1.0,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected one of {self.metadata['render_modes']}, got {render_mode!r}")
        _setup(self, 1, locals())
        self.observation_space = observation_space(self._tables)
        self.action_space = spaces.Discrete(ACTION_SLOTS)
        self.render_mode = render_mode
        if render_mode is not None:
            self._tables.set_render(True)
        self._seat = 0
        self._obs: dict[str, np.ndarray] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        # A seed starts game 0 of it; no seed goes on to the next game of the last one.
        self._tables.reset(reset_seed(seed, self._seeded))
        self._seeded = True
        self._seat = int(self._buf.seat[0])
        self._obs = self._buf.observation(0)
        if self.render_mode == "human":
            self.render()
        return self._obs, {"seat": self._seat}

    def step(self, action: int):
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        action = int(action)
        penalty = 0.0
        if action == RANDOM_ACTION:
            pass
        elif self._invalid and not (0 <= action < ACTION_SLOTS and self._obs["action_mask"][action]):
            action %= int(self._obs["action_mask"].sum())
            penalty = self._penalty
        elif action < 0:
            # -1 tells the native tables to leave a table as it is: never an action of ours.
            raise ValueError(f"action {action} is not legal (actions are slot indices from 0, those the mask marks)")
        self._tables.step_one(action, False)
        reward = float(self._buf.rewards[0, self._seat]) - penalty
        info: dict[str, Any] = {"seat": self._seat, "action": int(self._buf.action[0])}
        if self.render_mode == "human":
            self.render()
        if self._buf.done[0]:
            info["winner"] = int(self._buf.winner[0])
            obs = self._obs
            self._obs = None
            return obs, reward, True, False, info
        self._obs = self._buf.observation(0)
        return self._obs, reward, False, False, info

    def action_masks(self) -> np.ndarray:
        """The legal-action mask as booleans (sb3-contrib's MaskablePPO asks for this)."""
        if self._obs is None:
            return np.zeros(ACTION_SLOTS, np.bool_)
        return self._obs["action_mask"].astype(np.bool_)

    def legal_actions(self) -> list[str]:
        """The pending decision's legal actions, in slot order, for people."""
        return self._tables.describe(0)

    def render(self) -> str | None:
        """The table as the learner sees it at its pending decision (its hand, the other
        hands face down with the cards they took from the pile, the pile, the stock, the
        standings) and its legal actions by index, drawn as `dhumbal-run show` draws a trace;
        after the game, the winner and the standings. `ansi` returns the text (no colour
        codes), `human` prints it (in colour on a terminal, unless NO_COLOR is set)."""
        return render_text(self._tables, self.render_mode)


class DhumbalVectorEnv(gym.vector.VectorEnv):
    __doc__ = (
        """`num_envs` tables, each with one learner seat, stepped together in Rust: one call
    steps every table to its learner's next decision.

    Observations come as the environment's own arrays, shape (num_envs, ...): no copy is
    made, and the next `step` overwrites them (copy what you keep). A table whose game ended
    starts its next game in the same step (`autoreset_mode` SAME_STEP): the step's reward,
    `terminations` and `infos["winner"]` belong to the game that ended, the observation to
    the next game's first decision. Table i plays games i, i + num_envs, i + 2 num_envs, ...
    of the seed, so a seed fixes every game.

    `threads`: how many threads step the tables, each a contiguous share of them (default:
    one per 128 tables, at most the cores this process may use; `num_threads` says how many).
    Every thread count plays the same games and returns the same arrays. `reset` and `step`
    release the GIL while the tables play (other Python threads run meanwhile; the arrays they
    return are the environment's own, written by the next call: no other thread may read or
    write them until it returns, so copy what another thread keeps). `infos["action"]` is the index each table
    played (the drawn one for `dhumbal.RANDOM_ACTION`).
    """
        + _DOC_ARGS
    )

    metadata = {"render_modes": [], "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 64,
        rules: str | Mapping[str, Any] | None = "paper",
        players: int | None = None,
        opponents: Sequence[Any] | None = None,
        seat: str | int = "rotate",
        encoding: str = "cards",
        reward: str = "score",
        reward_scale: float = 1.0,
        game_reward: float = 1.0,
        rounds: int = 1,
        base: str | os.PathLike[str] | None = None,
        invalid_action: str = "raise",
        invalid_penalty: float = 1.0,
        threads: int | None = None,
    ) -> None:
        self.num_envs = int(num_envs)
        _setup(self, self.num_envs, locals(), threads)
        self.single_observation_space = observation_space(self._tables)
        self.single_action_space = spaces.Discrete(ACTION_SLOTS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rows = np.arange(self.num_envs)
        self._seat = np.zeros(self.num_envs, np.int64)
        self._started = False

    @property
    def num_threads(self) -> int:
        """The threads that step the tables (the calling one included)."""
        return self._tables.threads

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._tables.reset(reset_seed(seed, self._seeded))
        self._seeded = True
        self._seat[:] = self._buf.seat
        self._started = True
        return self._buf.batch(), {"seat": self._seat.copy()}

    def step(self, actions: np.ndarray):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions: expected shape ({self.num_envs},), got {actions.shape}")
        penalty = None
        if self._invalid:
            legal = self._buf.mask.sum(axis=1)
            inside = (actions >= 0) & (actions < ACTION_SLOTS)
            ok = inside & (self._buf.mask[self._rows, np.clip(actions, 0, ACTION_SLOTS - 1)] == 1)
            ok |= actions == RANDOM_ACTION
            if not ok.all():
                actions = np.where(ok, actions, np.mod(actions, legal))
                penalty = np.where(ok, 0.0, self._penalty)
        else:
            negative = actions < 0
            if negative.any():
                negative &= actions != RANDOM_ACTION
                if negative.any():
                    i = int(np.flatnonzero(negative)[0])
                    raise ValueError(f"table {i}: action {int(actions[i])} is not legal (actions are slot indices from 0)")
        self._tables.step(actions, True)
        rewards = self._buf.rewards[self._rows, self._seat]
        if penalty is not None:
            rewards = rewards - penalty
        terminated = self._buf.done.copy()
        infos: dict[str, Any] = {"seat": self._seat.copy(), "action": self._buf.action.copy()}
        if terminated.any():
            infos["winner"] = np.where(terminated, self._buf.winner, -1)
        self._seat[:] = self._buf.seat
        return self._buf.batch(), rewards, terminated, np.zeros_like(terminated), infos

    def action_masks(self) -> np.ndarray:
        """Every table's legal-action mask as booleans."""
        return self._buf.mask.astype(np.bool_)
