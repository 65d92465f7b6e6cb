"""Type stubs of the native module (crates/python/src/lib.rs)."""

import numpy as np
import numpy.typing as npt

ACTION_SLOTS: int
"""Width of the action space: the legal actions of a decision fill the first slots."""

RANDOM_ACTION: int
"""The action (-2) that has a table play a uniformly random legal action, drawn from the Python
seat's own seeded stream."""

class Tables:
    """`n` tables of one configuration, stepped together; they write into arrays Python owns."""

    def __init__(self, config: str, base: str, n: int, threads: int | None = None) -> None: ...
    @property
    def threads(self) -> int: ...
    @property
    def players(self) -> int: ...
    @property
    def state_dim(self) -> int: ...
    @property
    def action_dim(self) -> int: ...
    @property
    def action_slots(self) -> int: ...
    @property
    def encoding(self) -> str: ...
    @property
    def all_seats(self) -> bool: ...
    @property
    def rules_json(self) -> str: ...
    @property
    def scoring(self) -> str: ...
    @property
    def num_tables(self) -> int: ...
    def bind(
        self,
        obs: npt.NDArray[np.float32],
        features: npt.NDArray[np.float32],
        mask: npt.NDArray[np.int8],
        seat: npt.NDArray[np.int64],
        rewards: npt.NDArray[np.float64],
        done: npt.NDArray[np.bool_],
        winner: npt.NDArray[np.int64],
        action: npt.NDArray[np.int64],
    ) -> None:
        """The arrays every reset and step writes into, checked for shape once. Arrays bound
        again after the tables started take effect at the next reset (step refuses until then)."""
    def reset(self, seed: int | None) -> None:
        """Starts the tables (without the GIL)."""
    def step(self, actions: npt.NDArray[np.int64], autoreset: bool) -> None:
        """Plays an action (an index, `RANDOM_ACTION`, or -1: stay) on every table (without the
        GIL, when there are several tables)."""
    def step_one(self, action: int, autoreset: bool) -> None:
        """`step` of a single table, its action as a number."""
    def describe(self, i: int) -> list[str]: ...
    def set_render(self, on: bool) -> None:
        """Whether the tables keep what `render` shows (off by default: nothing kept)."""
    def render(self, i: int, colour: bool = False) -> str:
        """Table `i` as text (the deciding seat's view and the legal actions by slot)."""
    def skipped(self, i: int) -> int: ...
    def games_played(self, i: int) -> int: ...

def agent_kinds() -> list[tuple[str, str]]:
    """Every agent kind a scenario may name, with one line on how it plays."""

def validate(path: str) -> str:
    """Checks a scenario file as `dhumbal-run validate` does; raises ValueError with every
    problem (file, line, field)."""

def run_experiment(
    scenario: str,
    out: str | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    threads: int | None = None,
    mode: str = "fresh",
    report: bool = True,
    csv: bool = False,
    trace: list[int] = [],
) -> tuple[int, str, str]:
    """Runs a scenario through the experiment engine in this process; returns (exit code,
    message, outcome as JSON)."""

def cli(args: list[str]) -> int:
    """Runs `dhumbal-run` with these arguments in this process; returns its exit code."""

def save_checkpoint(
    path: str,
    algorithm: str,
    encoding: str,
    rules: str,
    layers: list[tuple[list[int], list[float], list[float]]],
    note: str | None = None,
) -> None: ...
def load_checkpoint(path: str) -> tuple[str, list[tuple[str, list[int], list[float]]]]: ...
