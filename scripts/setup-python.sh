#!/usr/bin/env bash
# Set-up for the Python package `dhumbal` (docs/python.md): Rust and the project's virtual
# environment (.venv) as scripts/setup.sh and scripts/setup-torch.sh make them, then the
# package's Python dependencies installed there, and the package installed in development
# mode from crates/python: its native library taken from the workspace's release build (the
# build scripts/run.sh and scripts/test.sh share, so nothing is compiled a second time, as
# `maturin develop` did with its own feature set) and put beside the package's Python
# sources, which the venv reads in place. Run by scripts/test.sh; by hand:
# `scripts/setup-python.sh`, then `.venv/bin/python`. Safe to run again: pip skips what is
# installed, cargo what is built. A wheel for elsewhere: `maturin build --release -m
# crates/python/Cargo.toml` (docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

venv="$VIRTUAL_ENV"
python="$venv/bin/python"

# Versions known to work together; pettingzoo's api_test and gymnasium's env_checker are
# what the tests run. pandas (with pyarrow, its Parquet reader) and duckdb read the records
# in tests/python/test_records.py, as docs/records.md says they do (tested with pandas 2.2.3
# and 3.1.1, pyarrow 16.1.0 and 26.0.1, duckdb 1.1.3 and 2.0.1); jsonschema checks traces
# against schemas/trace.schema.json in tests/python/test_traces.py.
need=(
    "numpy>=1.26"
    "gymnasium==1.2.2"
    "pettingzoo==1.25.0"
    "polars>=1.0"
    "pandas>=2.2"
    "pyarrow>=16"
    "duckdb>=1.1"
    "jsonschema>=4.18"
    "pytest>=8"
    "choix>=0.4"  # scripts/reference/ratings_fixture.py (tests/fixtures/ratings.json)
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

# The workspace, as scripts/run.sh and scripts/test.sh build it (a subset, `-p dhumbal-python`,
# would resolve other features and rebuild polars and everything above it).
cargo build --locked --release --workspace >&2
# An editable install: the native module beside the sources, the sources on the venv's path.
cp -f target/release/libdhumbal_native.so crates/python/python/dhumbal/_native.abi3.so
site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# An earlier `maturin develop` install would shadow this one.
"$python" -m pip uninstall --quiet --disable-pip-version-check --yes dhumbal >/dev/null 2>&1 || true
echo "$PWD/crates/python/python" > "$site/dhumbal.pth"
"$python" -c 'import dhumbal, sys; print("setup-python: dhumbal", dhumbal.__file__, file=sys.stderr)'
