"""Environment steps per second from Python (docs/python.md).

    .venv/bin/python scripts/bench-python.py [--seconds 5]

A step is one call that plays one decision of a Python player: `env.step(a)` of the AEC
environment (every seat is a Python player, so every decision is a step), of the Gymnasium
environment (the learner's decisions; the opponents' turns happen inside), or one decision of
each of the vector environment's tables (a `step` of 1,024 tables counts 1,024). Actions: the
first legal action (`first`) or a uniformly random legal one (`random`, drawn in NumPy, which
costs Python time too).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import dhumbal


def aec(make, seconds, policy):
    env = make()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                a = None
            elif policy == "first":
                a = 0
            else:
                a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(a)
            n += 1
        env.reset()
    return n / (time.perf_counter() - t)


def single(kw, seconds, policy):
    env = dhumbal.DhumbalEnv(**kw)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        a = 0 if policy == "first" else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, done, _, _ = env.step(a)
        n += 1
        if done:
            obs, _ = env.reset()
    return n / (time.perf_counter() - t)


def vector(kw, seconds, policy, batch=1024):
    env = dhumbal.DhumbalVectorEnv(batch, **kw)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    first = np.zeros(batch, np.int64)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        if policy == "first":
            a = first
        else:
            # A uniform legal action per table: the largest masked uniform draw.
            a = (rng.random(obs["action_mask"].shape, np.float32) * obs["action_mask"]).argmax(1)
        obs, *_ = env.step(a)
        n += batch
    return n / (time.perf_counter() - t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args()
    s = args.seconds
    print(f"python {platform.python_version()}, numpy {np.__version__}, {s:g} s per measurement")
    print(f"{'environment':<44} {'encoding':<8} {'policy':<7} {'steps/s':>12}")
    for enc in ["paper", "cards"]:
        for policy in ["first", "random"]:
            rows = [
                ("AEC dhumbal.env, paper rules, 4 seats", lambda: aec(lambda: dhumbal.env(rules="paper", players=4, encoding=enc), s, policy)),
                ("AEC dhumbal.raw_env, paper rules, 4 seats", lambda: aec(lambda: dhumbal.raw_env(rules="paper", players=4, encoding=enc), s, policy)),
                ("Gymnasium DhumbalEnv, 1 vs 3 random", lambda: single(dict(rules="paper", players=4, encoding=enc), s, policy)),
                ("vector, 1,024 tables, 1 vs 3 random", lambda: vector(dict(rules="paper", players=4, encoding=enc), s, policy)),
                ("vector, 1,024 tables, 1 vs 1 random", lambda: vector(dict(rules="paper", players=2, encoding=enc), s, policy)),
            ]
            for name, f in rows:
                print(f"{name:<44} {enc:<8} {policy:<7} {f():>12,.0f}", flush=True)


if __name__ == "__main__":
    main()
