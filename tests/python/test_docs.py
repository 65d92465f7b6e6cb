"""Every Python example of README.md and docs/*.md runs as written (issue: a newcomer's path).

Each ```python block is extracted from the Markdown and run as a script of its own, in a fresh
Python, from a scratch folder that holds what the examples name: `scenarios/` (a link to the
project's), and the run folders they read (`reports/championship/final`, `reports/x` with
traces), made here by small runs with the stage names the examples use. A block that fails
names its file and line. Run by scripts/test.sh.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

import dhumbal

ROOT = pathlib.Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(?:python|py)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, int, str]]:
    """(file, line, code) of every Python block of README.md and docs/*.md."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            out.append((str(path.relative_to(ROOT)), line, m.group(1)))
    return out


def _run(d: pathlib.Path, scenario: dict) -> None:
    """Runs `scenario` (JSON is YAML) into d/reports/<its name>."""
    path = d / f"{scenario['name']}.yaml"
    path.write_text(json.dumps(scenario))
    dhumbal.run(path, d / "reports" / scenario["name"], report=False)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> pathlib.Path:
    """A folder laid out as the examples expect: the scenarios, and the runs they read."""
    d = tmp_path_factory.mktemp("docs")
    (d / "scenarios").symlink_to(ROOT / "scenarios", target_is_directory=True)
    # docs/records.md reads the championship's final stage; a small run with that name.
    _run(
        d,
        {
            "name": "championship", "seed": 5, "seating": "rotate", "output": {"chunk_rounds": 40},
            "stages": [{"name": "final", "deals": 30, "rules": {"preset": "paper", "players": 4},
                        "agents": [{"kind": "aggressive"}, {"kind": "random"},
                                   {"kind": "conservative"}, {"kind": "balanced"}]}],
        },
    )
    # docs/traces.md reads the traces of `reports/x`.
    _run(
        d,
        {
            "name": "x", "seed": 3, "deals": 4, "session": 2,
            "output": {"trace": {"deals": [0, 1]}},
            "rules": {"preset": "paper", "players": 3},
            "agents": [{"kind": "aggressive"}, {"kind": "balanced"}, {"kind": "random"}],
        },
    )
    # docs/studies.md reads the pilot study's records: served, and played by three scripted
    # participants through the page's API (scripts/study-client.py).
    _serve_pilot(d)
    return d


def _serve_pilot(d: pathlib.Path) -> None:
    """`dhumbal-run serve scenarios/study/pilot.yaml` into d/reports/pilot-study, three of its
    participants played by the example client, the server stopped."""
    exe = ROOT / "target" / "release" / "dhumbal-run"
    server = subprocess.Popen(
        [str(exe), "serve", str(ROOT / "scenarios/study/pilot.yaml"), "--port", "0",
         "--out", str(d / "reports" / "pilot-study")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        first = server.stdout.readline()
        url = re.search(r"http://\S+", first)
        assert url, f"the server said: {first}"
        played = subprocess.run(
            [sys.executable, str(ROOT / "scripts/study-client.py"), url.group(0).rstrip("/"),
             "--code", "P01", "--code", "P02", "--code", "P03", "--follow-hints"],
            capture_output=True, text=True, timeout=300,
        )
        assert played.returncode == 0, played.stdout + played.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_docs_have_python_examples():
    found = {f for f, _, _ in blocks()}
    assert {"docs/python.md", "docs/records.md", "docs/traces.md"} <= found, found


@pytest.mark.parametrize("where,code", [(f"{f}:{n}", c) for f, n, c in blocks()],
                         ids=[f"{f}:{n}" for f, n, _ in blocks()])
def test_example_runs_as_written(where, code, scratch):
    r = subprocess.run([sys.executable, "-c", code], cwd=scratch, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"{where} failed:\n{code}\n--- stderr ---\n{r.stderr[-3000:]}"
