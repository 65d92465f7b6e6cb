"""PPO with action masking (CleanRL style) on `dhumbal.DhumbalVectorEnv`, then the trained
policy saved as a dhumbal-run checkpoint and seated in a scenario.

    .venv/bin/python examples/python/ppo_masked.py --steps 200000 --out /tmp/ppo

trains against `random` (docs/python.md), prints the evaluation win rate before and after,
writes /tmp/ppo/policy.safetensors and /tmp/ppo/vs-random.yaml, and runs that scenario with
`dhumbal.run`, which seats the checkpoint as `kind: ppo`.

The policy reads the `paper` encoding (117 features in, one logit per action slot out, the
illegal slots masked): the network `ppo` agents of dhumbal-run play.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np
import torch
from torch import nn

import dhumbal


def mlp(inputs: int, hidden: int, outputs: int, out_std: float) -> nn.Sequential:
    net = nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, outputs))
    for m in net:
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, np.sqrt(2) if m is not net[-1] else out_std)
            nn.init.zeros_(m.bias)
    return net


class Agent(nn.Module):
    def __init__(self, obs_dim: int, actions: int, hidden: int = 128) -> None:
        super().__init__()
        self.policy = mlp(obs_dim, hidden, actions, 0.01)
        self.value = mlp(obs_dim, hidden, 1, 1.0)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.policy(obs).masked_fill(~mask, -1e9)

    def act(self, obs, mask, action=None):
        dist = torch.distributions.Categorical(logits=self.logits(obs, mask))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs).squeeze(-1)


# The paper's rules at two players, one round per episode; reward: coins won or lost / 10.
ENV = dict(rules="paper", players=2, encoding="paper", reward="score", reward_scale=10.0)


def evaluate(agent: Agent, games: int = 400, seed: int = 10_000) -> float:
    """Share of `games` rounds won by the greedy policy against `random` (seats rotate)."""
    env = dhumbal.DhumbalVectorEnv(games, opponents=["random"], **ENV)
    obs, _ = env.reset(seed=seed)
    won = np.full(games, -1)
    seat = np.zeros(games, np.int64)
    while (won < 0).any():
        with torch.no_grad():
            logits = agent.logits(torch.from_numpy(obs["observation"]), torch.from_numpy(obs["action_mask"]).bool())
        _, _, term, _, info = env.step(logits.argmax(-1).numpy())
        for i in np.flatnonzero(term & (won < 0)):
            won[i] = int(info["winner"][i] == info["seat"][i])
    return float(won.mean())


def train(steps: int = 200_000, seed: int = 1, num_envs: int = 64, num_steps: int = 64, log=print) -> Agent:
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = dhumbal.DhumbalVectorEnv(num_envs, opponents=["random"], **ENV)
    obs_dim = env.single_observation_space["observation"].shape[0]
    agent = Agent(obs_dim, dhumbal.ACTION_SLOTS)
    opt = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, 4, 4
    B = num_envs * num_steps
    o_buf = torch.zeros(num_steps, num_envs, obs_dim)
    m_buf = torch.zeros(num_steps, num_envs, dhumbal.ACTION_SLOTS, dtype=torch.bool)
    a_buf = torch.zeros(num_steps, num_envs, dtype=torch.long)
    lp_buf, r_buf, d_buf, v_buf = (torch.zeros(num_steps, num_envs) for _ in range(4))
    obs, _ = env.reset(seed=seed)
    next_obs = torch.from_numpy(obs["observation"].copy())
    next_mask = torch.from_numpy(obs["action_mask"]).bool()
    next_done = torch.zeros(num_envs)
    done_games, won_games = 0, 0
    for update in range(steps // B):
        for t in range(num_steps):
            o_buf[t], m_buf[t], d_buf[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                a, lp, _, v = agent.act(next_obs, next_mask)
            a_buf[t], lp_buf[t], v_buf[t] = a, lp, v
            obs, r, term, trunc, info = env.step(a.numpy())
            r_buf[t] = torch.from_numpy(r).float()
            next_obs = torch.from_numpy(obs["observation"].copy())
            next_mask = torch.from_numpy(obs["action_mask"]).bool()
            next_done = torch.from_numpy(term | trunc).float()
            if term.any():
                done_games += int(term.sum())
                won_games += int((info["winner"][term] == info["seat"][term]).sum())
        with torch.no_grad():
            next_v = agent.value(next_obs).squeeze(-1)
            adv = torch.zeros_like(r_buf)
            last = 0
            for t in reversed(range(num_steps)):
                nonterminal = 1.0 - (next_done if t == num_steps - 1 else d_buf[t + 1])
                nv = next_v if t == num_steps - 1 else v_buf[t + 1]
                delta = r_buf[t] + gamma * nv * nonterminal - v_buf[t]
                adv[t] = last = delta + gamma * lam * nonterminal * last
            ret = adv + v_buf
        b_o, b_m, b_a = o_buf.reshape(B, -1), m_buf.reshape(B, -1), a_buf.reshape(B)
        b_lp, b_adv, b_ret = lp_buf.reshape(B), adv.reshape(B), ret.reshape(B)
        idx = np.arange(B)
        for _ in range(epochs):
            np.random.default_rng(update).shuffle(idx)
            for mb in np.array_split(idx, minibatches):
                _, lp, ent, v = agent.act(b_o[mb], b_m[mb], b_a[mb])
                ratio = (lp - b_lp[mb]).exp()
                a_ = b_adv[mb]
                a_ = (a_ - a_.mean()) / (a_.std() + 1e-8)
                pg = torch.max(-a_ * ratio, -a_ * ratio.clamp(1 - clip, 1 + clip)).mean()
                loss = pg + 0.5 * ((v - b_ret[mb]) ** 2).mean() - 0.01 * ent.mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        if log and (update + 1) % 10 == 0:
            rate = won_games / max(done_games, 1)
            log(f"update {update + 1}: {(update + 1) * B} steps, training games won {rate:.1%} of {done_games}")
            done_games = won_games = 0
    return agent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="ppo-out")
    args = p.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Seeded before the network is built, as `train` seeds before building its own: the
    # untrained policy is the one training starts from, the same at every run.
    torch.manual_seed(args.seed)
    untrained = Agent(117, dhumbal.ACTION_SLOTS)
    print(f"before training: greedy policy wins {evaluate(untrained):.1%} of 400 rounds against random")
    t = time.perf_counter()
    agent = train(args.steps, args.seed)
    print(f"trained {args.steps} steps in {time.perf_counter() - t:.1f} s")
    print(f"after training: greedy policy wins {evaluate(agent):.1%} of 400 rounds against random")
    ckpt = out / "policy.safetensors"
    dhumbal.save_checkpoint(ckpt, agent.policy, algorithm="ppo", encoding="paper", rules=ENV["rules"], note="examples/python/ppo_masked.py")
    scenario = out / "vs-random.yaml"
    scenario.write_text(json.dumps({
        "name": "python-ppo-vs-random",
        "seed": 7,
        "seating": "rotate",
        "rules": {"preset": ENV["rules"], "players": ENV["players"]},
        "deals": 1000,
        "agents": [{"id": "python-ppo", "kind": "ppo", "params": {"checkpoint": "policy.safetensors"}}, {"kind": "random"}],
    }, indent=2))
    records = dhumbal.run(scenario, out / "run", force=True).records()
    import polars as pl

    print(records.group_by("agent").agg(rounds=pl.len(), won=pl.col("won").mean()).sort("agent"))
    print(f"scenario {scenario}: report in {out / 'run' / 'report.md'}")


if __name__ == "__main__":
    main()
