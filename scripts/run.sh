#!/usr/bin/env bash
# Does all set-up and runs the main job. Extra arguments go to dhumbal-run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

cargo build --locked --release --features torch
exec ./target/release/dhumbal-run scenarios/championship.yaml "$@"
