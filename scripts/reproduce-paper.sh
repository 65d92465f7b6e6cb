#!/usr/bin/env bash
# Runs the paper's tables as its code ran them (scenarios/paper/) and writes
# reports/paper/README.md: every number of Tables I-VI beside ours (scripts/paper_report.py).
# Extra arguments go to every dhumbal-run call (e.g. --force to replace earlier runs).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh
cargo build --locked --release --features torch
run=./target/release/dhumbal-run
out=reports/paper
mkdir -p "$out"
for table in table1 table2 table4 table6; do
    "$run" "scenarios/paper/$table.yaml" --out "$out/$table" "$@"
    # The paper's definitions: normal intervals (eq. 6), Welch on rounds, Cohen's d (ddof 0).
    "$run" report "$out/$table" --definitions paper --out "$out/$table/paper-stats" "$@"
done
python3 scripts/paper_report.py "$out"
