#!/usr/bin/env bash
# Builds a trainer for a GPU machine whose Python has a torch other than the 2.13.0 that tch
# 0.26 is made for: the lent GPU machines have torch 2.11.0+cu130 and no network. tch binds
# one libtorch version per release (its generated C++ API names every operator of that
# version), so this builds the project's source with the tch release made for that torch
# (DHUMBAL_GPU_TCH, default 0.24.0 for torch 2.11.0; tch's own build script checks that they
# match) against the PyPI wheel torch==$DHUMBAL_GPU_TORCH in .venv-gpu, from a copy of the
# working tree in target/gpu-src whose manifest names that tch (the project's own manifest and
# lock file are untouched), into target/gpu. The result is target/gpu-trainer/dhumbal-train,
# stripped; scripts/gpu-check.sh points it at the GPU machine's own libtorch. Needs the network
# (PyPI, crates.io): run it here, then carry target/gpu-trainer to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

torch="${DHUMBAL_GPU_TORCH:-2.11.0}"
tch="${DHUMBAL_GPU_TCH:-0.24.0}"
venv="$PWD/.venv-gpu"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
have=$("$venv/bin/python" -c 'import torch, setuptools; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have" != "$torch" ]; then
    echo "build-gpu-trainer: installing torch==$torch into $venv (a few GB, once)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$torch" "setuptools<82"
fi

# The working tree as it is (committed or not), with tch and torch-sys at $tch.
src="$PWD/target/gpu-src"
rm -rf "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src"
sed -i -e "s/^tch = \".*\"/tch = \"$tch\"/" -e "s/^torch-sys = \".*\"/torch-sys = \"$tch\"/" "$src/Cargo.toml"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1
(
    cd "$src"
    cargo update --quiet -p tch -p torch-sys
    # The whole workspace, as the main build: a subset would resolve other features of shared
    # dependencies and build them again.
    cargo build --release --workspace --target-dir "$OLDPWD/target/gpu"
)
mkdir -p target/gpu-trainer
cp target/gpu/release/dhumbal-train target/gpu-trainer/dhumbal-train
strip target/gpu-trainer/dhumbal-train
echo "torch $torch, tch $tch" > target/gpu-trainer/built-for
ls -l target/gpu-trainer/dhumbal-train >&2
