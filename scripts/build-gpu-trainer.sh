#!/usr/bin/env bash
# Builds a trainer for a GPU machine whose Python has a torch other than the 2.13.0 that tch
# 0.26 is made for (the lent GPU machines have torch 2.11.0+cu130 and no network):
# .venv-gpu gets the PyPI wheel torch==$DHUMBAL_GPU_TORCH (default 2.11.0), and dhumbal-train
# is built against it with tch's version check bypassed (LIBTORCH_BYPASS_VERSION_CHECK: the
# C++ API tch calls compiles against the 2.11 headers, so it exists there), in its own target
# folder (target/gpu: another libtorch must not disturb the main build). The result is
# target/gpu-trainer/dhumbal-train, stripped, with no rpath to this machine: scripts/gpu-check.sh
# points it at the GPU machine's torch. Needs the network (PyPI, crates.io); run it here, then
# carry target/gpu-trainer to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

version="${DHUMBAL_GPU_TORCH:-2.11.0}"
venv="$PWD/.venv-gpu"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
have=$("$venv/bin/python" -c 'import torch, setuptools; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have" != "$version" ]; then
    echo "build-gpu-trainer: installing torch==$version into $venv (a few GB, once)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$version" "setuptools<82"
fi

export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1 LIBTORCH_BYPASS_VERSION_CHECK=1
cargo build --locked --release -p dhumbal-trainer --target-dir target/gpu
mkdir -p target/gpu-trainer
cp target/gpu/release/dhumbal-train target/gpu-trainer/dhumbal-train
strip target/gpu-trainer/dhumbal-train
echo "$version" > target/gpu-trainer/torch-version
ls -l target/gpu-trainer/dhumbal-train >&2
