#!/usr/bin/env bash
# Set-up for the Python package `dhumbal` (docs/python.md): Rust and the project's virtual
# environment (.venv) as scripts/setup.sh and scripts/setup-torch.sh make them, then maturin
# and the package's Python dependencies installed there, and the package built from
# crates/python and installed in development mode (`maturin develop --release`). Run by
# scripts/test.sh; by hand: `scripts/setup-python.sh`, then `.venv/bin/python`. Safe to run
# again: pip skips what is installed, cargo what is built.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

venv="$VIRTUAL_ENV"
python="$venv/bin/python"

# Versions known to work together; pettingzoo's api_test and gymnasium's env_checker are
# what the tests run.
need=(
    "maturin>=1.9,<2"
    "numpy>=1.26"
    "gymnasium==1.2.2"
    "pettingzoo==1.25.0"
    "polars>=1.0"
    "pytest>=8"
)
if ! "$python" - "${need[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version, PackageNotFoundError
from packaging.requirements import Requirement
for spec in sys.argv[1:]:
    r = Requirement(spec)
    if not r.specifier.contains(version(r.name), prereleases=True):
        raise SystemExit(1)
PY
then
    echo "setup-python: installing ${need[*]} into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check "${need[@]}" packaging
fi

# Builds (incrementally) and installs the package in development mode.
"$venv/bin/maturin" develop --release --quiet --manifest-path crates/python/Cargo.toml >&2
