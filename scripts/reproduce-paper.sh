#!/usr/bin/env bash
# Runs the paper's study twice and writes reports/paper/README.md (scripts/paper_report.py):
# - as the paper's code ran it (scenarios/paper/: Tables I-VI in fixed seats, with the paper's
#   budgets and seeding, and the training behind Fig. 4 with the paper's settings), beside the
#   same matchups with rotated seats;
# - with the corrected design (scenarios/championship.yaml: category tournaments and a final,
#   all seat permutations, seeded, sample sizes from the power analysis).
# 7 minutes after the build on the 2-core development machine, 12 on a 2-core machine whose
# engine is 1.7 times slower (`dhumbal-run bench`: 328,000 rounds/s on one thread, not
# 548,000). Extra arguments go to every dhumbal-run call (e.g. --force to replace earlier runs;
# without it a second run stops rather than overwrite).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh
cargo build --locked --release --workspace
run=./target/release/dhumbal-run
out=reports/paper
mkdir -p "$out/training"
# Fig. 4: PPO and DQN trained with the paper's settings (five players, 50-turn rounds). A
# training spends most of its time in torch updates on one thread (and its checkpoint is the
# same bit for bit whatever runs beside it), so the two train beside each other and beside the
# tables, in the background, each logging to $out/training/<id>.log; the report waits for them.
ids=(ppo dqn)
pids=()
for id in "${ids[@]}"; do
    "$run" train scenarios/paper/fig4-training.yaml --id "$id" --out "$out/training" "$@" \
        >"$out/training/$id.log" 2>&1 &
    pids+=("$!")
done
# Stopped or failed, the script stops its trainings too (each keeps its finished episodes:
# --resume continues it).
trap 'kill -INT "${pids[@]}" 2>/dev/null || true' EXIT
echo "training ${ids[*]} for Fig. 4 in the background (logs in $out/training/)"
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
# The corrected design: the README's main job.
"$run" scenarios/championship.yaml --out "$out/championship" "$@"
for i in "${!ids[@]}"; do
    log="$out/training/${ids[$i]}.log"
    if ! wait "${pids[$i]}"; then
        cat "$log" >&2
        echo "error: training ${ids[$i]} failed (its log: $log)" >&2
        exit 1
    fi
    grep -E "^training .*episodes in" "$log" || true
done
trap - EXIT
python3 scripts/paper_report.py "$out"
