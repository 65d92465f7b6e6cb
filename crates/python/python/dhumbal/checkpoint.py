"""Checkpoints shared with dhumbal-run: a network trained in Python, saved so that a scenario
seats it (`kind: ppo` / `dqn` / `ddqn`, `params: {checkpoint: ...}`), and dhumbal-run's
trained networks read back as NumPy arrays."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Sequence

import numpy as np

from . import _native

__all__ = ["Policy", "save_checkpoint", "load_checkpoint"]


def _layers(network: Any) -> list[tuple[list[int], list[float], list[float]]]:
    # A torch.nn.Sequential of Linear and ReLU layers, or (weight, bias) pairs.
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    modules = getattr(network, "children", None)
    if callable(modules):
        for m in network.children():
            kind = type(m).__name__
            if kind == "Linear":
                pairs.append((m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()))
            elif kind != "ReLU":
                raise ValueError(f"network: only Linear and ReLU layers can be saved (dhumbal-run's networks), found {kind}")
    else:
        for w, b in network:
            pairs.append((np.asarray(w), np.asarray(b)))
    out = []
    for w, b in pairs:
        w = np.ascontiguousarray(w, dtype=np.float32)
        b = np.ascontiguousarray(b, dtype=np.float32)
        out.append((list(w.shape), w.ravel().tolist(), b.ravel().tolist()))
    return out


def save_checkpoint(
    path: str | os.PathLike[str],
    network: Any,
    *,
    algorithm: str = "ppo",
    encoding: str = "cards",
    rules: str | Mapping[str, Any] = "paper",
    note: str = "",
) -> None:
    """Saves the acting network of a policy trained in Python as a dhumbal-run checkpoint.

    `network`: a `torch.nn.Sequential` of `Linear` and `ReLU` layers, or a list of (weight
    `[outputs, inputs]`, bias) arrays with ReLU between them. Its input and output widths are
    the encoding's: `paper`, the 117-wide observation in and one score per action slot (128)
    out; `cards`, the observation (250) followed by one action's feature row (64) in, one
    score out. The seated agent plays the legal action of highest score (`greedy: false`:
    samples their softmax). `algorithm` names the kind that seats it (`ppo`, `dqn`, `ddqn`),
    `rules` the rules it was trained under (a table of other rules refuses it).
    """
    spec = {"preset": rules} if isinstance(rules, str) else dict(rules)
    _native.save_checkpoint(os.fspath(path), algorithm, encoding, json.dumps(spec), _layers(network), note)


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A checkpoint's metadata and tensors (`q.0.weight`, `policy.1.bias`, ...) as arrays."""
    meta, tensors = _native.load_checkpoint(os.fspath(path))
    return json.loads(meta), {
        name: np.asarray(values, np.float32).reshape(shape) for name, shape, values in tensors
    }


class Policy:
    """A dhumbal-run network read from a checkpoint and evaluated in NumPy on this package's
    observations: what the `dqn`, `ddqn` or `ppo` agent of that checkpoint plays (greedy).

        policy = dhumbal.Policy("scenarios/learning/checkpoints/jhyap/ppo-cards-2p.safetensors")
        action = policy.act(obs)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.meta, tensors = load_checkpoint(path)
        self.algorithm = self.meta["algorithm"]
        self.encoding = self.meta["encoding"]
        net = "policy" if self.algorithm == "ppo" else "q"
        self.layers: list[tuple[np.ndarray, np.ndarray]] = []
        while f"{net}.{len(self.layers)}.weight" in tensors:
            k = len(self.layers)
            self.layers.append((tensors[f"{net}.{k}.weight"], tensors[f"{net}.{k}.bias"]))
        if not self.layers:
            raise ValueError(f"{os.fspath(path)}: no network `{net}` in the checkpoint")

    def _forward(self, x: np.ndarray) -> np.ndarray:
        for k, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if k + 1 < len(self.layers):
                x = np.maximum(x, 0)
        return x

    def scores(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        """One score per action slot; minus infinity where the mask is 0."""
        mask = np.asarray(obs["action_mask"]).astype(bool)
        s = np.full(mask.shape, -np.inf, np.float32)
        if self.encoding == "paper":
            out = self._forward(np.asarray(obs["observation"], np.float32)[None, :])[0]
            s[mask] = out[mask]
        else:
            n = int(mask.sum())
            state = np.asarray(obs["observation"], np.float32)
            rows = np.concatenate([np.repeat(state[None, :], n, 0), np.asarray(obs["action_features"])[:n]], axis=1)
            s[:n] = self._forward(rows)[:, 0]
        return s

    def act(self, obs: Mapping[str, np.ndarray]) -> int:
        """The legal action of highest score (ties: the first), as the Rust agent plays."""
        return int(np.argmax(self.scores(obs)))
