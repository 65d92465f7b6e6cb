"""Environment steps per second from Python (docs/python.md).

    .venv/bin/python scripts/bench-python.py [--seconds 5] [--runs 1] [--threads N]
        [--policy first,random,random-n,native] [--only TEXT]

`--runs`: measurements per row; `--threads`: the vector environment's `threads` (default: its
own default); `--policy`: the policies measured; `--only`: just the rows whose description
(environment and encoding) contains every given text, e.g. `--only "vector, 1,024 tables, 1 vs
3" --only cards`.

A step is one call that plays one decision of a Python player: `env.step(a)` of the AEC
environment (every seat is a Python player, so every decision is a step), of the Gymnasium
environment (the learner's decisions; the opponents' turns happen inside), or one decision of
each of the vector environment's tables (a `step` of 1,024 tables counts 1,024). Actions: the
first legal action (`first`) or a uniformly random legal one drawn in NumPy, which costs
Python time too: `random` draws over the mask (`rng.choice` of the marked slots; for a vector,
the largest masked uniform draw of each row), `random-n` draws an index below the number of
marked slots (the legal actions fill the first slots), the same distribution at less cost;
`native`: the same distribution drawn by the environment itself, in Rust, on the threads that
step the tables (the action `dhumbal.RANDOM_ACTION`; the Gymnasium environments only, so the
AEC rows skip it).

Each row: steps per second, and the process's CPU time per step (every thread's, in
microseconds), which says how much of the machine a measurement had.
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Callable

import numpy as np

import dhumbal


def aec(make, seconds, policy):
    env = make()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    n, t, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t < seconds:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                a = None
            elif policy == "first":
                a = 0
            elif policy == "random":
                a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            else:
                a = int(rng.integers(obs["action_mask"].sum()))
            env.step(a)
            n += 1
        env.reset()
    return n, time.perf_counter() - t, time.process_time() - cpu


def single(kw, seconds, policy):
    env = dhumbal.DhumbalEnv(**kw)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    n, t, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t < seconds:
        if policy == "first":
            a = 0
        elif policy == "native":
            a = dhumbal.RANDOM_ACTION
        elif policy == "random":
            a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        else:
            a = int(rng.integers(obs["action_mask"].sum()))
        obs, _, done, _, _ = env.step(a)
        n += 1
        if done:
            obs, _ = env.reset()
    return n, time.perf_counter() - t, time.process_time() - cpu


def vector(kw, seconds, policy, batch=1024, threads=None):
    if threads is not None:
        kw = dict(kw, threads=threads)
    env = dhumbal.DhumbalVectorEnv(batch, **kw)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    first = np.zeros(batch, np.int64)
    native = np.full(batch, dhumbal.RANDOM_ACTION, np.int64) if policy == "native" else None
    n, t, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t < seconds:
        if policy == "first":
            a = first
        elif policy == "native":
            # Drawn by each table, in Rust, from its learner's own seeded stream.
            a = native
        elif policy == "random":
            # A uniform legal action per table: the largest masked uniform draw.
            a = (rng.random(obs["action_mask"].shape, np.float32) * obs["action_mask"]).argmax(1)
        else:
            # The same distribution: an index below each table's number of legal actions.
            a = (rng.random(batch) * obs["action_mask"].sum(1)).astype(np.int64)
        obs, *_ = env.step(a)
        n += batch
    return n, time.perf_counter() - t, time.process_time() - cpu


def measure(f: Callable[[], tuple[int, float, float]]) -> tuple[float, float]:
    """Steps per second, and the process's CPU time per step in microseconds (both over the
    stepping alone, not the environment's construction)."""
    n, wall, cpu = f()
    return n / wall, cpu / n * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--runs", type=int, default=1, help="measurements per row")
    p.add_argument("--threads", type=int, default=None, help="the vector environment's threads")
    p.add_argument("--policy", default="first,random,random-n,native", help="policies, comma-separated")
    p.add_argument("--only", action="append", default=[], help="rows whose description has this text")
    args = p.parse_args()
    s = args.seconds
    th = args.threads
    print(f"python {platform.python_version()}, numpy {np.__version__}, {s:g} s per measurement, dhumbal from {dhumbal.__file__}")
    print(f"{'environment':<44} {'encoding':<8} {'policy':<8} {'steps/s':>12} {'CPU µs/step':>12}")
    for enc in ["paper", "cards"]:
        for policy in args.policy.split(","):
            rows = [
                ("AEC dhumbal.env, paper rules, 4 seats", lambda: aec(lambda: dhumbal.env(rules="paper", players=4, encoding=enc), s, policy)),
                ("AEC dhumbal.raw_env, paper rules, 4 seats", lambda: aec(lambda: dhumbal.raw_env(rules="paper", players=4, encoding=enc), s, policy)),
                ("Gymnasium DhumbalEnv, 1 vs 3 random", lambda: single(dict(rules="paper", players=4, encoding=enc), s, policy)),
                ("vector, 1,024 tables, 1 vs 3 random", lambda: vector(dict(rules="paper", players=4, encoding=enc), s, policy, threads=th)),
                ("vector, 1,024 tables, 1 vs 1 random", lambda: vector(dict(rules="paper", players=2, encoding=enc), s, policy, threads=th)),
            ]
            for name, f in rows:
                if not all(o in f"{name} {enc}" for o in args.only):
                    continue
                if policy == "native" and name.startswith("AEC"):
                    continue
                for _ in range(args.runs):
                    rate, cpu = measure(f)
                    print(f"{name:<44} {enc:<8} {policy:<8} {rate:>12,.0f} {cpu:>12.3f}", flush=True)


if __name__ == "__main__":
    main()
