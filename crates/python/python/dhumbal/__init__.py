"""Dhumbal (Jhyap in Nepal, Yaniv in Israel) for reinforcement learning and experiments.

- `dhumbal.env(...)`: a PettingZoo AEC environment, one agent per seat.
- `dhumbal.DhumbalEnv(...)`: a Gymnasium environment, one learner seat against opponents
  given as scenario agent entries (built-in kinds, Rhai scripts, trained checkpoints).
- `dhumbal.DhumbalVectorEnv(num_envs, ...)`: many such tables stepped together in Rust.
- `dhumbal.RANDOM_ACTION`: the action that has the Gymnasium environments' tables play a
  uniformly random legal action, drawn in Rust from a seeded stream (`info["action"]` says
  which).
- `dhumbal.run("scenario.yaml")`: a scenario run in this process through the same engine as
  `dhumbal-run`, returning a typed `RunOutcome` (`.records()` as a DataFrame); a stopped or
  refused run raises `Interrupted`, `NotYet` or `BadInput` (all `RunError`s, with `.code`).
  `dhumbal.read(folder)`: a run's records as a DataFrame.

Observations use exactly the encodings of the Rust learning agents (`cards`, the default, and
`paper`), so a policy trained here can be saved as a checkpoint and seated in a tournament.
The engine, agents and encodings are the `dhumbal-run` Rust code (docs/python.md).
"""

from ._native import ACTION_SLOTS, RANDOM_ACTION, agent_kinds, validate
from .aec import DhumbalAEC, env, raw_env
from .checkpoint import Policy, load_checkpoint, save_checkpoint
from .gym import DhumbalEnv, DhumbalVectorEnv
from .runs import BadInput, Interrupted, NotYet, RunError, RunOutcome, read, run

__all__ = [
    "ACTION_SLOTS",
    "DhumbalAEC",
    "DhumbalEnv",
    "DhumbalVectorEnv",
    "Policy",
    "RANDOM_ACTION",
    "BadInput",
    "Interrupted",
    "NotYet",
    "RunError",
    "RunOutcome",
    "agent_kinds",
    "env",
    "load_checkpoint",
    "raw_env",
    "read",
    "run",
    "save_checkpoint",
    "validate",
]
