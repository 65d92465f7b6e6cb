#!/usr/bin/env bash
# Runs the paper's study twice and writes reports/paper/README.md (scripts/paper_report.py):
# - as the paper's code ran it (scenarios/paper/: Tables I-VI in fixed seats, with the paper's
#   budgets and seeding, and the training behind Fig. 4 with the paper's settings), beside the
#   same matchups with rotated seats;
# - with the corrected design (scenarios/championship.yaml: category tournaments and a final,
#   all seat permutations, seeded, sample sizes from the power analysis).
# About 7 minutes on 2 cores after the build. Extra arguments go to every dhumbal-run call
# (e.g. --force to replace earlier runs; without it a second run stops rather than overwrite).
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
# Fig. 4: PPO and DQN trained with the paper's settings (five players, 50-turn rounds).
"$run" train scenarios/paper/fig4-training.yaml --out "$out/training" "$@"
# The corrected design: the README's main job.
"$run" scenarios/championship.yaml --out "$out/championship" "$@"
python3 scripts/paper_report.py "$out"
