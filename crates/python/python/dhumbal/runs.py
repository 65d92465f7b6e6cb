"""Scenario runs from Python: `run` plays a scenario file through the same experiment
engine as `dhumbal-run` (in this process, the GIL released while it plays) and returns a
typed `RunOutcome`; `read` loads a run's per-round records as a DataFrame."""

from __future__ import annotations

import glob
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import _native

__all__ = ["run", "read", "RunOutcome", "StageOutcome", "TuneOutcome", "RunError", "BadInput", "NotYet", "Interrupted"]


class RunError(RuntimeError):
    """A run did not finish: `code` is the exit code `dhumbal-run` gives for the same error
    (1 a failure; the subclasses below for the others), `message` what it says."""

    code: int = 1

    def __init__(self, message: str, scenario: str = "") -> None:
        super().__init__(f"{scenario}: {message}" if scenario else message)
        self.message = message


class BadInput(RunError, ValueError):
    """Bad input (exit code 2): a scenario's problems, each with its file, line and field, or
    an output folder holding another run's results (`force=True` replaces them)."""

    code = 2


class NotYet(RunError):
    """Not yet (exit code 3): a stage seats the winner of a stage whose records are not
    complete. What was played is kept; the same call succeeds once that stage is complete."""

    code = 3


class Interrupted(RunError):
    """Stopped by Ctrl-C (exit code 130): everything finished is on disk, and
    `run(..., resume=True)` finishes it to exactly the records of an uninterrupted run."""

    code = 130


_ERRORS = {2: BadInput, 3: NotYet, 130: Interrupted}


@dataclass(frozen=True)
class StageOutcome:
    """A stage finished (complete on disk)."""

    name: str
    dir: str
    agents: list[str]
    winner: str
    decided_by: str
    rounds: int
    seconds: float
    restored: bool


@dataclass(frozen=True)
class TuneOutcome:
    """A `tune:` entry searched or confirmed by the run."""

    id: str
    output: str
    best: str | None
    dir: str


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: the output folder, the `train:` entries trained, the `tune:` entries
    tuned, and the stages played (every one of the scenario's, in order)."""

    name: str
    dir: str
    trained: list[str] = field(default_factory=list)
    tuned: list[TuneOutcome] = field(default_factory=list)
    stages: list[StageOutcome] = field(default_factory=list)
    rounds: int = 0
    rounds_now: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def records(self, frame: str = "polars") -> Any:
        """The run's per-round records (see `read`)."""
        return read(self.dir, frame=frame)

    def stage(self, name: str) -> StageOutcome:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage {name!r} in this run; its stages: {', '.join(s.name for s in self.stages)}")


def run(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    rounds: int | None = None,
    threads: int | None = None,
    force: bool = False,
    resume: bool = False,
    report: bool = True,
    csv: bool = False,
    trace: Sequence[int] = (),
) -> RunOutcome:
    """Runs a scenario file as `dhumbal-run SCENARIO --out OUT` does, through the same engine
    in this process: the `train:` and `tune:` entries whose results are missing, then the
    stages, with records, reports and figures written under `out` (a fresh temporary folder
    when `out` is None). Progress goes to the process's stdout and stderr; Ctrl-C stops it
    cleanly. Returns a `RunOutcome`; `.records()` gives the per-round records.

    `seed` replaces the scenario's seed, `rounds` every stage's sample size, `threads` the
    number of worker threads (results do not depend on it); `force` replaces an earlier run's
    results in `out`, `resume` finishes an interrupted run; `report=False` writes no
    statistics report, `csv=True` also writes rounds.csv, `trace` traces these deals.

    Raises `BadInput` (the scenario's problems, with file, line and field), `NotYet`,
    `Interrupted` or `RunError`, each with the exit code `dhumbal-run` gives (`.code`).

    A network the scenario must train first is trained by the trainer executable
    `dhumbal-train` (built by scripts/run.sh beside dhumbal-run), found through the environment
    variable DHUMBAL_TRAIN or on PATH; this package links no libtorch.
    """
    if force and resume:
        raise ValueError("force and resume: one or the other (resume finishes a run, force replaces it)")
    if out is None:
        out = tempfile.mkdtemp(prefix="dhumbal-run-")
        force = True
    mode = "resume" if resume else "force" if force else "fresh"
    code, message, outcome = _native.run_experiment(
        os.fspath(scenario),
        os.fspath(out),
        seed=None if seed is None else int(seed),
        rounds=None if rounds is None else int(rounds),
        threads=None if threads is None else int(threads),
        mode=mode,
        report=bool(report),
        csv=bool(csv),
        trace=[int(d) for d in trace],
    )
    if code == 130:
        message += "\nFrom Python: dhumbal.run(..., resume=True) with the same scenario and options"
    if code != 0:
        raise _ERRORS.get(code, RunError)(message, os.fspath(scenario))
    o = json.loads(outcome)
    return RunOutcome(
        name=o["name"],
        dir=o["dir"],
        trained=list(o["trained"]),
        tuned=[TuneOutcome(**t) for t in o["tuned"]],
        stages=[StageOutcome(**s) for s in o["stages"]],
        rounds=o["rounds"],
        rounds_now=o["rounds_now"],
        seconds=o["seconds"],
        warnings=list(o["warnings"]),
    )


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
