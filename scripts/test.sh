#!/usr/bin/env bash
# Does all set-up and runs every test: the README's test command, and what CI runs.
# Tests build in the release profile, so that this command and scripts/run.sh share one build
# of every dependency. The last line printed is the number of tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

if cargo fmt --version >/dev/null 2>&1; then
    cargo fmt --all -- --check
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --locked --release --workspace --all-targets --features torch 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The study on a real Slurm cluster (docs/cluster.md): a one-node cluster from Debian's
# packages, started and stopped by the script; it needs root to install and run the daemons.
slurm="skipped (needs root and apt-get: scripts/slurm/test-local.sh)"
if [ "$status" -eq 0 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    if DHUMBAL_RUN="$PWD/target/release/dhumbal-run" bash scripts/slurm/test-local.sh; then
        slurm="ok"
    else
        slurm="FAILED"
        status=1
    fi
fi
set -e
awk -v status="$status" -v slurm="$slurm" '
    /^test result:/ { passed += $4; failed += $6; ignored += $8; binaries++ }
    END {
        printf "slurm test: %s\n", slurm
        printf "%s: %d tests passed, %d failed, %d ignored (%d test binaries)\n",
            (status == 0 ? "ok" : "FAILED"), passed, failed, ignored, binaries
    }' "$log"
exit "$status"
