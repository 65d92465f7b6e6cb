#!/usr/bin/env bash
# Runs the paper's tables as its code ran them (scenarios/paper/), and the same matchups with
# rotated seats, and writes reports/paper/README.md: every number of Tables I-VI beside ours,
# and each agent's win rate in fixed and in rotated seats (scripts/paper_report.py).
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
# The same matchups with rotated seats: how much of each lead comes from sitting in seat 0.
for pair in table1:scenarios/paper/table1-rotated.yaml table2:scenarios/search/paper-search-rotated.yaml \
            table4:scenarios/paper/table4-rotated.yaml table6:scenarios/paper/table6-rotated.yaml; do
    "$run" "${pair#*:}" --out "$out/${pair%%:*}-rotated" "$@"
done
python3 scripts/paper_report.py "$out"
