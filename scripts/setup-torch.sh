#!/usr/bin/env bash
# Set-up for the learning agents (the trainer dhumbal-train, crates/torch): a Python virtual
# environment in .venv with the PyPI wheel of torch 2.13.0 (the libtorch that tch 0.26 is
# built for) and setuptools (torch.utils.cpp_extension, which tch's build script asks for
# paths, imports it).
# Sourced by scripts/run.sh and scripts/test.sh after scripts/setup.sh; safe to run again: a
# venv that already has the right torch is used as it is (the check takes about a second).
#
# It exports what the build needs: LIBTORCH_USE_PYTORCH=1 and VIRTUAL_ENV (tch's build script
# then runs `python`, the venv's: its bin/ goes first on PATH). The trainer dhumbal-train finds
# libtorch at run time by the rpath that crates/torch/build.rs writes, so nothing needs to be
# exported to run it; dhumbal-run does not load libtorch at all.
set -euo pipefail

torch_version="2.13.0"
venv="${DHUMBAL_VENV:-$PWD/.venv}"

if [ ! -x "$venv/bin/python" ]; then
    python=""
    # The first that really runs (pyenv shims exist for versions that are not selected).
    for candidate in python3 python3.13 python3.12 python3.11 python3.10; do
        if "$candidate" -c 'import sys, venv; assert sys.version_info >= (3, 10)' >/dev/null 2>&1; then
            python="$candidate"
            break
        fi
    done
    if [ -z "$python" ]; then
        echo "setup-torch: Python 3.10 or newer is needed for the torch wheel; none was found." >&2
        echo "  Install it (Debian: apt-get install python3 python3-venv), then run this again." >&2
        exit 1
    fi
    echo "setup-torch: creating the virtual environment $venv with $python" >&2
    "$python" -m venv "$venv"
fi

have=$("$venv/bin/python" -c 'import torch, setuptools; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have" != "$torch_version" ]; then
    # The wheel and its CUDA libraries take about 5.5 GB installed, and pip unpacks the
    # downloads beside them: say so before pip fails half-way with "No space left on device".
    need_kb=$((8 * 1024 * 1024))
    for place in "$venv" "${TMPDIR:-/tmp}"; do
        free_kb=$(df -Pk "$place" 2>/dev/null | awk 'NR == 2 { print $4 }')
        if [ -n "$free_kb" ] && [ "$free_kb" -lt "$need_kb" ]; then
            echo "setup-torch: torch==$torch_version needs about 8 GB free; $place has $((free_kb / 1024 / 1024)) GB." >&2
            echo "  Free some space there (or set DHUMBAL_VENV, or TMPDIR for pip's unpacking, to a disk that has it), then run this again." >&2
            exit 1
        fi
    done
    echo "setup-torch: installing torch==$torch_version and setuptools into $venv (a few GB, once)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "torch==$torch_version" "setuptools<82"
fi

export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
