#!/usr/bin/env bash
# Does all set-up and runs the main job. Extra arguments go to dhumbal-run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

# The whole workspace, as scripts/test.sh builds it (so that neither builds a crate again):
# dhumbal-run (no libtorch), dhumbal-train (the trainer, the only program linking libtorch) and
# the Python package's native library.
cargo build --locked --release --workspace
exec ./target/release/dhumbal-run scenarios/championship.yaml "$@"
