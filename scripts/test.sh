#!/usr/bin/env bash
# Does all set-up and runs every test: the README's test command, and what CI runs.
# Tests build in the release profile, so that this command and scripts/run.sh share one build
# of every dependency. The last line printed is the number of tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

if cargo fmt --version >/dev/null 2>&1; then
    cargo fmt --all -- --check
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --locked --release --workspace --all-targets 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
awk -v status="$status" '
    /^test result:/ { passed += $4; failed += $6; ignored += $8; binaries++ }
    END {
        printf "%s: %d tests passed, %d failed, %d ignored (%d test binaries)\n",
            (status == 0 ? "ok" : "FAILED"), passed, failed, ignored, binaries
    }' "$log"
exit "$status"
