#!/usr/bin/env bash
# Prints the table of achieved error rates and mean lengths of sequential tests by design
# (players, seating, looks) that docs/analysis.md shows ("Sequential tests"): 2,000 simulated
# tests per cell on seeded streams, so the same table on every machine. About 20 s on 2 cores
# once built (the test also runs in scripts/test.sh). Usage: bash scripts/sprt-table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh
cargo test --release -p dhumbal-stats --test sequential -- --nocapture --exact \
    error_rates_and_lengths_by_design 2>&1 | grep '^|'
