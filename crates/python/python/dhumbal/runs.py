"""Scenario runs from Python: `run` plays a scenario file as `dhumbal-run` does (in this
process), `read` loads a run's per-round records as a DataFrame."""

from __future__ import annotations

import glob
import os
import tempfile
from typing import Any, Sequence

from . import _native

__all__ = ["run", "read", "RunError"]


class RunError(RuntimeError):
    """`dhumbal-run` stopped: bad input (exit code 2, the message on stderr names the file,
    line and field), an interruption (130) or a failure (1)."""

    def __init__(self, code: int, args: Sequence[str]) -> None:
        what = {2: "bad input", 130: "interrupted"}.get(code, "failed")
        super().__init__(f"dhumbal-run {' '.join(args)}: {what} (exit code {code}); its messages are on stderr")
        self.code = code


def run(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    threads: int | None = None,
    force: bool = False,
    resume: bool = False,
    extra: Sequence[str] = (),
    frame: str = "polars",
) -> Any:
    """Runs a scenario file exactly as `dhumbal-run SCENARIO --out OUT` does (records, report
    and figures written under `out`; a fresh temporary folder when `out` is None) and returns
    its per-round records (see `read`). Progress and messages go to the process's stderr.

    `seed` overrides the scenario's seed, `threads` the number of worker threads, `force`
    replaces an existing output folder, `resume` finishes an interrupted run; `extra` passes
    any other `dhumbal-run` option. A network the scenario must train first is trained by the
    trainer executable `dhumbal-train` (built by scripts/run.sh beside dhumbal-run), found
    through the environment variable DHUMBAL_TRAIN or on PATH; this package links no libtorch.
    """
    if out is None:
        out = tempfile.mkdtemp(prefix="dhumbal-run-")
        force = True
    args = [os.fspath(scenario), "--out", os.fspath(out)]
    if seed is not None:
        args += ["--seed", str(int(seed))]
    if threads is not None:
        args += ["--threads", str(int(threads))]
    if force:
        args.append("--force")
    if resume:
        args.append("--resume")
    args += [str(a) for a in extra]
    code = _native.cli(args)
    if code != 0:
        raise RunError(code, args)
    return read(out, frame=frame)


def read(out: str | os.PathLike[str], frame: str = "polars") -> Any:
    """The per-round records of a run folder (every stage's `rounds/*.parquet`; one row per
    seat per round, columns as docs/records.md describes them) as a polars DataFrame, or a
    pandas one with `frame="pandas"`."""
    root = os.fspath(out)
    files = sorted(
        glob.glob(os.path.join(root, "rounds", "*.parquet"))
        + glob.glob(os.path.join(root, "*", "rounds", "*.parquet"))
    )
    if not files:
        raise FileNotFoundError(f"no records under {root} (expected rounds/*.parquet or <stage>/rounds/*.parquet)")
    if frame == "polars":
        import polars as pl

        frames = [pl.read_parquet(f) for f in files]
        # A stage's records type names (agents, kinds) as an enum of that stage's own values;
        # stages seating other agents have other enums, which do not concatenate: such columns
        # become strings.
        mixed = {c for c in frames[0].columns if len({str(f.schema.get(c)) for f in frames}) > 1}
        frames = [f.with_columns([pl.col(c).cast(pl.String) for c in mixed if c in f.columns]) for f in frames]
        return pl.concat(frames, how="vertical_relaxed")
    if frame == "pandas":
        import pandas as pd

        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    raise ValueError(f"frame: expected 'polars' or 'pandas', got {frame!r}")
